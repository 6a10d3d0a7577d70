"""How long the test suite takes: wall time and CPU time of a test command, and the tests that
cost the most CPU.

Run: ``python benchmarks/bench_test_suite.py [--slow] [--top 15] [--all] [-o FILE.json]
[-- PYTEST ARGS]``. It runs ``python -m pytest -q`` (the default tests; ``--slow``: ``-m slow``)
as the README says, with a small plugin loaded in every pytest process (the xdist workers
included) that reads each test's CPU seconds (setup, call and teardown, in the process and in
the subprocesses it waited for) from ``getrusage``. CPU time, unlike wall time, hardly depends
on what else the machine runs: on a loaded machine the wall time of the run is long, and the
list of the costliest tests is still the one an idle machine would give.

The JSON gives the command, the machine's load average before and after, the wall time, the CPU
time of the whole run (``getrusage`` of its process tree), the number of tests, each pytest
process's CPU seconds and when it ended (two workers that end far apart left a core idle), the
``--top`` costliest tests, each with its CPU and wall seconds, and the ``--top`` costliest test
files (``--dist loadfile`` gives a worker whole files); ``--all`` adds every test. The baseline in the same run is
the collection alone (``--collect-only``), the part of every run that no test can make cheaper.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

#: The plugin each pytest process loads: per test, CPU seconds of the process and of the
#: children it waited for, and wall seconds; written as JSON when the process's session ends.
PLUGIN = """
import json, os, resource, time
import pytest

_rows = {}
_start = time.time()


def _self_cpu():
    s = resource.getrusage(resource.RUSAGE_SELF)
    return s.ru_utime + s.ru_stime


def _cpu():
    s = resource.getrusage(resource.RUSAGE_SELF)
    c = resource.getrusage(resource.RUSAGE_CHILDREN)
    return s.ru_utime + s.ru_stime + c.ru_utime + c.ru_stime


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    c0, w0 = _cpu(), time.perf_counter()
    yield
    _rows[item.nodeid] = (_cpu() - c0, time.perf_counter() - w0)


def pytest_sessionfinish(session):
    folder = os.environ["ATTNSPEC_BENCH_SUITE_DIR"]
    record = {
        "worker": os.environ.get("PYTEST_XDIST_WORKER", "main"),
        "start": _start,
        "end": time.time(),
        "cpu_s_self": _self_cpu(),
        "cpu_s": _cpu(),
        "rows": _rows,
    }
    with open(os.path.join(folder, f"rows-{os.getpid()}.json"), "w") as f:
        json.dump(record, f)
"""


def _run(args: list[str], folder: Path) -> dict[str, float]:
    """Run pytest with the plugin; wall and CPU seconds of its whole process tree."""
    env = {**os.environ, "ATTNSPEC_BENCH_SUITE_DIR": str(folder), "PYTHONPATH": str(folder)}
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "bench_suite_plugin", *args],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    tail = proc.stdout.strip().splitlines()[-1] if proc.stdout.strip() else proc.stderr[-500:]
    return {"wall_s": round(wall, 1), "cpu_s": round(cpu, 1), "returncode": proc.returncode, "summary": tail}


def _per_file(rows: dict[str, list[float]], top: int) -> list[dict]:
    """CPU seconds per test file, costliest first: what ``--dist loadfile`` hands a worker."""
    files: dict[str, list[float]] = {}
    for nodeid, (cpu, _wall) in rows.items():
        entry = files.setdefault(nodeid.split("::")[0], [0.0, 0])
        entry[0] += cpu
        entry[1] += 1
    ranked = sorted(files.items(), key=lambda kv: -kv[1][0])[:top]
    return [{"file": k, "cpu_s": round(v[0], 1), "tests": v[1]} for k, v in ranked]


def _per_worker(records: list[dict], t0: float) -> list[dict]:
    """Each pytest process: tests run, CPU seconds, and when (seconds after the start) it ended.

    Two workers that end far apart mean one core idled at the end of the run. The controlling
    process's CPU is its own (its children are the workers); a worker's includes the
    subprocesses its tests waited for.
    """
    out = [
        {
            "worker": r["worker"],
            "tests": len(r["rows"]),
            "cpu_s": round(r["cpu_s_self"] if r["worker"] == "main" else r["cpu_s"], 1),
            "ended_after_s": round(r["end"] - t0, 1),
        }
        for r in records
    ]
    return sorted(out, key=lambda r: r["worker"])


def main() -> None:
    """Measure the collection, then the test command, and write the JSON."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--slow", action="store_true", help="the slow tests (-m slow) instead of the default ones")
    parser.add_argument("--top", type=int, default=15, help="how many of the costliest tests and files to list")
    parser.add_argument("--all", action="store_true", help="list every test's CPU and wall seconds too")
    parser.add_argument("-o", "--output", type=Path, help="write the JSON here (default: print it)")
    parser.add_argument("pytest_args", nargs="*", help="more pytest arguments, after --")
    args = parser.parse_args()
    extra = [*(["-m", "slow"] if args.slow else []), *args.pytest_args]
    with tempfile.TemporaryDirectory() as d:
        folder = Path(d)
        (folder / "bench_suite_plugin.py").write_text(PLUGIN)
        load = {"before": os.getloadavg()}
        collect = _run(["--collect-only", "-n", "0", *extra], folder)
        for f in folder.glob("rows-*.json"):
            f.unlink()
        t0 = time.time()
        run = _run(extra, folder)
        load["after"] = os.getloadavg()
        records = [json.loads(f.read_text()) for f in folder.glob("rows-*.json")]
    rows: dict[str, list[float]] = {}
    for r in records:
        rows.update(r["rows"])
    ranked = sorted(rows.items(), key=lambda kv: -kv[1][0])
    result = {
        "command": "python -m pytest -q" + "".join(f" {a}" for a in extra),
        "cpus": os.cpu_count(),
        "load_average_1_5_15": load,
        "collection_only": collect,
        "run": run,
        "tests": len(rows),
        "cpu_s_in_tests": round(sum(v[0] for v in rows.values()), 1),
        "workers": _per_worker(records, t0),
        "costliest": [{"test": k, "cpu_s": round(v[0], 2), "wall_s": round(v[1], 2)} for k, v in ranked[: args.top]],
        "costliest_files": _per_file(rows, args.top),
    }
    if args.all:
        result["all_tests"] = {k: [round(v[0], 3), round(v[1], 3)] for k, v in ranked}
    text = json.dumps(result, indent=1)
    if args.output:
        args.output.write_text(text + "\n")
    print(text)


if __name__ == "__main__":
    main()
