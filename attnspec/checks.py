"""The Python API of the checking commands: ``attnspec.jl_check(...)``, ``sa_check``,
``osa_check``, ``osa_train``.

Each function takes the command's options as keyword arguments, with the CLI's names
(``trials_other`` for ``--trials-other``) and defaults, both read off the one declaration
of each option (:mod:`attnspec.options.checks`, as are its docstring's ``Parameters``),
runs the same in-process battery as the CLI
(:func:`attnspec.battery.run_battery`; with ``out=``, :func:`attnspec.battery.run_and_write`,
which writes the CLI's ``--out`` layout) and returns a :class:`CheckResult`.

Bad arguments raise :class:`attnspec.errors.InputError` with the CLI's one-line message,
before any computation: an unknown name, a value of the wrong type, a value out of range.
Ctrl-C raises ``KeyboardInterrupt``; nothing is kept unless ``out=`` was given, in which
case the batteries that can resume (jl-check, osa-train) keep their finished part there
(``meta.json`` status ``partial``; continue with ``resume=True``) and still raise.

Example
-------
>>> import attnspec
>>> res = attnspec.osa_check(trials=2, timing=False, progress=False)   # doctest: +SKIP
>>> res.summary()                                                      # doctest: +SKIP
>>> res.verdicts.query("verdict == 'violated'")                         # doctest: +SKIP
>>> res.save("results/osa")                                             # doctest: +SKIP
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from attnspec.errors import InputError, check_bool
from attnspec.options.checks import RUN_ARGUMENTS, options_of, run_arguments_of

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

    from attnspec.battery import BatteryResult

__all__ = ["CheckResult", "check", "claims", "jl_check", "osa_check", "osa_train", "sa_check"]

Progress = bool | Callable[[str], None] | None

#: The Python-only keyword argument of the checking functions: the command line has
#: ``--quiet`` and ``--verbose`` instead.
API_ONLY = ("progress",)


@dataclass
class CheckResult:
    """The outcome of one checking command, held in memory.

    Attributes
    ----------
    command : str
        ``"jl-check"``, ``"sa-check"``, ``"osa-check"`` or ``"osa-train"``.
    verdicts : pandas.DataFrame
        One row per verdict row: ``claim, reading, verdict``, then one column per parameter
        the rows vary (``n, k, eps, d, L, family, ...``; missing where a row has no such
        parameter), then ``evidence, bound, exact, estimate, ci_low, ci_high, trials, seed,
        at_paper_params, value_name, bound_name`` (what ``estimate``/``exact`` and ``bound`` are,
        where a row names them). ``v[v.k == 4095]`` selects rows by a parameter.
    tables : dict of str to pandas.DataFrame
        The battery's tidy tables by file stem (``"jl"`` is ``jl.parquet`` under ``--out``).
    meta : dict
        How the result was made (parameters, seed, notes, wall time; after :meth:`save`,
        what ``meta.json`` holds besides the environment).
    path : Path or None
        The results directory written by ``out=`` or the last :meth:`save`.
    battery_result : BatteryResult
        The battery's own result (verdict rows as :class:`~attnspec.verdicts.classify.VerdictRow`).
    """

    battery_result: BatteryResult = field(repr=False)
    path: Path | None = None
    _verdicts: Any = field(default=None, repr=False, init=False)

    @property
    def command(self) -> str:
        return self.battery_result.command

    @property
    def rows(self) -> list[Any]:
        """The verdict rows as :class:`~attnspec.verdicts.classify.VerdictRow` objects."""
        return self.battery_result.verdicts

    @property
    def tables(self) -> dict[str, pd.DataFrame]:
        return self.battery_result.tables

    @property
    def meta(self) -> dict[str, Any]:
        return self.battery_result.meta

    @property
    def verdicts(self) -> pd.DataFrame:
        if self._verdicts is None:
            from attnspec.verdicts.classify import verdicts_frame

            self._verdicts = verdicts_frame(self.rows)
        return self._verdicts

    def summary(self) -> pd.DataFrame:
        """The table the CLI prints by default, one row per claim (a notebook shows it as HTML).

        Returns
        -------
        pandas.DataFrame
            One row per claim, in order of first appearance: ``claim_id``, ``claim`` (its
            label), ``verdict`` (the claim's verdict over its rows,
            :func:`attnspec.verdicts.headline.claim_verdict`: the one the screen, the report's
            ledger and summary print), ``why``, ``rows`` and ``source`` (the paper, or notes on
            it with a page) (:func:`attnspec.verdicts.table.summary_frame`).
        """
        from attnspec.verdicts.table import summary_frame

        return summary_frame(self.rows)

    def sentences(self, width: int | None = None) -> list[str]:
        """One sentence per claim, verdict first, with its evidence (what the report's sections say).

        Parameters
        ----------
        width : int, optional
            Wrap each sentence to this many characters (continuation lines indented by four
            spaces, joined by newlines: still one string per claim). Default: unwrapped.

        Returns
        -------
        list of str
            One sentence per claim, in order of first appearance
            (:func:`attnspec.verdicts.sentences.summary_lines`).
        """
        from attnspec.verdicts.sentences import summary_lines

        return summary_lines(self.rows, width=width)

    def plot(self, out: str | Path | None = None) -> list[Path]:
        """Draw the command's figures, as the CLI does, from the saved tables.

        Parameters
        ----------
        out : str or Path, optional
            Where to save the result first (:meth:`save`). Default: the directory the
            result was written to (``out=`` or :meth:`save`), else a new temporary directory.

        Returns
        -------
        list of Path
            The figure files (PNG and SVG), e.g. for ``IPython.display.Image``.
        """
        import tempfile

        from attnspec.battery import plot_results

        if out is not None:
            self.save(out, plots=False)
        elif self.path is None:
            self.save(Path(tempfile.mkdtemp(prefix=f"attnspec-{self.command}-")), plots=False)
        return plot_results(self.command, Path(self.path))

    def save(self, out: str | Path, *, csv: bool = False, plots: bool = True) -> Path:
        """Write the CLI's ``--out`` layout: every table, ``verdicts.parquet``,
        ``meta.json`` and (with ``plots``) the figures.

        The directory is locked while writing, and the tables, ``meta.json`` and the figures
        are written as one unit (Ctrl-C waits for them). :attr:`path` is set to ``out``.

        Parameters
        ----------
        out : str or Path
            The results directory: absent, empty, or holding this same run (as for the
            CLI's ``--out``).
        csv : bool
            Also write a CSV copy of each table.
        plots : bool
            Also draw the command's figures (PNG and SVG) into ``out``.

        Returns
        -------
        Path
            ``out``.

        Raises
        ------
        ResultsError
            ``out`` is a file, not writable, or holds another run or another kind of result.
        """
        from attnspec.battery import plot_results, result_identity, write_result
        from attnspec.runtime.signals import deferred_interrupts
        from attnspec.storage.results import check_same_run, writing_to

        out = Path(_path_arg("out", out))
        with writing_to(out, f"attnspec {self.command}", option="out"):
            check_same_run(out, result_identity(self.battery_result), kind=self.command)
            with deferred_interrupts():  # tables, meta.json and figures as one unit
                write_result(self.battery_result, out, csv=csv)
                if plots:
                    plot_results(self.command, out)
        self.path = out
        return out

    def __repr__(self) -> str:
        from attnspec.verdicts.sentences import TELLING_ORDER

        rows = self.rows
        found = sorted({r.verdict for r in rows}, key=lambda v: TELLING_ORDER.index(v) if v in TELLING_ORDER else 99)
        counts = ", ".join(f"{sum(r.verdict == v for r in rows)} {v}" for v in found)
        params = self.meta.get("identity") or self.meta.get("parameters") or {}
        shown = ", ".join(f"{k}={v!r}" for k, v in list(params.items())[:6])
        more = ", …" if len(params) > 6 else ""
        where = f", path={str(self.path)!r}" if self.path else ""
        return (
            f"CheckResult({self.command!r}, {len({r.claim for r in rows})} claims, {len(rows)} verdict rows: "
            f"{counts or 'none'}; {shown}{more}{where}) — .summary(), .verdicts, .tables, .plot(), .save(dir)"
        )


def _path_arg(name: str, value: Any) -> str | Path:
    import os

    # an empty string is refused: a path reads it as the current folder
    if not isinstance(value, (str, os.PathLike)) or isinstance(value, bytes) or not str(value).strip():
        raise InputError(f"{name} must be a directory path (str or Path), got {value!r}")
    return value


_PROGRESS = inspect.Parameter("progress", inspect.Parameter.KEYWORD_ONLY, default=True, annotation=Progress)
_PROGRESS_DOC = """    progress : bool or callable
        True: one line per step on stderr; False: silent; a callable receives each message."""
_RAISES = """    Raises
    ------
    InputError
        An unknown option, a value of the wrong type or out of range (the CLI's message).
    KeyboardInterrupt
        On Ctrl-C (after keeping the finished part in ``out``, when given and the command can resume)."""


def _run(command: str, function: str, arguments: Mapping[str, Any]) -> CheckResult:
    """Validate everything (before any work), run the battery, wrap the result."""
    from attnspec import battery
    from attnspec.options.declaration import check_names

    declared = options_of(command)
    allowed = (*declared, *run_arguments_of(command))
    given = check_names(allowed, arguments, owner=f"{function}()", also=("progress",))
    options = {o.name: given.get(o.name, o.default) for o in declared}
    checked = battery.check_option_types(command, options, text=False)  # the API's types: options.convert
    from attnspec.runtime.progress import progress_sink

    say = progress_sink(given.get("progress", True))
    resume, csv, plots = (
        check_bool(name, given.get(name, RUN_ARGUMENTS[name].default)) for name in ("resume", "csv", "plots")
    )
    out = given.get("out")
    if out is None:
        if resume:
            raise InputError("resume=True needs out=: the directory of the interrupted run")
        # KeyboardInterrupt propagates: without out= nothing is kept
        return CheckResult(battery.run_battery(command, checked, progress=say))
    path = Path(_path_arg("out", out))
    result = battery.run_and_write(command, checked, path, csv=csv, plots=plots, progress=say, resume=resume)
    return CheckResult(result, path=path)


def check_function(command: str, name: str, summary: str, returns: str = "CheckResult") -> Callable[..., CheckResult]:
    """The Python function of a checking command: keyword-only arguments, the command's
    declared options then its run arguments (both in :mod:`attnspec.options.checks`) and
    ``progress``; its docstring is ``summary`` with the
    ``Parameters`` section read off the same declarations, then ``Returns`` and ``Raises``."""
    from attnspec.options.declaration import numpydoc_parameters, signature

    extra = run_arguments_of(command)

    def check(**arguments: Any) -> CheckResult:
        return _run(command, name, arguments)

    check.__code__ = check.__code__.replace(co_name=name, co_qualname=name)  # a stray positional names it
    check.__name__ = check.__qualname__ = name
    check.__module__ = __name__
    params = [*signature(options_of(command), extra).parameters.values(), _PROGRESS]
    check.__signature__ = inspect.Signature(params, return_annotation="CheckResult")  # type: ignore[attr-defined]
    check.__annotations__ = {p.name: p.annotation for p in params}
    check.__doc__ = (
        f"{summary}\n\n{numpydoc_parameters((*options_of(command), *extra))}\n{_PROGRESS_DOC}\n\n"
        f"    Returns\n    -------\n    {returns}\n\n{_RAISES}\n"
    )
    return check


jl_check = check_function(
    "jl-check",
    "jl_check",
    "Check Linformer's Lemma 1 (JL), Theorem 1 and Theorem 2: ``attnspec jl-check``.",
)

sa_check = check_function(
    "sa-check",
    "sa_check",
    "Check the sparse-expressivity construction "
    "SA(X) = exp(X W_Q W_Kᵀ Xᵀ) ≈ A/eps\n    (Likhosherstov et al. 2021): ``attnspec sa-check``.",
)

osa_check = check_function(
    "osa-check",
    "osa_check",
    "Check the Orthogonal Self-Attention theorems (Zhang & Martens): ``attnspec osa-check``.",
)

osa_train = check_function(
    "osa-train",
    "osa_train",
    "Train ViT, its ablations and the OSA-Transformer on 8×8 digits to a stopping rule on "
    "validation accuracy,\n    beside the OSA paper's Table 2 (MNIST): ``attnspec osa-train``. ``None`` means the "
    "CLI's default.",
    returns='CheckResult\n        ``tables["osa_train_summary"]`` holds test accuracy mean ± sd per model;\n'
    '        ``tables["osa_train_paper"]`` sets it beside the paper\'s Table 2 and\n'
    '        ``tables["osa_train_orderings"]`` says which of the paper\'s orderings reproduce.',
)


def check(name: str, /, **arguments: Any) -> CheckResult:
    """Run any registered check by name, built-in or plug-in: ``attnspec check NAME``.

    Parameters
    ----------
    name : str
        A checking command (``"favor"``, ``"jl-check"``) or a module that registers one when
        imported (:func:`attnspec.theorem.registry.resolve`).
    **arguments
        The check's options by name (``attnspec check NAME --help`` lists them), ``out``,
        ``resume``, ``csv`` and ``plots`` where the check takes them, and ``progress``.

    Returns
    -------
    CheckResult

    Raises
    ------
    InputError
        An unknown check, an unknown option, a value of the wrong type or out of range.
    """
    from attnspec.theorem.registry import resolve

    return _run(resolve(name), "check", arguments)


def claims(paper: str | None = None) -> pd.DataFrame:
    """The catalogue of every claim attnspec checks, as ``attnspec claims`` prints it.

    Parameters
    ----------
    paper : {"linformer", "osa", "expressivity"}, optional
        Only this paper's claims; default every paper's.

    Returns
    -------
    pandas.DataFrame
        One row per (claim, reading): the claim id, the paper and the place in it, the
        statement, the reading and the command that checks it
        (:func:`attnspec.verdicts.registry.catalogue_frame`).

    Raises
    ------
    InputError
        ``paper`` is not one of the papers.
    """
    from attnspec.verdicts.registry import catalogue_frame

    return catalogue_frame(paper)
