"""Every Linformer statement `attnspec jl-check` checks, with its readings (the claim registry).

The claims measured on one instance (eq. 4, Theorem 1's quantifier, Theorem 2's k formulas,
step (23), tolerances, orientation and proof steps) are declared with
:mod:`attnspec.theorem.measured`: each reading says how the numbers its module measures
(:mod:`.printed`, :mod:`.quantifier`, :mod:`.proof_steps`) become its verdict row and sentence.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from attnspec.theorem.declare import Claim as Declared
from attnspec.theorem.measured import AsPrinted, Bound, InstanceResidual, InstanceShare, Measure
from attnspec.verdicts.registry import Claim, Reading, register, register_short_names

_CMD = "jl-check"

#: Largest |entry| difference counted as round-off when comparing eq. (4) with the row softmax.
IDENTITY_TOL = 1e-12

_EQ4_TEXT = (
    "{reason} (max |entry − row softmax|); row sums in [{row_low:.4g}, {row_high:.4g}], "
    "column sums in [{col_low:.4g}, {col_high:.4g}]"
)
EQ4 = Declared(
    "linformer.eq4",
    "Section 3, eq. (4) (and eq. (14)) with D_A of eq. (15)",
    "P = softmax(A) = exp(A)·D_A^{−1} with (D_A)_ii = Σ_j exp(A_ji)",
    tuple(
        InstanceResidual(
            name,
            what,
            text=_EQ4_TEXT,
            residual="residual",
            tol=IDENTITY_TOL,
            bound=IDENTITY_TOL,
            value_name="max |entry − row softmax|",
        )
        for name, what in (
            ("as-printed", "exp(A)·D_A^{−1} with column sums, compared with the row softmax"),
            ("row-normalised", "D_A^{−1}·exp(A) with row sums (the intended softmax)"),
        )
    ),
)

#: Theorem 1's quantifier: the relative error of a witness against ε.
_AGAINST_EPS: dict[str, Any] = {
    "observed": "error", "limit": "eps", "bound": "eps", "loose_factor": None, "value_name": "relative error",
    "bound_name": "ε",
}  # fmt: skip
QUANTIFIER = Declared(
    "linformer.thm1.quantifier",
    "Theorem 1 (its quantifier)",
    "for any column w there exists a low-rank P̃ with Pr(‖P̃wᵀ − Pwᵀ‖ < ε‖Pwᵀ‖) > 1 − o(1)",
    (
        Bound(
            "as-written",
            "P̃ may depend on w: P̃ = P w wᵀ/‖w‖² (rank 1) meets it exactly, so it cannot fail",
            text="{reason}; relative errors {errors}",
            **_AGAINST_EPS,
            trivial="P̃ = P w wᵀ/‖w‖², rank 1, built from w itself, reproduces Pw for every w, "
            "so the theorem as written has no content",
        ),
        Bound(
            "uniform",
            "one P̃ = PRᵀR of rank k < n for every w at once: a w in ker R has relative error 1",
            text="{reason}: for each of {draws} draws of R, a w in ker R (‖Rw‖/‖w‖ <= {kernel:.1g}) has P̃w = 0, "
            "relative error >= {error:.4g}",
            **_AGAINST_EPS,
            trials="draws",
        ),
    ),
)

_STEP23_WHAT = (
    "the proof calls this ratio o(1); measured mean {mean:.4g}, range [{low:.4g}, {high:.4g}] over {trials} draws of R"
)
_STEP23 = {
    "value": "mean",
    "ci": ("ci_low", "ci_high"),
    "trials": "trials",
    "value_name": "mean ratio (claimed o(1))",
}
STEP23 = Declared(
    "linformer.thm2.step23",
    "Appendix B, step (22)(b) and eq. (23)",
    "the printed eq. (23) bounds ‖exp(δxRᵀ) − exp(δx)Rᵀ‖ (with F = e^{−δ}R this is the factor "
    "‖e^{−δ}exp(δ xRᵀ) − exp(x)Rᵀ‖ of step (22)(b)), and the proof calls it o(‖exp(x)‖) for δ = Θ(1/n); "
    "checked: the ratio r = ‖e^{−δ}exp(δ Rx) − R exp(x)‖/‖exp(x)‖",
    (
        Measure(
            "x-zero",
            "x = 0: exactly E[r²] = (k e^{−2δ} + n)/n, so √((k e^{−2δ} + n)/n) is the RMS of r, "
            "not its mean (the mean is ~0.98 at k = 16)",
            sentence=_STEP23_WHAT + "; exact E[r²] = (k e^(−2δ) + n)/n = {mean_square:.4g}",
            **_STEP23,
        ),
        Measure("x-row", "x a row of A = QKᵀ/√d", sentence=_STEP23_WHAT, **_STEP23),
    ),
)


def _formula_vacuous(v: Mapping[str, Any]) -> str | None:
    """Why a k formula of Theorem 2 says nothing: k >= n, or its union bound >= 1."""
    if v["k"] >= v["n"]:
        return f"k = {v['formula']} = {v['k']:.1f} >= n = {v['n']}: no reduction"
    if v["bound"] >= 1:
        return f"the union bound over its {v['pairs_name']} = {v['pairs']} pairs is {v['bound']:.3g} >= 1 at k = {math.ceil(v['k'])}"
    return None


THM2_K = Declared(
    "linformer.thm2.k",
    "Theorem 2 (main text) and Appendix B",
    "k = min{Θ(9d log d/ε²), 5Θ(log n/ε²)} (main text), 9 ln d/(ε² − ε³) (rank(A) = d part), "
    "5 ln(nd)/(ε² − ε³) (eq. 24): each reported, with the union bound of its argument",
    tuple(
        Measure(
            name,
            sentence=(
                "{where}: k = {formula} = {k:.1f} (n = {n}); union bound over {pairs_name} = {pairs} pairs "
                "2·pairs·e^(−c(ε)k) = {bound:.3g}"
            ),
            description=description,
            text={"vacuous": "{reason}; {where}: {formula}"},
            vacuous=_formula_vacuous,
            value="k",
            bound="bound",
            value_name="formula's k",
            bound_name="union bound on P(fail)",
            at_paper_params=True,
        )
        for name, description in (
            ("main-d", "9 d ln(d)/ε², union over the 2d·d pairs of A_s"),
            ("main-n", "5 ln(n)/ε², union over the n·d pairs"),
            ("appendix-d", "9 ln(d)/(ε² − ε³), union over the 2d·d pairs of A_s"),
            ("eq24-nd", "5 ln(nd)/(ε² − ε³), union over the n·d pairs"),
        )
    ),
)

TOLERANCE = Declared(
    "linformer.thm2.tolerance",
    "Theorem 2, eqs. (8), (22), (24): tolerances in products of norms",
    "how often the zero output meets the tolerance (then the claim cannot fail there)",
    tuple(
        InstanceShare(
            name,
            description,
            hits="hits",
            total="total",
            sentence=what + ": {hits}/{total} = {share:.4g}",
            value_name="share where 0 meets it",
        )
        for name, description, what in (
            (
                "eq8-spectral",
                "rows w of A with ‖softmax(w)V‖ <= ε‖softmax(w)‖‖V‖₂",
                "rows w of A where zero meets eq. (8)'s ε‖softmax(w)‖‖V‖₂",
            ),
            (
                "eq8-frobenius",
                "rows w of A with ‖softmax(w)V‖ <= ε‖softmax(w)‖‖V‖_F",
                "rows w of A where zero meets eq. (8)'s ε‖softmax(w)‖‖V‖_F",
            ),
            (
                "eq22-pair",
                "(row, column) pairs with |⟨exp(x), y⟩| <= ε‖exp(x)‖‖y‖",
                "(row, column) pairs where zero meets eq. (22)'s ε‖exp(x)‖‖y‖",
            ),
            (
                "gaussian-v",
                "Gaussian V of the instance's shape with ‖V‖₂ <= ε‖V‖_F",
                "Gaussian V ({n}×{d}) with ‖V‖₂ <= ε‖V‖_F (zero then meets the Frobenius tolerance at every row)",
            ),
        )
    ),
)

ORIENTATION = Declared(
    "linformer.thm2.orientation",
    "Appendix A, Lemma 1 vs Appendix B, eq. (23) and Theorem 2",
    "R ∈ R^{k×n} in Lemma 1 (Rx for x ∈ R^n), while eq. (23) and the statement of Theorem 2 write "
    "E, F, R ∈ R^{n×k}; softmax(wEᵀ)FV type-checks only with k×n",
    AsPrinted(
        "as-printed",
        "the shapes as printed: n×k is not conformable in softmax(wEᵀ)FV",
        # w (1×n) · Eᵀ needs Eᵀ with n rows, i.e. E k×n; then (1×k) · F needs F k×n: always conformable.
        # With E, F n×k, wEᵀ is (1×n)·(k×n), conformable only when k = n.
        sentence="as printed, E, F, R ∈ R^(n×k) (Theorem 2, Appendix B, eq. (23): exp(δxR) needs x R with R n×k) "
        "while Lemma 1 takes R ∈ R^(k×n); softmax(wEᵀ)FV with w 1×n and V n×d is conformable with E, F "
        "k×n (True) and with n×k only when k = n ({square}, n = {n}, k = {k}); the tool reads E, F, R "
        "as k×n throughout (eq. (23)'s xR is then Rxᵀ)",
        fails=lambda v: not v["square"],
        at_paper_params=True,
    ),
)

PROOF = Declared(
    "linformer.thm2.proof",
    "Appendix B, proof of Theorem 2 (steps that do not follow as written)",
    "the proof's steps, each checked on the instance: exp(A) is low-rank; an inverse of a 4d×d matrix; "
    "Γ = Θ(d); ‖·‖_F = Σ‖rows‖",
    (
        Bound(
            "exp-low-rank",
            "exp(A) (entrywise) of rank-d A = QKᵀ/√d is not low-rank: its numerical rank",
            text="rank(A) = {rank_a} on the {m}×{m} block of A = QKᵀ/√d, but the entrywise exp(A) has numerical "
            "rank {rank_exp} (singular values above {tol:.2g}): {reason}",
            observed="rank_exp",
            limit="d",
            bound="d",
            loose_factor=None,
            at_paper_params=True,
        ),
        AsPrinted(
            "inverse-4d-by-d",
            "the proof inverts a 4d×d matrix, which has no inverse (not square)",
            sentence="eq. (26) writes [exp(A_sEᵀ)FV; exp(A_s)V]^(-1): two stacked 2d×d blocks, a {rows}×{d} matrix, "
            "which has no inverse (not square); Γ ∈ R^(n×2d) as defined does not match either (a left inverse "
            "would make Γ n×{rows} from a 2n-row left factor)",
            estimate="rows",
            at_paper_params=True,
        ),
        Measure(
            "gamma-theta-d",
            "Γ = Θ(d) is asserted, not shown",
            sentence="‖Γ_i‖ = Θ(d) is asserted without argument; with Γ = exp(A)V·pinv(exp(A_s)V) (A_s: {rows_s} rows "
            "of A) on the {m}-row block, max_i ‖Γ_i‖ = {gamma:.4g} = {gamma_per_d:.3g}·d — a number the proof "
            "does not control",
            value="gamma",
            bound="d",
            at_paper_params=True,
        ),
        InstanceResidual(
            "frobenius-rows",
            "‖M‖_F = Σ_i‖M_i‖ is printed; only ‖M‖_F <= Σ_i‖M_i‖ holds (equality iff at most one row is non-zero)",
            text="printed ‖M‖_F = Σ_i ‖M_i‖: on a Gaussian {rows_m}×{d} M, ‖M‖_F = {fro:.4g} but Σ_i ‖M_i‖ = "
            "{rowsum:.4g} ({reason}); only ‖M‖_F <= Σ_i ‖M_i‖ holds, which is the direction the chain needs, so "
            "the step survives with '<='",
            residual="gap",
            tol=1e-12,
            estimate="ratio",
            at_paper_params=True,
        ),
    ),
)


def _exists_vacuous(v: Mapping[str, Any]) -> str | None:
    """Why eq. (8) as stated says nothing at a row: k >= n, or a claimed probability >= 1."""
    if v["k"] >= v["n"]:
        return f"k = {v['k']} >= n = {v['n']}: E, F project nothing away, and Lemma 1 assumes k <= n"
    if v["bound"] >= 1:
        return f"claimed failure probability {v['bound']:.3g} >= 1 says nothing"
    return None


_ZERO = (
    "the zero output E = F = 0 has error ‖softmax(w)V‖ = {zero_error:.4g} {sign} the tolerance "
    "ε‖softmax(w)‖‖V‖ = {tolerance:.4g}"
)
_RATIO = "; estimate = ‖softmax(w)V‖ / tolerance (<= 1: zero meets it)"
#: eq. (8) as stated (there EXIST E, F), read beside each row of the proof's construction: vacuous
#: where k >= n or the claimed probability is >= 1, cannot-fail where the zero output meets the
#: tolerance, else measured (one construction failing does not refute existence).
EQ8_EXISTS: dict[str, Measure] = {
    name: Measure(
        name,
        text={
            "vacuous": "{reason}; " + _ZERO + _RATIO,
            "cannot-fail": "as stated (there exist E, F) it cannot fail here: " + _ZERO + _RATIO,
            "measured": "existence is not decided by one construction: " + _ZERO + ", and the proof's "
            "E = δR, F = e^(−δ)R is {proof_verdict} here (reading proof-" + name + ")" + _RATIO,
        },
        vacuous=_exists_vacuous,
        trivial=lambda v: "zero meets the tolerance" if v["zero_error"] <= v["tolerance"] else None,
        value="ratio",
        bound="bound",
        value_name="error of 0 / tolerance",
        bound_name="",  # the bound is the claimed probability: no comparison with this ratio
    )  # fmt: skip
    for name in ("spectral", "frobenius")
}

#: eq. (8)'s as-stated readings on an ε of the (ε, k) grid where no k < n has a union bound
#: below 1: vacuous there (the Monte Carlo readings of eq. 8 are in :mod:`.rows`).
EQ8_NO_K: tuple[Measure, ...] = tuple(
    Measure(
        name,
        vacuous=lambda v: (
            f"no k < n = {v['n']} has 2nd e^(-c(eps)k) < 1 at eps = {v['eps']:.4g} (needs k >= {v['k']}, d = {v['d']})"
        ),
    )
    for name in ("spectral", "frobenius")
)

CLAIMS: tuple[Claim, ...] = (
    Claim(
        "linformer.lemma1.eq11",
        "Appendix A, Lemma 1, eq. (11)",
        "Pr(‖Rx‖ <= (1 + ε)‖x‖) > 1 − e^{−(ε²−ε³)k/4} for R (k×n, 1 <= k <= n) with i.i.d. N(0, 1/k) entries",
        (
            Reading("norm-upper", "as printed: ‖Rx‖ > (1+ε)‖x‖ fails"),
            Reading("norm-two-sided", "|‖Rx‖ − ‖x‖| > ε‖x‖ fails"),
            Reading("squared-upper", "‖Rx‖² > (1+ε)‖x‖² fails (Arriaga–Vempala's form)"),
            Reading("squared-two-sided", "|‖Rx‖² − ‖x‖²| > ε‖x‖² fails"),
        ),
        _CMD,
        notes="non-Gaussian families (orthogonal, Achlioptas, very sparse) are checked too; the lemma is stated "
        "for Gaussian R",
    ),
    Claim(
        "linformer.lemma1.eq12",
        "Appendix A, Lemma 1, eq. (12)",
        "Pr(|x RᵀR yᵀ − x yᵀ| <= ε‖xy‖) > 1 − 2e^{−(ε²−ε³)k/4}",
        (
            Reading("product", "tolerance ε‖x‖‖y‖"),
            Reading("absolute", "tolerance ε|⟨x, y⟩| (false for orthogonal x, y: tolerance 0)"),
        ),
        _CMD,
    ),
    Claim(
        "linformer.thm1.eq3",
        "Theorem 1, eq. (3); Appendix A, eq. (20)",
        "P̃ = P RᵀR satisfies Pr(‖P̃wᵀ − Pwᵀ‖ < ε‖Pwᵀ‖) > 1 − o(1) at k = 5 ln(n)/(ε² − ε³); the proof's "
        "failure bound is 2n e^{−(ε²−ε³)k/4}",
        (
            Reading("relative", "as stated: tolerance ε‖Pw‖"),
            Reading(
                "relative-clipped",
                "where the theorem's k is >= n (vacuous as stated): the relative reading at "
                "k = n − 1, the theorem's k clipped below n",
            ),
            Reading(
                "additive",
                "tolerance ε‖P‖_F‖w‖, what the union bound over eq. (12)'s product reading gives; "
                "cannot fail where ‖Pw‖ <= ε‖P‖_F‖w‖ (P̃ = 0 meets it)",
            ),
        ),
        _CMD,
    ),
    Claim(
        "linformer.thm1.eq18",
        "Appendix A, eq. (18)",
        "the theorem holds 'when k = log(n)' — against the theorem's k = 5 ln(n)/(ε² − ε³)",
        (
            Reading("log-n", "k = ⌈ln n⌉: the relative Monte Carlo against eq. (20)'s bound there"),
            Reading("theorem-k", "k = ⌈5 ln(n)/(ε² − ε³)⌉: the same at the theorem's k"),
        ),
        _CMD,
    ),
    QUANTIFIER.registered(_CMD),
    EQ4.registered(_CMD),
    Claim(
        "linformer.thm2.eq8",
        "Theorem 2, eq. (8); Appendix B, eq. (24)",
        "there exist E, F such that Pr(‖softmax(wEᵀ)FV − softmax(w)V‖ <= ε‖softmax(w)‖‖V‖) > 1 − o(1) for "
        "any row w of A; the proof takes E = δR, F = e^{−δ}R, δ = 1/(2n); compared with the union over the n·d "
        "pairs of eq. (21), 2nd e^{−(ε²−ε³)k/4}",
        (
            Reading(
                "spectral",
                "as stated (E, F exist), ‖V‖ spectral: cannot fail where the zero output E = F = 0 "
                "meets the tolerance; elsewhere not decided by one construction",
            ),
            Reading("frobenius", "as stated (E, F exist), ‖V‖ Frobenius (likewise)"),
            Reading(
                "proof-spectral",
                "the proof's construction E = δR, F = e^{−δ}R, ‖V‖ spectral: a violation is a "
                "finding about the proof, not the theorem",
            ),
            Reading("proof-frobenius", "the proof's construction, ‖V‖ Frobenius"),
            Reading("plain-spectral", "E = F = R, not the paper's construction: a comparison, always 'measured'"),
            Reading("plain-frobenius", "E = F = R, ‖V‖ Frobenius: a comparison, always 'measured'"),
        ),
        _CMD,
        notes="rows with sweep = 'eps-k-grid' test at (ε, k < n) where the union bound is < 1; the as-stated "
        "rows have construction = 'exists' and estimate ‖softmax(w)V‖ / tolerance",
    ),
    Claim(
        "linformer.thm2.eq21",
        "Appendix B, eq. (21) (eq. (9) in the main text)",
        "Pr(|exp(xEᵀ)Fyᵀ − exp(x)yᵀ| <= ε|exp(x)yᵀ|) > 1 − 2e^{−(ε²−ε³)k/4}",
        (Reading("as-stated", "for x a row of A, y = V[:, 0]"),),
        _CMD,
    ),
    STEP23.registered(_CMD),
    THM2_K.registered(_CMD),
    TOLERANCE.registered(_CMD),
)

PROOF_CLAIMS: tuple[Claim, ...] = (
    ORIENTATION.registered(_CMD),
    PROOF.registered(_CMD),
)

register(*CLAIMS, *PROOF_CLAIMS)
# names for one-screen tables, where the claim's name is long
register_short_names(
    {
        "linformer.eq4": "Section 3 (eq. 4)",
        "linformer.lemma1.eq11": "Lemma 1 (eq. 11)",
        "linformer.lemma1.eq12": "Lemma 1 (eq. 12)",
        "linformer.thm1.quantifier": "Theorem 1, quantifier",
        "linformer.thm2.eq21": "Appendix B (eq. 21)",
        "linformer.thm2.k": "Theorem 2, its k",
        "linformer.thm2.orientation": "Lemma 1 vs eq. 23",
        "linformer.thm2.proof": "Theorem 2, proof steps",
        "linformer.thm2.step23": "Step 22(b), eq. 23",
        "linformer.thm2.tolerance": "Theorem 2, tolerances",
    }
)
