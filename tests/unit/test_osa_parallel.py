"""osa-check over two processes: the same rows and tables as the serial run, a worker's
failure is raised in the parent, and SciPy's own BLAS is limited to one thread as well."""

from __future__ import annotations

import math
import os
import resource
import subprocess
import sys
from dataclasses import asdict, replace

import pandas as pd
import pytest

from attnspec.theorem.fork import can_fork
from attnspec.theorem.groups import Group
from attnspec.theory.osa import battery as bat
from attnspec.theory.osa import groups

SMALL = {"steps": 2, "trials": 1, "timing": False, "schedule": ["cubic", "muon"], "alpha": [0.5]}
needs_fork = pytest.mark.skipif(not can_fork(), reason="needs fork and >= 2 cores (and ATTNSPEC_NO_FORK unset)")


def _rows(result):
    def norm(v):
        return "nan" if isinstance(v, float) and math.isnan(v) else v

    return [{k: norm(v) for k, v in asdict(r).items()} for r in result.verdicts]


@pytest.mark.slow
@needs_fork
def test_parallel_and_serial_runs_give_the_same_rows_and_tables(monkeypatch):
    cfg = bat.config_from_options(SMALL)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    par = bat.run(cfg)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    # the worker did run (and computed something): its CPU time is counted when it is reaped
    assert (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime) > 0.05
    monkeypatch.setenv("ATTNSPEC_NO_FORK", "1")
    assert not can_fork()
    ser = bat.run(cfg)
    assert _rows(par) == _rows(ser)
    assert list(par.tables) == list(ser.tables)
    for name in ser.tables:
        pd.testing.assert_frame_equal(par.tables[name], ser.tables[name], check_exact=True)


@needs_fork
def test_a_failure_in_the_worker_is_raised_in_the_parent(monkeypatch):
    def broken(cfg, tables):
        raise ValueError("broken on purpose")

    # the forked worker inherits the patch
    monkeypatch.setattr(groups, "GROUPS", (Group(lambda cfg, tables: ([], {})), Group(broken, beside=True)))
    with pytest.raises(ValueError, match="broken on purpose"):
        bat.run(bat.config_from_options(SMALL))


def test_scipy_blas_is_limited_to_one_thread_during_the_checks():
    # In a fresh process SciPy is not imported yet when run() starts: threadpool_limits only
    # limits the libraries already loaded, so run() must import SciPy before limiting.
    code = (
        "import json\n"
        "from threadpoolctl import threadpool_info\n"
        "from attnspec.theorem.groups import Group\n"
        "from attnspec.theory.osa import battery as bat, groups\n"
        "seen = []\n"
        "def fake(cfg, tables):\n"
        "    import scipy.linalg\n"
        "    seen.extend(i['num_threads'] for i in threadpool_info() if i.get('user_api') == 'blas')\n"
        "    return [], {}\n"
        "groups.GROUPS = (Group(fake),)\n"
        "bat.run(bat.config_from_options({'timing': False}))\n"
        "print(json.dumps(seen))\n"
    )
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env)
    threads = __import__("json").loads(out.stdout.strip().splitlines()[-1])
    assert threads and all(t == 1 for t in threads)


@needs_fork
def test_parallel_progress_counts_this_process_stages(monkeypatch):
    idle = tuple(replace(g, measure=lambda cfg, tables: ([], {})) for g in groups.GROUPS if g is not groups.TIMING)
    monkeypatch.setattr(groups, "GROUPS", idle)
    seen: list[str] = []
    bat.run(bat.config_from_options({"timing": False}), progress=seen.append)
    here = [g for g in idle if g.message is not None and not g.beside]
    n = len(here) + 1  # and the line that names the groups computed in the second process
    assert seen[0].startswith(groups.PARALLEL_NOTE)
    assert len(seen) == n and seen[0].endswith(f"step 1/{n}, estimating the time left")
    assert all(f"step {i + 1}/{n}, " in m for i, m in enumerate(seen))
