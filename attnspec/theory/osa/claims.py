"""The claims of Zhang & Martens, "Orthogonal Self-Attention", that attnspec checks.

Each claim names the module that checks it; ``attnspec claims`` lists them.
"""

from __future__ import annotations

from attnspec.verdicts.registry import Claim, Reading, register, register_short_names

_CHECK = "osa-check"

CLAIMS: tuple[Claim, ...] = (
    Claim(
        "osa.thm21",
        "Theorem 2.1, eqs. (6)–(7)",
        "If the columns of B are an orthonormal basis of span(Q, K), exp(S) = I_N + B (exp[S] − I_r) Bᵀ with "
        "[S] = Bᵀ S B.",
        (
            Reading(
                "as-stated",
                "the low-rank formula against three dense float64 exponentials (torch, SciPy, "
                "eigh), QR and converged Newton–Schulz bases, max entrywise difference <= 1e-10",
            ),
        ),
        _CHECK,
        notes="attnspec/theory/osa/thm21.py",
    ),
    Claim(
        "osa.thm21.so_n",
        "Eq. (4), A ∈ SO(N)",
        "The attention matrix A = exp(S) is special orthogonal.",
        (
            Reading(
                "low-rank-formula",
                "the A of Theorem 2.1's formula on the dense instances: ||AᵀA − I||₂ and |det A − 1| <= 1e-10",
            ),
            Reading(
                "layer",
                "the A the layer applies at its default K: a finite-K Newton–Schulz basis is not "
                "orthonormal, so Theorem 2.1's hypothesis is not met (hypothesis-unmet, deviation "
                "measured)",
            ),
        ),
        _CHECK,
        paper_params="QR or cubic Newton–Schulz with K = 6 (Sec. 5)",
        notes="attnspec/theory/osa/thm21.py",
    ),
    Claim(
        "osa.thm22",
        "Theorem 2.2, eq. (8)",
        "In a skipless single-head OSA-only stack with W_V W_O orthogonal, Σ_l = A Σ_0 Aᵀ with A orthogonal: "
        "the eigenvalues of X_l X_lᵀ are those of X_0 X_0ᵀ.",
        (
            Reading(
                "as-stated",
                "max relative eigenvalue change over depth <= 1e-10, where every layer's A is "
                "orthogonal; finite-K Newton–Schulz bases give non-orthogonal A: hypothesis-unmet",
            ),
        ),
        _CHECK,
        paper_params="QR or cubic Newton–Schulz with K = 6 (Sec. 5)",
        notes="attnspec/theory/osa/thm22.py",
    ),
    Claim(
        "osa.thm31.eq10",
        "Theorem 3.1, eq. (10)",
        "||YᵀY − I_N||₂ <= (e^{||S||₂} − 1)² max_i |σ_i(B)²(σ_i(B)² − 1)| for Y = I + B(exp[S] − I)Bᵀ.",
        (
            Reading(
                "as-stated",
                "eq. (9)'s cubic B (the B the theorem defines), every instance: the statement names "
                "no hypothesis on σ(B)",
            ),
            Reading(
                "sigma-le-1",
                "only instances with σ_max(B) <= 1, the proof's hypothesis (guaranteed by eq. (9)'s "
                "cubic iteration); a schedule with none gets hypothesis-unmet",
            ),
            Reading(
                "variant",
                "B from another schedule (Muon, Polar Express, custom), every instance: the theorem "
                "defines B(X) by eq. (9)'s cubic iteration, so this measures a variant (measured)",
            ),
            Reading("variant-sigma-le-1", "B from another schedule, instances with σ_max(B) <= 1 (measured)"),
        ),
        _CHECK,
        paper_params="eq. (9)'s cubic Newton–Schulz basis",
        notes="attnspec/theory/osa/thm31.py",
    ),
    Claim(
        "osa.thm31.eq11",
        "Theorem 3.1, eq. (11)",
        "||YᵀY − I_N||₂ <= ¼ (e^{||S||₂} − 1)².",
        (
            Reading("as-stated", "eq. (9)'s cubic B, every instance: the statement names no hypothesis on σ(B)"),
            Reading("sigma-le-1", "only instances with σ_max(B) <= 1, the proof's hypothesis"),
            Reading("variant", "B from another schedule, every instance (a variant: measured)"),
            Reading("variant-sigma-le-1", "B from another schedule, instances with σ_max(B) <= 1 (measured)"),
        ),
        _CHECK,
        paper_params="eq. (9)'s cubic Newton–Schulz basis",
        notes="attnspec/theory/osa/thm31.py",
    ),
    Claim(
        "osa.thm41",
        "Theorem 4.1, eq. (13)",
        "J = (X W_V W_O ⊗ I_N)ᵀ ∂vec A/∂vec X + (W_V W_O)ᵀ ⊗ A.",
        (Reading("as-stated", "autograd Jacobian against eq. (13), max entrywise difference <= 1e-10"),),
        _CHECK,
        notes="attnspec/theory/osa/jacobian.py",
    ),
    Claim(
        "osa.thm42",
        "Theorem 4.2, eq. (14)",
        "With [W_Q, W_K] orthonormal (2 d_v <= d), the nonzero singular values of W̃ = W_Q W_Kᵀ − W_K W_Qᵀ are 1.",
        (Reading("as-stated", "max |σ − 1| over nonzero σ(W̃) <= 1e-10 and rank W̃ = 2 d_v, Stiefel draws"),),
        _CHECK,
        paper_params="the Section 4 initialisation",
        notes="attnspec/theory/osa/thm42.py",
    ),
    Claim(
        "osa.thm43",
        "Theorem 4.3, eq. (15)",
        "Under the Section 4 initialisation, bounded ||X||₂ and a Newton–Schulz basis, ||J1||₂ <= C alpha.",
        (
            Reading(
                "as-stated",
                "||J1||₂/alpha grows by at most ×2 from alpha = 0.1 to the smallest alpha; QR bases "
                "do not meet the hypothesis (Remark 4.5)",
            ),
        ),
        _CHECK,
        paper_params="N = 50, d = 64, h = 4 (Sec. 5)",
        notes="attnspec/theory/osa/jacobian.py",
    ),
    Claim(
        "osa.thm44",
        "Theorem 4.4, eq. (16)",
        "With |σ_i(A) − 1| <= δ < 1, κ(J) <= (1 + δ + Cα)/(1 − δ − Cα) when 1 − δ − Cα > 0 (C unspecified).",
        (
            Reading(
                "held-out-c",
                "C fitted as max ||J1||₂/alpha on independent fit draws, the bound tested on fresh test draws",
            ),
            Reading("measured", "the fitted C and the κ(J)-against-alpha curve, without a verdict"),
        ),
        _CHECK,
        paper_params="N = 50, d = 64, h = 4 (Sec. 5)",
        notes="attnspec/theory/osa/jacobian.py",
    ),
    Claim(
        "osa.thm44.multihead",
        "Theorem 4.4 for M-OSA (eq. (3)), outside the statement",
        "κ(J) of the multihead layer (a sum of h heads of width d/h) at small alpha.",
        (Reading("m-osa", "measured κ(J) and its alpha → 0 limit κ(Σ_h W_V,h W_O,h); the theorem is single-head"),),
        _CHECK,
        notes="attnspec/theory/osa/jacobian.py",
    ),
    Claim(
        "osa.lemc1",
        "Lemma C.1, eq. (54)",
        "There exists C > 0 with ||B||₂ <= C; the proof: the pre-normalised singular values are <= 1 and "
        "Newton–Schulz cannot increase them beyond √3 for any K.",
        (
            Reading(
                "cubic",
                "eq. (9)'s cubic: the largest σ(B) over σ(M_0) ∈ (0, 1] and K = 0..steps (exact scalar "
                "iteration) against the proof's C = √3",
            ),
            Reading("other-schedule", "Muon, Polar Express, custom schedules against √3: a variant (measured)"),
        ),
        _CHECK,
        paper_params="eq. (9)'s cubic iteration",
        notes="attnspec/theory/osa/lemc1.py",
    ),
    Claim(
        "osa.eq9.range",
        "Eq. (9), the cubic Newton–Schulz iteration (Theorem 3.1's proof: 'by construction')",
        "From M_0 = M/||M||_F the cubic iteration M_{k+1} = 3/2 M_k − 1/2 M_k M_kᵀ M_k keeps every nonzero "
        "singular value of B in (0, 1].",
        (
            Reading("scalar", "the exact scalar iteration on a grid of (0, 1], K = 0..steps: min > 0, max <= 1"),
            Reading("instances", "σ(B) of the cubic instances of the Theorem 3.1 table: min > 0, max <= 1"),
        ),
        _CHECK,
        paper_params="eq. (9)'s cubic iteration",
        notes="attnspec/theory/osa/lemc1.py",
    ),
    Claim(
        "osa.lemc2",
        "Lemma C.2, eqs. (56)–(57)",
        "||S||₂ <= (alpha/sqrt(d_v)) ||X||₂², using ||W̃||₂ = 1 from the query-key initialisation.",
        (
            Reading(
                "as-stated",
                "random X and adversarial X (rows along W_Q[:, 0], W_K[:, 0]: equality), Stiefel "
                "[W_Q, W_K]; Gaussian weights do not meet ||W̃||₂ = 1 (hypothesis-unmet)",
            ),
        ),
        _CHECK,
        notes="attnspec/theory/osa/lemmas.py",
    ),
    Claim(
        "osa.lemc3",
        "Lemma C.3, eqs. (62)–(63)",
        "||exp[S] − I||₂ <= ||[S]||₂ <= ||B||₂² ||S||₂.",
        (
            Reading(
                "eq62",
                "||exp[S] − I||₂ <= ||[S]||₂ on random OSA [S] (QR and Newton–Schulz bases) and "
                "adversarial rotations θJ (tight as θ → 0)",
            ),
            Reading("eq63", "||exp[S] − I||₂ <= ||B||₂²||S||₂ on random OSA instances"),
        ),
        _CHECK,
        notes="attnspec/theory/osa/lemmas.py",
    ),
    Claim(
        "osa.lemc7",
        "Lemma C.7, eq. (78)",
        "At a skew-symmetric [S], ||∂vec exp[S]/∂vec[S]||₂ <= 1.",
        (
            Reading(
                "as-stated",
                "the r²×r² autograd Jacobian of matrix_exp on random and adversarial skew [S]; "
                "the bound is attained (= 1)",
            ),
        ),
        _CHECK,
        notes="attnspec/theory/osa/lemmas.py",
    ),
    Claim(
        "osa.lemc7.eq79",
        "Lemma C.7, eq. (79) as printed",
        "∂vec exp[S]/∂vec[S] = ∫₀¹ exp(s[S]ᵀ) ⊗ exp((1−s)[S]) ds (column-major vec).",
        (Reading("as-printed", "the printed integral by quadrature against the autograd Jacobian, <= 1e-10"),),
        _CHECK,
        notes="attnspec/theory/osa/lemmas.py",
    ),
    Claim(
        "osa.alg1",
        "Appendix B, Algorithm 1",
        "Q diag(sign R_ii) from the QR of a Gaussian Z is uniform on the Stiefel manifold.",
        (
            Reading("with-sign-fix", "mean of Q₁₁ against its exact Haar value 0, within 4 standard errors"),
            Reading(
                "without-sign-fix",
                "plain QR: mean of Q₁₁ against its exact value −Γ(n/2)/(√π Γ((n+1)/2)) "
                "under LAPACK's sign convention (a measurement)",
            ),
        ),
        _CHECK,
        notes="attnspec/theory/osa/algorithm1.py",
    ),
    Claim(
        "osa.eq26",
        "Appendix C.3, eq. (26) as printed",
        "YᵀY − I = BΔBᵀ + BΔᵀB + BΔᵀEΔBᵀ + BΔᵀΔBᵀ.",
        (
            Reading("as-printed", "the second term B Δᵀ B: shapes, and its value where defined (N = 2 d_v)"),
            Reading("corrected", "with B Δᵀ Bᵀ: against YᵀY − I, <= 1e-10"),
        ),
        _CHECK,
        notes="attnspec/theory/osa/printed.py",
    ),
    Claim(
        "osa.eq49",
        "Appendix C.4, eqs. (48)–(49) as printed: the term on the line numbered (49)",
        "∂vec OSA = ((XW)ᵀ ⊗ I_N)∂vec A + (Wᵀ ⊗ A)∂vec X   (48)   + (I_{d_v} ⊗ A)∂vec(W_V W_O)   (49).",
        (
            Reading(
                "as-printed",
                "the term (I_{d_v} ⊗ A) of line (49): conformable only when N = d_v = d (not even "
                "at N = 2 d_v), so hypothesis-unmet at other shapes; its value at N = d_v = d",
            ),
            Reading("corrected", "with (I_d ⊗ A X): against the autograd derivative in W = W_V W_O, <= 1e-10"),
        ),
        _CHECK,
        notes="attnspec/theory/osa/printed.py",
    ),
    Claim(
        "osa.eq89",
        "Appendix C.6, eq. (89) as printed",
        "E₂ = (B ⊗ Bᵀ) ∂vec(exp[S] − I)/∂vec X.",
        (
            Reading("as-printed", "vec(B M Bᵀ) against (B ⊗ Bᵀ) vec M: shapes, and its value where defined"),
            Reading("corrected", "with (B ⊗ B), <= 1e-10"),
        ),
        _CHECK,
        notes="attnspec/theory/osa/printed.py",
    ),
    Claim(
        "osa.thm44.constant",
        "Theorem 4.4, the condition after eq. (16)",
        "'for any α > 0 such that 1 − δ − C_α > 0' (C_α where (16) has C α; C not given).",
        (
            Reading(
                "as-printed",
                "the fitted C, the alphas where 1 − δ − Cα > 0, and what C_α read as a constant "
                "would give (a measurement)",
            ),
        ),
        _CHECK,
        notes="attnspec/theory/osa/printed.py",
    ),
    Claim(
        "osa.sec5",
        "Section 5, Figure 1 and Table 2",
        "Without skips and LayerNorm, the OSA-Transformer matches the ViT baseline's generalisation and beats the "
        "skipless ViT; QR slightly outperforms Newton–Schulz.",
        (
            Reading(
                "test-accuracy",
                "final test accuracy per model on 8×8 digits (scaled-down setup), paired "
                "difference to ViT with a 95% t interval: a measurement",
            ),
        ),
        "osa-train",
        notes="attnspec/theory/osa/train.py",
    ),
)

register(*CLAIMS)
# names for one-screen tables, where the claim's name is long
register_short_names(
    {
        "osa.alg1": "Algorithm 1",
        "osa.eq26": "Eq. 26 as printed",
        "osa.eq49": "Eqs. 48–49 as printed",
        "osa.eq89": "Eq. 89 as printed",
        "osa.eq9.range": "Eq. 9, range of σ(B)",
        "osa.lemc7.eq79": "Eq. 79 as printed",
        "osa.sec5": "Section 5",
        "osa.thm21": "Theorem 2.1 (eqs. 6–7)",
        "osa.thm44.constant": "Theorem 4.4, condition",
        "osa.thm44.multihead": "Theorem 4.4, M-OSA",
    }
)
