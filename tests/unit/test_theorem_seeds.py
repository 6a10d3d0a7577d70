"""attnspec.theorem: a check that names its points' seeds draws from exactly those seeds."""

from __future__ import annotations

import pytest

from attnspec.theorem.declare import Check, Claim
from attnspec.theorem.measured import Measure
from attnspec.theorem.registry import Paper
from attnspec.theorem.runner import point_seed, run_check

PAPER = Paper("toy", "A. Author", "A toy measurement", year=2024)


def _check(seeds=None) -> Check:  # noqa: ANN001 - a seeds callable or None
    """One uniform draw per trial at three points; its sum is the measured quantity."""
    return Check(
        command="toy-seeds", paper=PAPER, grid=lambda o: [{"n": n} for n in (1, 2, 3)],
        claims=(Claim("toy.sum", where="eq. 1", statement="a sum", reading=Measure("sum", value="u")),),
        trial=lambda point, instance, rng: {"u": float(rng.random())}, seeds=seeds,
    )  # fmt: skip


def test_a_check_names_its_points_seeds_and_draws_from_them() -> None:
    from attnspec.numerics.stats import numpy_rng

    config = {"seed": 7, "trials": 4, "jobs": 1}
    table = run_check(_check(lambda options, i, point: options["seed"] + 10 * point["n"]), config).tables["toy_seeds"]
    assert sorted(table["seed"]) == [17, 27, 37]
    first = table[table["point"] == 0].iloc[0]
    expected = numpy_rng(17).random(4)  # the point's four trials, drawn from its named seed
    assert first["total"] == pytest.approx(float(expected.sum()), rel=1e-12)


def test_without_named_seeds_each_point_keeps_the_runner_seed() -> None:
    table = run_check(_check(), {"seed": 7, "trials": 4, "jobs": 1}).tables["toy_seeds"]
    assert list(table["seed"]) == [point_seed(7, "toy-seeds", i) for i in range(3)]


def test_the_documented_example_runs_as_written() -> None:
    import re
    from pathlib import Path

    doc = Path(__file__).resolve().parents[2] / "docs" / "theorem-api.md"
    (block,) = [b for b in re.findall(r"```python\n(.*?)```", doc.read_text(), flags=re.S) if "seeds=" in b]
    exec(compile(block, str(doc), "exec"), {})  # noqa: S102 - the doc's own example, with its assert


def test_a_checks_exact_context_reaches_its_readings_and_stays_out_of_the_table() -> None:
    import dataclasses

    from attnspec.theorem.measured import Noted

    label = 2**62 + 1  # a float would round it
    noted = Noted(reading=Measure("sum", value="u"), note=lambda p: f"draws named {p.context['label']}")
    check = dataclasses.replace(
        _check(), claims=(Claim("toy.sum", "eq. 1", "a sum", noted),),
        context=lambda point: {"label": label + point["n"]},
    )  # fmt: skip
    result = run_check(check, {"seed": 7, "trials": 2, "jobs": 1})
    assert [r.evidence.split(":")[0] for r in result.verdicts] == [f"draws named {label + n}" for n in (1, 2, 3)]
    assert set(result.tables["toy_seeds"]["quantity"]) == {"u"}
