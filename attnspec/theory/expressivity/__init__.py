"""Likhosherstov, Choromanski & Weller (2021), "On the expressive power of self-attention
matrices" (arXiv 2106.03764), as summarised in ``shared/papers/expressive-power-notes-fr.txt``:
the ``attnspec sa-check`` battery.

One module per step of the argument or claim group:

* :mod:`.construction` — A, B = log(A/eps), B = B1 B2ᵀ, R, X, W_Q, W_K, SA and SAN;
* :mod:`.bounds` — the notes' bounds and dimensions, with exact worst cases and laws;
* :mod:`.sampling` — the Monte Carlo of B̂ = B1 RᵀR B2ᵀ (Wishart, complement subspace) and
  the d → ∞ law of Gaussian projections;
* :mod:`.dstar` — the measured minimal width d* (bisection, asymptotic order statistics);
* :mod:`.measure` — every measurement of one instance (d*, errors at d, scaling sweeps);
* :mod:`.error_map` — one small instance of the construction, entry by entry;
* :mod:`.reduction` — claims of the reduction to logits (on S, off S, SAN);
* :mod:`.dimension` — the JL union bound, the JL dimension, the width d < L;
* :mod:`.fit` — fitted quantities (d* vs k log L, d* vs 1/ε', which M), fitted on one set
  of draws and tested on independent ones, or reported as measurements;
* :mod:`.sweep` — the (L, k) grid;
* :mod:`.jl_lemma` — the single-vector JL lemmas against their exact laws;
* :mod:`.config`, :mod:`.battery`, :mod:`.claims` — the run, its options, the claim ids.

Importing the package imports none of them (``attnspec claims`` stays light).
"""
