"""sa-check labels that say exactly what was shown, the exact bounds they rest
on, the construction identity as a claim, the grid sampler and its d*, the resource checks."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from attnspec.errors import InputError
from attnspec.numerics.stats import clopper_pearson
from attnspec.theory.expressivity import bounds, measure
from attnspec.theory.expressivity.battery import config_from_options, verdicts_of_instance
from attnspec.theory.expressivity.config import Config
from attnspec.theory.expressivity.construction import log_targets, sparse_target
from attnspec.theory.expressivity.dimension import check_jl_dimension
from attnspec.theory.expressivity.sampling import asymptotic_errors, sample_errors, sample_errors_grid
from attnspec.verdicts import registry as claims

ROOT = Path(__file__).resolve().parents[2]
SMALL = Config(L=32, k=2, eps=0.05, delta=0.3, m=0.2, M=1.0, beta=0.2, trials=30, scaling_L=16)


@pytest.fixture(scope="module")
def small():
    ms = measure.measure(SMALL)
    return ms, verdicts_of_instance(SMALL, ms)


# --- the exact per-pair law and its union bound -------------------------------------------


@pytest.mark.parametrize("d", [10, 100, 1000])
@pytest.mark.parametrize("x", [0.1, 0.5])
def test_pair_tail_bounds_the_exact_law(d, x) -> None:
    """ρ = ±1: d⟨Ru, Ru⟩ = χ²_d exactly. The Chernoff bound is above the exact tail, and within
    the polynomial factor a Chernoff bound loses (< 10 √d) where the tail is small."""
    up = stats.chi2.sf(d * (1 + x), d)
    lo = stats.chi2.cdf(d * (1 - x), d)
    b_up = math.exp(bounds.pair_log_tail(np.array(1.0), np.array(x), d))
    b_lo = math.exp(bounds.pair_log_tail(np.array(-1.0), np.array(x), d))
    assert b_up >= up and b_lo >= lo
    if up < 1e-3:
        assert b_up <= 10 * math.sqrt(d) * up


def test_pair_tail_bounds_monte_carlo() -> None:
    """ρ = 0.6, d = 50: the bound is above the Monte Carlo rate's 99.9% lower end, both tails."""
    rng = np.random.default_rng(0)
    d, r, x, n = 50, 0.6, 0.4, 100_000
    a = rng.standard_normal((n, d))
    c = r * a + math.sqrt(1 - r * r) * rng.standard_normal((n, d))
    s = (a * c).mean(1) - r
    for fails, rho in ((int(np.sum(s >= x)), r), (int(np.sum(s <= -x)), -r)):
        assert clopper_pearson(fails, n, 0.999).low <= math.exp(bounds.pair_log_tail(np.array(rho), np.array(x), d))


@pytest.mark.parametrize("factorization", ["row", "column"])
def test_union_bound_is_above_the_true_rate(factorization) -> None:
    """At a d where failures are common, the union bound is >= the Monte Carlo rate (its
    lower 99.9% end), for the per-pair JL condition and for ‖B − B̂‖∞ > δ."""
    A = sparse_target(8, 2, m=0.2, M=1.0, seed=1)
    B = log_targets(A, 0.05)
    d, eps_jl, delta = 400, 0.2, 0.6
    df = sample_errors(A, d, eps=0.05, trials=2000, seed=2, factorization=factorization)
    for fails, log_b in (
        (
            int(np.sum(df["jl_ratio"] > eps_jl)),
            bounds.pairs_log_union_bound(B, d, allowance=eps_jl, relative=True, factorization=factorization),
        ),
        (
            int(np.sum(df["err_inf"] > delta)),
            bounds.pairs_log_union_bound(B, d, allowance=delta, relative=False, factorization=factorization),
        ),
    ):
        assert 0 < fails < 2000
        assert clopper_pearson(fails, 2000, 0.999).low <= math.exp(log_b)


def test_eps_jl_paper_is_k_max_B() -> None:
    """The notes' ε = δ/(√k max|B|), so d_JL = 8 ln(4L²/β) k max|B|²/δ² (not max‖b_i‖²)."""
    A = sparse_target(64, 4, m=0.1, M=1.0, seed=3)
    B = log_targets(A, 0.01)
    e = bounds.eps_jl_paper(B, 0.1)
    assert e == pytest.approx(0.1 / (2 * np.abs(B).max()))
    d = bounds.dimension_jl(64, e, 0.1)
    assert d == math.ceil(8 * math.log(4 * 64 * 64 / 0.1) * 4 * np.abs(B).max() ** 2 / 0.1**2)
    assert d >= bounds.dimension_jl(64, bounds.eps_jl_needed(B, 0.1), 0.1)
    assert bounds.eps_jl_paper(B, 0.1, "column") == pytest.approx(
        0.1 / (math.sqrt((B != 0).sum(0).max()) * np.abs(B).max())
    )


# --- the labels -----------------------------------------------------------------------------


def test_zero_failures_at_d_jl_are_judged_against_the_exact_bound() -> None:
    """0/200 failures at d_JL cannot tell "holds" from "loose" against a claimed 0.1 when the
    true failure probability is ~1e-23. With the union of exact per-pair bounds passed as
    ``exact`` both rows are loose, at the paper's parameters."""
    A = sparse_target(512, 8, m=0.1, M=1.0, seed=0)
    B = log_targets(A, 0.01)
    eps = bounds.eps_jl_paper(B, 0.1)
    d_jl = bounds.dimension_jl(512, eps, 0.1)
    trials = pd.DataFrame({"jl_ratio": np.zeros(200), "err_inf": np.zeros(200)})
    rows = check_jl_dimension(
        trials,
        B=B,
        L=512,
        d_jl=d_jl,
        eps_jl=eps,
        delta=0.1,
        beta=0.1,
        d_star=342_224,
        params={"L": 512, "k": 8},
        seed=0,
    )
    assert [r.claim for r in rows] == ["expressivity.jl.pairs", "expressivity.thm1.dimension"]
    for r in rows:
        assert r.verdict == "loose" and r.exact is not None and r.exact < 1e-15 and r.at_paper_params
        assert "Chernoff" in r.evidence
    assert rows[0].exact > rows[1].exact / 1e6  # both tiny, computed, not zero-clipped to nothing


def test_an_upper_bound_never_makes_a_violation() -> None:
    """Where the union bound is not below the claim (small d) it is not passed as ``exact``:
    the trials decide, and an upper bound above the claim is no evidence of violation."""
    A = sparse_target(16, 2, m=0.2, M=1.0, seed=1)
    B = log_targets(A, 0.05)
    trials = pd.DataFrame({"jl_ratio": np.zeros(50), "err_inf": np.zeros(50)})
    rows = check_jl_dimension(
        trials, B=B, L=16, d_jl=50, eps_jl=0.1, delta=0.05, beta=0.5, d_star=50, params={}, seed=0
    )
    assert all(r.exact is None and r.verdict != "violated" for r in rows)


def test_small_run_labels(small) -> None:
    ms, rows = small
    by = {(r.claim, r.reading): r for r in rows}
    # d_JL is the notes' dimension: k max|B|², with its ε
    assert ms.eps_jl == pytest.approx(bounds.eps_jl_paper(ms.B, SMALL.delta))
    assert ms.d_jl == bounds.dimension_jl(SMALL.L, ms.eps_jl, SMALL.beta) and ms.d_jl >= ms.d_rownorm
    dim = by["expressivity.thm1.dimension", "jl-constant"]
    assert dim.params["d"] == ms.d_jl and dim.exact is not None and dim.verdict == "loose"
    # the rows at the paper's own parameters
    paper = {(r.claim, r.reading) for r in rows if r.at_paper_params}
    assert paper == {
        ("expressivity.thm1.construction", "identity"),
        ("expressivity.thm1.construction", "exact-choice"),
        ("expressivity.jl.pairs", "union-bound"),
        ("expressivity.thm1.dimension", "jl-constant"),
    }
    # tightest and typical case, the label on the tightest
    on = by["expressivity.thm1.onsupport", "given-delta"]
    assert on.params["tightest"] <= on.params["typical"] and "the label rests on it" in on.evidence
    assert by["expressivity.thm1.construction", "identity"].verdict == "holds"


def test_construction_identity_claim(monkeypatch) -> None:
    """The identity is registered with its own id and fails when W_K is not the notes' one."""
    from attnspec.theory.expressivity import construction, identity

    assert "expressivity.thm1.construction" in {c.id for c in claims.catalogue()}
    ok = identity.check_construction(L=32, k=2, m=0.2, M=1.0, eps=0.05, support="random", seed=1, params={})
    assert [r.verdict for r in ok] == ["holds", "holds"]
    real = construction._weights

    def wrong(d, sparse):  # W_K = [[0, I], [0, 0]]: X W_K = (0, B̂1), the product becomes B̂1 B̂1ᵀ
        W_Q, W_K = real(d, False)
        return W_Q, W_K.T.contiguous()

    monkeypatch.setattr(construction, "_weights", wrong)
    bad = identity.check_construction(L=32, k=2, m=0.2, M=1.0, eps=0.05, support="random", seed=1, params={})
    assert bad[0].verdict == "violated"


def test_docs_agree_with_the_code() -> None:
    """docs/sa-check.md: the dimension claim is k max|B|² (as the statement and the code), and
    the exponents are called measured, as the tool prints them."""
    text = (ROOT / "docs" / "sa-check.md").read_text()
    assert "both *holds*, <= 1" not in text
    stmt = claims.get("expressivity.thm1.dimension").statement
    assert "k max|B|²" in stmt and "8 ln(4L²/β) k max\\|B\\|²/δ²" in text


# --- the grid sampler -----------------------------------------------------------------------


def test_grid_sampler_matches_the_exact_law() -> None:
    """L = k = 1: B̂ = b χ²_d/d exactly; the grid sampler's success rate at two d is within the
    99.9% interval of the exact probability."""
    b, eps, delta = math.log(0.5 / 0.01), 0.01, 0.5
    err, _ = sample_errors_grid(np.array([[0.5]]), [50, 200], eps=eps, trials=4000, seed=1)
    for j, d in enumerate((50, 200)):
        p = stats.chi2.cdf(d * (1 + delta / b), d) - stats.chi2.cdf(d * (1 - delta / b), d)
        ci = clopper_pearson(int(np.sum(err[:, j] <= delta)), 4000, 0.999)
        assert ci.low <= p <= ci.high


@pytest.mark.parametrize("factorization", ["row", "column"])
def test_grid_sampler_same_law_as_sample_errors(factorization) -> None:
    A = sparse_target(24, 3, m=0.2, M=1.0, seed=2)
    err, fr = sample_errors_grid(
        A, [30, 300], eps=0.05, trials=1500, seed=3, factorization=factorization, full_at=(300,)
    )
    ref = sample_errors(A, 300, eps=0.05, trials=1500, seed=4, factorization=factorization)
    assert stats.ks_2samp(err[:, 1], ref["err_inf"]).pvalue > 1e-3
    assert stats.ks_2samp(fr[300]["san_off_mass"], ref["san_off_mass"]).pvalue > 1e-3
    assert np.array_equal(fr[300]["err_inf"].to_numpy(), err[:, 1])


def test_grid_d_star_brackets_and_reproduces() -> None:
    from attnspec.theory.expressivity.dstar import asymptotic_d_star, grid_d_star

    A = sparse_target(32, 2, m=0.2, M=1.0, seed=5)
    hint = asymptotic_d_star(asymptotic_errors(A, eps=0.05, trials=100, seed=6), 0.3, 0.2)[0]
    ds, frames = grid_d_star(A, eps=0.05, delta=0.3, beta=0.2, trials=40, d_hint=hint, seed=7, extra=(10 * hint,))
    assert ds.success >= 0.8 and ds.d_low < ds.d_star <= ds.d_low * 2**0.125 + 1
    assert 10 * hint in frames
    again, _ = grid_d_star(A, eps=0.05, delta=0.3, beta=0.2, trials=40, d_hint=hint, seed=7, extra=(10 * hint,))
    assert again.evaluations == ds.evaluations and ds.frame.equals(again.frame)


def test_both_statistics_equal_two_calls() -> None:
    A = sparse_target(40, 3, m=0.2, M=1.0, seed=8)
    mx, ra = asymptotic_errors(A, eps=0.05, trials=20, seed=9, statistic="both")
    assert np.array_equal(mx, asymptotic_errors(A, eps=0.05, trials=20, seed=9))
    assert np.array_equal(ra, asymptotic_errors(A, eps=0.05, trials=20, seed=9, statistic="ratio"))


def test_exact_curve_equals_pointwise() -> None:
    ds = np.array([1, 5, 40, 63, 64])
    for proj, sc in (("gaussian", True), ("orthogonal", True), ("orthogonal", False)):
        pw = [bounds.exact_jl_deviation(64, int(d), 0.25, proj, scaled=sc) for d in ds]
        assert np.array_equal(bounds.exact_jl_deviation_curve(64, ds, 0.25, proj, scaled=sc), pw)


# --- resources --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "options, words",
    [
        ({"L": 10**12}, ["--L 1000000000000", "of memory", "available"]),
        ({"trials": 10**12}, ["--trials 1000000000000", "of memory", "available"]),
        ({"sweep_trials": 10**12}, ["--sweep-trials 1000000000000", "of memory"]),
        ({"sweep_L": "64,100000"}, ["--sweep-L 100000", "of memory"]),
        ({"trials": 3_000_000}, ["h of computation", "limit of 24 h"]),
        ({"delta": 1e-300}, ["delta=1e-300", "2^53"]),
        ({"d": 2**60}, ["d must be <= 2^44", f"got d={2**60}"]),
        ({"d": 10**14}, ["d must be <= 2^44", "float32", f"got d={10**14}"]),
    ],
)
def test_resources_refused_up_front(options, words) -> None:
    with pytest.raises(InputError) as e:
        config_from_options(options)
    msg = str(e.value)
    assert "\n" not in msg and all(w in msg for w in words), msg


def test_defaults_and_full_sweep_pass_the_resource_check() -> None:
    from attnspec.theory.expressivity.resources import MAX_SECONDS, seconds_estimate

    config_from_options({})
    config_from_options({"sweep": True})
    assert seconds_estimate(Config()) < seconds_estimate(Config(sweep=True)) < MAX_SECONDS


@pytest.mark.parametrize("projection", ["gaussian", "orthogonal"])
def test_curtailment_gives_the_full_decision(projection) -> None:
    """The search stops drawing at a d once its verdict over all trials is certain: at every d
    it evaluates, the decision equals the one of all the trials (same batched draws)."""
    from attnspec.theory.expressivity.dstar import CURTAIL_BATCH, find_d_star

    A = sparse_target(32, 2, m=0.2, M=1.0, seed=11)
    kw = dict(eps=0.05, trials=100, projection=projection, seed=12)
    ds = find_d_star(A, delta=0.3, beta=0.2, **kw)
    assert ds.counts and any(n < 100 for _, n in ds.counts.values())  # it did stop early somewhere
    for d, (s, n) in ds.counts.items():
        if projection == "orthogonal" and d == 32:
            continue
        full = sample_errors(A, d, only_max=True, batch=CURTAIL_BATCH, **kw)["err_inf"].to_numpy()
        assert int(np.sum(full[:n] <= 0.3)) == s
        assert (np.mean(full <= 0.3) >= 0.8) == (d >= ds.d_star if projection == "gaussian" else d >= ds.d_star)
