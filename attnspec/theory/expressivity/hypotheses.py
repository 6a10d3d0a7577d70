"""The theorem's hypotheses (:data:`~.claims.HYPOTHESES`): the notes assume only row sparsity
and additive precision ``‖B − B̂‖∞ <= δ``; the paper's abstract bounds the nonzeros of each
row *and column*, and speaks of preserving the ratios of the elements. Both are checked:

* **row-only**: a matrix with k nonzeros per row and one dense column (``support =
  "dense-column"``, the k-per-row-and-column matrix of the same seed with one column filled)
  against the k-per-row-and-column one. With the row factorization B = B·I only row norms
  matter, so the d* of the latter should serve the former; with the column factorization
  B = I·B the dense column has norm ~√L max|B| and its hypothesis (column sparsity) fails.
* **ratios**: ``|log(Â_ij/Â_il) − log(A_ij/A_il)| = |E_ij − E_il| <= 2‖E‖∞``, so additive
  precision δ gives ratio precision 2δ on S; the d* needed for ratio precision δ itself is
  measured against the additive d*, from the same draws of the d → ∞ law.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from attnspec.theory.expressivity import claims as C
from attnspec.theory.expressivity.construction import sparse_target
from attnspec.theory.expressivity.dstar import asymptotic_d_star
from attnspec.theory.expressivity.sampling import asymptotic_errors
from attnspec.verdicts.classify import VerdictRow


def row_only_test(
    *,
    L: int,
    k: int,
    m: float,
    M: float,
    eps: float,
    delta: float,
    beta: float,
    trials: int,
    factorization: str,
    seed_A: int,
    seed_fit: int,
    seed_test: int,
) -> dict[str, object]:
    """Fit d* on a k-per-row-and-column A, test it on the dense-column A (fresh draws).

    Both through the d → ∞ law of Gaussian projections; the fitted d is the upper end of
    the 95% interval of the training d* (its point estimate when the draws do not bound it).

    Parameters
    ----------
    L, k : int
    m, M, eps, delta, beta : float
    trials : int, draws for the fit and for the test
    factorization : {"row", "column"}
    seed_A, seed_fit, seed_test : int, the matrices' seed and two independent draw seeds

    Returns
    -------
    dict : one ``hypotheses`` row: d (fitted), failures among trials at d on the
    dense-column A, its own d*, the largest column count, seeds
    """
    A_both = sparse_target(L, k, m=m, M=M, support="both", seed=seed_A)
    A_row = sparse_target(L, k, m=m, M=M, support="dense-column", seed=seed_A)
    lam_fit = asymptotic_errors(A_both, eps=eps, trials=trials, factorization=factorization, seed=seed_fit)
    # the upper end of d*'s 95% interval, so that the fitted d meets its target on the
    # training matrix (the point estimate fails with probability ~β by construction); the
    # point estimate when too few draws bound it from above
    d_point, _, d_high = asymptotic_d_star(lam_fit, delta, beta)
    d_fit = int(d_high) if math.isfinite(d_high) else d_point
    lam = asymptotic_errors(A_row, eps=eps, trials=trials, factorization=factorization, seed=seed_test)
    return {
        "kind": "hypotheses",
        "test": "row-only",
        "factorization": factorization,
        "L": L,
        "k": k,
        "eps": eps,
        "delta": delta,
        "beta": beta,
        "d": d_fit,
        "failures": int(np.sum(lam > delta * math.sqrt(d_fit))),
        "trials": trials,
        "d_row_only": asymptotic_d_star(lam, delta, beta)[0],
        "max_column_nonzeros": int((A_row > 0).sum(0).max()),
        "d_fit_point": d_point,
        "seed": seed_test,
        "seed_fit": seed_fit,
    }


def ratio_test(
    A: np.ndarray,
    *,
    eps: float,
    delta: float,
    beta: float,
    trials: int,
    seed: int,
    lam_add: np.ndarray | None = None,
    lam_ratio: np.ndarray | None = None,
) -> dict[str, object]:
    """d* for ratio precision δ and for additive precision δ, from the same Z draws.

    Parameters
    ----------
    A : array of shape (L, L)
    eps, delta, beta : float
    trials : int
    seed : int, shared by both statistics (paired comparison)
    lam_add : array of shape (trials,), optional
        The additive draws for this seed, if already drawn (they are the run's own).
    lam_ratio : array of shape (trials,), optional
        The ratio draws of the same Z, if already drawn (``statistic="both"``).

    Returns
    -------
    dict : one ``hypotheses`` row with d (additive d*), d_ratio and both intervals
    """
    if lam_add is None or lam_ratio is None:
        lam_add, lam_ratio = asymptotic_errors(A, eps=eps, trials=trials, seed=seed, statistic="both")
    d_add, lo_a, hi_a = asymptotic_d_star(lam_add, delta, beta)
    d_rat, lo_r, hi_r = asymptotic_d_star(lam_ratio, delta, beta)
    return {
        "kind": "hypotheses",
        "test": "ratio",
        "factorization": "row",
        "L": A.shape[0],
        "k": int((A > 0).sum(1).max()),
        "eps": eps,
        "delta": delta,
        "beta": beta,
        "d": d_add,
        "ci_low": lo_a,
        "ci_high": hi_a,
        "d_ratio": d_rat,
        "d_ratio_low": lo_r,
        "d_ratio_high": hi_r,
        "trials": trials,
        "seed": seed,
    }


def check_hypotheses(
    rows: pd.DataFrame, at_trials: pd.DataFrame, *, delta: float, params: dict, seed_at: int
) -> list[VerdictRow]:
    """The four readings of :data:`~.claims.HYPOTHESES`.

    Parameters
    ----------
    rows : DataFrame, the ``hypotheses`` rows (:func:`row_only_test` for both
        factorizations, :func:`ratio_test`)
    at_trials : DataFrame, per-trial measures (with ``err_inf``, ``ratio_on``) of the
        construction at d*
    delta : float
    params : dict, the run's parameters
    seed_at : int, the seed of ``at_trials``

    Returns
    -------
    list of VerdictRow
    """
    from attnspec.theorem.cases import Cases
    from attnspec.theorem.measured import indicators, read_off
    from attnspec.theory.expressivity.registration import PAPER

    out = []
    for r in rows.query("test == 'row-only'").itertuples():
        numbers = {
            "fails": indicators(r.failures, r.trials), "beta": float(r.beta), "d_fit_point": float(r.d_fit_point),
            "d_row_only": float(r.d_row_only), "max_column_nonzeros": float(r.max_column_nonzeros),
        }  # fmt: skip
        reading = "row-only-column" if r.factorization == "column" else "row-only"
        out += read_off(
            C.HYPOTHESES, {**params, "d": int(r.d)}, numbers, paper=PAPER, seed=int(r.seed), readings=(reading,)
        )
    ok = at_trials[at_trials["err_inf"] <= delta]
    numbers = {"ratio_on": Cases(ok["ratio_on"]) if len(ok) else math.nan, "two_delta": 2 * delta, "met": len(ok)}
    out += read_off(C.HYPOTHESES, params, numbers, paper=PAPER, seed=seed_at, readings=("ratio-implied",))
    for r in rows.query("test == 'ratio'").itertuples():
        numbers = {
            "ratio": r.d_ratio / r.d, "d_ratio": r.d_ratio, "d_ratio_low": r.d_ratio_low,
            "d_ratio_high": r.d_ratio_high, "d_additive": r.d, "d_low": r.ci_low, "d_high": r.ci_high,
            "trials": r.trials,
        }  # fmt: skip
        out += read_off(
            C.HYPOTHESES, {**params, "d": int(r.d_ratio)}, numbers, paper=PAPER, seed=int(r.seed),
            readings=("ratio-dimension",),
        )  # fmt: skip
    return out
