"""Linformer verdicts where a tolerance or a hypothesis decides the label, and the printed
statements, each against a known answer: a case where the statement must hold and, where one
exists, one where it must fail."""

from __future__ import annotations

import math

import numpy as np
import pytest

from attnspec.theory.linformer import dimensions as D
from attnspec.theory.linformer import printed, proof_steps, quantifier
from attnspec.theory.linformer import rows as RW
from attnspec.theory.linformer import theorem1 as T1
from attnspec.theory.linformer import theorem2 as T2
from attnspec.verdicts.registry import catalogue


def _mc_row(**kw: object) -> dict:
    from attnspec.numerics.stats import clopper_pearson

    ci = clopper_pearson(int(kw["failures"]), int(kw["trials"]))
    return {
        "exact": float("nan"),
        "estimate": ci.estimate,
        "ci_low": ci.low,
        "ci_high": ci.high,
        "seed": 1,
        "eps": 0.5,
        **kw,
    }


# --------------------------------------------- labels decided by the tolerance or the hypothesis


def test_thm2_eq8_where_zero_meets_the_tolerance_is_cannot_fail_not_holds() -> None:
    """At `jl-check --n 4096 --eps 0.5 --claims thm2 --k ...,1024,2048`, eq. 8 spectral is not
    "holds" where its own evidence says the zero output also meets the tolerance. The
    as-stated (existence) rows are their own rows, beside the proof's construction."""
    n, d, eps = 256, 2, 0.5
    t, _ = T2.simulate_theorem2(n, d, eps, [240], trials=200, seed=0)
    eq8 = t[t["claim"] == "linformer.thm2.eq8"]
    assert (eq8["bound"] < 1).all()  # not vacuous: the bound alone would say "holds"
    trivial = eq8[eq8["zero_output_passes"]]
    assert len(trivial)
    rows = RW.verdict_rows(trivial)
    stated = [r for r in rows if r.reading in ("spectral", "frobenius")]
    assert stated and {r.verdict for r in stated} == {"cannot-fail"}
    assert all(r.params["construction"] == "exists" for r in stated)
    # the same as-stated row without the trivial output: not decided by one construction
    proof = _mc_row(
        claim="linformer.thm2.eq8",
        reading="proof-spectral",
        n=n,
        k=240,
        bound=0.01,
        failures=0,
        trials=1000,
        zero_output_passes=True,
        zero_output_error=0.1,
        tolerance=0.2,
    )
    # the construction is judged on its own counts (0/1000, no exact law: looseness unresolved)
    assert RW.verdict_for(proof)[0] == "measured"
    [p_row, e_row] = RW.verdict_rows(__import__("pandas").DataFrame([proof]))
    assert e_row.reading == "spectral" and e_row.verdict == "cannot-fail"
    [_, e_row] = RW.verdict_rows(__import__("pandas").DataFrame([{**proof, "zero_output_error": 0.3}]))
    assert e_row.verdict == "measured" and "not decided by one construction" in e_row.evidence


def test_thm1_relative_with_claimed_probability_near_one_is_cannot_fail() -> None:
    """The committed thm1.eq3 relative rows: claimed failure probability 0.9997, observed
    10000/10000, labelled "holds" — no outcome of 10000 trials could contradict 0.9997."""
    row = _mc_row(
        claim="linformer.thm1.eq3", reading="relative", n=4096, k=2000, bound=0.9997, failures=10_000, trials=10_000
    )
    verdict, why = RW.verdict_for(row)
    assert verdict == "cannot-fail" and "could not contradict" in why
    # a claim far enough from 1 is contradicted by the same counts
    assert RW.verdict_for({**row, "bound": 0.99})[0] == "violated"


def test_thm1_additive_where_zero_meets_the_tolerance_is_cannot_fail() -> None:
    att = {"softmax": T1.attention_matrix("softmax", 24, seed=1, d=4)}
    t, _ = T1.simulate_theorem1(att, 0.9, [8], trials=100, seed=0)
    add = t[t["reading"] == "additive"]
    assert (add["zero_output_passes"] == (add["pw_ratio"] <= 0.9)).all() and add["zero_output_passes"].any()
    for r, (_, rec) in zip(RW.verdict_rows(add), add.iterrows()):
        assert (r.verdict == "cannot-fail") or not (rec["zero_output_passes"] and rec["bound"] < 1)


def test_lemma1_outside_its_hypothesis_is_hypothesis_unmet_not_violated() -> None:
    """Lemma 1 is stated for Gaussian R and 1 <= k <= n: very sparse R exceeding the bound is
    not a counterexample (the old label was "violated"); the evidence keeps what it shows."""
    row = _mc_row(
        claim="linformer.lemma1.eq11",
        reading="squared-two-sided",
        family="sparse",
        n=4096,
        k=1194,
        bound=0.068,
        exact=0.64,
        failures=662,
        trials=1000,
    )
    verdict, why = RW.verdict_for(row)
    assert verdict == "hypothesis-unmet" and "the same bound there: violated" in why
    assert RW.verdict_for({**row, "family": "gaussian", "exact": 0.01, "failures": 10})[0] in ("holds", "loose")
    assert (
        RW.verdict_for({**row, "family": "gaussian", "k": 5000, "exact": 0.01, "failures": 10})[0] == "hypothesis-unmet"
    )


# ------------------------------------------------------------ the printed statements and formulas


def test_eq4_as_printed_is_column_normalised() -> None:
    A = np.random.default_rng(0).standard_normal((16, 16))
    rows = {r.reading: r for r in printed.check_eq4(A, name="random")}
    assert rows["as-printed"].verdict == "violated" and rows["as-printed"].estimate > 0.1
    assert rows["row-normalised"].verdict == "holds"
    assert np.allclose(printed.eq4_as_printed(A).sum(0), 1)
    # equal row sums of exp(A) (a circulant A): the printed form is the softmax
    c = np.random.default_rng(1).standard_normal(16)
    circ = np.stack([np.roll(c, i) for i in range(16)])
    assert {r.verdict for r in printed.check_eq4(circ, name="circulant")} == {"holds"}


def test_eq4_in_row_blocks_gives_the_whole_matrix_numbers_bit_for_bit() -> None:
    # check_eq4 works a block of rows at a time (speed); every number must be the one the
    # whole-matrix formulas give, whatever the block size (column sums included)
    rng = np.random.default_rng(4)
    A = rng.standard_normal((97, 97)) * rng.uniform(0.1, 6.0, size=(97, 1))  # rows of unequal scale
    target = printed.row_softmax(A)
    E = np.exp(A - A.max())
    whole = {"as-printed": E / E.sum(0, keepdims=True), "row-normalised": (1.0 / E.sum(1))[:, None] * E}
    for block in (1, 7, 64, 97, 500):
        rows = {r.reading: r for r in printed.check_eq4(A, name="x", block=block)}
        for reading, P in whole.items():
            sums = P.sum(1)
            assert rows[reading].estimate == float(np.abs(P - target).max())  # the deciding residual
            assert (
                f"row sums in [{sums.min():.4g}, {sums.max():.4g}], column sums in "
                f"[{P.sum(0).min():.4g}, {P.sum(0).max():.4g}]"
            ) in rows[reading].evidence
            assert f"worst residual {float(np.abs(P - target).max()):.3g}" in rows[reading].evidence


def test_appendix_a_k_is_log_n_and_its_union_bound_is_vacuous() -> None:
    assert D.appendix_a_k(4096) == 9 and D.linformer_k(4096, 0.1) > 500 * D.appendix_a_k(4096)
    assert D.theorem1_union_bound(4096, D.appendix_a_k(4096), 0.1) > 1


def test_quantifier_as_written_cannot_fail_and_uniform_reading_is_false() -> None:
    P = T1.attention_matrix("softmax", 32, seed=2, d=4)
    vecs = T1.theorem1_vectors(P, seed=3)
    assert max(quantifier.rank_one_witness_error(P, w) for w in vecs.values()) < 1e-12
    rel, resid = quantifier.kernel_vector_error(P, 8, seed=4)
    assert rel == pytest.approx(1.0, abs=1e-9) and resid < 1e-12
    rows = quantifier.check_quantifier(P, vecs, 0.3, [8, 31, 32], name="softmax", seed=5)
    by = {(r.reading, r.params["k"]): r.verdict for r in rows}
    assert by == {("as-written", 1): "cannot-fail", ("uniform", 8): "violated", ("uniform", 31): "violated"}


def test_step23_ratio_at_x_zero_has_the_exact_mean_square() -> None:
    n, delta = 64, 1 / 128
    r = proof_steps.step23_ratios(np.zeros(n), [4, 32], 4000, delta=delta, seed=0)
    for i, k in enumerate((4, 32)):
        exact = (k * math.exp(-2 * delta) + n) / n
        m, se = (r[i] ** 2).mean(), (r[i] ** 2).std() / math.sqrt(r.shape[1])
        assert abs(m - exact) < 4 * se  # E[r²] = (k e^{-2δ} + n)/n >= 1: not o(1)
    rows = proof_steps.step23_rows({"x-zero": np.zeros(n)}, [4], 50, delta=delta, eps=0.1, seed=0)
    assert rows[0].verdict == "measured" and rows[0].estimate > 0.5


def test_theorem2_formulas_are_each_reported() -> None:
    n, d, eps = 4096, 64, 0.1
    f = D.theorem2_formulas(n, d, eps)
    assert f["main-d"]["k"] == pytest.approx(9 * d * math.log(d) / eps**2)
    assert f["appendix-d"]["k"] == pytest.approx(9 * math.log(d) / (eps**2 - eps**3))
    assert f["main-d"]["k"] / f["appendix-d"]["k"] == pytest.approx(d * (1 - eps))  # a factor d apart
    assert D.theorem2_k_main(n, d, eps) == min(f["main-d"]["k"], f["main-n"]["k"])
    rows = {r.reading: r for r in proof_steps.formula_rows(n, d, eps)}
    assert set(rows) == {"main-d", "main-n", "appendix-d", "eq24-nd"}
    assert all(r.verdict == "vacuous" for r in rows.values())  # every k >= n = 4096 at eps = 0.1
    big = {r.reading: r for r in proof_steps.formula_rows(10**6, d, eps)}
    # appendix-d: k < n, but the union over the 2d² pairs is 4 d^2 e^{-c k} ~ 1.4 >= 1
    assert big["appendix-d"].verdict == "vacuous" and big["appendix-d"].bound > 1
    assert big["eq24-nd"].verdict == "measured" and big["eq24-nd"].bound < 0.05


def test_zero_output_meets_the_tolerances_with_known_answers() -> None:
    rng = np.random.default_rng(0)
    Q, K, V = (rng.standard_normal((64, 4)) for _ in range(3))
    always = proof_steps.zero_output_fractions(Q, K, V, 1.0 - 1e-12)  # ‖sV‖ <= ‖s‖‖V‖₂ always
    assert always["eq8-spectral"] == (64, 64) and always["eq8-frobenius"] == (64, 64)
    never = proof_steps.zero_output_fractions(Q, K, V, 1e-9)
    assert never["eq8-spectral"][0] == 0 and never["eq22-pair"][0] == 0
    # Gaussian V of the paper's shape: ‖V‖₂/‖V‖_F ~ (1 + sqrt(d/n))/sqrt(d) ~ 0.14 at n = 4096, d = 64
    assert proof_steps.gaussian_v_fraction(4096, 64, 0.5, 5, seed=0) == 5
    assert proof_steps.gaussian_v_fraction(4096, 64, 0.1, 5, seed=0) == 0


def test_eq8_grid_has_k_below_n_with_a_union_bound_below_one() -> None:
    grid = proof_steps.eq8_grid(4096, 64)
    assert all(ks for ks in grid.values())
    for eps, ks in grid.items():
        assert all(k < 4096 and D.theorem2_union_bound(4096, 64, k, eps) < 1 for k in ks)
    assert not any(proof_steps.eq8_grid(256, 64).values())  # c(eps) <= 1/27: k >= 27 ln(2nd) > 256


def test_every_linformer_claim_is_registered_with_the_command() -> None:
    ids = {c.id for c in catalogue("linformer")}
    assert {
        "linformer.lemma1.eq11",
        "linformer.lemma1.eq12",
        "linformer.thm1.eq3",
        "linformer.thm2.eq8",
        "linformer.thm2.eq21",
        "linformer.eq4",
        "linformer.thm1.eq18",
        "linformer.thm1.quantifier",
        "linformer.thm2.step23",
        "linformer.thm2.k",
        "linformer.thm2.tolerance",
        "linformer.thm2.orientation",
        "linformer.thm2.proof",
    } == ids
    assert {c.command for c in catalogue("linformer")} == {"jl-check"}


# ----------------------------------------------------------------------------- every label says what was shown


def test_proof_construction_violation_is_its_own_reading_and_says_it_is_about_the_proof() -> None:
    """Old: the construction's failure made linformer.thm2.eq8 [spectral] 'violated' (or, with the
    classifier fixed, hid it under 'cannot-fail'). Now: reading proof-spectral is violated and
    says so; the as-stated row is cannot-fail."""
    import pandas as pd

    row = _mc_row(
        claim="linformer.thm2.eq8",
        reading="proof-spectral",
        n=4096,
        k=1124,
        bound=0.5,
        failures=1000,
        trials=1000,
        zero_output_passes=True,
        zero_output_error=0.1,
        tolerance=0.2,
        d=64,
    )
    proof, stated = RW.verdict_rows(pd.DataFrame([row]))
    assert proof.verdict == "violated" and "finding about the proof, not the theorem" in proof.evidence
    assert stated.verdict == "cannot-fail" and stated.reading == "spectral"


def test_plain_construction_is_never_a_verdict_on_the_paper() -> None:
    """Old: 26 E = F = R grid rows carried linformer.thm2.eq8 'violated'."""
    row = _mc_row(
        claim="linformer.thm2.eq8",
        reading="plain-spectral",
        n=4096,
        k=1124,
        bound=0.5,
        failures=500,
        trials=500,
        zero_output_passes=False,
        zero_output_error=0.3,
        tolerance=0.2,
        d=64,
    )
    verdict, why = RW.verdict_for(row)
    assert verdict == "measured" and "not the paper's construction" in why and "exceeds the union bound" in why


def test_zero_output_meets_the_tolerance_at_every_default_grid_point() -> None:
    """At every default grid point, not every other one (36 = 4 eps x 3 k x 3 rows, each norm
    reading), as docs/jl-check.md says: ‖softmax(w)V‖ <= ε‖softmax(w)‖‖V‖₂ at ε >= 0.25."""
    from attnspec.numerics.stats import child_seed

    n, d = 4096, 64
    setup = T2.theorem2_setup(n, d, seed=child_seed(0, "thm2", "setup"))
    Q, K, V = setup["Q"], setup["K"], setup["V"]
    v2 = float(np.linalg.norm(V, 2))
    grid = proof_steps.eq8_grid(n, d)
    points = 0
    for i in T2.theorem2_rows(Q, K).values():
        w = Q[i] @ K.T / math.sqrt(d)
        s = np.exp(w - w.max())
        s /= s.sum()
        for eps, ks in grid.items():
            points += len(ks)
            assert np.linalg.norm(s @ V) <= eps * np.linalg.norm(s) * v2
    assert points == 36


def test_theorem1_rows_at_the_theorems_own_k_are_at_paper_params_and_clipped_rows_show_the_measurement() -> None:
    """'Vacuous' must not hide a measurement: at k_thm >= n a relative-clipped row (k = n − 1)
    carries the verdict there and the counts at k_thm; rows at k_thm are at_paper_params."""
    n, eps = 64, 0.3
    k_thm = math.ceil(D.linformer_k(n, eps))
    assert k_thm >= n
    P = T1.attention_matrix("near_identity", n, seed=0)
    t, _ = T1.simulate_theorem1({"near_identity": P}, eps, [n - 1, k_thm], trials=400, seed=0, w_kinds=("random",))
    rows = RW.verdict_rows(t)
    own = [r for r in rows if r.params["k"] == k_thm]
    assert own and all(r.at_paper_params for r in own)
    # vacuous as a rank statement, unless the counts contradict the stated probability: then violated
    assert all(r.verdict == ("violated" if r.ci_low > r.bound else "vacuous") for r in own)
    assert not any(r.at_paper_params for r in rows if r.params["k"] != k_thm)
    clipped = RW.clipped_rows(t, k_thm)
    assert len(clipped) == 1 and clipped[0].reading == "relative-clipped" and clipped[0].at_paper_params
    below = [r for r in rows if r.params["k"] == n - 1 and r.reading == "relative"]
    assert clipped[0].params["k"] == n - 1 and clipped[0].verdict == below[0].verdict
    assert f"at the theorem's own k = {k_thm}" in clipped[0].evidence
    # the summary's representative of an all-vacuous group is the row at the paper's k (the
    # one-screen summary's telling row: the smallest bound)
    from attnspec.verdicts.sentences import telling_row

    vac = [r for r in rows if r.reading == "relative" and r.params["k"] in (1, k_thm)] or own
    assert telling_row(own)
    log_n = [
        r
        for r in RW.verdict_rows(
            T1.simulate_theorem1({"near_identity": P}, eps, [5, k_thm], trials=50, seed=0, w_kinds=("random",))[0]
        )
        if r.reading == "relative"
    ]
    assert telling_row(log_n).params["k"] == k_thm and vac


def test_step23_statement_is_the_printed_eq23_and_its_exact_value_is_the_rms_not_the_mean() -> None:
    from attnspec.verdicts.registry import get

    c = get("linformer.thm2.step23")
    assert "exp(δxRᵀ) − exp(δx)Rᵀ" in c.statement
    assert "RMS" in c.reading("x-zero").description
    n, k = 4096, 16
    r = proof_steps.step23_ratios(np.zeros(n), [k], 4000, delta=1 / (2 * n), seed=0)[0]
    rms = math.sqrt((k * math.exp(-2 / (2 * n)) + n) / n)
    assert abs(math.sqrt((r * r).mean()) - rms) < 0.01  # the exact law is about r²
    assert r.mean() < 0.99 < rms  # the mean is ~0.98 at k = 16, below the RMS


def test_proof_step_rows_say_which_steps_do_not_follow() -> None:
    from attnspec.numerics.stats import child_seed

    setup = T2.theorem2_setup(256, 8, seed=child_seed(0, "thm2", "setup"))
    rows = {r.reading: r for r in proof_steps.proof_step_rows(setup["Q"], setup["K"], setup["V"], 0.1, seed=1)}
    assert rows["exp-low-rank"].verdict == "violated" and rows["exp-low-rank"].estimate > 8
    assert rows["inverse-4d-by-d"].verdict == "violated" and "32×8" in rows["inverse-4d-by-d"].evidence
    assert rows["gamma-theta-d"].verdict == "measured"
    assert rows["frobenius-rows"].verdict == "violated" and rows["frobenius-rows"].estimate > 1
    o = proof_steps.orientation_row(4096, 4159, 0.1)
    assert o.claim == "linformer.thm2.orientation" and o.verdict == "violated"
