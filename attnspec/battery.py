"""The shape every checking command shares: ``Config.validate → run(config) → Result → write``.

A *battery* checks the claims of one paper. Its module (``attnspec.theory.<paper>.battery``,
listed in :data:`BATTERIES`) provides

* ``config_from_options(options: Mapping[str, Any]) -> Config`` — the command's options by
  name (declared once in :mod:`attnspec.options.checks`; :func:`run_battery` passes every one,
  its type checked and, when not given, at its declared default) → a validated config;
  raises :class:`attnspec.errors.InputError` naming the option and the allowed range,
  before any computation;
* ``run(config, *, progress=None) -> BatteryResult`` — the computation, returning tidy
  tables, the verdict rows (keyed on claim ids, :mod:`attnspec.verdicts.registry`) and the meta data.

and optionally

* ``attention_request(config) -> AttentionRequest | None`` — the real attention matrices
  the battery needs (model, corpus, n, count). Theory modules never load a model or data:
  :func:`run_battery`, which sits above them, loads the matrices
  (:func:`load_attention`, through :func:`attnspec.spectra.real_attention.sample_attention`) and passes
  them to ``run(config, progress=..., attention=array)`` as an array of shape
  (count, n, n).

The CLI and ``attnspec report`` both call :func:`run_battery`, in-process, then
:func:`write_result` (tables + ``verdicts.parquet`` + ``meta.json``); figures are drawn
afterwards from the saved tables only (:data:`PLOTTERS`).
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from attnspec.options.declaration import option_flag as option_flag  # the flag of an option name, for callers
from attnspec.theorem.registry import RegistryView
from attnspec.theorem.result import AttentionRequest as AttentionRequest
from attnspec.theorem.result import BatteryResult as BatteryResult
from attnspec.theorem.result import config_identity as config_identity


def _registered_batteries() -> dict[str, Any]:
    from attnspec.theorem.registry import commands

    return {name: c.battery for name, c in commands().items()}


def _registered_plotters() -> dict[str, Any]:
    from attnspec.theorem.registry import commands

    return {name: c.plotter for name, c in commands().items() if c.plotter is not None}


#: command → its battery (a module name, or a plug-in's object), read from the open registry
#: (:mod:`attnspec.theorem.registry`).
BATTERIES: Mapping[str, Any] = RegistryView(_registered_batteries)

#: command → its plotter (``"module:function"`` or a callable) drawing the figures of a results
#: directory from its saved tables; a command without figures is absent.
PLOTTERS: Mapping[str, Any] = RegistryView(_registered_plotters)

#: The table every battery writes its verdict rows to (``verdicts.parquet``).
VERDICT_TABLE = "verdicts"


def _declared_types() -> dict[str, dict[str, tuple[str | None, ...]]]:
    from attnspec.options.checks import OPTIONS

    return {command: {o.name: o.kinds for o in options} for command, options in OPTIONS.items()}


#: The kinds of value every option of each command takes (name as in the options mapping →
#: accepted kinds; ``None`` among them: the option may be left unset), read off the
#: declarations of every registered command.
OPTION_TYPES: Mapping[str, dict[str, tuple[str | None, ...]]] = RegistryView(_declared_types)


def check_option_types(
    command: str, options: Mapping[str, Any], *, lists: bool = True, text: bool = True
) -> dict[str, Any]:
    """``options`` with each value checked (and text converted) against the command's declared
    options (:func:`attnspec.options.declaration.check_types`): a value of the wrong type is one
    :class:`~attnspec.errors.InputError` with the command line's message, e.g.
    ``Invalid value for '--n': 'abc' is not a valid integer.``, and a seed is
    ``0 <= seed < 2**63``. ``text=False`` (the Python API) takes numbers and booleans only as
    such, never as strings; ``lists=False`` leaves list-valued options to the battery.

    Parameters
    ----------
    command : str
        The command whose declared options the values are checked against (``"jl-check"``,
        ``"sa-check"``, ``"osa-check"``, ``"osa-train"``); any other declares none, and its
        values pass unchecked.
    options : mapping of str to object
        Option name (the Python parameter's, ``"seq_len"``) → value; names the command does
        not declare, and None for an option that may be unset, pass through unchanged.
    lists : bool
        Check list-valued options too; False leaves them as given.
    text : bool
        Convert text (``"12"``, ``"true"``) to the option's type, as the command line does;
        False refuses text where a number or a boolean is declared.

    Returns
    -------
    dict of str to object
        A copy of ``options`` with each checked value converted to its declared type.

    Raises
    ------
    InputError
        A value not of its option's type, or a seed outside ``0 <= seed < 2**63``.
    """
    from attnspec.options.checks import OPTIONS
    from attnspec.options.declaration import check_types

    return check_types(OPTIONS.get(command, ()), options, lists=lists, text=text)


def check_attention_request(request: AttentionRequest) -> None:
    """Refuse, before anything is loaded or computed, an n beyond the model's position table
    (read from its config alone); a one-line :class:`attnspec.errors.InputError`.

    Parameters
    ----------
    request : AttentionRequest
        The model, corpus, n, number of matrices and seed a battery asks for.

    Raises
    ------
    InputError
        ``request.seq_len`` exceeds the model's position table.
    """
    from attnspec.errors import InputError
    from attnspec.spectra.models import model_max_seq_len

    longest = model_max_seq_len(request.model)
    if longest is not None and request.seq_len > longest:
        raise InputError(
            f"{request.seq_len_option} {request.seq_len} exceeds what --model {request.model} allows for "
            f"real attention: it must be in [2, {longest}] (its position table, special tokens included)"
        )


def load_attention(request: AttentionRequest) -> np.ndarray:
    """Load the matrices of ``request`` with :func:`attnspec.spectra.real_attention.sample_attention`.

    Parameters
    ----------
    request : AttentionRequest
        The model, corpus, n, number of matrices and seed a battery asks for.

    Returns
    -------
    ndarray, shape (count, n, n), float64
        Row-stochastic attention matrices P.
    """
    from attnspec.errors import check_memory
    from attnspec.spectra.real_attention import sample_attention

    # before the model loads: the captured matrices are held in float64 while they are pooled,
    # stacked and picked from (three copies at least)
    n = request.seq_len
    check_memory(f"{request.count} real attention matrices of {n}×{n}", 3 * 8 * request.count * n * n)
    P = sample_attention(
        request.model,
        request.data,
        seq_len=request.seq_len,
        count=request.count,
        seed=request.seed,
        data_dir=request.data_dir,
    )
    P = np.asarray(P.detach().cpu().numpy() if hasattr(P, "detach") else P, dtype=np.float64)
    if P.ndim != 3 or P.shape[1:] != (request.seq_len, request.seq_len):
        raise RuntimeError(
            f"sample_attention returned shape {P.shape}, expected (count, {request.seq_len}, {request.seq_len})"
        )
    return P


def battery_module(command: str) -> Any:
    """The battery of ``command`` (a module, or a plug-in's object); :class:`~attnspec.errors.InputError`
    (a ValueError) naming the known commands otherwise.

    Parameters
    ----------
    command : str
        A registered checking command (``"jl-check"``, ``"sa-check"``, ``"osa-check"``,
        ``"osa-train"``, or a plug-in's, :mod:`attnspec.theorem.registry`).

    Returns
    -------
    object
        The battery (``config_from_options``, ``run``, optionally ``attention_request``).
    """
    from attnspec.theorem.registry import command as registered

    return registered(command).battery_object()


def run_battery(
    command: str,
    options: Mapping[str, Any] | None = None,
    *,
    progress: Callable[[str], None] | None = None,
    attention: np.ndarray | None = None,
    out_dir: Path | None = None,
    resume: bool = False,
) -> BatteryResult:
    """Validate ``options`` into the command's config and run its battery.

    Parameters
    ----------
    command : str
        ``"jl-check"``, ``"sa-check"``, ``"osa-check"`` or ``"osa-train"``.
    options : mapping, optional
        Option values by CLI name (``"trials_other"`` for ``--trials-other``); default: none
        (every option at its default). A value of the wrong type is an :class:`InputError`.
    progress : callable, optional
        Receives one-line progress messages.
    attention : ndarray of shape (count, n, n), optional
        Real attention matrices to use instead of loading the ones the battery requests
        (a library user, or a test with a tiny model, passes its own).
    out_dir : Path, optional
        Where the result will be written: checked before any computation
        (:func:`attnspec.storage.results.check_same_run`: empty, absent, or the same run).
    resume : bool
        When ``out_dir`` holds a result of the same run, pass its tables to the battery's
        ``run(..., previous=tables)`` (only batteries that can resume: osa-train, jl-check), which keeps
        the work done there. Without it, a ``status: partial`` result there is refused.

    Returns
    -------
    BatteryResult
    """
    from attnspec.errors import InputError

    module = battery_module(command)
    if options is None:
        options = {}
    if not isinstance(options, Mapping):
        raise InputError(f"options must be a mapping of option names to values, got {type(options).__name__}")
    config = _config(command, module, options)
    identity = config_identity(config)
    previous = None
    if out_dir is not None:
        from attnspec.storage.results import check_same_run

        if check_same_run(Path(out_dir), identity, kind=command):
            previous = _previous_tables(Path(out_dir), command, resume)
    request = getattr(module, "attention_request", lambda _c: None)(config)
    if request is not None and attention is None:
        check_attention_request(request)
        if progress:
            progress(
                f"capturing {request.count} real attention matrices from {request.model} on {request.data} "
                f"(n = {request.seq_len})"
            )
        attention = load_attention(request)
    extra = {} if previous is None else {"previous": previous}
    if extra and "previous" not in inspect.signature(module.run).parameters:
        from attnspec.errors import InputError

        raise InputError(f"{command} cannot resume a result; run it without --resume")
    if attention is not None:
        result = module.run(config, progress=progress, attention=np.asarray(attention, dtype=np.float64), **extra)
    else:
        result = module.run(config, progress=progress, **extra)
    if result.command != command:
        raise RuntimeError(f"the battery of {command} returned a result for {result.command!r}")
    from attnspec.verdicts import registry as claim_registry

    claim_registry.check_rows(result.verdicts)
    result.meta.setdefault("identity", identity)
    return result


def battery_config(command: str, options: Mapping[str, Any]) -> Any:
    """The validated config ``command`` would run with ``options``, without running anything
    (a batch of runs, such as the report's experiments, is checked whole before the first).

    Parameters
    ----------
    command : str
        A key of :data:`BATTERIES`.
    options : mapping
        Option values by CLI name (see :func:`run_battery`).

    Returns
    -------
    config
        The command's validated config.
    """
    return _config(command, battery_module(command), options)


def _config(command: str, module: Any, options: Mapping[str, Any]) -> Any:
    """The battery's validated config, before any computation: the names, the types and the
    bounds of :mod:`attnspec.options.checks`, every option missing at its declared default,
    and the battery's own checks between them; every bad option is one InputError, never a
    bare TypeError/ValueError from inside the config."""
    from attnspec.errors import AttnspecError, InputError
    from attnspec.options.checks import options_of
    from attnspec.options.declaration import check_bounds, check_names, with_defaults

    declared = options_of(command)
    named = check_names(declared, options, owner=command)
    checked = with_defaults(declared, check_option_types(command, named, lists=False))
    # a count above its declared ceiling first: building the config may cost as much as the value
    # (osa-train's --ns-steps 10**30 lists that many Newton–Schulz steps); a real number goes on
    # to the check's own message, which also names a non-finite one
    check_bounds([o for o in declared if o.high is not None and _above(o, checked.get(o.name))], checked)
    try:
        config = module.config_from_options(checked)
    except AttnspecError:
        raise
    except (TypeError, ValueError) as e:
        raise InputError(f"invalid options for {command}: {e}") from None
    check_bounds(declared, checked)  # after the battery's own checks, which word the message their way
    return config


def _above(opt: Any, value: Any) -> bool:
    """Whether ``value`` (or an item of it) is an integer above the option's declared ceiling."""
    import numbers

    items = value if isinstance(value, (list, tuple)) else [value]
    return any(
        isinstance(v, numbers.Integral)
        and not isinstance(v, bool)
        and (v >= opt.high if opt.high_open else v > opt.high)
        for v in items
    )


def _previous_tables(out_dir: Path, command: str, resume: bool) -> dict[str, pd.DataFrame] | None:
    """With ``resume``, the tables of the same-run result in ``out_dir``; without it, None,
    or a one-line refusal when that result is partial (its work would be thrown away)."""
    from attnspec.errors import ResultsError
    from attnspec.storage.results import read_meta, read_table

    meta = read_meta(out_dir)
    if not resume:
        if meta.get("status") == "partial":
            raise ResultsError(
                f"--out {out_dir} holds an interrupted {command} run ({len(meta.get('runs_done', []))} "
                f"of {meta.get('runs_total')} {meta.get('unit', 'runs')} done); continue it with the "
                f"same command and "
                f"--resume, or choose another directory"
            )
        return None
    return {p.stem: read_table(out_dir, p.stem) for p in sorted(out_dir.glob("*.parquet")) if p.stem != VERDICT_TABLE}


def _partial_only_tables(out_dir: Path) -> list[str]:
    """The tables that a partial result in ``out_dir`` lists as its own (``partial_tables`` in
    meta.json): removed once the complete result is written over it."""
    from attnspec.storage.results import META_FILE, read_meta

    if not (out_dir / META_FILE).is_file():
        return []
    meta = read_meta(out_dir)
    return [str(t) for t in meta.get("partial_tables", [])] if meta.get("status") == "partial" else []


def _holds_complete(out_dir: Path) -> bool:
    """Whether ``out_dir`` holds a finished result (a meta.json not marked ``status: partial``)."""
    from attnspec.storage.results import META_FILE, read_meta

    return (Path(out_dir) / META_FILE).is_file() and read_meta(Path(out_dir)).get("status") != "partial"


def plot_results(command: str, out_dir: Path) -> list[Path]:
    """Draw the figures of a saved ``command`` result from its tables only.

    Parameters
    ----------
    command : str
        The registered command that wrote the result.
    out_dir : Path
        The result's directory; the figures (PNG and SVG) are written into it.

    Returns
    -------
    list of Path
        The figure files; empty for a command that draws none.
    """
    from attnspec.theorem.registry import command as registered

    plot = registered(command).plot_function()
    return [] if plot is None else [Path(p) for p in (plot(Path(out_dir)) or [])]


def result_identity(result: BatteryResult) -> dict[str, Any]:
    """The parameters that define a run (``meta["identity"]``, else ``meta["parameters"]``), JSON-ready.

    Parameters
    ----------
    result : BatteryResult

    Returns
    -------
    dict
        Parameter name → value, tuples as lists.
    """
    ident = result.meta.get("identity", result.meta.get("parameters", {}))
    return {k: (list(v) if isinstance(v, tuple) else v) for k, v in dict(ident).items()}


def write_result(result: BatteryResult, out_dir: Path, *, csv: bool = False) -> Path:
    """Write a battery's result: every table, ``verdicts.parquet`` and ``meta.json``.

    ``meta.json`` holds the battery's meta (parameters, seed, notes, wall time), the
    ``kind`` (the command) and ``identity`` that :func:`attnspec.storage.results.check_same_run`
    compares, the sorted ``claims`` ids of its verdict rows, and the environment.

    Parameters
    ----------
    result : BatteryResult
    out_dir : Path
        The results directory (created if missing).
    csv : bool
        Also write CSV copies of the tables.

    Returns
    -------
    Path
        ``out_dir``.
    """
    from attnspec.storage.results import environment_meta, result_files, write_meta, write_table

    out_dir = Path(out_dir)
    meta = {
        "kind": result.command,
        "command": f"attnspec {result.command}",
        "identity": result_identity(result),
        **{k: v for k, v in result.meta.items() if k != "identity"},
        "claims": sorted({r.claim for r in result.verdicts}),
        **environment_meta(),
    }
    with result_files(out_dir):  # every table, then meta.json, renamed together: a full disk leaves no half result
        for name, frame in result.tables.items():
            if frame is not None and len(frame.columns):
                write_table(out_dir, name, frame, csv=csv)
        write_table(out_dir, VERDICT_TABLE, result.verdict_frame(), csv=csv)
        write_meta(out_dir, meta)
    return out_dir


def run_and_write(
    command: str,
    options: Mapping[str, Any],
    out_dir: Path | None = None,
    *,
    csv: bool = False,
    plots: bool = True,
    progress: Callable[[str], None] | None = None,
    attention: np.ndarray | None = None,
    resume: bool = False,
) -> BatteryResult:
    """What every checking command and ``attnspec report`` do: validate, run, write, draw.

    With ``out_dir``: the directory is checked (usable, and empty or holding the same run)
    and locked before any computation (:func:`attnspec.storage.results.writing_to`); SIGTERM is
    taken like Ctrl-C; the tables, ``verdicts.parquet``, ``meta.json`` and the figures are
    written together, an interruption meanwhile being held until they are complete.

    Parameters
    ----------
    command : str
        A key of :data:`BATTERIES`.
    options : mapping
        Option values by CLI name (see :func:`run_battery`).
    out_dir : Path, optional
        The results directory; nothing is written without it.
    csv : bool
        Also write CSV copies of the tables.
    plots : bool
        Draw the figures (:data:`PLOTTERS`) from the saved tables.
    progress : callable, optional
    attention : ndarray of shape (count, n, n), optional
        Real attention matrices (see :func:`run_battery`).
    resume : bool
        Continue the interrupted result in ``out_dir`` (see :func:`run_battery`).

    Returns
    -------
    BatteryResult

    Raises
    ------
    KeyboardInterrupt
        On Ctrl-C or SIGTERM. When the battery's interrupt carries a ``partial``
        :class:`BatteryResult` (osa-train: the finished runs; jl-check: the finished claim
        groups), it is written to ``out_dir`` first (``status: partial`` in meta.json, no
        figures), for ``resume``; the complete result written later removes the tables the
        partial one lists as its own (``partial_tables``).
    """
    if out_dir is None:
        return run_battery(command, options, progress=progress, attention=attention)
    from attnspec.runtime.signals import deferred_interrupts, sigterm_as_interrupt
    from attnspec.storage.results import writing_to

    with writing_to(Path(out_dir), f"attnspec {command}"), sigterm_as_interrupt():
        stale = _partial_only_tables(Path(out_dir)) if resume else []
        try:
            result = run_battery(
                command, options, progress=progress, attention=attention, out_dir=out_dir, resume=resume
            )
        except KeyboardInterrupt as e:
            partial = getattr(e, "partial", None)
            if isinstance(partial, BatteryResult) and partial.meta.get("runs_done") and not _holds_complete(out_dir):
                with deferred_interrupts():  # a complete result there is kept, never downgraded to partial
                    write_result(partial, out_dir, csv=csv)
            raise
        with deferred_interrupts():
            write_result(result, out_dir, csv=csv)
            for name in stale:  # the interrupted run's own tables (jl-check: jl_partial_*), now superseded
                if name not in result.tables:
                    for suffix in (".parquet", ".csv"):
                        (Path(out_dir) / f"{name}{suffix}").unlink(missing_ok=True)
            if plots:
                _draw_or_remove(command, result, Path(out_dir))
    return result


def _draw_or_remove(command: str, result: BatteryResult, out_dir: Path) -> None:
    """Draw the figures of the result just written; if any cannot be written (a full disk, a
    bug), none is kept and the result's tables and meta.json are removed as well: a result is
    whole or absent, never tables without their figures."""
    from attnspec.errors import NoSpaceError
    from attnspec.storage.results import META_FILE, result_files

    try:
        with result_files(out_dir):  # the figures are renamed into place together, or discarded
            plot_results(command, out_dir)
    except BaseException as e:
        (out_dir / META_FILE).unlink(missing_ok=True)  # first: no reader takes the folder for a result
        for name in [*result.tables, VERDICT_TABLE]:
            for suffix in (".parquet", ".csv"):
                (out_dir / f"{name}{suffix}").unlink(missing_ok=True)
        if isinstance(e, NoSpaceError):
            reason = getattr(e, "reason", "No space left on device")
            raise NoSpaceError(
                f"{reason} drawing the figures of {out_dir}; no figure was kept and the result's "
                "tables and meta.json were removed too (a result is whole or absent): free some "
                "space and run the command again"
            ) from None
        raise
