"""Where a run's cumulative curve is read, and what a run's recorded input lengths say about it.

Light on purpose (no torch): the CLI, the plots and the figure record use it without the engine.
"""

from __future__ import annotations

from typing import Any

from attnspec.errors import InputError

#: The level at which the "index where the mean curve reaches" metric is read.
REACH_LEVEL = 0.9


def first_reach(curves: Any, level: float = REACH_LEVEL) -> Any:
    """1-based first index i with c_i >= level, along the last axis, of a NumPy array or a
    torch tensor alike (plotting saved curves needs no torch).

    Parameters
    ----------
    curves : numpy.ndarray or torch.Tensor, shape (..., n)
        Non-decreasing curves; 1e-12 of slack below ``level`` absorbs rounding in them.
    level : float
        The level to reach.

    Returns
    -------
    numpy.ndarray or torch.Tensor of int, shape (...)
        The index, in 1..n (n + 1 when a curve never reaches ``level``), of the input's kind.
    """
    return (curves < level - 1e-12).sum(-1) + 1


#: Linformer's Figure 1 reads the cumulative curve at index 128 of n = 512.
PAPER_READING = (128, 512)


def default_at(seq_len: int) -> int:
    """The index at which a cumulative curve of length n is read: 128 when n = 512 (the
    paper's reading point), else n / 4 (rounded, at least 1).

    Parameters
    ----------
    seq_len : int
        The curve's length n.

    Returns
    -------
    int
    """
    at, n = PAPER_READING
    return at if seq_len == n else max(1, round(seq_len / 4))


def check_at(at: int, seq_len: int, name: str = "--at") -> int:
    """``at`` an integer (not a bool, a float or a string) in 1..n, else :class:`InputError` naming it.

    Parameters
    ----------
    at : int
        The index.
    seq_len : int
        The curve's length n.
    name : str
        The option or parameter named by the message.

    Returns
    -------
    int
        ``at``.
    """
    import numbers

    if isinstance(at, bool) or not isinstance(at, numbers.Integral):
        raise InputError(f"{name} must be an integer index in 1..{seq_len}, got {at!r}")
    if not 1 <= at <= seq_len:
        raise InputError(f"{name} must be in 1..{seq_len} (the run's seq_len), got {at!r}")
    return int(at)


def short_input_note(meta: dict[str, Any], at: int) -> str | None:
    """Why c_at is not defined for a run, or None when it is.

    A matrix shorter than the run's seq_len counts as zero-extended: its cumulative curve
    is 1 past its real length by construction, not by measurement. c_at is defined only
    when every input has at least ``at`` tokens (``meta["corpus"]["input_lengths"]``).

    Parameters
    ----------
    meta : dict
        The run's meta.json (its ``corpus.input_lengths``).
    at : int
        The index read.

    Returns
    -------
    str or None
        One sentence; None when c_at is defined (or the lengths were not recorded).
    """
    lengths = (meta.get("corpus") or {}).get("input_lengths") or {}
    shortest = lengths.get("min")
    if isinstance(shortest, (int, float)) and shortest < at:
        return (
            f"c_{at} is not defined: the shortest input has {int(shortest)} tokens (lengths "
            f"{lengths_text(meta)}), and a curve is 1 past its input's length by construction"
        )
    return None


def lengths_text(meta: dict[str, Any]) -> str:
    """``"min 18, median 20, max 22"`` of a run's real input lengths ("" when not recorded).

    Parameters
    ----------
    meta : dict
        The run's meta.json (its ``corpus.input_lengths``).

    Returns
    -------
    str
    """
    lengths = (meta.get("corpus") or {}).get("input_lengths") or {}
    return ", ".join(
        f"{k} {lengths[k]:g}" for k in ("min", "median", "max") if isinstance(lengths.get(k), (int, float))
    )


# How a scaling study's fitted exponent β (metric ∝ n^β) is read: the plots and the report
# read these with the saved fits, the study computes with them.
#: β below this (whole interval) reads "does not grow with n"; above LINEAR (whole
#: interval) reads "grows about linearly with n".
NO_GROWTH_BELOW = 0.2
LINEAR_ABOVE = 0.8
#: Per-input columns fitted against n, with their labels.
FITTED: dict[str, str] = {
    "reach_index": "k90 (index where the curve reaches 0.9)",
    "rank_for_error_0.1": "rank for relative Frobenius error <= 0.1",
    "rank_for_error_0.2": "rank for relative Frobenius error <= 0.2",
}
