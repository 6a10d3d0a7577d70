"""Linformer eqs. (4)/(14) with D_A of eq. (15), as printed, against the row softmax.

The paper writes P = softmax(A) = exp(A)·D_A^{−1} with D_A diagonal and, in eq. (15),
(D_A)_ii = Σ_j exp(A_ji) — the sum of column i. Multiplying by a diagonal matrix on the
right scales columns, so the printed product has columns summing to 1; the row softmax
used everywhere else (eq. 2, the code, every experiment) is D^{−1}·exp(A) with
D_ii = Σ_j exp(A_ij). The two agree only when every row of exp(A) has the same sum.
The claim and its readings are ``linformer.eq4`` (:data:`.claims.EQ4`).
"""

from __future__ import annotations

import numpy as np

from attnspec.theorem.measured import Instance, instance_rows
from attnspec.theory.linformer.claims import EQ4
from attnspec.verdicts.classify import VerdictRow

CLAIM = EQ4.id


def _exp_shifted(A: np.ndarray) -> np.ndarray:
    # One global shift: both formulas are invariant under A -> A - c.
    return np.exp(A - A.max())


def eq4_as_printed(A: np.ndarray) -> np.ndarray:
    """exp(A)·D_A^{−1} with (D_A)_ii = Σ_j exp(A_ji) (eq. 15: column sums).

    Parameters
    ----------
    A : ndarray of shape (n, n)

    Returns
    -------
    ndarray of shape (n, n)
        Its columns sum to 1; its rows in general do not.
    """
    E = _exp_shifted(np.asarray(A, dtype=np.float64))
    return E / E.sum(0, keepdims=True)


def row_softmax(A: np.ndarray) -> np.ndarray:
    """D^{−1}·exp(A) with D_ii = Σ_j exp(A_ij): softmax over each row, shape (n, n).

    Parameters
    ----------
    A : numpy.ndarray, shape (n, n)
        The logits.

    Returns
    -------
    numpy.ndarray, shape (n, n)
    """
    A = np.asarray(A, dtype=np.float64)
    E = np.exp(A - A.max(1, keepdims=True))
    return E / E.sum(1, keepdims=True)


def check_eq4(A: np.ndarray, *, name: str, seed: int | None = None, block: int = 128) -> list[VerdictRow]:
    """Both readings of eq. (4)/(15) on the logits ``A``, each against the row softmax.

    Parameters
    ----------
    A : ndarray of shape (n, n)
        Attention logits QKᵀ/√d.
    name : str
        The instance's name, recorded as parameter ``attention``.
    seed : int, optional
        The seed that drew ``A``.
    block : int
        Rows per block (the work is done ``block`` rows at a time; the result does not depend on it).

    Returns
    -------
    list of VerdictRow
        ``as-printed`` and ``row-normalised`` (the readings of :data:`.claims.EQ4`), with the row
        sums of each form in the evidence; ``estimate`` is the deciding residual max |entry − row
        softmax| and ``bound`` its round-off tolerance.
    """
    A = np.asarray(A, dtype=np.float64)
    n = A.shape[0]
    top = A.max()  # the one global shift of both printed forms (_exp_shifted)
    # Row blocks that stay in cache instead of five n×n temporaries. Every number is the one
    # the whole-matrix formulas give, bit for bit: elementwise operations and row sums do not
    # depend on the blocking, and a column sum is accumulated row by row, in order, which is
    # the order numpy's sum(axis=0) adds the rows of a C-contiguous array.
    colsum_e = np.zeros(n)  # Σ_i exp(A_ij − top): eq. (15)'s D_A
    for i in range(0, n, block):
        for row in np.exp(A[i : i + block] - top):
            colsum_e += row
    residual = {"as-printed": 0.0, "row-normalised": 0.0}
    row_sums: dict[str, list[np.ndarray]] = {"as-printed": [], "row-normalised": []}
    col_sums = {"as-printed": np.zeros(n), "row-normalised": np.zeros(n)}
    for i in range(0, n, block):  # exp(a − top) again: cheaper than keeping an n×n array between the passes
        a = A[i : i + block]  # (b, n)
        target = np.exp(a - a.max(1, keepdims=True))  # the row softmax (row_softmax), this block's rows
        target /= target.sum(1, keepdims=True)
        e = np.exp(a - top)
        forms = {"as-printed": e / colsum_e, "row-normalised": (1.0 / e.sum(1))[:, None] * e}
        for reading, P in forms.items():
            residual[reading] = max(residual[reading], float(np.abs(P - target).max()))
            row_sums[reading].append(P.sum(1))
            acc = col_sums[reading]
            for row in P:
                acc += row
    out = []
    for reading in ("as-printed", "row-normalised"):
        sums, cols = np.concatenate(row_sums[reading]), col_sums[reading]
        values = {"residual": residual[reading], "row_low": sums.min(), "row_high": sums.max(),
                  "col_low": cols.min(), "col_high": cols.max()}  # fmt: skip
        out.append(Instance({"n": n, "attention": name}, values, seed, reading))
    return instance_rows(EQ4, out)
