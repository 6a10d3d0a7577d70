"""The FAVOR+ plug-in (examples/attnspec-favor), installed through its entry point, as a user would.

It is installed into this environment (``pip install --no-deps --no-build-isolation -e``, no
network) when it is not already; then ``attnspec claims``, ``attnspec check favor`` and the
report's experiments and section builder must see it, with no edit of attnspec. Its Monte Carlo
verdicts are asserted as the paper promises them, at fixed seeds.
"""

from __future__ import annotations

import json
import subprocess
import sys
from importlib.metadata import entry_points
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PLUGIN = ROOT / "examples" / "attnspec-favor"
ATTNSPEC = [sys.executable, "-m", "attnspec.cli.main"]


@pytest.fixture(scope="module")
def installed() -> None:
    if not any(ep.name == "favor" for ep in entry_points(group="attnspec.theorems")):
        pip = [sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--no-build-isolation", "-e", str(PLUGIN)]
        done = subprocess.run(pip, capture_output=True, text=True)
        if done.returncode != 0:
            pytest.skip(f"cannot install the plug-in here: {done.stderr.strip()[-300:]}")


def _run(*args: str) -> subprocess.CompletedProcess:
    env = {"OMP_NUM_THREADS": "1", "PATH": "/usr/bin:/bin", "ATTNSPEC_NO_FORK": "1"}
    return subprocess.run([*ATTNSPEC, *args], capture_output=True, text=True, env=env, cwd=ROOT)


def test_attnspec_claims_lists_the_plugin_s_paper_and_claims(installed) -> None:  # noqa: ANN001
    done = _run("claims", "--paper", "performer", "--json")
    assert done.returncode == 0, done.stderr
    ids = {c["id"] for c in json.loads(done.stdout)}
    assert {"performer.lemma1.positive", "performer.lemma2.trig", "performer.thm2.orthogonal"} <= ids
    assert all(c["command"] == "favor" for c in json.loads(done.stdout))


def test_attnspec_check_favor_finds_what_the_paper_promises(installed) -> None:  # noqa: ANN001
    done = _run("check", "favor", "--trials", "3000", "--json")
    assert done.returncode == 0, done.stderr
    rows = json.loads(done.stdout)
    by = {}
    for r in rows:
        by.setdefault((r["claim"], r["reading"]), []).append(r["verdict"])
    # Lemma 1 (unbiased) and Lemma 2 (closed-form MSEs): every interval holds its target
    for claim in ("lemma1.positive", "lemma1.hyperbolic", "lemma2.trig", "lemma2.positive", "lemma2.hyperbolic"):
        assert by[(f"performer.{claim}", "as-stated")] == ["holds"] * 3, claim
    # Theorem 2: never contradicted; the orthogonal features' MSE is shown below the i.i.d. one somewhere
    assert "violated" not in by[("performer.thm2.orthogonal", "as-stated")]
    assert "violated" not in by[("performer.thm2.orthogonal", "below-iid")]
    assert "holds" in by[("performer.thm2.orthogonal", "below-iid")]


def test_a_wrong_closed_form_would_be_caught(installed) -> None:  # noqa: ANN001
    """The check can fail: Lemma 2's trigonometric MSE without its 1/2 misses every interval."""
    from dataclasses import replace

    import attnspec_favor as favor

    from attnspec.theorem.runner import run_check

    def halved(point, rng):  # noqa: ANN001, ANN202
        out = dict(favor.setup(point, rng))
        out["mse_trig"] *= 2
        return out

    check = replace(favor.CHECK, setup=halved)
    res = run_check(check, check.config_from_options({"d": 8, "m": 8, "r": [0.5], "trials": 3000, "seed": 0}))
    assert [r.verdict for r in res.verdicts if r.claim == "performer.lemma2.trig"] == ["violated"]


def test_the_report_sees_the_plugin(installed, tmp_path: Path) -> None:  # noqa: ANN001
    import attnspec
    from attnspec.report.experiments import checking_code_digest, load_experiments
    from attnspec.theorem import check_section

    (tmp_path / "favor.toml").write_text('command = "favor"\npaper = "performer"\nverdicts = true\n')
    (exp,) = load_experiments(tmp_path)
    assert exp.command == "favor" and exp.paper == "performer"
    assert checking_code_digest("favor")  # the plug-in's own source decides staleness
    md = check_section(attnspec.check("favor", trials=300, r=[0.3], progress=False))
    assert md.startswith("### favor: Rethinking Attention with Performers")
    assert "*Rethinking Attention with Performers*" in md and "Lemma 2, trig" in md
