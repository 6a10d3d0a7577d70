"""Every boundary of the one verdict classifier, and the claim registry's contracts."""

from __future__ import annotations

import math

import numpy as np
import pytest

from attnspec.numerics.stats import clopper_pearson
from attnspec.verdicts import registry as claims
from attnspec.verdicts.classify import (
    LOOSE_FACTOR,
    VERDICT_MEANINGS,
    VERDICTS,
    VerdictRow,
    classify_bound,
    classify_identity,
    classify_probability,
)


def test_vocabulary_is_complete_and_explained():
    assert set(VERDICTS) == set(VERDICT_MEANINGS)
    assert {"hypothesis-unmet", "cannot-fail", "measured"} <= set(VERDICTS)


# --- probability claims -------------------------------------------------------------


def test_probability_vacuous_at_and_above_one():
    assert classify_probability(claimed=1.0, failures=0, trials=10).verdict == "vacuous"
    assert classify_probability(claimed=3.0, failures=10, trials=10).verdict == "vacuous"
    assert classify_probability(claimed=math.nan, failures=0, trials=10).verdict == "vacuous"


def test_probability_hypothesis_comes_first():
    d = classify_probability(claimed=0.01, failures=10, trials=10, hypothesis_unmet="A not orthogonal")
    assert d.verdict == "hypothesis-unmet" and "A not orthogonal" in d.reason


def test_probability_violated_by_exact_law_even_when_the_sample_agrees():
    assert classify_probability(claimed=0.1, failures=0, trials=100, exact=0.2).verdict == "violated"
    # exactly at the claim: not violated
    assert classify_probability(claimed=0.1, failures=0, trials=100, exact=0.1).verdict != "violated"


def test_probability_violated_exactly_when_lower_ci_end_exceeds_claim():
    trials, failures = 1000, 150
    low = clopper_pearson(failures, trials).low
    assert classify_probability(claimed=low * 0.999, failures=failures, trials=trials).verdict == "violated"
    assert classify_probability(claimed=low * 1.001, failures=failures, trials=trials).verdict != "violated"


def test_probability_too_close_to_one_cannot_fail():
    # 10,000 trials: even 10,000 failures give a lower CI end of ~0.99963 < 0.9997.
    best = clopper_pearson(10_000, 10_000).low
    d = classify_probability(claimed=0.9997, failures=10_000, trials=10_000)
    assert best < 0.9997 and d.verdict == "cannot-fail"
    # just below what all-failures could contradict: a real check, violated by all-failures
    assert classify_probability(claimed=best * 0.999, failures=10_000, trials=10_000).verdict == "violated"
    # an exact law can always contradict: no cannot-fail with one
    assert classify_probability(claimed=0.9997, failures=10, trials=10, exact=1.0).verdict == "violated"


def test_probability_cannot_fail_is_decided_before_violated():
    # An existence claim met by a trivial output cannot fail, whatever a construction did.
    d = classify_probability(claimed=0.1, failures=0, trials=100, trivial="zero output meets it")
    assert d.verdict == "cannot-fail"
    d = classify_probability(claimed=0.01, failures=90, trials=100, trivial="zero")
    assert d.verdict == "cannot-fail" and "90/100" in d.reason


def test_probability_loose_boundary_is_the_one_factor():
    exact = 0.01
    assert classify_probability(claimed=exact * LOOSE_FACTOR, failures=1, trials=100, exact=exact).verdict == "holds"
    assert (
        classify_probability(claimed=exact * LOOSE_FACTOR * 1.01, failures=1, trials=100, exact=exact).verdict
        == "loose"
    )
    # without an exact law: loose against the upper CI end, holds against the lower one
    ci = clopper_pearson(5, 1000)
    assert classify_probability(claimed=ci.high * 10.1, failures=5, trials=1000).verdict == "loose"
    assert classify_probability(claimed=ci.low * 9.9, failures=5, trials=1000).verdict == "holds"
    # in between the trials cannot tell: consistent, looseness unresolved
    d = classify_probability(claimed=ci.high * 9.9, failures=5, trials=1000)
    assert d.verdict == "measured" and "unresolved" in d.reason


def test_probability_zero_failures_never_holds_without_an_exact_law():
    # 0/200: the upper CI end is 0.018; a claimed 0.1 is within 10x of it, but the true
    # probability may be 1e-23, so neither "holds" nor "loose" is shown.
    d = classify_probability(claimed=0.1, failures=0, trials=200)
    assert d.verdict == "measured" and "unresolved" in d.reason
    # with the exact law the looseness is decided
    assert classify_probability(claimed=0.1, failures=0, trials=200, exact=1e-23).verdict == "loose"
    # loose against the upper CI end even with zero failures
    assert classify_probability(claimed=0.5, failures=0, trials=2000).verdict == "loose"


def test_probability_bad_counts_rejected():
    with pytest.raises(ValueError):
        classify_probability(claimed=0.1, failures=5, trials=4)
    with pytest.raises(ValueError):
        classify_probability(claimed=0.1, failures=0, trials=0)


# --- bounds and identities -------------------------------------------------------------


def test_bound_boundaries():
    assert classify_bound(observed=1.0, bound=1.0).verdict == "holds"
    assert classify_bound(observed=1.0 + 1e-6, bound=1.0).verdict == "violated"
    assert classify_bound(observed=1.0 + 1e-6, bound=1.0, rtol=1e-5).verdict == "holds"
    assert classify_bound(observed=0.1, bound=1.0).verdict == "holds"
    assert classify_bound(observed=0.0999, bound=1.0).verdict == "loose"
    assert classify_bound(observed=0.0999, bound=1.0, loose_factor=None).verdict == "holds"
    assert classify_bound(observed=0.0, bound=1.0).verdict == "loose"
    assert classify_bound(observed=0.5, bound=math.inf).verdict == "vacuous"
    assert classify_bound(observed=math.nan, bound=1.0).verdict == "violated"
    assert classify_bound(observed=0.5, bound=1.0, trivial="0 meets it").verdict == "cannot-fail"
    assert classify_bound(observed=2.0, bound=1.0, trivial="0 meets it").verdict == "cannot-fail"
    assert classify_bound(observed=2.0, bound=1.0, hypothesis_unmet="sigma_max(B) > 1").verdict == "hypothesis-unmet"
    assert classify_bound(observed=0.5, bound=1.0, vacuous="k >= n").verdict == "vacuous"


def test_identity_boundaries():
    assert classify_identity(residual=1e-12, tol=1e-12).verdict == "holds"
    assert classify_identity(residual=2e-12, tol=1e-12).verdict == "violated"
    assert classify_identity(residual=math.nan, tol=1.0).verdict == "violated"
    assert classify_identity(residual=1.0, tol=1e-12, hypothesis_unmet="A not orthogonal").verdict == "hypothesis-unmet"


def test_row_carries_reading_and_rejects_unknown_verdicts():
    row = VerdictRow(claim="linformer.thm1.eq3", reading="relative", verdict="cannot-fail", params={"k": 3})
    flat = row.flat()
    assert list(flat)[:3] == ["claim", "reading", "k"]
    with pytest.raises(ValueError):
        VerdictRow(claim="x.y", verdict="fine")  # type: ignore[arg-type]


# --- the registry ---------------------------------------------------------------------


def test_claim_ids_and_readings_are_validated():
    r = (claims.Reading("as-stated", "the statement as printed"),)
    with pytest.raises(ValueError, match="paper key"):
        claims.Claim(id="nopaper.thm1", where="Thm 1", statement="s", readings=r, command="jl-check")
    with pytest.raises(ValueError, match="dotted"):
        claims.Claim(id="Linformer Thm 1", where="Thm 1", statement="s", readings=r, command="jl-check")
    with pytest.raises(ValueError, match="at least one"):
        claims.Claim(id="linformer.test.x", where="Thm 1", statement="s", readings=(), command="jl-check")
    c = claims.Claim(id="linformer.test.x", where="Thm 1", statement="s", readings=r, command="jl-check")
    assert c.paper == "linformer" and c.reading("as-stated").name == "as-stated"
    with pytest.raises(ValueError, match="no reading"):
        c.reading("other")


def test_unknown_claim_id_names_close_ones():
    with pytest.raises(ValueError, match="unknown claim id"):
        claims.get("linformer.no-such-claim")


def test_clopper_pearson_fast_path_matches_scipy_stats() -> None:
    """The interval comes from SciPy's beta quantile ufunc (cached); it must give the bits of
    the public scipy.stats.beta.ppf on every kind of count, level and edge (0 and all failures)."""
    from scipy import stats as sps

    from attnspec.numerics.stats import clopper_pearson

    rng = np.random.default_rng(21)
    cases = [(0, 1), (1, 1), (0, 10_000), (10_000, 10_000), (3, 7), (1, 2_000_000)]
    cases += [(int(s), int(t)) for t in rng.integers(1, 50_000, 300) for s in (rng.integers(0, t + 1),)]
    for level in (0.95, 1 - 0.01 / 5, 0.5):
        a = 1 - level
        for s, t in cases:
            ci = clopper_pearson(s, t, level)
            low = 0.0 if s == 0 else float(sps.beta.ppf(a / 2, s, t - s + 1))
            high = 1.0 if s == t else float(sps.beta.ppf(1 - a / 2, s + 1, t - s))
            assert (ci.low, ci.high, ci.estimate) == (low, high, s / t), (s, t, level)


# --- rows that say exactly what their counts say ---------------------------------------


def test_a_contradicted_stated_probability_is_never_vacuous():
    # a rank statement vacuous at k >= n, but 500/500 failures against a stated 0.25
    d = classify_probability(claimed=0.25, failures=500, trials=500, vacuous="k = 4621 >= n = 4096")
    assert d.verdict == "violated"
    assert "k = 4621 >= n = 4096" in d.reason and "500/500" in d.reason and "0.25" in d.reason
    # not contradicted, or a claim >= 1, or a trivial output that meets the tolerance: still vacuous
    assert classify_probability(claimed=0.25, failures=0, trials=500, vacuous="k >= n").verdict == "vacuous"
    assert classify_probability(claimed=45.0, failures=500, trials=500, vacuous="k >= n").verdict == "vacuous"
    assert (
        classify_probability(claimed=0.25, failures=500, trials=500, vacuous="k >= n", trivial="zero output").verdict
        == "vacuous"
    )


def test_holds_needs_the_estimate_at_or_below_the_claim():
    # 1 failure in 10,000 against 6.35e-6: the interval straddles the claim, the estimate is 16x above it
    d = classify_probability(claimed=6.35e-6, failures=1, trials=10_000)
    assert d.verdict == "measured"
    assert "straddles" in d.reason and "above claimed" in d.reason
    # the estimate at or below the claim, the lower end within the factor: holds
    assert classify_probability(claimed=1.5e-3, failures=10, trials=10_000).verdict == "holds"
