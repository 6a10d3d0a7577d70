"""attnspec.theorem.cases: a quantity measured on fixed cases is one sample, and a scoped
reading is made only at its points, its rows marked at the paper's parameters when asked."""

from __future__ import annotations

import pytest

from attnspec.theorem.cases import Cases, Scoped
from attnspec.theorem.declare import Check, Claim
from attnspec.theorem.readings import Identity
from attnspec.theorem.registry import Paper
from attnspec.theorem.runner import run_check

PAPER = Paper("toy", "A. Author", "A toy identity", year=2024)


def _check(residuals: tuple[float, ...]) -> Check:
    """Point 0 measures ``residuals`` as cases; point 1 (with ``d``) one exact residual 0."""
    readings = (
        Scoped(reading=Identity("cases", residual="r", tol=1e-12), where=lambda p: "d" not in p, at_paper_params=True),
        Scoped(reading=Identity("exact", residual="e", tol=1e-12), where=lambda p: "d" in p),
    )

    def setup(point: dict, rng: object) -> dict:
        return {"e": 0.0} if "d" in point else {"r": Cases(residuals)}

    return Check(
        command="toy-cases", paper=PAPER, claims=(Claim("toy.id", where="eq. 1", statement="x = x", reading=readings),),
        grid=lambda o: [{"L": 4}, {"L": 4, "d": 2}], setup=setup,
    )  # fmt: skip


def test_cases_are_one_sample_and_each_scoped_reading_reads_its_own_point() -> None:
    cases, exact = run_check(_check((1e-16, 3e-16, 0.0)), {"seed": 0, "trials": 1, "jobs": 1}).verdicts
    assert (cases.reading, cases.verdict, cases.trials, cases.at_paper_params) == ("cases", "holds", 3, True)
    assert cases.estimate == pytest.approx(3e-16) and "d" not in cases.params
    assert (exact.reading, exact.params["d"], exact.trials, exact.at_paper_params) == ("exact", 2, 1, False)


def test_one_bad_case_fails_the_identity() -> None:
    cases, _ = run_check(_check((0.0, 1e-3)), {"seed": 0, "trials": 1, "jobs": 1}).verdicts
    assert cases.verdict == "violated" and cases.estimate == pytest.approx(1e-3)


def test_a_scoped_reading_takes_the_wrapped_name_and_refuses_none() -> None:
    s = Scoped(reading=Identity("cases", "worst residual", residual="r"))
    assert (s.name, s.description) == ("cases", "worst residual")
    with pytest.raises(ValueError, match="Scoped needs the reading"):
        Scoped()
    with pytest.raises(ValueError, match="at least one value"):
        Cases(())


def test_the_documented_example_runs_as_written() -> None:
    import re
    from pathlib import Path

    doc = Path(__file__).resolve().parents[2] / "docs" / "theorem-api.md"
    blocks = re.findall(r"```python\n(.*?)```", doc.read_text(), flags=re.S)
    seeds, cases = ([b for b in blocks if key in b] for key in ("seeds=", "Cases(["))
    namespace: dict = {}
    for block in (*seeds, *cases):  # the Cases example reuses the names the seeds example imports
        exec(compile(block, str(doc), "exec"), namespace)  # noqa: S102 - the doc's own examples
    assert namespace["cases"].trials == 3
