"""The Python API of the checking commands: ``attnspec.jl_check(...)``, ``sa_check``,
``osa_check``, ``osa_train``.

Each function takes the command's options as keyword arguments, with the CLI's names
(``trials_other`` for ``--trials-other``) and defaults (tests/unit/test_checks_api.py
compares them with the typer definitions), runs the same in-process battery as the CLI
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

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from attnspec.errors import InputError, check_bool

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

    from attnspec.battery import BatteryResult

__all__ = ["CheckResult", "claims", "jl_check", "osa_check", "osa_train", "sa_check"]

Progress = bool | Callable[[str], None] | None

#: The Python-only keyword arguments of the checking functions (not battery options).
API_ONLY = ("out", "resume", "csv", "plots", "progress")


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
        at_paper_params``. ``v[v.k == 4095]`` selects rows by a parameter.
    tables : dict of str to pandas.DataFrame
        The battery's tidy tables by file stem (``"jl"`` is ``jl.parquet`` under ``--out``).
    meta : dict
        How the result was made (parameters, seed, notes, wall time; after :meth:`save`,
        what ``meta.json`` holds besides the environment).
    path : Path or None
        The results directory written by ``out=`` or the last :meth:`save`.
    battery_result : BatteryResult
        The battery's own result (verdict rows as :class:`~attnspec.verdicts.VerdictRow`).
    """

    battery_result: BatteryResult = field(repr=False)
    path: Path | None = None
    _verdicts: Any = field(default=None, repr=False, init=False)

    @property
    def command(self) -> str:
        return self.battery_result.command

    @property
    def rows(self) -> list[Any]:
        """The verdict rows as :class:`~attnspec.verdicts.VerdictRow` objects."""
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
            from attnspec.verdicts import verdicts_frame

            self._verdicts = verdicts_frame(self.rows)
        return self._verdicts

    def summary(self) -> pd.DataFrame:
        """The table the CLI prints by default, one row per claim: ``claim_id, claim, verdict,
        why, rows`` (:func:`attnspec.verdict_table.summary_frame`; a notebook shows it as HTML)."""
        from attnspec.verdict_table import summary_frame

        return summary_frame(self.rows)

    def sentences(self, width: int | None = None) -> list[str]:
        """One sentence per claim, verdict first, with its evidence (what the report's sections
        say; :func:`attnspec.verdict_summary.summary_lines`, ``width`` wraps them)."""
        from attnspec.verdict_summary import summary_lines

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

        from attnspec.battery import PLOTTERS, _resolve

        if out is not None:
            self.save(out, plots=False)
        elif self.path is None:
            self.save(Path(tempfile.mkdtemp(prefix=f"attnspec-{self.command}-")), plots=False)
        return [Path(p) for p in _resolve(PLOTTERS[self.command])(Path(self.path))]

    def save(self, out: str | Path, *, csv: bool = False, plots: bool = True) -> Path:
        """Write the CLI's ``--out`` layout: every table, ``verdicts.parquet``,
        ``meta.json`` and (with ``plots``) the figures.

        ``out`` must be absent, empty, or hold this same run (as for the CLI's ``--out``);
        it is locked while writing. Returns ``out``.
        """
        from attnspec.battery import plot_results, result_identity, write_result
        from attnspec.results import check_same_run, writing_to
        from attnspec.signals import deferred_interrupts

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
        from attnspec.verdict_summary import TELLING_ORDER

        rows = self.rows
        found = sorted({r.verdict for r in rows}, key=lambda v: TELLING_ORDER.index(v) if v in TELLING_ORDER else 99)
        counts = ", ".join(f"{sum(r.verdict == v for r in rows)} {v}" for v in found)
        params = self.meta.get("identity") or self.meta.get("parameters") or {}
        shown = ", ".join(f"{k}={v!r}" for k, v in list(params.items())[:6])
        more = ", …" if len(params) > 6 else ""
        where = f", path={str(self.path)!r}" if self.path else ""
        return (f"CheckResult({self.command!r}, {len({r.claim for r in rows})} claims, {len(rows)} verdict rows: "
                f"{counts or 'none'}; {shown}{more}{where}) — .summary(), .verdicts, .tables, .plot(), .save(dir)")


def _path_arg(name: str, value: Any) -> str | Path:
    import os

    if not isinstance(value, (str, os.PathLike)):
        raise InputError(f"{name} must be a directory path (str or Path), got {value!r}")
    return value


def _run(command: str, function: str, options: Mapping[str, Any], unknown: Mapping[str, Any], *,
         out: str | Path | None, resume: bool = False, csv: bool = False, plots: bool = True,
         progress: Progress = True) -> CheckResult:
    """Validate everything (before any work), run the battery, wrap the result."""
    from attnspec import battery

    if unknown:
        import inspect

        known = ", ".join(p for p in inspect.signature(globals()[function]).parameters if p != "unknown")
        names = ", ".join(repr(k) for k in unknown)
        raise InputError(f"{function}() has no option {names}; its options: {known}")
    checked = battery.check_option_types(command, options, text=False)  # the API's types (battery._convert)
    from attnspec.progress import progress_sink

    say = progress_sink(progress)
    resume, csv, plots = check_bool("resume", resume), check_bool("csv", csv), check_bool("plots", plots)
    if out is None:
        if resume:
            raise InputError("resume=True needs out=: the directory of the interrupted run")
        # KeyboardInterrupt propagates: without out= nothing is kept
        return CheckResult(battery.run_battery(command, checked, progress=say))
    path = Path(_path_arg("out", out))
    result = battery.run_and_write(command, checked, path, csv=csv, plots=plots, progress=say, resume=resume)
    return CheckResult(result, path=path)


def jl_check(
    *,
    n: int = 4096,
    eps: float = 0.1,
    k: str | Sequence[int] | None = None,
    trials: int = 10_000,
    trials_other: int = 1_000,
    seed: int = 0,
    family: str = "all",
    claims: str = "all",
    d: int = 64,
    temperature: float = 1.0,
    model: str | None = None,
    data: str | None = None,
    data_dir: str | Path | None = None,
    count: int = 2,
    out: str | Path | None = None,
    resume: bool = False,
    csv: bool = False,
    progress: Progress = True,
    **unknown: Any,
) -> CheckResult:
    """Check Linformer's Lemma 1 (JL), Theorem 1 and Theorem 2: ``attnspec jl-check``.

    Parameters
    ----------
    n : int
        Sequence length n (ambient dimension), >= 2.
    eps : float
        Distortion eps, in (0, 1).
    k : str or sequence of int, optional
        Projection dimensions: a comma list of integers and inclusive ranges
        ``start:stop[:step]`` (``"64,128,256"``, ``"64:4096:64"``) or a list of integers.
        Default: a geometric sweep below n. The theorems' own k is always added.
    trials : int
        Monte Carlo trials per point (Gaussian R), >= 1.
    trials_other : int
        Trials per point for the orthogonal, achlioptas and sparse families, >= 1.
    seed : int
        Seed of every random draw, >= 0.
    family : str
        Projection families for Lemma 1: ``"all"`` or a comma list of gaussian,
        orthogonal, achlioptas, sparse.
    claims : str
        ``"all"``, ``"lemma1"``, or a comma list of lemma1.eq11, lemma1.eq12, thm1, thm2, eq4.
    d : int
        Head dimension d for Theorem 2 (and the synthetic Q, K), >= 2.
    temperature : float
        Softmax temperature of the synthetic attention, > 0.
    model, data : str, optional
        Also check Theorem 1 on real attention from this model (e.g. ``"minilm"``) on this
        corpus (``"wiki103"``, ``"imdb"``).
    data_dir : str or Path, optional
        Folder laid out like shared/data.
    count : int
        Number of real attention matrices to sample, >= 1.
    out : str or Path, optional
        Write the CLI's ``--out`` layout there (tables, ``verdicts.parquet``,
        ``meta.json``, figures). On Ctrl-C the finished claim groups are kept there.
    resume : bool
        Continue the interrupted run in ``out`` (same options).
    csv : bool
        Also write CSV copies of the tables (with ``out``).
    progress : bool or callable
        True: one line per step on stderr; False: silent; a callable receives each message.

    Returns
    -------
    CheckResult

    Raises
    ------
    InputError
        An unknown option, a value of the wrong type or out of range (the CLI's message).
    KeyboardInterrupt
        On Ctrl-C (after keeping the finished part in ``out``, when given).
    """
    options = dict(n=n, eps=eps, k=k, trials=trials, trials_other=trials_other, seed=seed, family=family,
                   claims=claims, d=d, temperature=temperature, model=model, data=data, data_dir=data_dir, count=count)
    return _run("jl-check", "jl_check", options, unknown, out=out, resume=resume, csv=csv, progress=progress)


def sa_check(
    *,
    L: int = 512,
    k: int = 8,
    eps: float = 0.01,
    delta: float = 0.1,
    m: float = 0.1,
    M: float = 1.0,
    beta: float = 0.1,
    trials: int = 200,
    d: int | None = None,
    support: str = "random",
    factorization: str = "row",
    sweep: bool = False,
    sweep_L: str = "64,128,256",
    sweep_k: str = "1,2,4,8",
    sweep_trials: int = 100,
    threads: int = 1,
    jobs: int = 2,
    seed: int = 0,
    out: str | Path | None = None,
    csv: bool = False,
    plots: bool = True,
    progress: Progress = True,
    **unknown: Any,
) -> CheckResult:
    """Check the sparse-expressivity construction SA(X) = exp(X W_Q W_Kᵀ Xᵀ) ≈ A/eps
    (Likhosherstov et al. 2021): ``attnspec sa-check``.

    Parameters
    ----------
    L : int
        Sequence length L (A is L×L), >= 2.
    k : int
        Nonzeros per row of A, in [1, L].
    eps : float
        The eps of B = log(A/eps) (off-support level), > 0.
    delta : float
        Target ‖B − B̂‖∞ <= delta (the notes' ε'), > 0.
    m, M : float
        Smallest nonzero entry of A (> 0) and largest entry (>= m).
    beta : float
        d* is the least d with success >= 1 − beta; in (0, 1).
    trials : int
        Monte Carlo trials per d, >= 10.
    d : int, optional
        Also measure every error at this projection dimension, >= 1.
    support : str
        Support of A: random, banded, both or dense-column.
    factorization : str
        B = B1 B2ᵀ: row (B, I) or column (I, Bᵀ).
    sweep : bool
        The full (L, k) sweep (minutes).
    sweep_L, sweep_k : str
        Comma lists of L (>= 2) and k for the d* vs k log L sweep.
    sweep_trials : int
        Draws per sweep configuration, >= 10.
    threads : int
        torch CPU threads, >= 1.
    jobs : int
        Processes, 1 or 2: 2 runs the sweeps in a forked second process when two cores are
        available (the same numbers).
    seed : int
        Seed of every random draw, >= 0.
    out : str or Path, optional
        Write the CLI's ``--out`` layout there.
    csv : bool
        Also write CSV copies of the tables (with ``out``).
    plots : bool
        Draw the figures into ``out``.
    progress : bool or callable
        True: one line per step on stderr; False: silent; a callable receives each message.

    Returns
    -------
    CheckResult

    Raises
    ------
    InputError
        An unknown option, a value of the wrong type or out of range (the CLI's message).
    """
    options = dict(L=L, k=k, eps=eps, delta=delta, m=m, M=M, beta=beta, trials=trials, d=d, support=support,
                   factorization=factorization, sweep=sweep, sweep_L=sweep_L, sweep_k=sweep_k,
                   sweep_trials=sweep_trials, threads=threads, jobs=jobs, seed=seed)
    return _run("sa-check", "sa_check", options, unknown, out=out, csv=csv, plots=plots, progress=progress)


def osa_check(
    *,
    seed: int = 0,
    alpha: float | Sequence[float] | None = None,
    steps: int = 12,
    schedule: str | Sequence[str] | None = None,
    d_model: int = 8,
    d_v: int = 2,
    trials: int = 3,
    timing: bool = True,
    out: str | Path | None = None,
    csv: bool = False,
    progress: Progress = True,
    **unknown: Any,
) -> CheckResult:
    """Check the Orthogonal Self-Attention theorems (Zhang & Martens): ``attnspec osa-check``.

    Parameters
    ----------
    seed : int
        Seed of every random draw, >= 0.
    alpha : float or sequence of float, optional
        alpha of the Thm 2.1/3.1/2.2 instances (finite, |alpha| <= 1000); default 0.05, 0.5, 2.
    steps : int
        Largest Newton–Schulz step K of the Thm 3.1 sweep (K = 0..steps, 0..100).
    schedule : str or sequence of str, optional
        Newton–Schulz schedules: cubic, muon, polar-express, or custom ``"a,b[,c]"`` /
        ``"a,b,c;a,b,c"``; default the three named.
    d_model : int
        Width d of the Jacobian check.
    d_v : int
        Head width of the Jacobian check (1 <= d_v, 2*d_v <= d_model); its instance has
        N = 3*d_v tokens (the low-rank regime), plus one full-span case N = 2*d_v.
    trials : int
        Random instances per configuration (1..1000).
    timing : bool
        Time the forward pass for N = 256..4096.
    out : str or Path, optional
        Write the CLI's ``--out`` layout there.
    csv : bool
        Also write CSV copies of the tables (with ``out``).
    progress : bool or callable
        True: one line per step on stderr; False: silent; a callable receives each message.

    Returns
    -------
    CheckResult

    Raises
    ------
    InputError
        An unknown option, a value of the wrong type or out of range (the CLI's message).
    """
    options = dict(seed=seed, alpha=alpha, steps=steps, schedule=schedule, d_model=d_model, d_v=d_v, trials=trials,
                   timing=timing)
    return _run("osa-check", "osa_check", options, unknown, out=out, csv=csv, progress=progress)


def osa_train(
    *,
    models: str | None = None,
    seeds: int | None = None,
    seed: int = 0,
    epochs: int | None = None,
    patience: int | None = None,
    val_fraction: float | None = None,
    batch_size: int | None = None,
    lr: float | None = None,
    schedule: str | None = None,
    weight_decay: float | None = None,
    grad_clip: float | None = None,
    depth: int | None = None,
    dim: int | None = None,
    heads: int | None = None,
    mlp_ratio: int | None = None,
    patch_size: int | None = None,
    alpha_init: float | None = None,
    ns_steps: int | None = None,
    ns_coefficients: str | None = None,
    test_fraction: float | None = None,
    quick: bool = False,
    threads: int = 1,
    out: str | Path | None = None,
    resume: bool = False,
    csv: bool = False,
    progress: Progress = True,
    **unknown: Any,
) -> CheckResult:
    """Train ViT, its ablations and the OSA-Transformer on 8×8 digits to a stopping rule on
    validation accuracy, beside the OSA paper's Table 2 (MNIST): ``attnspec osa-train``.
    ``None`` means the CLI's default.

    Parameters
    ----------
    models : str, optional
        Comma list among vit, vit-noskip, vit-noskip-noln, osa-qr, osa-ns (default: all five).
    seeds : int, optional
        Replicates per model (default 3; quick: 2).
    seed : int
        Base seed; replicate seeds are spawned from it.
    epochs : int, optional
        Budget: at most this many epochs per run, the same for every model (default 30; quick: 2).
    patience : int, optional
        Stop after this many epochs without a higher validation accuracy and report the
        best-validation checkpoint; 0 = the whole budget, last model (default 10).
    val_fraction : float, optional
        Share of the training split held out for validation (default 0.15, stratified).
    batch_size : int, optional
        Mini-batch size (default 64; quick: 128).
    lr, weight_decay, grad_clip : float, optional
        AdamW peak learning rate (3e-3), weight decay (0.05), gradient-norm clipping (1.0).
    schedule : str, optional
        Learning-rate schedule: cosine (from lr to 0 over the budget) or constant (cosine).
    depth, dim, heads, mlp_ratio, patch_size : int, optional
        Blocks (3), width (32), heads (4), MLP ratio (4), patch side (2).
    alpha_init : float, optional
        Initial OSA alpha (0.1).
    ns_steps : int, optional
        Newton–Schulz iterations for osa-ns (6).
    ns_coefficients : str, optional
        Newton–Schulz schedule: cubic, muon or polar-express (cubic).
    test_fraction : float, optional
        Held-out test fraction, in (0, 1) (0.2).
    quick : bool
        Tiny models, 2 seeds, 2 epochs (seconds).
    threads : int
        torch CPU threads.
    out : str or Path, optional
        Write the CLI's ``--out`` layout there. On Ctrl-C the finished runs are kept there.
    resume : bool
        Continue the interrupted run in ``out`` (same options).
    csv : bool
        Also write CSV copies of the tables (with ``out``).
    progress : bool or callable
        True: one line per run on stderr; False: silent; a callable receives each message.

    Returns
    -------
    CheckResult
        ``tables["osa_train_summary"]`` holds test accuracy mean ± sd per model;
        ``tables["osa_train_paper"]`` sets it beside the paper's Table 2 and
        ``tables["osa_train_orderings"]`` says which of the paper's orderings reproduce.

    Raises
    ------
    InputError
        An unknown option, a value of the wrong type or out of range (the CLI's message).
    KeyboardInterrupt
        On Ctrl-C (after keeping the finished runs in ``out``, when given).
    """
    options = dict(models=models, seeds=seeds, seed=seed, epochs=epochs, patience=patience,
                   val_fraction=val_fraction, batch_size=batch_size, lr=lr, schedule=schedule,
                   weight_decay=weight_decay, grad_clip=grad_clip, depth=depth, dim=dim, heads=heads,
                   mlp_ratio=mlp_ratio, patch_size=patch_size, alpha_init=alpha_init, ns_steps=ns_steps,
                   ns_coefficients=ns_coefficients, test_fraction=test_fraction, quick=quick, threads=threads)
    return _run("osa-train", "osa_train", options, unknown, out=out, resume=resume, csv=csv, progress=progress)


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
        (:func:`attnspec.claim_registry.catalogue_frame`).

    Raises
    ------
    InputError
        ``paper`` is not one of the papers.
    """
    from attnspec.claim_registry import catalogue_frame

    return catalogue_frame(paper)
