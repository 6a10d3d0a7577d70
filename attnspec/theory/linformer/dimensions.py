"""Linformer's dimension formulas and failure bounds (c(ε) = (ε² − ε³)/4, natural logarithms),
and the parameter checks they share. Theorem 2's main-text d-term 9 d ln(d)/ε² is a factor
d(1 − ε) larger than Appendix B's 9 ln(d)/(ε² − ε³) for the same rank(A) = d argument:
:func:`theorem2_formulas` reports each.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable

import numpy as np

from attnspec.errors import InputError, check_range

# ----------------------------------------------------------------------------- checks


def check_eps(eps: float) -> float:
    """ε in (0, 1), else :class:`InputError` naming it.

    Parameters
    ----------
    eps : float
        Distortion ε; at least :data:`EPS_MIN` so that 1/ε² is a finite float.

    Returns
    -------
    float
        ``eps``.

    Raises
    ------
    InputError
        An argument out of range.
    """
    check_range("eps", eps, low=0.0, high=1.0, low_open=True, high_open=True)
    if float(eps) < EPS_MIN:  # the dimensions ∝ 1/eps² would overflow or divide by an underflowed 0
        raise InputError(
            f"eps must be >= {EPS_MIN:g} (the dimensions the claims give grow as 1/eps², which must be "
            f"a finite number), got {eps!r}"
        )
    return float(eps)


#: Smallest ε taken: 1/ε² stays a finite float (about 1e300) and ε² is not rounded to 0.
EPS_MIN = 1e-150


def check_n(n: int) -> int:
    """n >= 2, else :class:`InputError`.

    Parameters
    ----------
    n : int
        Sequence length.

    Returns
    -------
    int

    Raises
    ------
    InputError
        An argument out of range.
    """
    check_range("n", n, low=2)
    return int(n)


def check_ks(ks: Iterable[int]) -> np.ndarray:
    """Sorted distinct k >= 1 as an int64 array of shape (m,), m >= 1.

    Parameters
    ----------
    ks : iterable of int
        Projection dimensions, in any order, repeats allowed.

    Returns
    -------
    numpy.ndarray of int64, shape (m,)

    Raises
    ------
    InputError
        No value, or a k below 1.
    """
    arr = np.asarray(sorted({int(k) for k in ks}), dtype=np.int64)
    if arr.size == 0:
        raise InputError("k must hold at least one value, got none")
    for k in arr:
        check_range("k", int(k), low=1)
    return arr


def _c_eps(eps: float) -> float:
    """The exponent rate c(ε) = (ε² − ε³)/4 of Lemma 1's bounds, ε in (0, 1)."""
    return (eps * eps - eps**3) / 4.0


# ----------------------------------------------------------------------------- dimensions


def linformer_k(n: int, eps: float) -> float:
    """Theorem 1's dimension k = 5 ln(n) / (ε² − ε³) (natural log).

    Parameters
    ----------
    n : int
        Sequence length, >= 2.
    eps : float
        Distortion, in (0, 1).

    Returns
    -------
    float
        Not rounded; 4621.0 at n = 4096, ε = 0.1 (above n).

    Example
    -------
    >>> round(linformer_k(4096, 0.1), 1)
    4621.0
    """
    check_n(n)
    check_eps(eps)
    return 5.0 * math.log(n) / (eps * eps - eps**3)


def appendix_a_k(n: int) -> int:
    """Appendix A, eq. (18): "when k = log(n)", as an integer dimension ⌈ln n⌉ (at least 1).

    Parameters
    ----------
    n : int
        Sequence length, >= 2.

    Returns
    -------
    int
    """
    check_n(n)
    return max(1, int(math.ceil(math.log(n))))


#: Theorem 2's dimension formulas: name → (where, formula text, pairs its union bound needs,
#: the formula of (n, d, ε), not rounded; the Θ constants of the main text taken as 1).
THEOREM2_FORMULAS: dict[str, tuple[str, str, str, Callable[[int, int, float], float]]] = {
    "main-d": ("Theorem 2 (main text)", "9 d ln(d)/eps^2", "2d*d", lambda n, d, e: 9.0 * d * math.log(d) / e**2),
    "main-n": ("Theorem 2 (main text)", "5 ln(n)/eps^2", "n*d", lambda n, d, e: 5.0 * math.log(n) / e**2),
    "appendix-d": (
        "Appendix B, before eq. (25)",
        "9 ln(d)/(eps^2 - eps^3)",
        "2d*d",
        lambda n, d, e: 9.0 * math.log(d) / (e * e - e**3),
    ),
    "eq24-nd": (
        "Appendix B, after eq. (24)",
        "5 ln(nd)/(eps^2 - eps^3)",
        "n*d",
        lambda n, d, e: 5.0 * math.log(n * d) / (e * e - e**3),
    ),
}


def theorem2_k(formula: str, n: int, d: int, eps: float) -> float:
    """One of Theorem 2's k formulas (:data:`THEOREM2_FORMULAS`), not rounded.

    Parameters
    ----------
    formula : {"main-d", "main-n", "appendix-d", "eq24-nd"}
        The formula's name.
    n : int
        Sequence length, >= 2.
    d : int
        Head dimension, >= 2.
    eps : float
        Distortion ε, in (0, 1).

    Returns
    -------
    float
    """
    if formula not in THEOREM2_FORMULAS:
        raise InputError(f"formula must be one of {', '.join(THEOREM2_FORMULAS)}, got {formula!r}")
    check_n(n)
    check_eps(eps)
    check_range("d", d, low=2)
    return THEOREM2_FORMULAS[formula][3](n, d, eps)


def theorem2_k_main(n: int, d: int, eps: float) -> float:
    """The main text's printed min{9 d ln(d)/ε², 5 ln(n)/ε²} (Θ constants taken as 1).

    The minimum hides that the two terms come from different arguments; the battery
    reports each formula (:func:`theorem2_formulas`) and uses this only for its sweep.

    Parameters
    ----------
    n : int
        Sequence length, >= 2.
    d : int
        Head dimension, >= 2.
    eps : float
        Distortion ε, in (0, 1).

    Returns
    -------
    float
        Not rounded.
    """
    return min(theorem2_k("main-d", n, d, eps), theorem2_k("main-n", n, d, eps))


def sklearn_min_dim(n: int, eps: float) -> int:
    """scikit-learn's ``johnson_lindenstrauss_min_dim``: 4 ln(n) / (ε²/2 − ε³/3), truncated.

    Computed as sklearn.random_projection computes it (``4 * np.log(n) / denominator``, cast to
    int64) rather than by importing scikit-learn, which costs a second of every jl-check's start;
    tests/unit/test_jl.py compares the two over a grid of n and ε.

    Parameters
    ----------
    n : int
        Number of points, >= 2.
    eps : float
        Distortion ε, in (0, 1).

    Returns
    -------
    int
    """
    check_n(n)
    check_eps(eps)
    denominator = (eps**2 / 2) - (eps**3 / 3)
    return int((4 * np.log(n) / denominator).astype(np.int64))


def union_bound_min_k(n: int, eps: float, pairs: int | None = None) -> int:
    """Smallest k with 2·pairs·e^{−c(ε)k} < 1.

    Parameters
    ----------
    n : int
        Sequence length; the default number of pairs (Theorem 1's eq. 20).
    eps : float
    pairs : int, optional
        The size of the union (n·d for eq. 24, 2d·d for eq. 25).

    Returns
    -------
    int
    """
    check_eps(eps)
    m = n if pairs is None else pairs
    return int(math.floor(math.log(2 * m) / _c_eps(eps))) + 1


#: The ε that maximises ε² − ε³, so c(ε) = (ε² − ε³)/4 = 1/27, the rate of every bound.
EPS_FASTEST = 2.0 / 3.0


def theorem1_decisive_from() -> int:
    """The smallest n at which some ε gives a k < n with Theorem 1's union bound
    2n·e^{−c(ε)k} < 1 (eq. 20): at ε = 2/3, where c(ε) is largest, ``union_bound_min_k(n, 2/3)
    <= n − 1``. Below it every row of Theorem 1 at k < n is vacuous, whatever ε.

    Returns
    -------
    int
        That n, found by counting up from n = 2.

    Example
    -------
    >>> theorem1_decisive_from()
    157
    """
    n = 2
    while union_bound_min_k(n, EPS_FASTEST) > n - 1:
        n += 1
    return n


def dimensions(n: int, eps: float, d: int = 64) -> dict[str, float]:
    """Every dimension formula of the paper (and scikit-learn's), by name, for meta.json and the report.

    Parameters
    ----------
    n : int
    eps : float
    d : int
        Head dimension (Theorem 2).

    Returns
    -------
    dict of str to float
        ``linformer_k``, ``appendix_a_k``, ``theorem2_k_main`` (the printed min) and each of
        its terms, the two appendix forms, ``sklearn_min_dim``, ``theorem1_union_bound_min_k``.
    """
    return {
        "linformer_k": linformer_k(n, eps),
        "appendix_a_k": float(appendix_a_k(n)),
        "theorem2_k_main": theorem2_k_main(n, d, eps),
        "theorem2_k_main_d": theorem2_k("main-d", n, d, eps),
        "theorem2_k_main_n": theorem2_k("main-n", n, d, eps),
        "theorem2_k_appendix_nd": theorem2_k("eq24-nd", n, d, eps),
        "theorem2_k_appendix_d": theorem2_k("appendix-d", n, d, eps),
        "sklearn_min_dim": float(sklearn_min_dim(n, eps)),
        "theorem1_union_bound_min_k": float(union_bound_min_k(n, eps)),
    }


def theorem2_formulas(n: int, d: int, eps: float) -> dict[str, dict[str, float]]:
    """Each of Theorem 2's k formulas with the union bound of the argument it belongs to.

    The n-dependent formulas union eq. (21) over the n·d (row, column) pairs of A and V;
    the rank(A) = d ones over the 2d·d pairs of the submatrix A_s (eq. 25).

    Parameters
    ----------
    n : int
        Sequence length, >= 2.
    d : int
        Head dimension, >= 2.
    eps : float
        Distortion ε, in (0, 1).

    Returns
    -------
    dict
        reading → {"k": the formula's value, "pairs": the union's size, "union_bound":
        2·pairs·e^{−c(ε)⌈k⌉}}.
    """
    ks = {name: theorem2_k(name, n, d, eps) for name in THEOREM2_FORMULAS}
    pairs = {"2d*d": 2 * d * d, "n*d": n * d}
    out = {}
    for name, k in ks.items():
        m = pairs[THEOREM2_FORMULAS[name][2]]
        out[name] = {"k": k, "pairs": float(m), "union_bound": float(2.0 * m * math.exp(-_c_eps(eps) * math.ceil(k)))}
    return out


# ----------------------------------------------------------------------------- bounds


def lemma1_norm_bound(k: int | np.ndarray, eps: float) -> np.ndarray | float:
    """Eq. 11's failure bound e^{−(ε² − ε³)k/4}.

    Parameters
    ----------
    k : int or ndarray of shape (m,)
        Projection dimensions.
    eps : float
        Distortion, in (0, 1).

    Returns
    -------
    float or ndarray of shape (m,)
        The bound at each k.
    """
    check_eps(eps)
    return np.exp(-_c_eps(eps) * np.asarray(k, dtype=float))


def lemma1_inner_bound(k: int | np.ndarray, eps: float) -> np.ndarray | float:
    """Eq. 12's failure bound 2e^{−(ε² − ε³)k/4}.

    Parameters
    ----------
    k : int or ndarray of shape (m,)
        Projection dimensions.
    eps : float
        Distortion ε, in (0, 1).

    Returns
    -------
    float or ndarray of shape (m,)
        The bound at each k (may exceed 1).
    """
    return 2.0 * lemma1_norm_bound(k, eps)


def theorem1_union_bound(n: int, k: int | np.ndarray, eps: float) -> np.ndarray | float:
    """Eq. 20's failure bound 2n·e^{−(ε² − ε³)k/4} (may exceed 1: then it says nothing).

    Parameters
    ----------
    n : int
        Sequence length (the union runs over the n rows of P).
    k : int or ndarray of shape (m,)
    eps : float

    Returns
    -------
    float or ndarray of shape (m,)
    """
    return 2.0 * n * lemma1_norm_bound(k, eps)


def theorem2_union_bound(n: int, d: int, k: int | np.ndarray, eps: float) -> np.ndarray | float:
    """Union of eq. 21 over the n·d (row, column) pairs: 2nd·e^{−(ε² − ε³)k/4}.

    Parameters
    ----------
    n, d : int
        Sequence length and head dimension.
    k : int or ndarray of shape (m,)
    eps : float

    Returns
    -------
    float or ndarray of shape (m,)
    """
    return 2.0 * n * d * lemma1_norm_bound(k, eps)
