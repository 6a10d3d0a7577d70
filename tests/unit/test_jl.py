"""Lemma 1 / Theorems 1–2: dimensions, exact laws against direct Monte Carlo, bounds
against exact values where the mathematics says one dominates, reproducibility, verdicts."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from attnspec.errors import InputError
from attnspec.numerics.stats import clopper_pearson
from attnspec.theory.linformer import battery as B
from attnspec.theory.linformer import config as C
from attnspec.theory.linformer import dimensions as D
from attnspec.theory.linformer import lemma1 as L1
from attnspec.theory.linformer import rows as RW
from attnspec.theory.linformer import samplers as S
from attnspec.theory.linformer import theorem1 as T1
from attnspec.theory.linformer import theorem2 as T2

LEVEL = 0.999  # CI level for exact-vs-Monte-Carlo checks (fixed seeds; a wrong law misses by far)


def _inside(p: float, failures: int, trials: int) -> bool:
    ci = clopper_pearson(failures, trials, LEVEL)
    return ci.low <= p <= ci.high


# ----------------------------------------------------------------------------- dimensions


def test_linformer_k_formula_and_vacuity_at_4096() -> None:
    k = D.linformer_k(4096, 0.1)
    assert k == pytest.approx(5 * math.log(4096) / (0.01 - 0.001))
    assert 4620 < k < 4622 and k > 4096  # the theorem's k exceeds n: vacuous there


def test_other_dimension_formulas() -> None:
    assert D.theorem2_k_main(4096, 64, 0.1) == pytest.approx(
        min(9 * 64 * math.log(64) / 0.01, 5 * math.log(4096) / 0.01)
    )
    assert D.theorem2_k("eq24-nd", 4096, 64, 0.1) == pytest.approx(5 * math.log(4096 * 64) / 0.009)
    assert D.theorem2_k("appendix-d", 4096, 64, 0.1) == pytest.approx(9 * math.log(64) / 0.009)
    from sklearn.random_projection import johnson_lindenstrauss_min_dim

    assert D.sklearn_min_dim(4096, 0.1) == int(johnson_lindenstrauss_min_dim(4096, eps=0.1))
    for n in (2, 3, 64, 512, 1000, 4096, 10**6):
        for eps in (0.01, 0.1, 1 / 3, 0.5, 0.9, 0.99):
            assert D.sklearn_min_dim(n, eps) == int(johnson_lindenstrauss_min_dim(n, eps=eps)), (n, eps)


def test_union_bound_min_k_is_the_threshold() -> None:
    for n, eps in ((4096, 0.1), (100, 0.3)):
        k = D.union_bound_min_k(n, eps)
        assert D.theorem1_union_bound(n, k, eps) < 1 <= D.theorem1_union_bound(n, k - 1, eps)
    # at the theorem's k the union bound is 2 n^(-1/4), the paper's "o(1)"
    assert D.theorem1_union_bound(4096, D.linformer_k(4096, 0.1), 0.1) == pytest.approx(2 * 4096**-0.25)


@pytest.mark.parametrize("eps", [0.0, 1.0, 1.5, -0.1, float("nan")])
def test_bad_eps(eps: float) -> None:
    with pytest.raises(InputError, match=r"eps must be in \(0, 1\)"):
        D.linformer_k(100, eps)


def test_bad_n_and_k() -> None:
    with pytest.raises(InputError, match=r"n must be in \[2, inf\), got 1"):
        D.linformer_k(1, 0.1)
    with pytest.raises(InputError, match="k must be"):
        L1.norm_failure_exact(0, 0.1)
    with pytest.raises(InputError, match="tolerance must be one of"):
        L1.inner_product_failure_exact(5, 0.1, 0.5, "relative")
    with pytest.raises(InputError, match="reading must be one of"):
        L1.norm_failure_exact(5, 0.1, "cubed")


# ----------------------------------------------------------------------------- exact laws


def _direct_gaussian(n: int, k: int, trials: int, seed: int) -> np.ndarray:
    return S.direct_pair_images("gaussian", n, k, trials, seed=seed)  # (T, k, 2)


@pytest.mark.parametrize("reading", L1.NORM_READINGS)
def test_norm_exact_matches_direct_monte_carlo(reading: str) -> None:
    n, k, eps, trials = 12, 6, 0.3, 12_000
    im = _direct_gaussian(n, k, trials, seed=1)
    q = (im[:, :, 0] ** 2).sum(1)
    fails = int(L1.norm_failure_events(q, eps, reading).sum())
    assert _inside(L1.norm_failure_exact(k, eps, reading), fails, trials)


@pytest.mark.parametrize("rho", [0.0, 0.3, 0.8, 1.0, -0.6])
@pytest.mark.parametrize("tolerance", L1.INNER_READINGS)
def test_inner_exact_matches_direct_monte_carlo(rho: float, tolerance: str) -> None:
    n, k, eps, trials = 10, 8, 0.25, 8000
    im = _direct_gaussian(n, k, trials, seed=2)
    z = rho * (im[:, :, 0] ** 2).sum(1) + math.sqrt(1 - rho * rho) * (im[:, :, 0] * im[:, :, 1]).sum(1)
    fails = int(L1.inner_failure_events(z, eps, rho, tolerance).sum())
    assert _inside(L1.inner_product_failure_exact(k, eps, rho, tolerance), fails, trials)


def test_inner_exact_closed_forms() -> None:
    # rho = 0, k = 2: 2<Rx,Ry> = (X - Y)/2 with X, Y ~ Exp(mean 2): Laplace, P(|X-Y| > 4 eps) = e^{-2 eps}
    for eps in (0.05, 0.1, 0.4):
        assert L1.inner_product_failure_exact(2, eps, 0.0) == pytest.approx(math.exp(-2 * eps), rel=1e-8)
    # rho = 1 is the squared norm
    for k in (1, 7, 300, 4621):
        assert L1.inner_product_failure_exact(k, 0.1, 1.0) == pytest.approx(
            L1.norm_failure_exact(k, 0.1, "squared-two-sided"), rel=1e-9
        )
    # symmetric in the sign of rho
    assert L1.inner_product_failure_exact(50, 0.1, -0.4) == pytest.approx(L1.inner_product_failure_exact(50, 0.1, 0.4))
    # tiny tails stay accurate: a large k, against the Gaussian tail it approaches
    p = L1.inner_product_failure_exact(4621, 0.1, 0.5)
    assert 1e-10 < p < 1e-7


def test_diff_chi2_sf_against_monte_carlo() -> None:
    rng = np.random.default_rng(3)
    k, a, b, t = 5, 0.7, 0.3, 1.2
    x = a * rng.chisquare(k, 200_000) - b * rng.chisquare(k, 200_000)
    assert _inside(L1.diff_chi2_sf(a, b, k, t), int((x > t).sum()), x.size)


def test_orthogonal_exact_matches_reduced_monte_carlo() -> None:
    n, k, eps, trials = 40, 9, 0.3, 10_000
    units, scales = S.reduced_pair_units("orthogonal", n, k, trials, seed=4)
    q = S.prefix_pair_stats(units, np.array([k]), scales=scales)["aa"][0]
    for reading in L1.NORM_READINGS:
        fails = int(L1.norm_failure_events(q, eps, reading).sum())
        assert _inside(L1.orthogonal_norm_failure_exact(n, k, eps, reading), fails, trials)
    assert L1.orthogonal_norm_failure_exact(n, n, eps) == 0.0


@pytest.mark.parametrize("family", ["achlioptas", "sparse"])
def test_discrete_spiky_exact_matches_direct_monte_carlo(family: str) -> None:
    n, k, eps, trials = 16, 10, 0.3, 6000
    im = S.direct_pair_images(family, n, k, trials, vectors="spiky", seed=5)
    q = (im[:, :, 0] ** 2).sum(1)
    for reading in L1.NORM_READINGS:
        fails = int(L1.norm_failure_events(q, eps, reading).sum())
        assert _inside(L1.discrete_spiky_norm_failure_exact(family, n, k, eps, reading), fails, trials)


@pytest.mark.parametrize("family", ["achlioptas", "sparse"])
def test_discrete_orthogonal_inner_exact_matches_monte_carlo(family: str) -> None:
    """Discrete R hits <Re1, Re2> = 0 exactly with positive probability (an atom that
    floating-point sums would hide: the reduced sampler sums integer units)."""
    n, k, trials = 16, 30, 6000
    units, scales = S.reduced_pair_units(family, n, k, trials, vectors="spiky", seed=6)
    z = S.prefix_pair_stats(units, np.array([k]), which=("ab",), scales=scales)["ab"][0]
    fails = int(L1.inner_failure_events(z, 0.1, 0.0, "absolute").sum())
    p = L1.discrete_spiky_orthogonal_failure_exact(family, n, k)
    assert 0.05 < 1 - p < 0.95  # a real atom at these sizes
    assert _inside(p, fails, trials)


# ----------------------------------------------------------------------------- bounds vs exact


@pytest.mark.parametrize("eps", [0.05, 0.1, 0.3, 0.6, 0.9])
def test_arriaga_vempala_tail_bounds_hold_exactly(eps: float) -> None:
    """P(χ²_k/k > 1+ε) <= e^{-(ε²-ε³)k/4} (and the lower tail likewise) for every k: the
    Chernoff bound Lemma 1 rests on. So the squared one-sided reading can never be violated,
    the printed norm reading is smaller still, and the two-sided one is <= 2 e^{-ck}."""
    for k in (1, 2, 3, 10, 50, 200, 1000, 4621):
        bound = float(D.lemma1_norm_bound(k, eps))
        up = L1.norm_failure_exact(k, eps, "squared-upper")
        assert up <= bound
        assert L1.norm_failure_exact(k, eps, "norm-upper") <= up
        assert stats.chi2.cdf(k * (1 - eps), k) <= bound
        assert L1.norm_failure_exact(k, eps, "squared-two-sided") <= 2 * bound


def test_absolute_reading_fails_for_orthogonal_vectors() -> None:
    """Eq. 12 read with tolerance eps|<x, y>| is false: for x ⟂ y the tolerance is 0."""
    assert L1.inner_product_failure_exact(4621, 0.1, 0.0, "absolute") == 1.0
    verdict, why = RW.verdict_for(
        {
            "claim": "linformer.lemma1.eq12",
            "family": "gaussian",
            "n": 4096,
            "k": 4621 - 1000,
            "bound": float(D.lemma1_inner_bound(3621, 0.1)),
            "exact": 1.0,
            "failures": 100,
            "trials": 100,
            "estimate": 1.0,
            "ci_low": 0.96,
            "ci_high": 1.0,
            "seed": 9,
        }
    )
    assert verdict == "violated" and "seed 9" in why


# ----------------------------------------------------------------------------- simulations


def test_simulate_lemma1_reproducible_and_consistent() -> None:
    kw = dict(
        families=("gaussian", "orthogonal", "achlioptas", "sparse"), trials=4000, trials_other=600, rhos=(0.0, 0.5, 1.0)
    )
    a, sa = L1.simulate_lemma1(24, 0.3, [4, 9, 20], seed=7, sample_ks=[9], **kw)
    b, _ = L1.simulate_lemma1(24, 0.3, [4, 9, 20], seed=7, sample_ks=[9], **kw)
    c, _ = L1.simulate_lemma1(24, 0.3, [4, 9, 20], seed=8, sample_ks=[9], **kw)
    pd_testing = __import__("pandas").testing
    pd_testing.assert_frame_equal(a, b)
    assert not a["failures"].equals(c["failures"])
    assert list(a.columns[:6]) == ["claim", "reading", "family", "vectors", "rho", "n"]
    # every Gaussian exact value lies in the (99.9%) interval of its simulation
    g = a[(a["family"] == "gaussian")]
    ok = [_inside(r.exact, r.failures, r.trials) for r in g.itertuples()]
    assert np.mean(ok) == 1.0
    assert set(sa["k"]) == {9}


def test_simulate_theorem1_finds_the_relative_claim_false() -> None:
    """Uniform attention and mean-zero w: Pw = 0 but P̃w ≠ 0, so the relative event fails
    with probability 1 at every k; the toolkit's adversarial search must find it."""
    n = 32
    att = {
        "uniform": T1.attention_matrix("uniform", n, seed=0),
        "softmax": T1.attention_matrix("softmax", n, seed=1, d=8),
    }
    t, s = T1.simulate_theorem1(att, 0.3, [4, 16, 31], trials=400, seed=3, sample_ks=[16])
    adv = t[(t["attention"] == "uniform") & (t["w"] == "adv_bottom") & (t["reading"] == "relative")]
    assert (adv["estimate"] == 1.0).all()
    assert (adv["pw_ratio"] < 1e-6).all()
    # the additive reading is much easier than the relative one for the same draws
    rel = t[t["reading"] == "relative"]["failures"].to_numpy()
    add = t[t["reading"] == "additive"]["failures"].to_numpy()
    assert (add <= rel).all()
    t2, _ = T1.simulate_theorem1(att, 0.3, [4, 16, 31], trials=400, seed=3)
    __import__("pandas").testing.assert_frame_equal(t, t2)
    assert len(s) and set(s["k"]) == {16}


def test_simulate_theorem2_eq21_is_violated() -> None:
    """Eq. 21 compares e^{-δ}Σ exp(δ(Rx)_j)(Ry)_j with Σ e^{x_i} y_i: unrelated quantities,
    so the failure rate stays high (~0.9 here) while 2e^{-ck} falls to 0.57 and 0.28."""
    n, d, eps = 64, 8, 0.5
    t, _ = T2.simulate_theorem2(n, d, eps, [40, 63], trials=500, seed=0)
    e21 = t[t["claim"] == "linformer.thm2.eq21"]
    assert (e21["bound"] < 0.6).all()
    rows = RW.verdict_rows(e21)
    assert all(r.verdict == "violated" for r in rows)


def test_parse_ks_and_claims() -> None:
    assert C.parse_ks("64,128,256") == [64, 128, 256]
    assert C.parse_ks("64:256:64") == [64, 128, 192, 256]
    assert C.parse_ks("3:5,1") == [1, 3, 4, 5]
    for bad in ("0", "a", "5:2", "1:4:0", "1:2:3:4", ""):
        with pytest.raises(InputError):
            C.parse_ks(bad)
    assert C.parse_claims("lemma1,thm2") == ("lemma1.eq11", "lemma1.eq12", "thm2")
    with pytest.raises(InputError, match="claim must be one of"):
        C.parse_claims("thm3")
    with pytest.raises(InputError, match="family must be one of"):
        C.parse_families("gaussian,cauchy")


def test_default_ks_below_n() -> None:
    ks = B.default_ks(4096, 0.1)
    assert max(ks) < 4096 and min(ks) >= 1
    assert D.union_bound_min_k(4096, 0.1) in ks
    assert B.default_ks(3, 0.5) == [1, 2]


def test_plan_balances_the_two_processes(monkeypatch: pytest.MonkeyPatch) -> None:
    """The child gets the share that makes the larger of the two smallest (GROUP_COST, plus
    torch's import for a share that needs torch before it is loaded), and nothing is forked
    for a single group."""
    import sys

    from attnspec.theorem.fork import can_fork

    if not can_fork():
        pytest.skip("needs fork and two cores")
    monkeypatch.setattr(B, "GROUP_COST", {"lemma1": 2.0, "thm1": 6.0, "thm2": 4.0, "thm2-proof": 1.5, "eq4": 1.0})
    monkeypatch.setitem(sys.modules, "torch", sys.modules.get("torch") or __import__("torch"))
    assert B.plan(["thm2"]) == []
    assert B.plan(["thm1", "thm2"]) == ["thm2"]  # 6 against 4 either way: the child takes the later
    assert B.plan(["lemma1", "thm2", "eq4"]) == ["thm2"]  # 4 against 2 + 1
    assert B.plan(list(B.RUN_GROUPS)) == ["thm1", "eq4"]  # 7 against 2 + 4 + 1.5
    # before torch is loaded, the share that needs it pays its import: the torch-free groups
    # go together, to the process that then never imports torch
    monkeypatch.delitem(sys.modules, "torch")
    assert B.plan(list(B.RUN_GROUPS)) == ["thm1", "thm2-proof", "eq4"]  # 8.5 against 2 + 4 + 2 (import)
    assert sorted(B.TORCH_FREE) == ["eq4", "thm1", "thm2-proof"]
    assert not B.needs_torch(["thm1", "eq4"]) and B.needs_torch(["thm1", "lemma1"])


def test_the_torch_free_groups_never_import_torch() -> None:
    """Theorem 1, Theorem 2's proof steps and eq. (4) computed in a fresh process leave torch
    unloaded (so the forked process computing them never pays its import), and the run's
    metadata still records torch's version."""
    import subprocess
    import sys

    code = (
        "import sys, attnspec.battery\n"
        "from attnspec.theory.linformer import battery as B\n"
        "cfg = B.config_from_options({'n': 48, 'eps': 0.3, 'k': '4,16', 'trials': 200, 'trials_other': 100,"
        " 'family': 'gaussian', 'claims': 'thm1,eq4'})\n"
        "import os; os.environ['ATTNSPEC_NO_FORK'] = '1'\n"
        "res = B.run(cfg)\n"
        "from attnspec.theory.linformer.battery import TORCH_FREE\n"
        "from attnspec.storage.results import environment_meta\n"
        "assert environment_meta()['torch'], 'no torch version'\n"
        "print(sorted(set(B.run_groups(B.parse_claims(['thm1', 'eq4']))) - TORCH_FREE), 'torch' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["[]", "False"], out.stdout + out.stderr


def test_side_process_gives_the_same_rows(monkeypatch: pytest.MonkeyPatch) -> None:
    """Theorem 1 computed in a forked process beside the other groups (both cores) gives the rows,
    counts and verdicts of the in-process run: every claim group draws its seeds from config.seed alone."""
    from attnspec.theorem.fork import can_fork

    cfg = B.config_from_options(
        {"n": 64, "eps": 0.3, "k": "4,16,48", "trials": 300, "trials_other": 100, "family": "gaussian"}
    )
    monkeypatch.setenv("ATTNSPEC_NO_FORK", "1")
    assert B.plan(list(B.RUN_GROUPS)) == []
    serial = B.run(cfg)
    monkeypatch.delenv("ATTNSPEC_NO_FORK")
    if not can_fork():
        pytest.skip("needs fork and two cores")
    assert B.plan(list(B.RUN_GROUPS))  # something is forked
    forked = B.run(cfg)
    a, b = serial.tables["jl"], forked.tables["jl"]
    assert list(a.columns) == list(b.columns) and len(a) == len(b)
    for col in ("claim", "reading", "k", "failures", "trials", "verdict"):
        if col in a:
            assert a[col].tolist() == b[col].tolist(), col
    # every group runs with one thread either way, so the tables agree to the last bit
    import pandas as pd

    pd.testing.assert_frame_equal(a, b, check_exact=True)
    assert [(r.claim, r.reading, r.verdict, r.evidence) for r in serial.verdicts] == [
        (r.claim, r.reading, r.verdict, r.evidence) for r in forked.verdicts
    ]


def test_theorem2_grid_point_at_the_main_eps_counts_its_own_failures() -> None:
    # a grid ε equal to the main ε at a shared k: each row counts the shared draws once
    t, _ = T2.simulate_theorem2(128, 4, 0.5, [40], trials=400, seed=0, grid={0.5: [40]}, sequential=False)
    paper = t[t["construction"].eq("paper") & t["claim"].eq("linformer.thm2.eq8")]
    assert (paper["failures"] <= paper["trials"]).all()
    main, grid = paper[paper["sweep"].isna()], paper[paper["sweep"].eq("eps-k-grid")]
    assert main["failures"].tolist() == grid["failures"].tolist() and main["failures"].sum() > 0
