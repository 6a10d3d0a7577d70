"""A cheap fuzz pass over every option of every command: bad values on the command line, in
process (typer's CliRunner), each classified by what the user would see.

Run: ``OMP_NUM_THREADS=1 nice python tests/fuzz_cli.py [--only COMMAND] [-v]``. Nothing is
computed: a checking command stops once its options pass their checks (the battery's config is
the last step before any work), and a spectrum run is pointed at a model folder that does not
exist, which is refused after every option is checked. Each case ends as one of

* ``clean``: refused in one ``error:`` line on stderr, exit 1 or 2;
* ``accepted``: the value passed every check (listed, to be read: some values are fine);
* ``traceback``: an exception other than the CLI's own exit;
* ``unclear``: a refusal that is not one ``error:`` line;
* ``hang``: no answer within the case's time limit.

The pass prints one line per case that is not clean, and a count per class.
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
import tempfile
from collections import Counter
from pathlib import Path

#: Text that no option should take quietly, by the kind of value the option reads.
BAD_NUMBERS = ["", " ", "-1", "0", "nan", "inf", "-inf", "1e400", "9" * 30, "abc", "1,2,", "0x10", "½"]
BAD_TEXT = ["", "\x1b]0;title\x07", "[bold]x[/bold]", "a:b:", "ü" * 300]
CASE_SECONDS = 60


class Accepted(Exception):
    """The options passed every check: the case stops here."""


class Hang(Exception):
    """No answer within CASE_SECONDS."""


def _paths(tmp: Path) -> list[str]:
    """Paths that are not what an option wants: missing, a folder, empty, unreadable, special."""
    folder = tmp / "folder"
    folder.mkdir(exist_ok=True)
    empty = tmp / "empty.txt"
    empty.write_text("")
    locked = tmp / "locked.txt"
    locked.write_text("x")
    locked.chmod(0)
    fifo = tmp / "fifo.toml"
    if not fifo.exists():
        os.mkfifo(fifo)
    return ["", str(tmp / "missing"), str(folder), str(empty), str(locked), str(fifo), "/dev/null"]


def _values(kind: str, tmp: Path) -> list[str]:
    if kind in ("int", "float", "seed", "ints", "floats"):
        return BAD_NUMBERS
    if kind == "path":
        return _paths(tmp)
    if kind in ("str", "strs"):
        return BAD_TEXT
    return []


def _cases(tmp: Path, only: str | None) -> list[tuple[str, list[str]]]:
    """(command, argv) for every option of every command with each bad value of its kind."""
    from attnspec.options.checks import OPTIONS
    from attnspec.options.spectrum import SPECTRUM

    model = str(tmp / "no-model")
    cases: list[tuple[str, list[str]]] = []
    for command, declared in {**OPTIONS, "spectrum": SPECTRUM}.items():
        for opt in declared:
            if not opt.on("cli") or opt.kind == "bool":
                continue
            flag = opt.flags[0].split("/")[0]
            kind = opt.cli_kind or opt.kind
            for value in _values(kind, tmp) + (_values("ints", tmp) if "ints" in opt.also else []):
                extra = ["--model", model, "--data", "imdb", "--no-plots", "-q"] if command == "spectrum" else []
                if command == "spectrum" and opt.name in ("model", "data"):
                    extra = [x for x in extra if x not in (f"--{opt.name}", model if opt.name == "model" else "imdb")]
                cases.append((command, [command, flag, value, *extra]))
    runs = [str(tmp / "missing"), str(tmp / "folder"), "/dev/null", str(tmp / "fifo.toml")]
    for r in runs:
        cases += [
            ("compare", ["compare", r, r]),
            ("merge", ["merge", r, r, "--out", str(tmp / "merged")]),
            ("plot", ["plot", "spectrum", r]),
            ("plot", ["plot", "scaling", r]),
            ("report", ["report", "--experiments", r, "--out", str(tmp / "rep"), "--only", "nothing"]),
        ]
    # a committed run (reports/results), read but never written: the options of reading it
    run = Path(__file__).resolve().parents[1] / "reports" / "results" / "spectrum-minilm-imdb"
    if run.is_dir():
        for flag, values in (("--at", BAD_NUMBERS), ("--level", BAD_NUMBERS), ("--format", BAD_TEXT)):
            cases += [("compare", ["compare", str(run), str(run), flag, v, "--no-plots"]) for v in values]
            if flag != "--level":
                out = ["--out", str(tmp / "figs")]
                cases += [("plot", ["plot", "spectrum", str(run), flag, v, *out]) for v in values]
    cases += [("claims", ["claims", "--paper", v]) for v in BAD_TEXT]
    cases += [("check", ["check", v]) for v in BAD_TEXT]
    return [c for c in cases if only is None or c[0] == only]


def _stop_before_work() -> None:
    from attnspec import battery

    checked = battery._config

    def stop(*args, **kwargs):  # noqa: ANN002, ANN003, ANN202
        checked(*args, **kwargs)
        raise Accepted

    battery._config = stop


def _warm_up(tmp: Path) -> None:
    """Each command once at its defaults, with no time limit: a first import of torch or
    transformers cut by the alarm would leave them half-initialised for every later case."""
    from typer.testing import CliRunner

    from attnspec.cli.main import app
    from attnspec.options.checks import OPTIONS

    for command in OPTIONS:
        CliRunner().invoke(app, [command])
    CliRunner().invoke(app, ["spectrum", "--model", str(tmp / "no-model"), "--data", "imdb"])


def _classify(argv: list[str]) -> tuple[str, str]:
    from typer.testing import CliRunner

    from attnspec.cli.main import app

    def alarm(*_):  # noqa: ANN002, ANN202
        raise Hang

    signal.signal(signal.SIGALRM, alarm)
    signal.alarm(CASE_SECONDS)
    try:
        r = CliRunner().invoke(app, argv)
    except Hang:
        return "hang", ""
    finally:
        signal.alarm(0)
    if isinstance(r.exception, Accepted):
        return "accepted", ""
    if isinstance(r.exception, Hang):
        return "hang", ""
    if r.exception is not None and not isinstance(r.exception, SystemExit):
        return "traceback", f"{type(r.exception).__name__}: {r.exception}"
    lines = [ln for ln in r.stderr.splitlines() if ln.strip()]
    if r.exit_code == 0:
        return "accepted", r.stdout.strip().splitlines()[-1] if r.stdout.strip() else ""
    if len(lines) == 1 and lines[0].startswith("error: ") and r.exit_code in (1, 2):
        text = lines[0]
        if argv[0] == "spectrum" and "no-model" in text and "--model" not in argv[1:2]:
            return "accepted", text  # every option passed; refused for the missing model only
        return "clean", text
    return "unclear", f"exit {r.exit_code}: " + " | ".join(lines[:4])


def main() -> int:
    """Run the pass; the exit status is the number of tracebacks, hangs and unclear refusals."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", help="one command")
    parser.add_argument("-v", "--verbose", action="store_true", help="print the clean cases too")
    args = parser.parse_args()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    _stop_before_work()
    counts: Counter[str] = Counter()
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        _warm_up(tmp)
        for _command, argv in _cases(tmp, args.only):
            cls, text = _classify(argv)
            counts[cls] += 1
            if cls != "clean" or args.verbose:
                print(f"{cls:9} {' '.join(map(ascii, argv))}  {text}", flush=True)
        (tmp / "locked.txt").chmod(0o600)
    print(", ".join(f"{k} {v}" for k, v in sorted(counts.items())))
    return min(counts["traceback"] + counts["hang"] + counts["unclear"], 100)


if __name__ == "__main__":
    sys.exit(main())
