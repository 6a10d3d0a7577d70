"""The FAVOR+ plug-in (examples/attnspec-favor) is seen through its entry point, as a user's would be.

Two ways of installing it, neither touching the environment the other tests run in:

* in this process, its package and a ``.dist-info`` holding its entry point (what pip writes)
  are put on ``sys.path`` and the registries are read afresh: ``attnspec claims``'s catalogue,
  ``attnspec check favor``, ``attnspec.check`` and the report's experiments and section
  builder must see it, and its Monte Carlo verdicts are asserted as the paper promises them;
* (slow) ``pip install --no-deps -e`` into a temporary virtual environment, then the real
  ``attnspec claims`` and ``attnspec check favor`` commands in it.
"""

from __future__ import annotations

import json
import subprocess
import sys
import venv
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PLUGIN = ROOT / "examples" / "attnspec-favor"


@pytest.fixture
def installed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The plug-in on sys.path with its entry point; the registries as if the process had just started."""
    from attnspec.theorem import registry
    from attnspec.verdicts import registry as claims

    info = tmp_path / "attnspec_favor-0.1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: attnspec-favor\nVersion: 0.1.0\n")
    (info / "entry_points.txt").write_text("[attnspec.theorems]\nfavor = attnspec_favor\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.syspath_prepend(str(PLUGIN))
    registry.load(plugins=False)
    monkeypatch.setattr(registry, "_PAPERS", dict(registry._PAPERS))
    monkeypatch.setattr(registry, "_COMMANDS", dict(registry._COMMANDS))
    monkeypatch.setattr(registry, "_STATE", {"loaded": {"builtin"}, "loading": set()})
    monkeypatch.setattr(claims, "_REGISTRY", dict(claims._REGISTRY))
    monkeypatch.delitem(sys.modules, "attnspec_favor", raising=False)
    yield
    sys.modules.pop("attnspec_favor", None)


def test_attnspec_claims_and_check_see_the_plugin(installed) -> None:  # noqa: ANN001
    from typer.testing import CliRunner

    from attnspec.cli.main import app

    runner = CliRunner()
    shown = runner.invoke(app, ["claims", "--paper", "performer", "--json"])
    assert shown.exit_code == 0, shown.output
    found = json.loads(shown.stdout)
    assert {"performer.lemma1.positive", "performer.lemma2.trig", "performer.thm2.orthogonal"} <= {
        c["id"] for c in found
    }
    assert {c["command"] for c in found} == {"favor"}
    ran = runner.invoke(app, ["check", "favor", "--trials", "200", "--r", "0.3", "--json"])
    assert ran.exit_code == 0, ran.output
    assert {r["claim"] for r in json.loads(ran.stdout)} == {c["id"] for c in found}
    refused = runner.invoke(app, ["check", "favor", "--m", "20"])
    assert refused.exit_code == 1 and "--m 20 must be <= --d 8" in refused.stderr


def test_the_plugin_finds_what_the_paper_promises(installed) -> None:  # noqa: ANN001
    import attnspec

    res = attnspec.check("favor", trials=3000, progress=False)
    by: dict[tuple[str, str], list[str]] = {}
    for r in res.rows:
        by.setdefault((r.claim, r.reading), []).append(r.verdict)
    # Lemma 1 (unbiased) and Lemma 2 (closed-form MSEs): every interval holds its target
    for claim in ("lemma1.positive", "lemma1.hyperbolic", "lemma2.trig", "lemma2.positive", "lemma2.hyperbolic"):
        assert by[(f"performer.{claim}", "as-stated")] == ["holds"] * 3, claim
    # Theorem 2: never contradicted; the orthogonal features' MSE is shown below the i.i.d. one
    assert "violated" not in by[("performer.thm2.orthogonal", "as-stated")]
    assert by[("performer.thm2.orthogonal", "below-iid")].count("holds") >= 2


def test_a_wrong_closed_form_would_be_caught(installed) -> None:  # noqa: ANN001
    """The check can fail: Lemma 2's trigonometric MSE without its 1/2 misses the interval."""
    from dataclasses import replace

    import attnspec_favor as favor

    from attnspec.theorem.runner import run_check

    def doubled(point, rng):  # noqa: ANN001, ANN202
        out = dict(favor.setup(point, rng))
        out["mse_trig"] *= 2
        return out

    check = replace(favor.CHECK, setup=doubled)
    res = run_check(check, check.config_from_options({"d": 8, "m": 8, "r": [0.5], "trials": 3000, "seed": 0}))
    assert [r.verdict for r in res.verdicts if r.claim == "performer.lemma2.trig"] == ["violated"]


def test_the_report_sees_the_plugin(installed, tmp_path: Path) -> None:  # noqa: ANN001
    import attnspec
    from attnspec.report.experiments import PAPERS, checking_code_digest, display_command, load_experiments
    from attnspec.theorem import check_section

    (tmp_path / "favor.toml").write_text('command = "favor"\npaper = "performer"\nverdicts = true\n')
    (exp,) = load_experiments(tmp_path)
    assert exp.command == "favor" and "*Rethinking Attention with Performers*" in PAPERS["performer"]
    assert checking_code_digest("favor")  # the plug-in's own source decides whether a result is stale
    assert display_command(exp, quick=False) == "attnspec check favor"
    md = check_section(attnspec.check("favor", trials=300, r=[0.3], progress=False))
    assert md.startswith("### favor: Rethinking Attention with Performers")
    assert "*Rethinking Attention with Performers*" in md and "Lemma 2, trig" in md


@pytest.mark.slow
def test_pip_install_into_a_fresh_environment(tmp_path: Path) -> None:
    """``pip install --no-deps -e examples/attnspec-favor`` (no network: no build isolation)."""
    env_dir = tmp_path / "venv"
    venv.EnvBuilder(system_site_packages=True, with_pip=False).create(env_dir)
    python = env_dir / "bin" / "python"
    site = subprocess.run(
        [python, "-c", "import site; print(site.getsitepackages()[0])"], capture_output=True, text=True
    )
    Path(site.stdout.strip(), "attnspec-checkout.pth").write_text(str(ROOT) + "\n")  # attnspec itself, from here
    pip = [sys.executable, "-m", "pip", "--python", str(python), "install", "-q", "--no-deps", "--no-build-isolation"]
    done = subprocess.run([*pip, "-e", str(PLUGIN)], capture_output=True, text=True)
    if done.returncode != 0:
        pytest.skip(f"pip cannot install into a new environment here: {done.stderr.strip()[-300:]}")
    env = {"OMP_NUM_THREADS": "1", "PATH": "/usr/bin:/bin", "ATTNSPEC_NO_FORK": "1"}
    claims = subprocess.run([python, "-m", "attnspec.cli.main", "claims", "--paper", "performer", "--json"],
                            capture_output=True, text=True, env=env)  # fmt: skip
    assert claims.returncode == 0, claims.stderr
    assert "performer.lemma1.positive" in {c["id"] for c in json.loads(claims.stdout)}
    check = subprocess.run([python, "-m", "attnspec.cli.main", "check", "favor", "--trials", "200", "--json"],
                           capture_output=True, text=True, env=env)  # fmt: skip
    assert check.returncode == 0, check.stderr
    assert len(json.loads(check.stdout)) == 21
