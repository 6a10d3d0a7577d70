"""The stopping rule of the OSA training comparison: patience on validation accuracy.

Every model is trained until its accuracy on a held-out validation split (carved from the
training split, never the test split) has not risen for ``patience`` consecutive
evaluations, or until the budget of ``epochs`` evaluations (one per epoch) is spent,
whichever comes first. The model that is reported is the checkpoint with the highest
validation accuracy (the earliest one among ties), so the test split plays no part in
when a run stops or which weights are kept.

``patience = 0`` switches the rule off: the run uses the whole budget and the last model
is reported, as the paper's Table 2 does ("final test accuracy ... after 10 epochs").
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from attnspec.errors import check_int

#: Why a run ended: the patience ran out, the budget was spent, or the loss was not finite.
STOP_REASONS: tuple[str, ...] = ("patience", "budget", "diverged")


@dataclass
class PatienceStop:
    """Track the best validation accuracy and say when to stop.

    Parameters
    ----------
    patience : int
        Evaluations without a strictly higher validation accuracy after which training
        stops (>= 0; 0 = never stop early).

    Attributes
    ----------
    best : float
        The highest validation accuracy seen (``-inf`` before the first evaluation).
    best_epoch : int
        The evaluation (epoch) at which ``best`` was first reached.
    since_best : int
        Evaluations since ``best_epoch``.
    """

    patience: int
    best: float = -math.inf
    best_epoch: int = -1
    since_best: int = 0

    def __post_init__(self) -> None:
        check_int("patience", self.patience, 0)

    def update(self, epoch: int, accuracy: float) -> bool:
        """Record the validation accuracy measured after ``epoch``; True if it is a new best.

        Only a strictly higher accuracy counts: on a plateau the earliest checkpoint is kept
        and the patience keeps running out. A NaN accuracy is never a new best.

        Parameters
        ----------
        epoch : int
            The epoch just finished.
        accuracy : float
            Its validation accuracy.

        Returns
        -------
        bool
        """
        if accuracy > self.best:  # False for NaN
            self.best, self.best_epoch, self.since_best = float(accuracy), int(epoch), 0
            return True
        self.since_best += 1
        return False

    @property
    def exhausted(self) -> bool:
        """True once ``patience`` evaluations in a row brought no new best (never for patience 0)."""
        return self.patience > 0 and self.since_best >= self.patience
