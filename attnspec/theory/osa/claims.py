"""The claims of Zhang & Martens, "Orthogonal Self-Attention", that attnspec checks.

Each claim names the module that checks it; ``attnspec claims`` lists them.
"""

from __future__ import annotations

from attnspec.claims import Claim, Reading, register

_CHECK = "osa-check"

CLAIMS: tuple[Claim, ...] = (
    Claim("osa.thm21", "Theorem 2.1, eqs. (6)–(7)",
          "If the columns of B are an orthonormal basis of span(Q, K), exp(S) = I_N + B (exp[S] − I_r) Bᵀ with "
          "[S] = Bᵀ S B.",
          (Reading("as-stated", "the low-rank formula against three dense float64 exponentials (torch, SciPy, "
                                "eigh), QR and converged Newton–Schulz bases, max entrywise difference <= 1e-10"),),
          _CHECK, notes="attnspec/theory/osa/thm21.py"),
    Claim("osa.thm21.so_n", "Eq. (4), A ∈ SO(N)",
          "The attention matrix A = exp(S) is special orthogonal.",
          (Reading("low-rank-formula", "the A of Theorem 2.1's formula on the dense instances: ||AᵀA − I||₂ and "
                                       "|det A − 1| <= 1e-10"),
           Reading("layer", "the A the layer applies at its default K: a finite-K Newton–Schulz basis is not "
                            "orthonormal, so Theorem 2.1's hypothesis is not met (hypothesis-unmet, deviation "
                            "measured)")),
          _CHECK, notes="attnspec/theory/osa/thm21.py"),
    Claim("osa.thm22", "Theorem 2.2, eq. (8)",
          "In a skipless single-head OSA-only stack with W_V W_O orthogonal, Σ_l = A Σ_0 Aᵀ with A orthogonal: "
          "the eigenvalues of X_l X_lᵀ are those of X_0 X_0ᵀ.",
          (Reading("as-stated", "max relative eigenvalue change over depth <= 1e-10, where every layer's A is "
                                "orthogonal; finite-K Newton–Schulz bases give non-orthogonal A: hypothesis-unmet"),),
          _CHECK, notes="attnspec/theory/osa/thm22.py"),
    Claim("osa.thm31.eq10", "Theorem 3.1, eq. (10)",
          "||YᵀY − I_N||₂ <= (e^{||S||₂} − 1)² max_i |σ_i(B)²(σ_i(B)² − 1)| for Y = I + B(exp[S] − I)Bᵀ.",
          (Reading("as-stated", "every Newton–Schulz instance: the statement names no hypothesis on σ(B)"),
           Reading("sigma-le-1", "only instances with σ_max(B) <= 1, the proof's hypothesis (guaranteed by eq. (9)'s "
                                 "cubic iteration); a schedule with none gets hypothesis-unmet")),
          _CHECK, notes="attnspec/theory/osa/thm31.py"),
    Claim("osa.thm31.eq11", "Theorem 3.1, eq. (11)",
          "||YᵀY − I_N||₂ <= ¼ (e^{||S||₂} − 1)².",
          (Reading("as-stated", "every Newton–Schulz instance: the statement names no hypothesis on σ(B)"),
           Reading("sigma-le-1", "only instances with σ_max(B) <= 1, the proof's hypothesis")),
          _CHECK, notes="attnspec/theory/osa/thm31.py"),
    Claim("osa.thm41", "Theorem 4.1, eq. (13)",
          "J = (X W_V W_O ⊗ I_N)ᵀ ∂vec A/∂vec X + (W_V W_O)ᵀ ⊗ A.",
          (Reading("as-stated", "autograd Jacobian against eq. (13), max entrywise difference <= 1e-10"),),
          _CHECK, notes="attnspec/theory/osa/jacobian.py"),
    Claim("osa.thm42", "Theorem 4.2, eq. (14)",
          "With [W_Q, W_K] orthonormal (2 d_v <= d), the nonzero singular values of W̃ = W_Q W_Kᵀ − W_K W_Qᵀ are 1.",
          (Reading("as-stated", "max |σ − 1| over nonzero σ(W̃) <= 1e-10 and rank W̃ = 2 d_v, Stiefel draws"),),
          _CHECK, notes="attnspec/theory/osa/thm42.py"),
    Claim("osa.thm43", "Theorem 4.3, eq. (15)",
          "Under the Section 4 initialisation, bounded ||X||₂ and a Newton–Schulz basis, ||J1||₂ <= C alpha.",
          (Reading("as-stated", "||J1||₂/alpha grows by at most ×2 from alpha = 0.1 to the smallest alpha; QR bases "
                                "do not meet the hypothesis (Remark 4.5)"),),
          _CHECK, notes="attnspec/theory/osa/jacobian.py"),
    Claim("osa.thm44", "Theorem 4.4, eq. (16)",
          "With |σ_i(A) − 1| <= δ < 1, κ(J) <= (1 + δ + Cα)/(1 − δ − Cα) when 1 − δ − Cα > 0 (C unspecified).",
          (Reading("held-out-c", "C fitted as max ||J1||₂/alpha on independent fit draws, the bound tested on fresh "
                                 "test draws"),
           Reading("measured", "the fitted C and the κ(J)-against-alpha curve, without a verdict")),
          _CHECK, notes="attnspec/theory/osa/jacobian.py"),
    Claim("osa.thm44.multihead", "Theorem 4.4 for M-OSA (eq. (3)), outside the statement",
          "κ(J) of the multihead layer (a sum of h heads of width d/h) at small alpha.",
          (Reading("m-osa", "measured κ(J) and its alpha → 0 limit κ(Σ_h W_V,h W_O,h); the theorem is single-head"),),
          _CHECK, notes="attnspec/theory/osa/jacobian.py"),
    Claim("osa.sec5", "Section 5, Figure 1 and Table 2",
          "Without skips and LayerNorm, the OSA-Transformer matches the ViT baseline's generalisation and beats the "
          "skipless ViT; QR slightly outperforms Newton–Schulz.",
          (Reading("test-accuracy", "final test accuracy per model on 8×8 digits (scaled-down setup), paired "
                                    "difference to ViT with a 95% t interval: a measurement"),),
          "osa-train", notes="attnspec/theory/osa/train.py"),
)

register(*CLAIMS)
