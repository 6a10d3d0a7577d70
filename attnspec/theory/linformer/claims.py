"""Every Linformer statement `attnspec jl-check` checks, with its readings (the claim registry)."""

from __future__ import annotations

from attnspec.verdicts.registry import Claim, Reading, register, register_short_names

_CMD = "jl-check"

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
    Claim(
        "linformer.thm1.quantifier",
        "Theorem 1 (its quantifier)",
        "for any column w there exists a low-rank P̃ with Pr(‖P̃wᵀ − Pwᵀ‖ < ε‖Pwᵀ‖) > 1 − o(1)",
        (
            Reading("as-written", "P̃ may depend on w: P̃ = P w wᵀ/‖w‖² (rank 1) meets it exactly, so it cannot fail"),
            Reading("uniform", "one P̃ = PRᵀR of rank k < n for every w at once: a w in ker R has relative error 1"),
        ),
        _CMD,
    ),
    Claim(
        "linformer.eq4",
        "Section 3, eq. (4) (and eq. (14)) with D_A of eq. (15)",
        "P = softmax(A) = exp(A)·D_A^{−1} with (D_A)_ii = Σ_j exp(A_ji)",
        (
            Reading("as-printed", "exp(A)·D_A^{−1} with column sums, compared with the row softmax"),
            Reading("row-normalised", "D_A^{−1}·exp(A) with row sums (the intended softmax)"),
        ),
        _CMD,
    ),
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
    Claim(
        "linformer.thm2.step23",
        "Appendix B, step (22)(b) and eq. (23)",
        "the printed eq. (23) bounds ‖exp(δxRᵀ) − exp(δx)Rᵀ‖ (with F = e^{−δ}R this is the factor "
        "‖e^{−δ}exp(δ xRᵀ) − exp(x)Rᵀ‖ of step (22)(b)), and the proof calls it o(‖exp(x)‖) for δ = Θ(1/n); "
        "checked: the ratio r = ‖e^{−δ}exp(δ Rx) − R exp(x)‖/‖exp(x)‖",
        (
            Reading(
                "x-zero",
                "x = 0: exactly E[r²] = (k e^{−2δ} + n)/n, so √((k e^{−2δ} + n)/n) is the RMS of r, "
                "not its mean (the mean is ~0.98 at k = 16)",
            ),
            Reading("x-row", "x a row of A = QKᵀ/√d"),
        ),
        _CMD,
    ),
    Claim(
        "linformer.thm2.k",
        "Theorem 2 (main text) and Appendix B",
        "k = min{Θ(9d log d/ε²), 5Θ(log n/ε²)} (main text), 9 ln d/(ε² − ε³) (rank(A) = d part), "
        "5 ln(nd)/(ε² − ε³) (eq. 24): each reported, with the union bound of its argument",
        (
            Reading("main-d", "9 d ln(d)/ε², union over the 2d·d pairs of A_s"),
            Reading("main-n", "5 ln(n)/ε², union over the n·d pairs"),
            Reading("appendix-d", "9 ln(d)/(ε² − ε³), union over the 2d·d pairs of A_s"),
            Reading("eq24-nd", "5 ln(nd)/(ε² − ε³), union over the n·d pairs"),
        ),
        _CMD,
    ),
    Claim(
        "linformer.thm2.tolerance",
        "Theorem 2, eqs. (8), (22), (24): tolerances in products of norms",
        "how often the zero output meets the tolerance (then the claim cannot fail there)",
        (
            Reading("eq8-spectral", "rows w of A with ‖softmax(w)V‖ <= ε‖softmax(w)‖‖V‖₂"),
            Reading("eq8-frobenius", "rows w of A with ‖softmax(w)V‖ <= ε‖softmax(w)‖‖V‖_F"),
            Reading("eq22-pair", "(row, column) pairs with |⟨exp(x), y⟩| <= ε‖exp(x)‖‖y‖"),
            Reading("gaussian-v", "Gaussian V of the instance's shape with ‖V‖₂ <= ε‖V‖_F"),
        ),
        _CMD,
    ),
)

PROOF_CLAIMS: tuple[Claim, ...] = (
    Claim(
        "linformer.thm2.orientation",
        "Appendix A, Lemma 1 vs Appendix B, eq. (23) and Theorem 2",
        "R ∈ R^{k×n} in Lemma 1 (Rx for x ∈ R^n), while eq. (23) and the statement of Theorem 2 write "
        "E, F, R ∈ R^{n×k}; softmax(wEᵀ)FV type-checks only with k×n",
        (Reading("as-printed", "the shapes as printed: n×k is not conformable in softmax(wEᵀ)FV"),),
        _CMD,
    ),
    Claim(
        "linformer.thm2.proof",
        "Appendix B, proof of Theorem 2 (steps that do not follow as written)",
        "the proof's steps, each checked on the instance: exp(A) is low-rank; an inverse of a 4d×d matrix; "
        "Γ = Θ(d); ‖·‖_F = Σ‖rows‖",
        (
            Reading("exp-low-rank", "exp(A) (entrywise) of rank-d A = QKᵀ/√d is not low-rank: its numerical rank"),
            Reading("inverse-4d-by-d", "the proof inverts a 4d×d matrix, which has no inverse (not square)"),
            Reading("gamma-theta-d", "Γ = Θ(d) is asserted, not shown"),
            Reading(
                "frobenius-rows",
                "‖M‖_F = Σ_i‖M_i‖ is printed; only ‖M‖_F <= Σ_i‖M_i‖ holds (equality iff at most one row is non-zero)",
            ),
        ),
        _CMD,
    ),
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
