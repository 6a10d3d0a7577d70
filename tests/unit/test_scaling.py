"""Power-law fit of rank against sequence length: recovers known exponents, verdict thresholds."""

from __future__ import annotations

import numpy as np
import pytest

from attnspec.errors import InputError
from attnspec.spectra.scaling import cut_inputs, parse_lengths
from attnspec.spectra.scaling_fit import fit_per_input, verdict


def _synthetic(betas: list[float], lengths: list[int], m: int, seed: int) -> np.ndarray:
    """Per-input k = 3·n^β·(input effect)·(noise), shape (T, m, L)."""
    rng = np.random.default_rng(seed)
    n = np.asarray(lengths, dtype=float)[:, None, None]
    effect = np.exp(0.3 * rng.standard_normal((1, m, len(betas))))  # the same document at every n
    noise = np.exp(0.2 * rng.standard_normal((len(lengths), m, len(betas))))
    return 3.0 * n ** np.asarray(betas)[None, None, :] * effect * noise


def test_fit_recovers_known_exponents_and_reads_them() -> None:
    betas, lengths = [0.0, 0.5, 1.0], [32, 64, 128, 256, 512]
    fits = fit_per_input(lengths, _synthetic(betas, lengths, m=200, seed=1), resamples=500, seed=0)
    assert [f.layer for f in fits] == [0, 1, 2, -1]
    for f, true in zip(fits[:3], betas):
        assert f.low <= true <= f.high and abs(f.beta - true) < 0.05 and f.high - f.low < 0.1
    assert fits[0].verdict.startswith("does not grow")
    assert fits[1].verdict.startswith("grows with n, sublinearly")
    assert fits[2].verdict.startswith("grows about linearly")


def test_bootstrap_interval_covers_at_about_its_level() -> None:
    # 40 independent data sets with β = 0.3: a 95% interval misses with probability ~0.05,
    # so 40 trials miss more than 7 times with probability < 0.002 (binomial tail).
    lengths = [64, 128, 256]
    misses = 0
    for s in range(40):
        f = fit_per_input(lengths, _synthetic([0.3], lengths, m=60, seed=100 + s), resamples=300, seed=s)[0]
        misses += not f.low <= 0.3 <= f.high
    assert misses <= 7


def test_verdict_thresholds_and_bad_input() -> None:
    assert verdict(-0.1, 0.15).startswith("does not grow")
    assert verdict(0.1, 0.9).startswith("inconclusive")
    with pytest.raises(InputError, match="positive"):
        fit_per_input([32, 64], np.zeros((2, 3, 1)))
    with pytest.raises(InputError, match="2 lengths"):
        fit_per_input([32], np.ones((1, 3, 1)))
    assert parse_lengths("64, 128,512") == [64, 128, 512]
    for bad, msg in (
        ("64,x", "comma-separated"),
        ("64,64", "twice"),
        ("1,64", ">= 2"),
        ("64,,128", "empty item"),
        ("64,128,", "empty item"),
        ("512,64", "strictly increasing.*64,512"),
    ):
        with pytest.raises(InputError, match=msg):
            parse_lengths(bad)


def test_cut_inputs_keeps_the_documents_and_the_special_tokens() -> None:
    from attnspec.spectra.data.inputs import Inputs

    class Tok:  # a tokenizer whose template is [0] text [2]
        def num_special_tokens_to_add(self, pair: bool = False) -> int:
            return 2

        def __call__(self, text: str, add_special_tokens: bool = False) -> dict:
            return {"input_ids": [0, 7, 8, 2] if add_special_tokens else [7, 8]}

        def build_inputs_with_special_tokens(self, ids: list[int]) -> list[int]:
            return [0, *ids, 2]

    from attnspec.spectra.data.inputs import inputs_digest

    whole = [[0, 5, 6, 7, 8, 2], [0, 9, 2]]
    inputs = Inputs(input_ids=whole, meta={"seq_len": 6, "selection": "s", "inputs_sha256": inputs_digest(whole)})
    cut = cut_inputs(inputs, Tok(), 4)
    assert cut.input_ids == [[0, 5, 6, 2], [0, 9, 2]]
    assert cut.meta["seq_len"] == 4 and cut.meta["cut_from_seq_len"] == 6
    # the record describes the inputs that were run, not the longer ones they were cut from
    assert cut.meta["inputs_sha256"] == inputs_digest(cut.input_ids) != inputs.meta["inputs_sha256"]
