"""The report's real-attention section for Linformer's Theorem 1: whether the run's n and ε can
decide the theorem, said with the formula and the numbers, computed from the rows (never typed)."""

from __future__ import annotations

import numpy as np
import pandas as pd


def _real_rows(n: int, eps: float) -> pd.DataFrame:
    from attnspec.theory.linformer.dimensions import linformer_k, theorem1_union_bound

    ks = sorted({16, 188, int(np.ceil(linformer_k(n, eps))), n - 1} - {n} if linformer_k(n, eps) < n else {16, n - 1})
    rows = []
    for k in ks:
        for w, fails in (("random", 9), ("adv_bottom", 10), ("value", 4)):
            for reading in ("relative", "additive"):
                rows.append(
                    {
                        "n": n,
                        "k": k,
                        "w": w,
                        "reading": reading,
                        "failures": fails,
                        "trials": 10,
                        "bound": float(theorem1_union_bound(n, k, eps)),
                    }
                )
    return pd.DataFrame(rows)


def test_the_real_attention_basis_says_why_theorem_1_cannot_be_decided_at_eps_0_1() -> None:
    from attnspec.report.papers import _decidability
    from attnspec.theory.linformer.dimensions import linformer_k, theorem1_decisive_from, union_bound_min_k

    text = _decidability(_real_rows(512, 0.1), 512, 0.1, linformer_k(512, 0.1))
    assert f"k ≥ {union_bound_min_k(512, 0.1)} > n − 1" in text and "no k below n can decide it" in text
    assert f"below n = {theorem1_decisive_from()}" in text and "just below n (k = 511)" in text


def test_the_real_attention_basis_at_eps_2_3_names_the_decisive_k_and_the_measured_rate() -> None:
    from attnspec.report.papers import _decidability
    from attnspec.theory.linformer.dimensions import linformer_k, theorem1_union_bound, union_bound_min_k

    k_thm = linformer_k(512, 2 / 3)
    text = _decidability(_real_rows(512, 2 / 3), 512, 2 / 3, k_thm)
    assert "ε = 2/3, which maximises ε² − ε³" in text
    assert f"k ≥ {union_bound_min_k(512, 2 / 3)}, and Theorem 1's own k = {k_thm:.0f} < n = 512" in text
    at = int(np.ceil(k_thm))
    assert f"At k = {at} " in text and f"claimed ≤ {theorem1_union_bound(512, at, 2 / 3):.2g}" in text
    assert text.index("10/10 (w = adv bottom)") < text.index("9/10 (w = random)") < text.index("4/10 (w = value)")
