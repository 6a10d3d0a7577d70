"""Depth statements: the permutation test of Spearman's ρ over a model's layer means, and its wording.

A model's layers are its whole population of layers, not a sample of them: whether a quantity
changes with depth is a question about the order of these L layer means. Under "no trend" every
ordering of the L means over the layers is equally likely, so the two-sided p of the observed ρ
(layer index against layer mean) is the share of orderings whose \\|ρ\\| reaches the observed
one: counted over all L! orderings up to :data:`EXACT_UP_TO` layers, else over
:data:`DRAWS` seeded random orderings ((b + 1) / (draws + 1), which never reads 0).

One wording rule (:func:`depth_phrase`) for every depth statement of the report, summary, body
and appendix alike: "rises / falls with depth" only at p < :data:`SHOWN_BELOW`, "suggestive" for
p < :data:`SUGGESTIVE_BELOW`, else "no trend shown". Six layer means cannot do better than
p = 2/720 ≈ 0.003 (a perfectly monotone profile), and ρ = +0.83 over six gives p ≈ 0.058.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import numpy as np

#: Layers up to which every ordering is enumerated (8! = 40,320 orderings).
EXACT_UP_TO = 8
#: Random orderings drawn above :data:`EXACT_UP_TO` layers.
DRAWS = 10_000
#: A trend is named ("rises / falls with depth") only below this p.
SHOWN_BELOW = 0.05
#: Below this p (and not below :data:`SHOWN_BELOW`) a trend is "suggestive".
SUGGESTIVE_BELOW = 0.1
#: Fewest layer means a depth statement is made from.
MIN_LAYERS = 4


@dataclass(frozen=True)
class DepthTrend:
    """Spearman's ρ of layer means against layer index and its two-sided permutation p.

    Attributes
    ----------
    rho : float
        Spearman's ρ (ranks, ties averaged) of the L layer means against 0, …, L − 1.
    p : float
        Two-sided permutation p: the share of orderings with \\|ρ\\| at least the observed one.
    layers : int
        L, the number of layer means.
    orderings : int
        Orderings counted: L! when ``exact``, else the number drawn.
    exact : bool
        Every ordering was enumerated.
    """

    rho: float
    p: float
    layers: int
    orderings: int
    exact: bool


def _rank(values: np.ndarray) -> np.ndarray:
    """Ranks 0…L−1 of ``values`` (L,), ties given their average rank."""
    order = np.argsort(values, kind="stable")
    ranks = np.empty(values.size, dtype=float)
    ranks[order] = np.arange(values.size, dtype=float)
    for v in np.unique(values):  # average the ranks of tied values
        tied = values == v
        if tied.sum() > 1:
            ranks[tied] = ranks[tied].mean()
    return ranks


def depth_permutation_test(layer_means: np.ndarray, *, draws: int = DRAWS, seed: int = 0) -> DepthTrend:
    """Spearman's ρ of the layer means against depth, with its permutation p over orderings.

    Parameters
    ----------
    layer_means : numpy.ndarray, shape (L,)
        One mean per layer, first layer first; L >= :data:`MIN_LAYERS`, all finite, not all equal.
    draws : int
        Random orderings drawn when L > :data:`EXACT_UP_TO` (at least 100).
    seed : int
        Seed of the drawn orderings (unused when every ordering is enumerated).

    Returns
    -------
    DepthTrend

    Raises
    ------
    ValueError
        Fewer than :data:`MIN_LAYERS` means, a NaN or infinite one, all means equal, or
        ``draws`` below 100.
    """
    y = np.asarray(layer_means, dtype=float)
    if y.ndim != 1 or y.size < MIN_LAYERS or not np.all(np.isfinite(y)):
        raise ValueError(f"layer_means must be at least {MIN_LAYERS} finite values (1-D), got shape {y.shape}")
    if np.unique(y).size == 1:
        raise ValueError(f"layer_means are all equal ({y[0]}): ρ is undefined")
    if draws < 100:
        raise ValueError(f"draws must be at least 100, got {draws}")
    L = y.size
    x = np.arange(L, dtype=float) - (L - 1) / 2  # centred layer ranks (L,)
    ry = _rank(y)
    ry -= ry.mean()
    scale = float(np.sqrt((x @ x) * (ry @ ry)))
    rho = float(x @ ry) / scale
    exact = L <= EXACT_UP_TO
    if exact:
        perms = np.array(list(itertools.permutations(range(L))), dtype=np.int64)  # (L!, L)
    else:
        rng = np.random.default_rng(seed)
        perms = np.argsort(rng.random((draws, L)), axis=1)  # (draws, L) uniform orderings
    null = (ry[perms] @ x) / scale  # (orderings,) ρ of each ordering
    reached = int(np.count_nonzero(np.abs(null) >= abs(rho) - 1e-12))
    p = reached / perms.shape[0] if exact else (reached + 1) / (perms.shape[0] + 1)
    return DepthTrend(rho=rho, p=float(p), layers=L, orderings=int(perms.shape[0]), exact=exact)


def depth_phrase(trend: DepthTrend) -> str:
    """The one wording of a depth trend: "rises with depth", "falls with depth", "suggestive rise
    with depth", "suggestive fall with depth" or "no trend shown".

    Parameters
    ----------
    trend : DepthTrend
        :func:`depth_permutation_test`'s result.

    Returns
    -------
    str
    """
    way = "rise" if trend.rho > 0 else "fall"
    if trend.p < SHOWN_BELOW:
        return f"{way}s with depth"
    if trend.p < SUGGESTIVE_BELOW:
        return f"suggestive {way} with depth"
    return "no trend shown"


def depth_evidence(trend: DepthTrend) -> str:
    """``"ρ = +0.83, p = 0.058 over all 720 orderings of 6 layer means"``: the numbers a depth
    statement rests on.

    Parameters
    ----------
    trend : DepthTrend
        :func:`depth_permutation_test`'s result.

    Returns
    -------
    str
    """
    how = f"over all {trend.orderings:,} orderings" if trend.exact else f"over {trend.orderings:,} random orderings"
    return f"ρ = {trend.rho:+.2f}, p = {_p(trend.p)} {how} of {trend.layers} layer means"


def _p(p: float) -> str:
    """A p to two significant digits (0.058, 0.0028, 0.65), never rounded to 0."""
    return f"{p:.2g}" if p >= 1e-4 else f"{p:.1e}"


def depth_sentence(quantity: str, trend: DepthTrend) -> str:
    """One sentence on the depth trend of ``quantity`` for this model on this corpus.

    Parameters
    ----------
    quantity : str
        The quantity's name, as the sentence says it.
    trend : DepthTrend
        :func:`depth_permutation_test`'s result.

    Returns
    -------
    str
    """
    phrase = depth_phrase(trend)
    if phrase == "no trend shown":
        said = f"no trend shown in {quantity} over depth"
    elif phrase.startswith("suggestive"):
        said = f"{quantity} shows a {phrase}, short of p < {SHOWN_BELOW}"
    else:
        said = f"{quantity} {phrase}"
    return f"For this model on this corpus, {said} ({depth_evidence(trend)}, permutation test)."
