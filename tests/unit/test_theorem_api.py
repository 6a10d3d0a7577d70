"""attnspec.theorem: the open registries, the reading kinds, and the runner (seeds, stopping, fork, resume)."""

from __future__ import annotations

import ast
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from attnspec.errors import InputError
from attnspec.options.declaration import Option
from attnspec.theorem import registry
from attnspec.theorem.declare import Check, Claim
from attnspec.theorem.measured import Measure
from attnspec.theorem.readings import (
    AtMost,
    Covers,
    ExactLaw,
    Identity,
    Point,
    Probability,
    Stat,
    WorstBound,
)
from attnspec.theorem.runner import run_check

PACKAGE = Path(__file__).resolve().parents[2] / "attnspec"


# ------------------------------------------------------------------------------- the registries
@pytest.fixture
def clean_registry(monkeypatch: pytest.MonkeyPatch) -> None:
    """The built-ins loaded, and whatever a test registers removed after it."""
    registry.load()
    monkeypatch.setattr(registry, "_PAPERS", dict(registry._PAPERS))
    monkeypatch.setattr(registry, "_COMMANDS", dict(registry._COMMANDS))
    from attnspec.verdicts import registry as claims

    monkeypatch.setattr(claims, "_REGISTRY", dict(claims._REGISTRY))


def test_the_built_ins_register_through_the_open_registry() -> None:
    from attnspec import battery
    from attnspec.options.checks import OPTIONS
    from attnspec.report.experiments import COMMANDS
    from attnspec.report.experiments import PAPERS as REPORT_PAPERS
    from attnspec.verdicts.registry import PAPERS

    assert {"jl-check", "sa-check", "osa-check", "osa-train"} <= set(registry.commands())
    assert {"jl-check", "sa-check", "osa-check", "osa-train"} <= set(battery.BATTERIES) & set(OPTIONS)
    assert "spectrum" in COMMANDS and "jl-check" in COMMANDS
    # one citation per paper: the report's is the registry's with the title in italics
    for key, paper in registry.papers().items():
        assert PAPERS[key] == paper.citation()
        assert REPORT_PAPERS[key] == paper.citation(markdown=True)
        assert f"*{paper.title}*" in REPORT_PAPERS[key]


def test_a_registered_command_is_seen_everywhere_and_a_clash_is_refused(clean_registry) -> None:  # noqa: ANN001
    from attnspec import battery
    from attnspec.options.checks import OPTIONS
    from attnspec.verdicts.registry import PAPERS

    paper = registry.register_paper(registry.Paper("toyp", "A & B", "A toy paper", year=2024))
    registry.register_command(registry.Command("toy-check", paper="toyp", battery="toy_mod", options=()))
    assert "toyp" in PAPERS and "toy-check" in battery.BATTERIES and OPTIONS["toy-check"] == ()
    registry.register_paper(paper)  # the same paper again is accepted
    with pytest.raises(ValueError, match="registered twice"):
        registry.register_paper(registry.Paper("toyp", "C", "Another paper"))
    with pytest.raises(ValueError, match="not registered"):
        registry.register_command(registry.Command("other", paper="nope", battery="m", options=()))
    with pytest.raises(InputError, match="no checking command 'nope'; known: .*jl-check"):
        registry.command("nope")


def test_theory_never_imports_the_module_that_loads_it() -> None:
    """attnspec.battery loads the batteries by name; a battery importing it back closed a cycle."""
    for path in (PACKAGE / "theory").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module:
                assert node.module != "attnspec.battery", f"{path} imports attnspec.battery"


# ------------------------------------------------------------------------------- the readings
def _point(**stats: Stat) -> Point:
    return Point(0, {"n": 4}, 7, dict(stats))


def _sample(values: list[float]) -> Stat:
    x = np.asarray(values, dtype=float)
    return Stat(x.size, float(x.mean()), float(x.std(ddof=1)), float(x.min()), float(x.max()), float(x.sum()))


def test_covers_holds_when_the_interval_holds_the_target_and_fails_when_it_misses() -> None:
    est = _sample([0.9, 1.1, 1.0, 0.95, 1.05])
    ok = Covers(value="e", target=1.0).rows("c", [_point(e=est)])[0]
    bad = Covers(value="e", target=2.0).rows("c", [_point(e=est)])[0]
    assert ok.verdict == "holds" and ok.ci_low < 1.0 < ok.ci_high and ok.exact == 1.0 and ok.trials == 5
    assert bad.verdict == "violated" and "misses the target 2" in bad.evidence


def test_at_most_holds_straddles_or_fails_by_the_interval() -> None:
    est = _sample([1.0, 1.2, 0.8, 1.1, 0.9])
    verdicts = [AtMost(value="e", bound=b).rows("c", [_point(e=est)])[0].verdict for b in (5.0, 1.0, 0.1, 100.0)]
    assert verdicts == ["holds", "measured", "violated", "loose"]


def test_probability_worst_bound_identity_exact_law_and_measure() -> None:
    events = Stat(100, 0.3, 0.46, 0.0, 1.0, 30.0)
    assert Probability(event="f", claimed=0.05).rows("c", [_point(f=events)])[0].verdict == "violated"
    assert Probability(event="f", claimed=0.9).rows("c", [_point(f=events)])[0].verdict in ("holds", "loose")
    pts = [Point(i, {"n": n}, i, {"x": Stat(1, x, 0, x, x, x), "b": Stat(1, 1.0, 0, 1, 1, 1)})
           for i, (n, x) in enumerate([(4, 0.5), (8, 1.5)])]  # fmt: skip
    worst = WorstBound(observed="x", bound="b").rows("c", pts)
    assert len(worst) == 1 and worst[0].verdict == "violated" and worst[0].params == {"n": 8}
    r = _sample([1e-14, 3e-14])
    assert Identity(residual="r", tol=1e-12).rows("c", [_point(r=r)])[0].verdict == "holds"
    assert Identity(residual="r", tol=1e-15).rows("c", [_point(r=r)])[0].verdict == "violated"
    law = {"a": Stat(1, 2.0, 0, 2, 2, 2)}
    assert ExactLaw(exact="a", claimed=2.0).rows("c", [_point(**law)])[0].verdict == "holds"
    assert ExactLaw(exact="a", claimed=2.5).rows("c", [_point(**law)])[0].verdict == "violated"
    assert Measure(value="a", label="the constant").rows("c", [_point(**law)])[0].verdict == "measured"


# ------------------------------------------------------------------------------- the runner
def _toy_check(**kw) -> Check:  # noqa: ANN003
    paper = registry.Paper("toyp", "A & B", "A toy paper")

    def trial(point, inst, rng):  # noqa: ANN001, ANN202
        return {"x": rng.normal(point["mu"], 1.0), "fail": float(rng.random() < point["p"])}

    return Check(
        command="toy-check",
        paper=paper,
        options=(Option("p", "float", 0.01, "Failure probability."),),
        grid=lambda o: [{"mu": mu, "p": o["p"]} for mu in (0.0, 1.0, 2.0)],
        setup=lambda point, rng: {"mu": point["mu"]},
        trial=trial,
        claims=kw.pop("claims", (Claim("toyp.mean", "Lemma 1", "E[x] = mu", Covers(value="x", target="mu")),)),
        look=100,
        **kw,
    )


def _config(check: Check, **given) -> dict:  # noqa: ANN003
    from attnspec.options.declaration import with_defaults

    return check.config_from_options(with_defaults(check.declared, given))


def test_the_runner_seeds_each_point_alone_and_gives_the_same_rows_forked_or_resumed() -> None:
    check = _toy_check()
    one = run_check(check, _config(check, trials=400))
    assert [r.verdict for r in one.verdicts] == ["holds"] * 3
    assert len({r.seed for r in one.verdicts}) == 3  # one seed per point
    forked = run_check(check, _config(check, trials=400, jobs=2))
    table = one.tables["toy_check"]
    resumed = run_check(check, _config(check, trials=400), previous={"toy_check": table[table["point"] < 2]})
    for other in (forked, resumed):
        assert [(r.verdict, r.estimate, r.seed) for r in other.verdicts] == [
            (r.verdict, r.estimate, r.seed) for r in one.verdicts
        ]
    pd.testing.assert_frame_equal(resumed.tables["toy_check"], table)


def test_probability_readings_stop_at_the_first_look_that_settles_them() -> None:
    claims = (Claim("toyp.tail", "Lemma 2", "P(fail) <= 0.5", Probability(event="fail", claimed=0.5)),)
    check = _toy_check(claims=claims)
    res = run_check(check, _config(check, trials=5000, p=0.01))
    assert all(r.verdict == "loose" for r in res.verdicts)
    assert all(r.trials < 5000 for r in res.verdicts)  # settled early: loose by far
    tight = run_check(check, _config(check, trials=5000, p=0.9))
    assert all(r.verdict == "violated" for r in tight.verdicts)


def test_a_check_registers_its_paper_claims_and_command(clean_registry) -> None:  # noqa: ANN001
    from attnspec.battery import run_battery
    from attnspec.verdicts import registry as claims

    check = _toy_check().register()
    assert registry.command("toy-check").battery is check
    assert claims.get("toyp.mean").command == "toy-check"
    res = run_battery("toy-check", {"trials": 200})
    assert {r.claim for r in res.verdicts} == {"toyp.mean"} and res.meta["identity"].get("jobs") is None
    with pytest.raises(InputError, match="--p"):
        run_battery("toy-check", {"p": "often"})


def test_fork_map_keeps_order_and_honours_attnspec_no_fork(monkeypatch: pytest.MonkeyPatch) -> None:
    import os

    from attnspec.theorem import fork

    def where(i: int) -> tuple[int, int]:
        return i * i, os.getpid()

    monkeypatch.setenv("ATTNSPEC_NO_FORK", "1")
    assert not fork.can_fork()
    assert fork.fork_map(where, [1, 2, 3], jobs=2) == [(1, os.getpid()), (4, os.getpid()), (9, os.getpid())]
    monkeypatch.delenv("ATTNSPEC_NO_FORK")
    got = fork.fork_map(where, [1, 2, 3], jobs=2)
    assert [v for v, _ in got] == [1, 4, 9]
    if fork.can_fork():
        assert all(pid != os.getpid() for _, pid in got)  # a closure, computed in the forked children


def test_fork_beside_runs_one_half_in_a_second_process_and_raises_its_failure(monkeypatch: pytest.MonkeyPatch) -> None:
    import os

    from attnspec.theorem import fork

    pid = os.getpid()
    monkeypatch.setenv("ATTNSPEC_NO_FORK", "1")
    assert fork.fork_beside(os.getpid, lambda: "here") == ("here", pid)
    monkeypatch.delenv("ATTNSPEC_NO_FORK")
    if not fork.can_fork():
        pytest.skip("needs fork and >= 2 cores")
    here, there = fork.fork_beside(os.getpid, os.getpid)
    assert here == pid and there != pid

    def broken() -> None:
        raise ValueError("broken on purpose")

    with pytest.raises(RuntimeError, match="worker process failed(.|\n)*broken on purpose"):
        fork.fork_beside(broken, lambda: None)


def test_an_interrupted_check_keeps_its_finished_points_and_resume_completes_it(
    clean_registry, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:  # noqa: ANN001
    from attnspec.battery import run_and_write
    from attnspec.storage.results import read_meta

    whole = run_check(_toy_check(), _config(_toy_check(), trials=200))
    calls = {"n": 0}
    base = _toy_check()

    def trial(point, inst, rng):  # noqa: ANN001, ANN202
        calls["n"] += 1
        if point["mu"] == 2.0 and calls.get("stop", True):
            raise KeyboardInterrupt  # Ctrl-C while the third point is drawn
        return base.trial(point, inst, rng)

    from dataclasses import replace

    replace(base, trial=trial).register()
    out = tmp_path / "toy"
    with pytest.raises(KeyboardInterrupt):
        run_and_write("toy-check", {"trials": 200}, out, plots=False)
    meta = read_meta(out)
    assert meta["status"] == "partial" and meta["runs_done"] == [0, 1]
    calls["stop"] = False
    drawn = calls["n"]
    done = run_and_write("toy-check", {"trials": 200}, out, plots=False, resume=True)
    assert calls["n"] - drawn == 200  # only the third point is drawn again
    assert [(r.verdict, r.estimate, r.seed) for r in done.verdicts] == [
        (r.verdict, r.estimate, r.seed) for r in whole.verdicts
    ]
    assert read_meta(out).get("status") != "partial"


def test_a_measure_says_its_label_then_the_number_or_its_whole_sentence() -> None:
    point = _point(a=_sample([1.0, 3.0]), b=Stat(1, 5.0, 0, 5, 5, 5))
    (labelled,) = Measure(value="a", label="the constant").rows("c", [point])
    assert labelled.evidence.startswith("the constant: 2, 95% CI [") and labelled.evidence.endswith("over 2 trials")
    (sentence,) = Measure(value="a", sentence="a = {a:g} beside b = {b:g}").rows("c", [point])
    assert (sentence.evidence, sentence.estimate, sentence.trials) == ("a = 2 beside b = 5", 2.0, 2)
