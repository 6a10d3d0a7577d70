"""The speed-ups of `jl-check` keep every number honest.

* the sequential stopping rule's error rate (<= ALPHA = 0.01 for a row that stops early);
* the exact evaluations against independent ones (scipy quadrature, scipy laws, direct
  exponentials): the inner-product law, the signed-count law, Bartlett's Wishart draws,
  the series form of the paper's Theorem-2 construction;
* a fixed-size run is reproduced exactly with ``sequential=False``;
* the progress reporter (silent under its delay, sparse off a terminal, quiet).
"""

from __future__ import annotations

import io
import math

import numpy as np
import pytest
import torch
from scipy import integrate
from scipy import stats as sps

from attnspec.numerics.stats import clopper_pearson
from attnspec.runtime.progress import Progress, StreamSink
from attnspec.theorem import sequential as SQ
from attnspec.theory.linformer import lemma1 as L1
from attnspec.theory.linformer import proof_steps as PS
from attnspec.theory.linformer import samplers as S
from attnspec.theory.linformer import theorem1 as T1
from attnspec.theory.linformer import theorem2 as T2
from attnspec.theory.linformer import theorem2_samplers as S2

# ----------------------------------------------------------------------------- stopping rule


@pytest.mark.parametrize("kind", ["violated", "loose"])
def test_sequential_rule_wrongly_settles_at_most_alpha_of_the_time(kind: str) -> None:
    """At the worst case — the true failure probability exactly on a threshold — the rule
    settles on the wrong side (violated at p = claim; loose at p = claim/10) with probability
    <= ALPHA over all looks. 3000 replications, fixed seed: the bound plus 3 binomial sd."""
    claimed = 0.05
    p = claimed if kind == "violated" else claimed / 10
    trials, look = 10_000, 2_000
    n_looks = SQ.looks(trials, look)
    rng = np.random.default_rng(0)
    reps, wrong = 3000, 0
    for _ in range(reps):
        f = t = 0
        for _ in range(n_looks):
            f += int(rng.binomial(look, p))
            t += look
            ci = clopper_pearson(f, t, 1 - SQ.ALPHA / n_looks)
            if (kind == "violated" and ci.low > claimed) or (kind == "loose" and ci.high < claimed / 10):
                wrong += 1
                break
    assert wrong / reps <= SQ.ALPHA + 3 * math.sqrt(SQ.ALPHA * (1 - SQ.ALPHA) / reps)


def test_rows_whose_verdict_the_counts_cannot_change_are_fixed() -> None:
    assert SQ.fixed_verdict(1.5, trials_max=10_000)  # vacuous
    assert SQ.fixed_verdict(0.9997, trials_max=10_000)  # cannot-fail by the trial count
    assert not SQ.fixed_verdict(0.82, trials_max=10_000)
    assert SQ.settled(2000, 2000, 0.82, n_looks=5)  # clearly violated
    assert SQ.settled(0, 2000, 0.82, n_looks=5)  # clearly loose
    assert not SQ.settled(0, 2000, 1e-6, n_looks=5)  # 0 failures against a tiny claim: undecided


def test_theorem1_fixed_size_run_is_reproduced_and_early_stops_keep_the_verdicts() -> None:
    from attnspec.theory.linformer.rows import verdict_rows

    P = T1.attention_matrix("softmax", 128, seed=3)
    ks = [8, 64, 127]
    full, _ = T1.simulate_theorem1({"softmax": P}, 0.5, ks, trials=6000, seed=1, sequential=False)
    seq, _ = T1.simulate_theorem1({"softmax": P}, 0.5, ks, trials=6000, seed=1)
    assert (full["trials"] == 6000).all()
    assert (seq["trials"] <= 6000).all()
    # the first look of the sequential run is the fixed run's first 500 trials: same seeds
    assert list(seq["seed"]) == list(full["seed"])
    assert [r.verdict for r in verdict_rows(seq)] == [r.verdict for r in verdict_rows(full)]


# ----------------------------------------------------------------------------- exact laws


@pytest.mark.parametrize(
    "k,rho,tau",
    [(16, 0.99, 0.3), (30, 0.99, 0.3), (348, 0.5, 0.1), (4095, 0.99, 0.01), (4621, 0.1, 0.1), (2, 0.5, 0.3)],
)
def test_inner_product_law_by_simpson_matches_tight_adaptive_quadrature(k: int, rho: float, tau: float) -> None:
    a, b = (1 + rho) / 2, (1 - rho) / 2
    for A, B, t in ((a, b, k * (rho + tau)), (b, a, k * (tau - rho))):
        f = L1._diff_chi2_logf(A, B, k, t)  # noqa: SLF001
        pts = [math.sqrt(-t / B)] if t < 0 else None
        ref = integrate.quad(
            lambda v: math.exp(f(np.array([v]))[0]),  # noqa: B023 - called within this iteration
            0,
            math.sqrt(k) + 60,
            limit=4000,
            epsabs=0,
            epsrel=1e-13,
            points=pts,
        )[0]
        assert L1.diff_chi2_sf(A, B, k, t) == pytest.approx(ref, rel=1e-8)


def test_signed_count_law_matches_its_definition() -> None:
    h, p = 40, 0.3
    values, cdf = S.signed_count_law(h, p)
    pmf = np.diff(np.r_[0.0, cdf])
    # direct: N ~ Bin(h, p), S = 2·Bin(N, 1/2) − N
    direct = {}
    for N in range(h + 1):
        for plus in range(N + 1):
            s = 2 * plus - N
            direct[s] = direct.get(s, 0.0) + sps.binom.pmf(N, h, p) * sps.binom.pmf(plus, N, 0.5)
    for v, q in zip(values, pmf):
        assert q == pytest.approx(direct[int(v)], abs=1e-15)
    assert (pmf * values * values).sum() == pytest.approx(h * p)


def test_flat_pair_sampler_matches_the_direct_sampler() -> None:
    """The reduced (inverse-CDF) flat-pair images against the direct sampler at fixed seeds:
    the laws are discrete (KS does not apply), so the atoms are compared by a chi-square
    test of homogeneity on the values seen at least 20 times in both samples."""
    n, k = 64, 6
    units, scales = S.reduced_pair_units("achlioptas", n, k, 6000, vectors="flat", seed=1)
    red = (units * torch.tensor(scales, dtype=torch.float64)).numpy()
    dirc = S.direct_pair_images("achlioptas", n, k, 1500, vectors="flat", seed=2) * math.sqrt(k)
    for j in range(2):
        a, b = np.round(red[:, :, j].ravel(), 9), np.round(dirc[:, :, j].ravel(), 9)
        vals = [v for v in np.unique(np.r_[a, b]) if (a == v).sum() >= 20 and (b == v).sum() >= 20]
        table = np.array(
            [
                [(a == v).sum() for v in vals] + [(~np.isin(a, vals)).sum()],
                [(b == v).sum() for v in vals] + [(~np.isin(b, vals)).sum()],
            ]
        )
        assert sps.chi2_contingency(table).pvalue > 1e-3


def test_bartlett_wishart_fraction_matches_direct_gaussian_v() -> None:
    n, d, eps, draws = 200, 12, 0.4, 400
    fast = PS.gaussian_v_fraction(n, d, eps, draws, seed=3)
    rng = np.random.default_rng(4)
    direct = sum(np.linalg.norm(V := rng.standard_normal((n, d)), 2) <= eps * np.linalg.norm(V) for _ in range(draws))
    # both are Binomial(draws, q) for the same q: their difference is within 4 sd
    q = (fast + direct) / (2 * draws)
    assert abs(fast - direct) <= 4 * math.sqrt(2 * draws * q * (1 - q)) + 1


def test_theorem2_series_matches_direct_exponentials_on_the_same_draws() -> None:
    n, d = 256, 4
    rng = np.random.default_rng(0)
    w, V = rng.standard_normal(n) * 3, rng.standard_normal((n, d))
    ks = np.array([8, 64, 200])
    looks = S2.Theorem2Looks(w, V, ks, delta=1 / (2 * n), seed=5, work_dtype=torch.float64)
    new = looks.draw(700, plain=False)
    old = S2.theorem2_reduced_all(w, V, ks, 700, delta=1 / (2 * n), seed=5, work_dtype=torch.float64)
    assert np.allclose(new["paper"], old["paper"], rtol=1e-10, atol=1e-12)
    assert np.allclose(new["eq21"], old["eq21"], rtol=1e-10, atol=1e-12)


# ----------------------------------------------------------------------------- progress


class _Clock:
    def __init__(self) -> None:
        self.t = 0.0

    def __call__(self) -> float:
        return self.t


def test_progress_is_silent_under_its_delay_and_sparse_off_a_terminal() -> None:
    out, clock = io.StringIO(), _Clock()
    p = Progress("work", total=100, unit="trials", say=StreamSink(out), clock=clock, quiet=False)
    p.advance(10)
    assert out.getvalue() == ""  # < 2 s: nothing
    clock.t = 3.0
    p.advance(20)
    assert out.getvalue().count("\n") == 1 and "30/100 trials (30%)" in out.getvalue() and "ETA 7.0 s" in out.getvalue()
    clock.t = 4.0
    p.advance(10)  # within the 10 s sparse interval: no new line
    assert out.getvalue().count("\n") == 1
    clock.t = 14.0
    p.advance(10)
    assert out.getvalue().count("\n") == 2


def test_progress_quiet_prints_nothing() -> None:
    out, clock = io.StringIO(), _Clock()
    p = Progress("work", total=10, say=StreamSink(out), clock=clock, quiet=True)
    clock.t = 100.0
    p.advance(5)
    p.close()
    assert out.getvalue() == ""


def test_progress_of_a_sequential_run_promises_only_an_upper_bound() -> None:
    # sequential Monte Carlo usually stops at its first look: "ETA 1 min 23 s" would mislead
    out, clock = io.StringIO(), _Clock()
    p = Progress("Theorem 1", total=30_000, unit="trials", say=StreamSink(out), clock=clock, quiet=False, at_most=True)
    clock.t = 6.0
    p.advance(2000)
    line = out.getvalue()
    assert "2,000 of at most 30,000 trials (7%)" in line and "at most 1 min 24 s left (stops once settled)" in line
    assert "ETA" not in line


# ----------------------------------------------------------------------------- violation search


def test_violation_search_has_its_stated_power_and_applies_only_beyond_resolution() -> None:
    t = SQ.search_trials()
    assert (1 - SQ.SEARCH_RATE) ** t <= SQ.SEARCH_BETA < (1 - SQ.SEARCH_RATE) ** (t - 1)
    # beyond resolution: 0/10000 leaves the upper 95% end (3.7e-4) above the claim
    assert SQ.beyond_resolution(6.35e-6, trials_max=10_000)
    assert not SQ.beyond_resolution(1e-3, trials_max=10_000)
    assert SQ.searched(0, t, 1e-9, trials_max=10_000)
    assert not SQ.searched(0, t - 1, 1e-9, trials_max=10_000)  # not searched long enough
    assert not SQ.searched(1, 10_000, 1e-9, trials_max=10_000)  # a failure: only the interval rule may stop it
    assert not SQ.searched(0, 10_000, 1e-3, trials_max=10_000)  # a resolvable claim: decided by its interval
    # the promise: a true failure rate of SEARCH_RATE ends a search with no failure seen at most
    # SEARCH_BETA of the time (20000 searches of t trials, fixed seed: the bound plus 3 sd)
    reps = 20_000
    missed = float((np.random.default_rng(0).binomial(t, SQ.SEARCH_RATE, size=reps) == 0).mean())
    assert missed <= SQ.SEARCH_BETA + 3 * math.sqrt(SQ.SEARCH_BETA * (1 - SQ.SEARCH_BETA) / reps)


def test_claims_near_the_resolution_limit_draw_the_whole_budget() -> None:
    limit = clopper_pearson(0, 10_000, 0.95).high  # 3.7e-4
    assert SQ.near_resolution(6.35e-6, trials_max=10_000)  # 58 times below the limit
    assert SQ.near_resolution(limit / SQ.NEAR_FACTOR, trials_max=10_000)
    assert not SQ.near_resolution(limit / SQ.NEAR_FACTOR / 1.01, trials_max=10_000)
    assert not SQ.near_resolution(1e-3, trials_max=10_000)  # resolvable: the interval rule decides it
    # a near row never stops on an empty search; a far one does
    assert not SQ.searched(0, 8000, 6.35e-6, trials_max=10_000)
    assert SQ.searched(0, 2000, 2.28e-9, trials_max=10_000)


def test_a_violation_near_the_resolution_limit_is_missed_as_rarely_as_by_the_full_budget() -> None:
    """Seeded simulation of the rule, looks of 2000 up to 10000 trials, true failure rate 0.001
    against a claim of 6.35e-6 (Theorem 2's eq. (8) at ε = 0.25, k = 2145, n = 4096): the short
    search would end ``measured`` in (1 − 0.001)^2000 = 13.5% of runs; near the limit the row
    draws all 10000 and ends measured only when at most one failure is seen (one failure leaves
    the 95% lower end, 2.5e-6, below the claim): P(Bin(10000, 0.001) <= 1) = 5.0e-4."""
    near = SQ.simulated_miss_rate(0.001, 6.35e-6, trials_max=10_000, look=2000, reps=20_000, seed=0)
    far = SQ.simulated_miss_rate(0.001, 2.28e-9, trials_max=10_000, look=2000, reps=20_000, seed=0)
    full = float(sps.binom.cdf(1, 10_000, 0.001))
    assert full == pytest.approx(5.0e-4, rel=0.02)
    assert near <= full + 4 * math.sqrt(full * (1 - full) / 20_000)  # 0.0003 at this seed
    short = (1 - 0.001) ** 2000  # far below the limit the search still stops at 2000
    assert abs(far - short) <= 4 * math.sqrt(short * (1 - short) / 20_000)  # 0.134 at this seed


def test_theorem2_rows_beyond_resolution_stop_after_the_search_and_say_so() -> None:
    """n = 1024, d = 2: at eps = 2/3, k = 1023 eq. (8)'s union bound is 1.4e-13, far below what
    6000 trials resolve. Its rows stop at the first look of 2000 (>= 1840) with no failure, keep
    the full run's verdict, and their evidence names the violation search and its power. At
    eps = 0.9 the bound, 4.1e-6, is within NEAR_FACTOR of the limit (6.1e-4): those rows draw
    all 6000 trials."""
    from attnspec.theory.linformer.rows import verdict_rows

    kw = {"trials": 6000, "seed": 2, "grid": {2.0 / 3.0: [1023]}}
    seq, _ = T2.simulate_theorem2(1024, 2, 0.3, [16], **kw)
    full, _ = T2.simulate_theorem2(1024, 2, 0.3, [16], sequential=False, **kw)
    grid = seq["sweep"].eq("eps-k-grid") & seq["reading"].str.startswith("proof-")
    assert grid.sum() == 6 and (seq.loc[grid, "failures"] == 0).all()
    assert (seq.loc[grid, "trials"] == 2000).all() and (full.loc[grid, "trials"] == 6000).all()
    assert (full.loc[grid, "failures"] == 0).all()
    rows_seq, rows_full = verdict_rows(seq), verdict_rows(full)
    assert [r.verdict for r in rows_seq] == [r.verdict for r in rows_full]
    searched = [r for r in rows_seq if r.params.get("sweep") == "eps-k-grid" and r.reading.startswith("proof-")]
    assert len(searched) == 6 and all(
        r.verdict == "measured"
        and "violation search: stopped at 2000 of up to 6000 trials" in r.evidence
        and "no failure in 2000 trials, power 0.99 against failure rates >= 0.23 %" in r.evidence
        for r in searched
    )
    near, _ = T2.simulate_theorem2(1024, 2, 0.3, [16], **{**kw, "grid": {0.9: [1023]}})
    grid = near["sweep"].eq("eps-k-grid") & near["reading"].str.startswith("proof-")
    assert grid.sum() == 6 and (near.loc[grid, "trials"] == 6000).all()
