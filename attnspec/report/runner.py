"""Running one experiment: in-process through the same library call as its command (or a
subprocess for a command without one), unless its saved results are present and fresh.
"""

from __future__ import annotations

import importlib
import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from attnspec import __version__
from attnspec.errors import InputError, ResultsError, printable
from attnspec.report.experiments import RUN_FILE, VERDICT_FILE, Experiment, _cli_args
from attnspec.report.files import _refuse_link, _write_text
from attnspec.storage.writer import atomic_write_bytes


@dataclass
class RunRecord:
    name: str
    status: str  # "ran", "reused", "skipped", "failed"
    seconds: float
    detail: str = ""


def failure_line(stderr: str) -> str:
    """The line that says why a command failed: its last ``error:`` line (the CLI's one-line
    error contract), else the last line of a traceback, else the last line at all.

    Parameters
    ----------
    stderr : str
        The command's standard error.

    Returns
    -------
    str
    """
    lines = [ln.strip() for ln in stderr.strip().splitlines() if ln.strip()]
    errors = [ln for ln in lines if ln.startswith("error:")]
    return errors[-1] if errors else (lines[-1] if lines else "(no output)")


def _drawn_otherwise(exp: Experiment, out: Path, quick: bool) -> bool:
    """A saved spectrum result whose inputs another selection rule drew than the one the
    experiment now asks for (the default rule changed once): stale, whatever its key says."""
    if exp.command != "spectrum":
        return False
    from attnspec.spectra.data.selection import selection_of

    wanted = str(exp.effective_args(quick).get("selection", "pool"))
    # a scaling study keeps one run per length under n<len>/; a single run its meta.json at the
    # top (its state.npz is not committed, so it cannot tell the two apart)
    top = out / "meta.json"
    scaling = top.is_file() and '"spectrum-scaling"' in top.read_text()
    metas = sorted(out.glob("n*/meta.json")) if scaling or not top.is_file() else [top]
    for path in metas:
        try:
            corpus = json.loads(path.read_text()).get("corpus") or {}
        except (OSError, ValueError):
            return True
        if selection_of(corpus) != wanted:
            return True
    return not metas


def run_experiment(
    exp: Experiment, results: Path, *, quick: bool, force: bool, data_dir: str | None, log: Callable[[str], None]
) -> RunRecord:
    """Run one experiment into ``results/<name>`` unless fresh results are there.

    Checking commands run in-process through :func:`attnspec.battery.run_battery` and
    :func:`attnspec.battery.write_result`; the spectrum job through
    :func:`attnspec.spectra.job.run_spectrum`. A command whose battery module is not
    importable (a paper package not built yet) falls back to the CLI in a subprocess.

    Parameters
    ----------
    exp : Experiment
        The experiment.
    results : Path
        The folder of every experiment's results directory.
    quick : bool
        Run the experiment's quick arguments.
    force : bool
        Run it even when fresh results are there.
    data_dir : str, optional
        The data folder passed on.
    log : callable
        Receives progress lines.

    Returns
    -------
    RunRecord
        ``name``, ``status`` (``ran``, ``reused``, ``skipped``, ``failed``), ``seconds``,
        ``detail``.
    """
    out = results / exp.name
    key = exp.key(quick)
    record_path = out / RUN_FILE
    resolved = resolved_options(exp, results, quick=quick)
    if not force and record_path.is_file():
        rec = json.loads(record_path.read_text())
        if is_fresh(rec, exp, resolved, quick=quick) and not _drawn_otherwise(exp, out, quick):
            if exp.command == "spectrum" and _add_nulls(exp, out, quick, data_dir, log):
                return RunRecord(
                    exp.name, "reused", float(rec.get("seconds", 0.0)), "fresh results reused, nulls added"
                )
            return RunRecord(exp.name, "reused", float(rec.get("seconds", 0.0)), "fresh results reused")
    args = exp.effective_args(quick)
    if "data" in args and "data-dir" not in args and _reads_corpora(exp.command):
        if data_dir is None:
            return RunRecord(exp.name, "skipped", 0.0, "no local corpora (set ATTNSPEC_DATA_DIR or --data-dir)")
        args = {**args, "data-dir": data_dir}
    _refuse_link(out)  # checked for all experiments up front (run_report); again here for direct callers
    if out.resolve().parent != Path(results).resolve() or out.name != exp.name:
        # an experiment only ever empties its own folder results/<name>, never results/ or above
        raise InputError(
            f"{exp.path}: experiment name {printable(repr(exp.name))} does not name one folder "
            f"inside {results}; nothing was removed"
        )
    resume = _resumable(exp, out, key, resolved)
    if out.exists() and not resume:
        shutil.rmtree(out)
    out.mkdir(parents=True, exist_ok=True)
    log(f"{'resuming' if resume else 'running'} {exp.name}: attnspec {exp.command} {' '.join(_cli_args(args))}")
    t0 = time.perf_counter()
    if _in_process(exp.command):
        try:
            error = _run_in_process(exp, args, out, log, resume=resume)
        except KeyboardInterrupt:  # recorded unfinished, under its key: the next report resumes it
            unfinished = {"key": key, "resolved": resolved, "returncode": None, "interrupted_utc": _utc_now()}
            atomic_write_bytes(record_path, (json.dumps(unfinished, indent=2) + "\n").encode())
            raise
        how = "in-process"
    else:
        error = _run_subprocess(exp, args, out)
        how = "subprocess"
    seconds = time.perf_counter() - t0
    record = {
        "key": key,
        "resolved": resolved,
        "command": ["attnspec", exp.command, *_cli_args(args)],
        "quick": quick,
        "returncode": 0 if error is None else 1,
        "how": how,
        "seconds": round(seconds, 2),
        "finished_utc": _utc_now(),
        "attnspec_version": __version__,
    }
    atomic_write_bytes(record_path, (json.dumps(record, indent=2) + "\n").encode())
    if error is not None:
        # every failure names the experiment file, so the line leads back to what to fix
        return RunRecord(exp.name, "failed", seconds, f"{exp.path}: {error}")
    return RunRecord(exp.name, "ran", seconds)


def _utc_now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


def _resumable(exp: Experiment, out: Path, key: str, resolved: dict[str, Any] | None) -> bool:
    """Whether ``out`` holds an unfinished spectrum run of this very experiment (a record of the
    same key and resolved options that did not succeed: failed, or interrupted before its end),
    which the run then resumes (:attr:`SpectrumConfig.resume`) instead of starting over. Only
    the spectrum job resumes: its runs check their own identity on resume and keep what they
    computed, input by input and length by length."""
    record_path = out / RUN_FILE
    if exp.command != "spectrum" or not record_path.is_file():
        return False
    try:
        rec = json.loads(record_path.read_text())
    except (OSError, ValueError):
        return False
    return rec.get("key") == key and rec.get("returncode") != 0 and rec.get("resolved") == resolved


def resolved_options(exp: Experiment, results: Path, *, quick: bool) -> dict[str, Any] | None:
    """Every option value ``exp`` runs with, the declared defaults included, as JSON values: a
    default changed in the code changes it, and the saved result is stale (:func:`is_fresh`).
    None where the options cannot be read (refused before any experiment runs).

    A spectrum experiment's are its run's configuration (less ``out``, ``overwrite``, ``resume``
    and the machine's ``data_dir``), its lengths and projection ks (not its nulls: they are added
    beside fresh results); a checking command's, every declared option's value.

    Parameters
    ----------
    exp : Experiment
        One experiment of the report.
    results : Path
        The report's ``results/`` folder.
    quick : bool
        The quick report's values.

    Returns
    -------
    dict or None
    """
    import dataclasses

    from attnspec.errors import AttnspecError

    args = exp.effective_args(quick)
    try:
        if exp.command == "spectrum":
            cfg, lengths, _, ks = _spectrum_plan(_spectrum_options(args), results / exp.name)
            leave = ("out", "overwrite", "resume", "data_dir", "seq_len")
            fields = {k: v for k, v in dataclasses.asdict(cfg).items() if k not in leave}
            values: dict[str, Any] = {**fields, "seq_len": list(lengths), "projection_k": list(ks)}
        else:
            from attnspec.options.checks import options_of
            from attnspec.options.declaration import check_names, with_defaults

            declared = options_of(exp.command)
            values = with_defaults(declared, check_names(declared, _options(args), owner=exp.command))
    except (AttnspecError, KeyError):  # an unreadable experiment is refused by check_options
        return None
    return json.loads(json.dumps(values, sort_keys=True, default=str))


def is_fresh(rec: dict[str, Any], exp: Experiment, resolved: dict[str, Any] | None, *, quick: bool) -> bool:
    """Whether a saved run record still stands for ``exp``: it succeeded, under the same key
    (arguments, version, code; :meth:`Experiment.key`) and, where it recorded them, the same
    resolved option values (:func:`resolved_options`).

    Parameters
    ----------
    rec : dict
        The experiment's ``report_run.json``.
    exp : Experiment
        The experiment.
    resolved : dict or None
        Its option values now.
    quick : bool
        The quick report.

    Returns
    -------
    bool
    """
    if rec.get("key") != exp.key(quick) or rec.get("returncode") != 0:
        return False
    stored = rec.get("resolved")
    return stored is None or resolved is None or stored == resolved


def _in_process(command: str) -> bool:
    """True when ``command`` runs as a library call: the spectrum job, or a battery whose module imports."""
    if command == "spectrum":
        return True
    from attnspec.battery import BATTERIES

    module = BATTERIES.get(command)
    if module is None:
        return False
    if not isinstance(module, str):  # a plug-in's battery object: imported when it registered
        return True
    try:
        importlib.import_module(module)
    except ModuleNotFoundError as exc:
        # only the battery package itself may be missing; an import error inside it is a bug
        if exc.name != module and not module.startswith(f"{exc.name}."):
            raise
        return False
    return True


def _options(args: dict[str, Any]) -> dict[str, Any]:
    """TOML arguments as library options: ``seq-len`` → ``seq_len``; ``"default"`` drops the option."""
    return {k.replace("-", "_"): v for k, v in args.items() if v != "default"}


def _spectrum_options(args: dict[str, Any]) -> dict[str, Any]:
    """A spectrum experiment's TOML arguments by the names of ``attnspec spectrum``'s options
    (:data:`attnspec.options.spectrum.SPECTRUM`): an unknown name is refused listing them, and
    ``num-inputs`` (or its alias ``num-sentences``) arrives as the config's ``num_sentences``.
    The options that concern the command line's figures and output (``at``, ``plots``,
    ``label``, ``quiet``) are taken and left to the report, which draws its own."""
    from attnspec.options.declaration import check_names, check_types
    from attnspec.options.spectrum import SPECTRUM, check_given_values

    declared = [o for o in SPECTRUM if o.on("cli")]
    options = check_names(declared, _options(args), owner="spectrum")
    # each value read as the command line reads its text (a number for --seed); the options the
    # command line reads as text of their own (--seq-len 32,64, --num-inputs all) are parsed later
    options = check_types([o for o in declared if o.cli_kind is None], options, lists=False)
    check_given_values(options)  # every declared bound and choice, before any experiment runs
    if "num_inputs" in options:
        options["num_sentences"] = options.pop("num_inputs")
    return options


def _run_in_process(
    exp: Experiment, args: dict[str, Any], out: Path, log: Callable[[str], None], *, resume: bool = False
) -> str | None:
    """Run ``exp`` through the library (a spectrum run resumed in ``out`` with ``resume``); None on
    success, else the one-line error (traceback in stderr.txt)."""
    import traceback

    from attnspec.errors import AttnspecError

    def progress(msg: str) -> None:
        log(f"  {exp.name}: {msg}")

    try:
        if exp.command == "spectrum":
            _run_spectrum(_spectrum_options(args), out, resume=resume)
            return None
        from attnspec.battery import run_and_write
        from attnspec.verdicts.classify import verdicts_json

        result = run_and_write(exp.command, _options(args), out, progress=progress)
        if exp.verdicts:
            _write_text(out / VERDICT_FILE, verdicts_json(result.verdicts) + "\n")
        return None
    except AttnspecError as e:
        _write_text(out / "stderr.txt", f"error: {e}\n")
        return f"error: {e}"
    except Exception as e:  # a bug: keep its traceback, let the other experiments run
        _write_text(out / "stderr.txt", traceback.format_exc())
        return f"error: {type(e).__name__}: {e}"


def _spectrum_plan(options: dict[str, Any], out: Path) -> tuple[Any, list[int], list[str], list[int]]:
    """(config, lengths, null baselines, projection ks) of a spectrum experiment's TOML
    options (``SpectrumConfig`` fields; ``shard`` as ``"i/N"``; several ``seq-len`` values,
    e.g. ``"32,64"``, make a scaling study as on the command line), every value checked."""
    import dataclasses

    from attnspec.spectra.config import SpectrumConfig, parse_shard
    from attnspec.spectra.data.corpus import check_data_name
    from attnspec.spectra.nulls import parse_baselines
    from attnspec.spectra.projection import DEFAULT_KS, parse_ks
    from attnspec.spectra.scaling import parse_lengths

    fields = {f.name for f in dataclasses.fields(SpectrumConfig)}
    kw = {k: v for k, v in options.items() if k in fields}
    if "shard" in kw:
        kw["shard"] = parse_shard(kw["shard"])
    lengths = parse_lengths(kw.pop("seq_len", SpectrumConfig.seq_len))
    baselines = parse_baselines(options.get("baseline"))  # as --baseline and --projection-k on the command line
    ks = parse_ks(options.get("projection_k", ",".join(map(str, DEFAULT_KS))))
    check_data_name(kw.get("data"))
    cfg = SpectrumConfig(**kw, seq_len=lengths[-1], out=out, overwrite=True)
    cfg.validate()
    from attnspec.spectra.models import resolve_dtype
    from attnspec.spectra.reading import check_at

    resolve_dtype(cfg.dtype)  # as the command line, before any experiment runs
    if options.get("at") is not None:  # the report draws its own figures, but a bad index is refused
        check_at(options["at"], cfg.seq_len)
    return cfg, lengths, baselines, ks


def _run_spectrum(options: dict[str, Any], out: Path, *, resume: bool = False) -> None:
    """The spectrum job from TOML options (:func:`_spectrum_plan`): one run, or a scaling study
    (every length on the same documents, one run per length under ``out``), then its nulls;
    with ``resume``, what an earlier run of it left in ``out`` is kept and completed."""
    import dataclasses

    from attnspec.spectra.approx.saved import make_plan
    from attnspec.spectra.study import run_study

    cfg, lengths, baselines, ks = _spectrum_plan(options, out)
    if resume:
        cfg = dataclasses.replace(cfg, overwrite=False, resume=True)
    approx = (
        make_plan(
            options["approx"],
            options.get("approx_k", "64,128,256"),
            options.get("approx_split", "8,8"),
            seed=cfg.seed,
            steps=options.get("approx_steps"),
        )
        if options.get("approx")
        else None
    )
    study = run_study(
        cfg, lengths, progress=False, baselines=baselines, projection_k=ks, command="attnspec report", approx=approx
    )
    last = study.last
    if last is not None and study.status == "interrupted":
        raise KeyboardInterrupt(f"in {last.out} after {last.inputs_done} of {last.inputs_total} inputs")
    if last is not None and study.status != "complete":
        raise ResultsError(
            f"stopped early ({study.status}, {last.inputs_done} of {last.inputs_total} inputs at "
            f"{last.out}); the report uses complete results only"
        )


def check_options(exp: Experiment, results: Path, *, quick: bool) -> None:
    """Refuse options ``exp``'s command would refuse, without running it, with the command line's
    answer (:class:`OptionError`, exit 2, for a value not of its option's kind; :class:`InputError`,
    exit 1, for one that cannot be done), naming the experiment file: the report checks every
    experiment before the first runs.
    A command that runs only through the CLI (no importable battery) is checked when it runs.

    Parameters
    ----------
    exp : Experiment
        One experiment of the report.
    results : Path
        The report's ``results/`` folder (the experiment's would be ``results/<name>``).
    quick : bool
        Check the ``[quick]`` options over ``[args]``, as a ``--quick`` report runs them.
    """
    from attnspec.errors import AttnspecError, OptionError

    args = exp.effective_args(quick)
    try:
        if exp.command == "spectrum":
            _spectrum_plan(_spectrum_options(args), results / exp.name)
        elif _in_process(exp.command):
            from attnspec.battery import battery_config

            battery_config(exp.command, _options(args))
    except AttnspecError as e:  # the command line's answer: 2 for a value it cannot read, else 1
        raise (OptionError if isinstance(e, OptionError) else InputError)(f"{exp.path}: {e}") from None


def _reads_corpora(command: str) -> bool:
    """Whether ``command``'s ``data`` names a corpus of the data folder (it takes ``data_dir``);
    osa-train's ``data`` names an installed image set instead."""
    from attnspec.options.checks import OPTIONS

    return command not in OPTIONS or any(o.name == "data_dir" for o in OPTIONS[command])


def _add_nulls(exp: Experiment, out: Path, quick: bool, data_dir: str | None, log: Callable[[str], None]) -> bool:
    """Add the null baselines ``exp`` asks for and its saved results lack, from those results;
    True when some were added."""
    import dataclasses

    from attnspec.spectra.baselines import add_to_study, missing
    from attnspec.spectra.config import SpectrumConfig
    from attnspec.spectra.nulls import parse_baselines
    from attnspec.spectra.scaling import parse_lengths, run_dir

    options = _spectrum_options(exp.effective_args(quick))
    names = parse_baselines(options.get("baseline"))
    lengths = parse_lengths(options.get("seq_len", SpectrumConfig.seq_len))
    runs = [run_dir(out, n) for n in lengths] if len(lengths) > 1 else [out]
    if not names or not any(missing(run, names) for run in runs):
        return False
    log(f"adding null baselines {', '.join(names)} to {exp.name} (from its saved tables)")
    fields = {f.name for f in dataclasses.fields(SpectrumConfig)}
    kw = {k: v for k, v in options.items() if k in fields and k not in ("seq_len", "shard")}
    if "data" in kw and data_dir is not None:
        kw.setdefault("data_dir", data_dir)
    add_to_study(SpectrumConfig(**kw, seq_len=lengths[-1], out=out), names, lengths=lengths)
    return True


def _run_subprocess(exp: Experiment, args: dict[str, Any], out: Path) -> str | None:
    """The CLI in a subprocess (for commands without an importable battery); None on success."""
    cmd = [sys.executable, "-m", "attnspec.cli.main", exp.command, *_cli_args(args), "--out", str(out)]
    if exp.verdicts:
        cmd += ["--json"]
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if proc.returncode != 0:
        _write_text(out / "stderr.txt", proc.stderr)
        return failure_line(proc.stderr)
    if exp.verdicts:
        try:
            rows = json.loads(proc.stdout)
        except json.JSONDecodeError as e:
            raise ResultsError(f"{exp.name}: attnspec {exp.command} --json printed no JSON ({e})") from None
        _write_text(out / VERDICT_FILE, json.dumps(rows, indent=1) + "\n")
    return None
