"""Curtailment of a threshold test (attnspec.theorem.sequential): stopping where the rest of
the trials cannot change the answer gives the answer of all of them, on the same draws."""

from __future__ import annotations

import numpy as np
import pytest

from attnspec.theorem.sequential import curtailed, threshold_passed


@pytest.mark.parametrize("rate", [0.5, 0.85, 0.9, 0.95, 1.0])
def test_a_curtailed_test_answers_as_the_full_one(rate: float) -> None:
    rng = np.random.default_rng(7)
    trials, batch, target = 40, 5, 0.9
    for _ in range(200):
        ok = rng.random(trials) < rate  # (trials,) successes, drawn in batches of `batch`
        drawn = batch
        while drawn < trials and not curtailed(int(ok[:drawn].sum()), drawn, trials, target):
            drawn += batch
        assert threshold_passed(int(ok[:drawn].sum()), drawn, trials, target) == (ok.mean() >= target)


def test_curtailment_needs_the_answer_settled() -> None:
    # 36 of 40 needed: 36 successes in 36 draws pass, 5 failures in 5 draws fail, 31/35 is open
    assert curtailed(36, 36, 40, 0.9)
    assert curtailed(0, 5, 40, 0.9)
    assert not curtailed(31, 35, 40, 0.9)
    assert not threshold_passed(31, 35, 40, 0.9)
