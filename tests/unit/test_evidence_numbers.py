"""Every inequality an evidence string states holds for the numbers it quotes.

The three checking batteries run at their experiments' ``[quick]`` sizes; each evidence
string is searched for comparisons between two quoted numbers ("observed 0.01105 > bound
0.01", "k = 4621 >= n = 4096", "95% CI [0.04642, 0.1267]: all <= claimed 0.1", "CI [a, b]
above claimed c") and each is checked against those numbers, with the slack of their
printed rounding (4 significant digits). Also the docs' numbers that come from the
committed runs are checked against those runs.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import tomllib

REPO = Path(__file__).resolve().parents[2]
RESULTS = REPO / "reports" / "results"

NUM = r"-?\d[\d,]*(?:\.\d+)?(?:e[+-]?\d+)?"
KEY = r"(?:(?:claimed|bound|tolerance|the tolerance|C|[A-Za-zεδ_*]+(?:\([^)]*\))?) = |claimed |bound |tolerance )?"
#: "a OP b" where a and b are numbers quoted next to the operator (b possibly after a name)
PAIR = re.compile(rf"(?<![\w.\[])({NUM}) (<=|>=|<|>|≤|≥) {KEY}({NUM})(?![\w.])(?! [A-Za-z_][\w]* =)")
#: "CI [lo, hi]" followed by how it stands against the claim
CI_ALL = re.compile(rf"\[({NUM}), ({NUM})\]: all <= claimed ({NUM})")
CI_STRADDLE = re.compile(rf"\[({NUM}), ({NUM})\]: lower end <= claimed ({NUM}) < upper end")
CI_ABOVE = re.compile(rf"\[({NUM}), ({NUM})\] above claimed ({NUM})")


def _f(x: str) -> float:
    return float(x.replace(",", ""))


def _err(x: str) -> float:
    """The rounding error of ``x`` as printed: half a unit in its last digit, and at most the
    half-unit of a 4-significant-digit format (which drops trailing zeros: "0.01" is 0.01000)."""
    mant, _, exp = x.replace(",", "").lower().partition("e")
    if not exp and "." not in mant and len(mant.lstrip("-")) >= 3:
        return 0.0  # a count or a dimension, printed whole (a rounded float would read like 1.234e+04)
    decimals = len(mant.split(".")[1]) if "." in mant else 0
    return min(0.5 * 10.0 ** (-decimals + (int(exp) if exp else 0)), 5e-4 * abs(_f(x)))


def _cmp(a: str, op: str, b: str) -> bool:
    return _holds(_f(a), op, _f(b), _err(a) + _err(b))


def _holds(a: float, op: str, b: float, slack: float = 0.0) -> bool:
    if op in ("<=", "≤"):
        return a <= b + slack
    if op in (">=", "≥"):
        return a >= b - slack
    if op == "<":
        return a < b + slack
    return a > b - slack


def problems(evidence: str) -> list[str]:
    """The inequalities of ``evidence`` that its own numbers contradict."""
    bad = []
    for m in PAIR.finditer(evidence):
        if not _cmp(m.group(1), m.group(2), m.group(3)):
            bad.append(m.group(0))
    for m in CI_ALL.finditer(evidence):
        if not _cmp(m.group(2), "<=", m.group(3)):
            bad.append(m.group(0))
    for m in CI_STRADDLE.finditer(evidence):
        lo, hi, c = (m.group(i) for i in (1, 2, 3))
        if not (_cmp(lo, "<=", c) and _cmp(c, "<", hi)):
            bad.append(m.group(0))
    for m in CI_ABOVE.finditer(evidence):
        if not _cmp(m.group(1), ">", m.group(3)):
            bad.append(m.group(0))
    if re.search(rf"\[{NUM}, {NUM}\] <= claimed", evidence):
        bad.append("an interval said to be <= the claim without saying which end")
    return bad


def test_the_checker_catches_what_it_should() -> None:
    assert problems("observed 0.01105 > bound 0.01") == []
    assert problems("observed 0.009 > bound 0.01") != []
    assert problems("k = 4621 >= n = 4096") == [] and problems("k = 4095 >= n = 4096") != []
    assert problems("N = 4 <= 2 d_v = 4") == []  # "2 d_v" is not a quoted number
    assert problems("95% CI [0.04642, 0.1267] <= claimed 0.1") != []  # the straddling interval of old
    assert problems("95% CI [0.04642, 0.1267]: lower end <= claimed 0.1 < upper end") == []
    assert problems("worst observed 7867 <= bound 8244") == []
    assert problems("95% CI [0.2, 0.3] above claimed 0.25") != []


def _quick(name: str) -> dict:
    spec = tomllib.loads((REPO / "experiments" / f"{name}.toml").read_text())
    args = {**spec["args"], **spec.get("quick", {})}
    return {k.replace("-", "_"): v for k, v in args.items()}


@pytest.fixture(scope="module", params=["jl-check", "sa-check", "osa-check"])
def rows(request: pytest.FixtureRequest) -> list:
    from attnspec.battery import run_battery

    return run_battery(request.param, _quick(request.param)).verdicts


def test_every_evidence_inequality_agrees_with_its_numbers(rows: list) -> None:
    bad = [(r.claim, r.reading, p) for r in rows for p in problems(r.evidence)]
    assert not bad, bad[:10]


def test_no_vacuous_row_hides_its_failure_from_the_claim_verdict(rows: list) -> None:
    from attnspec.verdicts.sentences import hidden_failure
    from attnspec.verdicts.table import claim_verdicts

    hidden = {r.claim for r in rows if hidden_failure(r)}
    for cv in claim_verdicts(rows):
        if cv.claim in hidden:
            assert cv.verdict.endswith("violated"), (cv.claim, cv.verdict)
        assert cv.verdict != "vacuous" or cv.claim not in hidden


# --------------------------------------------------------------------------- the docs


def _committed(name: str) -> list[dict]:
    path = RESULTS / name / "verdicts.json"
    if not path.is_file():
        pytest.skip(f"no committed {name} run")
    return json.loads(path.read_text())


def test_jl_check_docs_numbers_are_the_runs() -> None:
    rows = _committed("jl-check")
    doc = (REPO / "docs" / "jl-check.md").read_text()
    assert f"({len(rows):,} at the defaults)" in doc
    log_n = [r for r in rows if r["claim"] == "linformer.thm1.eq18" and r["reading"] == "log-n"]
    uniform = [r["estimate"] for r in log_n if r["attention"] == "uniform"]
    others = [r for r in log_n if r["attention"] != "uniform"]
    assert all(r["estimate"] == 1.0 and r["trials"] == 500 for r in others)
    assert f"in {min(uniform):.3g}–{max(uniform):.3g} of them for uniform attention" in doc
    theorem_k = [r for r in rows if r["claim"] == "linformer.thm1.eq18" and r["reading"] == "theorem-k"]
    exceeded = sum(r["ci_low"] > r["bound"] for r in theorem_k)
    assert f"exceeded there in {exceeded} of the {len(theorem_k)} rows" in doc


def test_sa_check_docs_dimensions_are_the_runs() -> None:
    rows = _committed("sa-check")
    (dim,) = [r for r in rows if r["claim"] == "expressivity.thm1.dimension"]
    d_jl = int(re.search(r"= (\d+);", dim["evidence"]).group(1))
    d_row = int(re.search(r"the dimension would be (\d+)", dim["evidence"]).group(1))
    doc = (REPO / "docs" / "sa-check.md").read_text()

    def spaced(n: int) -> str:
        return f"{n:,}".replace(",", " ")

    assert f"at the defaults {spaced(d_row)} against the notes' {spaced(d_jl)}" in doc
    assert f"at the notes' d_JL = {spaced(d_jl)}" in doc
