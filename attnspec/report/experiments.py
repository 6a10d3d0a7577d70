"""The experiments of the report: one TOML file each in ``experiments/`` (see :mod:`attnspec.report`),
validated, with the key that says whether saved results are fresh.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import tomllib

from attnspec import __version__
from attnspec.errors import InputError, check_name
from attnspec.report.code_digest import imported_closure, imports_of, source_digest
from attnspec.theorem.registry import RegistryView


def _citations() -> dict[str, str]:
    from attnspec.theorem.registry import papers

    return {key: paper.citation(markdown=True) for key, paper in papers().items()}


def _commands() -> dict[str, str]:
    from attnspec.theorem.registry import commands

    return {"spectrum": "spectrum", **{name: name for name in commands()}}


#: Paper key → its citation, the one of :class:`attnspec.theorem.registry.Paper` (title in
#: italics): every registered paper, built-in or installed.
PAPERS: Mapping[str, str] = RegistryView(_citations)


#: The commands an experiment may run: the spectrum job and every registered checking command.
COMMANDS: Mapping[str, str] = RegistryView(_commands)


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
        """The command's arguments: ``args``, with ``quick``'s overrides in a quick report.

        Parameters
        ----------
        quick : bool
            The quick report (the ``quick`` table's overrides apply).

        Returns
        -------
        dict
        """
        return {**self.args, **(self.quick if quick else {})}

    def heading(self, quick: bool) -> str:
        """The title with the parameters that produced the numbers under it.

        ``{name}`` placeholders in the TOML title are filled from the effective arguments
        (``{n}`` gives 256 in a quick report and 4096 in a full one); in a quick report
        the overrides the title does not mention are listed after it.

        Parameters
        ----------
        quick : bool
            The quick report (the ``quick`` table's overrides apply).

        Returns
        -------
        str
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
        """What makes saved results fresh: a digest of the command, its effective arguments
        (a spectrum run's ``baseline`` left out: nulls are added beside fresh results),
        ``quick``, the version and, for a checking command, :func:`checking_code_digest`.

        Parameters
        ----------
        quick : bool
            The quick report (the ``quick`` table's overrides apply).

        Returns
        -------
        str
            16 hex digits.
        """
        args = self.effective_args(quick)
        if self.command == "spectrum":
            # nulls are computed from a run's saved tables (attnspec.spectra.baselines): asking for
            # one adds it beside fresh results and leaves the run itself fresh
            args = {k: v for k, v in args.items() if k != "baseline"}
        fields = {"command": self.command, "args": args, "quick": quick, "version": __version__}
        code = checking_code_digest(self.command)
        if code is not None:  # the spectrum job's key stays what it was: its saved results stay fresh
            fields["code"] = code
        blob = json.dumps(fields, sort_keys=True)
        return hashlib.sha256(blob.encode()).hexdigest()[:16]


#: The code a checking command's verdicts depend on, besides its theory package and what it
#: imports: a change to any of it makes the saved result stale (the version number alone did
#: not move when the labels changed). The spectrum job is left out: its results are costly and
#: are kept bit-identical across refactors by the tests; its key is the version and the arguments.
_CHECKING_CODE = (
    "verdicts/classify.py",
    "verdicts/vocabulary.py",
    "numerics/stats.py",
    "numerics/laws.py",
    "battery.py",
    "numerics/linalg.py",
    "theorem/sequential.py",
    "options/checks.py",
)
#: Modules that cannot change a number or a verdict, not followed: error messages, signals,
#: threads and progress, file writing, and the lazy Python API's front.
_NOT_NUMBERS = ("errors.py", "runtime/", "storage/", "__init__.py")
#: What a study that gives no verdicts (a registered command with ``verdicts=False``, such as
#: osa-train) leaves out besides: the verdict classifier, the theorem framework and the battery
#: wiring cannot change its numbers, and the option values that reach it are recorded resolved
#: and compared (report/runner.py), so the option declarations need not be followed either. Its
#: numbers come from the data, the models, the optimiser, the stopping rule and the statistics,
#: which stay in the digest. The OSA package's own ``__init__`` is a lazy front that re-exports
#: the layer.
_NOT_TRAINING_NUMBERS = (*_NOT_NUMBERS, "battery.py", "theorem/", "verdicts/", "options/", "theory/osa/__init__.py")
#: The shared code a study without verdicts does depend on.
_TRAINING_CODE = ("numerics/stats.py", "numerics/linalg.py")


def gives_verdicts(command: str) -> bool:
    """Whether a registered command gives verdict rows (:attr:`attnspec.theorem.registry.Command.verdicts`);
    False for a study that only measures, such as osa-train. An unknown command gives none.

    Parameters
    ----------
    command : str
        The experiment's command.

    Returns
    -------
    bool
    """
    from attnspec.theorem.registry import commands

    found = commands().get(command)
    return found is not None and found.verdicts


def checking_code_files(command: str) -> list[Path]:
    """The modules a checking command's results depend on: the modules of its package it runs
    (:attr:`~attnspec.theorem.registry.Command.code_files`), :data:`_CHECKING_CODE`, and every
    module of attnspec they import, directly or not, lazily or not, but for :data:`_NOT_NUMBERS`;
    for a command that gives no verdicts (:func:`gives_verdicts`, a training study such as
    osa-train), its own modules and :data:`_TRAINING_CODE`, not followed into
    :data:`_NOT_TRAINING_NUMBERS`.

    Parameters
    ----------
    command : str
        The experiment's command (empty for the spectrum job).

    Returns
    -------
    list of Path
        The files, in path order.
    """
    if command == "spectrum":
        return []
    root = Path(__file__).resolve().parents[1]  # the attnspec package
    package, own = _own_code(command)
    if not gives_verdicts(command):
        return imported_closure(root, [*(root / f for f in _TRAINING_CODE), *own], leave_out=_NOT_TRAINING_NUMBERS)
    start = [root / f for f in _CHECKING_CODE if (root / f).is_file()]
    if package is not None and root not in package.parents:  # a plug-in: follow what it imports of attnspec
        start += [f for p in own for f in imports_of(root, p)]
    else:
        start += own
    return imported_closure(root, start, leave_out=_NOT_NUMBERS)


def _own_code(command: str) -> tuple[Path | None, list[Path]]:
    """A checking command's own folder and the modules of it that it runs."""
    package = _code_package(command)
    if package is None:
        return None, []
    from attnspec.theorem.registry import commands

    patterns = commands()[command].code_files  # osa-train names its own: it shares osa-check's package
    return package, sorted({p for pat in patterns for p in package.glob(pat)})


def checking_code_digest(command: str) -> str | None:
    """SHA-256 over the syntax trees (:mod:`attnspec.report.code_digest`) of
    :func:`checking_code_files`; None for the spectrum job.

    Parameters
    ----------
    command : str
        The experiment's command.

    Returns
    -------
    str or None
        The hex digest.
    """
    if command == "spectrum":
        return None
    root = Path(__file__).resolve().parents[1]  # the attnspec package
    package, own = _own_code(command)
    digest = source_digest(root, checking_code_files(command))
    if package is not None and root not in package.parents:  # a plug-in's own modules, outside attnspec
        return hashlib.sha256((source_digest(package, own) + digest).encode()).hexdigest()[:16]
    return digest[:16]


def _code_package(command: str) -> Path | None:
    """The folder of a checking command's code: its ``code_package``, else its battery's package
    (a built-in's theory package, a plug-in's own); None for an unknown command."""
    import importlib.util

    from attnspec.theorem.registry import commands

    found = commands().get(command)
    if found is None:
        return None
    battery = found.battery
    module = found.code_package or (battery if isinstance(battery, str) else getattr(battery, "__module__", None))
    if not module:
        return None
    if found.code_package is None and isinstance(battery, str) and battery.startswith("attnspec."):
        module = battery.rsplit(".", 1)[0]  # a built-in battery's theory package
    spec = importlib.util.find_spec(module)
    if spec is None or spec.origin is None:
        return None
    return Path(spec.origin).resolve().parent


def load_experiments(folder: Path) -> list[Experiment]:
    """Every ``*.toml`` in ``folder``, validated, in name order.

    Parameters
    ----------
    folder : Path
        The experiments folder.

    Returns
    -------
    list of Experiment

    Raises
    ------
    InputError
        Not a folder, no experiment in it, or a file that is not valid TOML, names an
        unknown command or paper, or has keys of the wrong type.
    """
    folder = Path(folder)
    if not folder.is_dir():
        raise InputError(f"--experiments {folder} is not a directory")
    out = []
    for path in sorted(folder.glob("*.toml")):
        # the stem names the experiment's folder results/<name>, which a rerun empties
        check_name(f"{path}: the experiment's name (its file name without .toml)", path.stem)
        _check_regular(path)
        try:
            spec = tomllib.loads(path.read_text(encoding="utf-8"))
        except tomllib.TOMLDecodeError as e:
            raise InputError(f"{path}: not valid TOML ({e})") from None
        except (OSError, UnicodeDecodeError) as e:
            raise InputError(f"{path}: not readable ({type(e).__name__}: {e})") from None
        except RecursionError:  # tomllib recurses once per level of nested arrays or tables
            raise InputError(f"{path}: not valid TOML (nested deeper than Python can parse)") from None
        command = spec.get("command")
        if command not in COMMANDS:
            raise InputError(f"{path}: command must be one of {', '.join(COMMANDS)}, got {command!r}")
        paper = spec.get("paper", "linformer")
        if paper not in PAPERS:
            raise InputError(f"{path}: paper must be one of {', '.join(PAPERS)}, got {paper!r}")
        _check_experiment(path, spec)
        out.append(
            Experiment(
                name=path.stem,
                path=path,
                title=spec.get("title", path.stem),
                paper=paper,
                command=command,
                args=dict(spec.get("args", {})),
                verdicts=bool(spec.get("verdicts", False)),
                group=spec.get("group"),
                note=spec.get("note", ""),
                quick=dict(spec.get("quick", {})),
            )
        )
    if not out:
        raise InputError(f"--experiments {folder} holds no *.toml experiment")
    return out


def _check_regular(path: Path) -> None:
    """Refuse what is not a regular file (a FIFO would block the read forever, a device or a
    socket give no TOML), before it is opened."""
    import stat

    try:
        mode = path.stat().st_mode
    except OSError as e:
        raise InputError(f"{path}: not readable ({type(e).__name__}: {e.strerror or e})") from None
    if stat.S_ISREG(mode):
        return
    kinds = ((stat.S_ISFIFO, "a FIFO"), (stat.S_ISDIR, "a directory"), (stat.S_ISSOCK, "a socket"))
    kind = next((word for test, word in kinds if test(mode)), "a device or other special file")
    raise InputError(f"{path}: is {kind}, not a regular file; an experiment is a TOML file")


def spectrum_runs(experiments: Sequence[Experiment], results: Path, kind: str) -> list[Experiment]:
    """The spectrum experiments whose saved results are of ``kind``, in their order.

    ``"figure1"``: one length of an encoder (``meta.json`` kind ``spectrum``, not ``causal``):
    the runs Figure 1 ("the spectrum of P in pretrained encoders"), its summary lines and the
    per-layer metrics read. A causal decoder's single-length runs (the long-context
    experiments) are the decoder section's. ``"scaling"``: several lengths on the same inputs.
    ``"approx"``: a scaling study run for its approximations of attention (``meta.json`` holds
    an ``approx`` record), read by the fixed-k section and not by the scaling study's, whose
    documents it would count twice. Experiments without results are left out.

    Parameters
    ----------
    experiments : sequence of Experiment
    results : Path
        The folder of every experiment's results directory.
    kind : {"figure1", "scaling", "approx"}

    Returns
    -------
    list of Experiment
    """
    if kind not in ("figure1", "scaling", "approx"):
        raise ValueError(f"kind must be figure1, scaling or approx, got {kind!r}")
    found = []
    for exp in experiments:
        meta = Path(results) / exp.name / "meta.json"
        if exp.command != "spectrum" or not meta.is_file():
            continue
        m = json.loads(meta.read_text())
        if m.get("kind") == "spectrum-scaling" and kind == ("approx" if m.get("approx") else "scaling"):
            found.append(exp)
        elif kind == "figure1" and m.get("kind") == "spectrum" and not m.get("causal", False):
            found.append(exp)
    return found


def display_command(exp: Experiment, quick: bool) -> str:
    """The command that reproduces ``exp`` from the repository root, as REPORT.md shows it.

    It holds no path of the machine that made the report: the data folder is left to the
    default every command shares (``$ATTNSPEC_DATA_DIR``, else ``../shared/data``).

    Parameters
    ----------
    exp : Experiment
    quick : bool
        Show the quick arguments.

    Returns
    -------
    str
    """
    args = {k: v for k, v in exp.effective_args(quick).items() if k != "data-dir"}
    return " ".join(["attnspec", *_cli_name(exp.command), *_cli_args(args)])


def _cli_name(command: str) -> list[str]:
    """A built-in command is its own subcommand (``jl-check``); a plug-in's runs as ``check NAME``."""
    from attnspec.theorem.registry import BUILTIN, commands

    found = commands().get(command)
    return ["check", command] if found is not None and found.origin not in BUILTIN else [command]


def _check_experiment(path: Path, spec: dict[str, Any]) -> None:
    """The shape of an experiment TOML (module docstring), each error naming ``path``:
    ``[args]`` and ``[quick]`` are tables of options whose values are strings, numbers,
    booleans or lists of them; ``title``, ``note``, ``group`` are strings; ``verdicts`` a
    boolean."""
    scalar = (str, int, float, bool)
    for section in ("args", "quick"):
        table = spec.get(section, {})
        if not isinstance(table, dict):
            raise InputError(
                f"{path}: [{section}] must be a table of options (`[{section}]` then `key = value` lines), "
                f"got {type(table).__name__} {table!r}"
            )
        for k, v in table.items():
            ok = isinstance(v, scalar) or (isinstance(v, list) and all(isinstance(x, scalar) for x in v))
            if not ok:
                raise InputError(
                    f"{path}: [{section}] {k} must be a string, a number, a boolean or a list of them, "
                    f"got {type(v).__name__}"
                )
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
