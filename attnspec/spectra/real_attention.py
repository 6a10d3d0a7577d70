"""Real attention matrices for the theory checks: load a model and a corpus, capture P, pick some.

This sits above :mod:`attnspec.spectra.models`, :mod:`attnspec.spectra.data` and :mod:`attnspec.spectra.capture`
(which import none of it), and below :mod:`attnspec.battery`, which calls it for a battery
that requests real attention; theory modules never import it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from attnspec.errors import InputError

if TYPE_CHECKING:  # pragma: no cover
    import torch


def sample_attention(
    model: str,
    data: str,
    *,
    seq_len: int,
    count: int,
    seed: int,
    data_dir: str | None = None,
    device: str = "cpu",
    split: str | None = None,
) -> torch.Tensor:
    """``count`` real attention matrices, pooled over inputs, layers and heads.

    Loads ``model`` and draws just enough inputs of ``seq_len`` tokens from ``data`` to
    supply ``count`` distinct (input, layer, head) triples, then picks ``count`` of them
    uniformly without replacement with a generator seeded by ``seed``.

    Parameters
    ----------
    model : str
        A model name or alias (``"minilm"``), as :func:`attnspec.spectra.models.load_model` takes.
    data : str
        A corpus (``"wiki103"``, ``"imdb"``) or a path, as :func:`attnspec.spectra.data.inputs.load_inputs` takes.
    seq_len : int
        n: tokens per input, special tokens included.
    count : int
        Matrices to return, >= 1.
    seed : int
        Seed of the inputs drawn and of the matrices picked.
    data_dir : str, optional
    device : str
    split : str, optional

    Returns
    -------
    Tensor, shape (count, seq_len, seq_len), float64, rows summing to 1.
    """
    import numpy as np
    import torch

    from attnspec.spectra.capture import LayerAttention, capture_attention
    from attnspec.spectra.data.inputs import load_inputs
    from attnspec.spectra.shared_models import shared_model

    if count < 1:
        raise InputError(f"count must be >= 1, got {count}")
    enc = shared_model(model, device=device)
    per_input = enc.num_layers * enc.num_heads
    num_inputs = -(-count // per_input)  # exact for any integer (a float ceiling is not, past 2**53)
    inputs = load_inputs(
        data,
        enc.tokenizer,
        seq_len=seq_len,
        num_inputs=num_inputs,
        seed=seed,
        split=split,
        data_dir=data_dir,
        short_policy="skip",
    )
    pool: list[torch.Tensor] = []

    def keep(la: LayerAttention) -> None:
        pool.append(la.probs.to(torch.float64).cpu())  # (B, H, n, n)

    with capture_attention(enc.model, keep) as cap:
        for ids in inputs.input_ids:
            cap.forward(torch.tensor([ids], device=enc.device))
    stacked = torch.cat([p.reshape(-1, seq_len, seq_len) for p in pool])  # (inputs*layers*heads, n, n)
    pick = np.random.default_rng(seed).choice(stacked.shape[0], size=count, replace=False)
    return stacked[torch.as_tensor(np.sort(pick))]
