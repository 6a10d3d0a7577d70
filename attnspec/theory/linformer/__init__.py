"""Wang, Li, Khabsa, Fang & Ma (2020), "Linformer: Self-Attention with Linear Complexity".

One module per claim group (the claim ids are in :mod:`.claims`):

* :mod:`.dimensions`  — every k formula and failure bound, and the parameter checks;
* :mod:`.lemma1`      — Lemma 1 (eqs. 11–12): exact laws, Monte Carlo;
* :mod:`.theorem1`    — Theorem 1 (eq. 3, eq. 20): attention matrices, vectors w, Monte Carlo;
* :mod:`.quantifier`  — Theorem 1's quantifier;
* :mod:`.theorem2`    — Theorem 2 (eq. 8, eq. 21): Monte Carlo;
* :mod:`.proof_steps` — Theorem 2's step (23), tolerances, k formulas, (ε, k) grid;
* :mod:`.printed`     — eqs. (4)/(15) as printed;
* :mod:`.samplers`    — projection families and exact reduced samplers;
* :mod:`.rows`        — Monte Carlo tables to verdict rows, and Appendix A's k = log n (eq. 18);
* :mod:`.battery`     — `jl-check`, its options validated in :mod:`.config`.
"""
