"""Null baselines: what the spectrum of P looks like by chance, beside every spectrum result.

A low-rank reading of real attention ("k90 ≈ 0.3 n", "β ≈ 1") means something only next to
what a P with no learned structure gives. Two nulls, each computed per (layer, head) with
the head's own shape (length n, causal mask, sliding window):

* ``entropy-matched`` — P = softmax(σ·G) row by row over the positions the head may attend
  to, G with i.i.d. N(0, 1) entries, and σ chosen per (layer, head) so that the mean
  normalised row entropy (:func:`attnspec.spectra.metrics.row_entropy`) equals the head's
  measured mean row entropy. For fixed G the entropy of every row decreases in σ
  (dH/dσ = −σ·Var_p(g) ≤ 0), so σ is read off a calibration curve H(σ) measured on separate
  draws of the same shape; the entropy each head's null actually reaches is recorded beside
  its target. ``draws`` independent matrices per (layer, head) (seeded, recorded).
* ``uniform`` — every row uniform over its allowed positions: (1/n)·11ᵀ for bidirectional
  attention (rank 1, k90 = 1), the lower-triangular matrix with rows 1/(i+1) for causal
  attention (within the window for a sliding window). Deterministic: one matrix per layer.

Each null goes through the same accumulator as real P (:class:`SpectrumAccumulator`), so its
curves, metrics and per-draw summaries are the tables of a spectrum run with a ``baseline``
column: ``baseline_spectrum``, ``baseline_metrics``, ``baseline_inputs`` (an "input" of a null
is a draw) in the run's own folder; meta.json records ``baselines`` (names, seed, draws, the
entropy match reached).

A third null, ``random-init`` (the same architecture, tokenizer and inputs with re-initialised
weights, :mod:`attnspec.spectra.random_init`), needs the model: :func:`add_to_study` computes
it with the others.

Every null goes through one protocol (:class:`attnspec.spectra.nulls.Null`): the two above
are samplers (:func:`entropy_matched_matrices`, :func:`uniform_matrices`) that take a
:class:`NullRequest` (n, causal mask, window, heads, layer, draw, seed, the heads' row
entropy) and return one layer's matrices; a null added with
:func:`attnspec.spectra.nulls.register_null` and its own sampler is computed, saved, fitted
and plotted like them.

What this does not test: the random nulls are P matrices of the full length n; real inputs
shorter than n (``--short-policy keep``) are compared with a null of length n.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import torch

from attnspec.errors import InputError, ResultsError
from attnspec.spectra.nulls import BASELINES, NULLS, needs_model, parse_baselines

#: Independent matrices per (layer, head) of a random null (the uniform null has one per layer).
DEFAULT_DRAWS = 8
#: The calibration grid of the logit scale σ (σ = 0 is the uniform row, entropy 1).
_SIGMAS = np.concatenate([[0.0], np.logspace(-2, 2.5, 91)])
#: Matrices the calibration curve H(σ) is averaged over.
_CALIBRATION_DRAWS = 2


def allowed_positions(n: int, causal: bool, window: int | None) -> torch.Tensor:
    """(n, n) bool: True where row i may attend to column j (all; j <= i; i − w < j <= i).

    Parameters
    ----------
    n : int
        Sequence length.
    causal : bool
        Row i attends to j <= i only.
    window : int, optional
        The causal sliding window w (row i attends to i − w < j <= i); None: no window.

    Returns
    -------
    torch.Tensor of bool, shape (n, n)
    """
    i = torch.arange(n)[:, None]
    j = torch.arange(n)[None, :]
    allowed = torch.ones(n, n, dtype=torch.bool)
    if causal:
        allowed &= j <= i
        if window is not None:
            allowed &= j > i - window
    return allowed


def uniform_matrix(n: int, causal: bool, window: int | None) -> torch.Tensor:
    """(n, n) float64: every row uniform over its allowed positions.

    Parameters
    ----------
    n : int
        Sequence length.
    causal : bool
        Row i attends to j <= i only.
    window : int, optional
        The causal sliding window w (row i attends to i − w < j <= i); None: no window.

    Returns
    -------
    torch.Tensor of float64, shape (n, n)
    """
    allowed = allowed_positions(n, causal, window).to(torch.float64)
    return allowed / allowed.sum(dim=1, keepdim=True)


def softmax_null(logits: torch.Tensor, sigma: torch.Tensor, allowed: torch.Tensor) -> torch.Tensor:
    """Row softmax of σ·G over the allowed positions.

    Parameters
    ----------
    logits : torch.Tensor, shape (..., H, n, n)
        The Gaussian logits G.
    sigma : torch.Tensor, shape (H,) or ()
        The scale per head, or one for all.
    allowed : torch.Tensor of bool, shape (n, n)
        :func:`allowed_positions`.

    Returns
    -------
    torch.Tensor, shape (..., H, n, n)
        P, zero outside ``allowed``.
    """
    s = sigma.to(logits.dtype).reshape(-1, 1, 1) if sigma.dim() else sigma.to(logits.dtype)
    z = (logits * s).masked_fill(~allowed, float("-inf"))  # (..., H, n, n)
    return torch.softmax(z, dim=-1)


def calibration_curve(n: int, causal: bool, window: int | None, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """H(σ): mean normalised row entropy of softmax(σ·G) on the grid :data:`_SIGMAS`.

    Averaged over :data:`_CALIBRATION_DRAWS` matrices drawn for this shape only (not the
    matrices whose spectrum is taken).

    Parameters
    ----------
    n : int
        Sequence length.
    causal : bool
        Row i attends to j <= i only.
    window : int, optional
        The causal sliding window w (row i attends to i − w < j <= i); None: no window.
    seed : int
        The run's seed (the calibration's draws come from a child seed of it).

    Returns
    -------
    sigmas : numpy.ndarray
        The σ grid.
    entropy : numpy.ndarray
        H at each σ, non-increasing.
    """
    from attnspec.numerics.stats import child_seed, torch_generator
    from attnspec.spectra.metrics import row_entropy

    g = torch_generator(child_seed(seed, "entropy-matched", "calibration", n, causal, window))
    logits = torch.randn(_CALIBRATION_DRAWS, 1, n, n, generator=g)  # (D, 1, n, n)
    allowed = allowed_positions(n, causal, window)
    ent = np.empty(_SIGMAS.size)
    for i, s in enumerate(_SIGMAS):
        p = softmax_null(logits, torch.tensor(float(s)), allowed)
        ent[i] = float(row_entropy(p, causal=causal, window=window).mean())
    return _SIGMAS, np.minimum.accumulate(ent)  # monotone in exact arithmetic; rounding made so


def scale_for(target: np.ndarray, sigmas: np.ndarray, entropy: np.ndarray) -> np.ndarray:
    """σ with H(σ) = target by linear interpolation of the calibration curve (any shape).

    A target at or above H(0) = 1 gives σ = 0 (uniform rows); one below the grid's lowest
    entropy gives the grid's largest σ, and the entropy reached says so (it is recorded).

    Parameters
    ----------
    target : numpy.ndarray
        The row entropies to match.
    sigmas, entropy : numpy.ndarray
        :func:`calibration_curve`'s grid and entropies.

    Returns
    -------
    numpy.ndarray
        σ for each target, of ``target``'s shape.
    """
    t = np.asarray(target, dtype=float)
    # np.interp needs increasing x: entropy decreases along the grid, so read it reversed
    return np.interp(t, entropy[::-1], sigmas[::-1], left=sigmas[-1], right=0.0)


@dataclass(frozen=True)
class NullRequest:
    """What a null's sampler draws: one layer's (1, H, n, n) matrices.

    Attributes
    ----------
    name : str
        The null's name (child seeds are keyed by it).
    n : int
        The matrices' size.
    causal : bool
        Row i attends to j <= i only.
    window : int or None
        The causal sliding window w (row i attends to i − w < j <= i); None: no window.
    heads : int
        H.
    layer : int
        The layer, 0-based.
    draw : int
        Which draw, 0-based (always 0 for a deterministic null).
    seed : int
        The nulls' seed.
    targets : numpy.ndarray, shape (H,)
        The real heads' mean normalised row entropy at this layer (NaN where the run has none).
    cache : dict
        Shared by every call of one null at one length: per-shape work (a calibration curve).
    """

    name: str
    n: int
    causal: bool
    window: int | None
    heads: int
    layer: int
    draw: int
    seed: int
    targets: np.ndarray
    cache: dict[Any, Any] = field(default_factory=dict)


#: A sampler: request → (P of shape (1, H, n, n), the per-head logit scale (H,) or None).
Sampler = Callable[[NullRequest], tuple[torch.Tensor, np.ndarray | None]]


def entropy_matched_matrices(request: NullRequest) -> tuple[torch.Tensor, np.ndarray]:
    """The entropy-matched null's sampler: softmax(σ_h·G) with σ_h matched to head h's row entropy.

    Parameters
    ----------
    request : NullRequest
        The layer, its shape and draw, and the heads' row entropy.

    Returns
    -------
    (torch.Tensor, numpy.ndarray)
        P of shape (1, H, n, n), and σ (H,).

    Raises
    ------
    ResultsError
        A head without row entropy.
    """
    from attnspec.numerics.stats import child_seed, torch_generator

    r = request
    if not np.all(np.isfinite(r.targets)):
        raise ResultsError("the run has no row entropy for every head; the entropy-matched null needs it")
    shape = (r.n, r.causal, r.window)
    if shape not in r.cache:
        r.cache[shape] = calibration_curve(*shape, seed=r.seed)
    scales = scale_for(r.targets, *r.cache[shape])  # (H,)
    g = torch_generator(child_seed(r.seed, r.name, r.n, r.draw, r.layer))
    logits = torch.randn(1, r.heads, r.n, r.n, generator=g)  # (1, H, n, n)
    return softmax_null(logits, torch.from_numpy(scales), allowed_positions(*shape)), scales


def uniform_matrices(request: NullRequest) -> tuple[torch.Tensor, None]:
    """The uniform null's sampler: every row uniform over its allowed positions, every head alike.

    Parameters
    ----------
    request : NullRequest
        The layer's shape.

    Returns
    -------
    (torch.Tensor, None)
        P of shape (1, H, n, n); no logit scale.
    """
    r = request
    return uniform_matrix(r.n, r.causal, r.window).expand(1, r.heads, r.n, r.n), None  # (1, H, n, n)


def sampler_of(name: str) -> Sampler:
    """The sampler a null names (``"module:function"``, imported now).

    Parameters
    ----------
    name : str
        A registered null that does not need the model.

    Returns
    -------
    callable
        :data:`Sampler`.

    Raises
    ------
    InputError
        An unknown null, one that needs the model, or a sampler that cannot be imported.
    """
    drawable = [b for b in BASELINES if not needs_model(b)]
    if name not in NULLS or NULLS[name].sampler is None:
        raise InputError(f"baseline must be one of {', '.join(drawable)}, got {name!r}")
    module, _, function = str(NULLS[name].sampler).partition(":")
    try:
        return getattr(importlib.import_module(module), function)
    except (ImportError, AttributeError) as e:
        raise InputError(
            f"the null {name!r} names the sampler {NULLS[name].sampler!r}, which cannot be imported: {e}"
        ) from None


def _layer_facts(meta: dict[str, Any]) -> tuple[list[bool], list[int | None]]:
    """Per layer: causal (lower-triangular P) and the sliding window, from a run's meta.json."""
    from attnspec.spectra.kinds import DECODER_SELF

    layers = meta.get("layers") or []
    L = int(meta.get("num_layers") or len(layers))
    if len(layers) != L:
        causal = [bool(meta.get("causal"))] * L
        return causal, [None] * L
    return [str(d.get("kind")) == DECODER_SELF for d in layers], [d.get("sliding_window") for d in layers]


def null_accumulator(
    name: str,
    targets: np.ndarray,
    seq_len: int,
    layer_causal: Sequence[bool],
    windows: Sequence[int | None],
    *,
    seed: int,
    draws: int = DEFAULT_DRAWS,
    method: str = "auto",
) -> tuple[Any, pd.DataFrame]:
    """The aggregate of one null at length ``seq_len``, and per (layer, head) how it was matched.

    Parameters
    ----------
    name : str
        A registered null with a sampler (:data:`attnspec.spectra.nulls.NULLS`).
    targets : array, shape (L, H)
        The real heads' mean normalised row entropy (used by ``entropy-matched``).
    seq_len : int
        n, the matrices' size.
    layer_causal, windows : sequences of length L
        Each layer's causal flag and sliding window.
    seed, draws, method
        Seed of the draws, matrices per (layer, head), singular-value engine.

    Returns
    -------
    (SpectrumAccumulator of shape (L, H, n) holding ``draws`` "inputs" (1 for uniform),
    DataFrame with ``layer``, ``head``, ``target_row_entropy``, ``logit_scale``).
    """
    from attnspec.spectra.aggregate import SpectrumAccumulator
    from attnspec.spectra.engine import singular_values
    from attnspec.spectra.metrics import row_entropy

    sampler = sampler_of(name)
    targets = np.asarray(targets, dtype=float)
    L, H = targets.shape
    n = int(seq_len)
    acc = SpectrumAccumulator(L, H, n)
    scales = np.full((L, H), np.nan)  # the sampler's per-head logit scale, where it has one
    cache: dict[Any, Any] = {}
    for d in range(1 if NULLS[name].deterministic else int(draws)):
        items = []
        for layer in range(L):
            causal, window = bool(layer_causal[layer]), windows[layer]
            request = NullRequest(name, n, causal, window, H, layer, d, int(seed), targets[layer], cache)
            p, scale = sampler(request)  # (1, H, n, n), (H,) or None
            if scale is not None:
                scales[layer] = scale
            items.append((layer, singular_values(p, method), row_entropy(p, causal=causal, window=window)))
        acc.add_batch(items, [d])
    layer, head = np.meshgrid(np.arange(L), np.arange(H), indexing="ij")
    how = pd.DataFrame(
        {
            "layer": layer.ravel(),
            "head": head.ravel(),
            "target_row_entropy": targets.ravel(),
            "logit_scale": scales.ravel(),
        }
    )
    return acc, how


def missing(run: Path, names: Sequence[str], *, draws: int = DEFAULT_DRAWS) -> list[str]:
    """The nulls of ``names`` a complete run does not hold yet (with its seed and ``draws``).

    Parameters
    ----------
    run : Path
        A spectrum results directory.
    names : sequence of str
        Null baseline names.
    draws : int
        The draws per null wanted; nulls held with other draws or another seed count as missing.

    Returns
    -------
    list of str
        The names missing, in the order given.
    """
    from attnspec.storage.results import read_meta

    recorded = read_meta(Path(run)).get("baselines") or {}
    same = (recorded.get("seed"), recorded.get("draws")) == (read_meta(Path(run)).get("seed", 0), draws)
    have = set(recorded.get("names") or []) if same else set()
    return [b for b in names if b not in have]


def add_baselines(
    run: Path,
    names: Sequence[str],
    *,
    seed: int | None = None,
    draws: int = DEFAULT_DRAWS,
    model_tables: dict[str, pd.DataFrame] | None = None,
) -> list[str]:
    """Compute the nulls ``names`` of a complete spectrum run and write them beside its tables.

    Writes ``baseline_spectrum``, ``baseline_metrics`` (with ``target_row_entropy``,
    ``logit_scale``) and ``baseline_inputs`` (one row per draw and layer) and records
    ``baselines`` in meta.json, all as one result. Nulls the run already holds with the same
    seed and draws are kept, not recomputed. ``seed`` defaults to the run's seed.
    ``model_tables``: the ``random-init`` null's spectrum, metrics and inputs tables at this
    run's length (:func:`attnspec.spectra.random_init.random_init_tables`), needed when it is
    asked for and not held yet. The caller holds the run's output lock.

    Parameters
    ----------
    run : Path
        A complete spectrum results directory.
    names : sequence of str
        Null baseline names.
    seed : int, optional
        Seed of the nulls' draws (default: the run's seed).
    draws : int
        Matrices drawn per null and layer.
    model_tables : dict of str to pandas.DataFrame, optional
        The random-init null's tables at this run's length.

    Returns
    -------
    list of str
        The names the run now holds.
    """
    from attnspec.spectra.engine import METHODS
    from attnspec.storage.results import (
        read_meta,
        read_table,
        result_files,
        write_meta,
        write_table,
    )

    names = parse_baselines(list(names))
    run = Path(run)
    meta = read_meta(run)
    if meta.get("status") != "complete":
        raise ResultsError(f"{run} holds a {meta.get('status')} run; null baselines are computed for complete runs")
    seed = int(meta.get("seed", 0)) if seed is None else int(seed)
    recorded = meta.get("baselines") or {}
    have = list(recorded.get("names") or []) if (recorded.get("seed"), recorded.get("draws")) == (seed, draws) else []
    todo = [b for b in names if b not in have]
    if not todo:
        return have
    metrics = read_table(run, "metrics")
    n = int(meta["identity"]["seq_len"])
    L, H = int(metrics["layer"].max()) + 1, int(metrics["head"].max()) + 1
    targets = np.full((L, H), np.nan)
    if "row_entropy_mean" in metrics:
        targets[metrics["layer"].to_numpy(), metrics["head"].to_numpy()] = metrics["row_entropy_mean"].to_numpy()
    causal, windows = _layer_facts(meta)
    method = meta.get("svd_method") if meta.get("svd_method") in METHODS else "auto"
    frames: dict[str, list[pd.DataFrame]] = {"spectrum": [], "metrics": [], "inputs": []}
    if have:  # keep what is there: the tables hold every null together
        for t in frames:
            frames[t].append(read_table(run, f"baseline_{t}"))
    matched: dict[str, Any] = dict(recorded.get("entropy_match") or {}) if have else {}
    for name in todo:
        if needs_model(name):
            if model_tables is None:
                raise ResultsError(
                    f"the {name} null needs the model: it is computed with the run "
                    f"(attnspec spectrum ... --baseline {name}), not from {run}'s saved tables"
                )
            new = {t: model_tables[t] for t in ("spectrum", "metrics", "inputs")}
        else:
            acc, how = null_accumulator(name, targets, n, causal, windows, seed=seed, draws=draws, method=method)
            tables = acc.tables()
            new = {
                "spectrum": tables.spectrum,
                "metrics": tables.metrics.merge(how, on=["layer", "head"]),
                "inputs": tables.inputs,
            }
        for t, frame in new.items():
            frames[t].append(frame.assign(baseline=name)[["baseline", *frame.columns]])
        m = new["metrics"]
        if "logit_scale" in m and m["logit_scale"].notna().any():  # fitted to the heads' row entropy
            err = (m["row_entropy_mean"] - m["target_row_entropy"]).abs()
            matched = {"max_abs_error": float(err.max()), "mean_abs_error": float(err.mean())}
    done = have + todo
    inputs_done = int(meta.get("inputs_done") or 0)
    per_head = {b: 1 if NULLS[b].deterministic else inputs_done if needs_model(b) else draws for b in done}
    record = {
        "names": done,
        "seed": seed,
        "draws": draws,
        "matrices_per_head": per_head,
        "descriptions": {b: BASELINES[b] for b in done},
        "seq_len": n,
        **({"entropy_match": matched} if matched else {}),
    }
    with result_files(run):
        for t, parts in frames.items():
            write_table(run, f"baseline_{t}", pd.concat(parts, ignore_index=True))
        write_meta(run, {**meta, "baselines": record})
    return done


def add_to_study(
    cfg: Any,
    names: Sequence[str],
    *,
    lengths: Sequence[int] | None = None,
    encoder: Any | None = None,
    texts: list[str] | None = None,
) -> None:
    """The nulls ``names`` of a complete run (``cfg.out``) or scaling study (``lengths``: one run
    per length under ``cfg.out``), the random-init null included: its model is ``encoder``
    re-initialised (loaded from ``cfg.model`` when not given, and only when that null is
    missing; ``texts`` when the run was given texts). The caller holds ``cfg.out``'s lock.

    Parameters
    ----------
    cfg : SpectrumConfig
        The run's (or study's) config.
    names : sequence of str
        Null baseline names.
    lengths : sequence of int, optional
        The study's lengths; None (or one length) for a single run.
    encoder : LoadedModel, optional
        The model, already loaded.
    texts : list of str, optional
        The texts the run was given instead of a corpus.
    """
    from attnspec.spectra.scaling import run_dir

    names = parse_baselines(list(names))
    if not names:
        return
    several = lengths is not None and len(lengths) > 1
    runs = {n: run_dir(Path(cfg.out), n) for n in lengths} if several else {cfg.seq_len: Path(cfg.out)}
    tables: dict[int, dict[str, pd.DataFrame]] = {}
    if any(needs_model(b) for run in runs.values() for b in missing(run, names)):
        from attnspec.spectra.random_init import random_init_tables

        if encoder is None:
            from attnspec.spectra.shared_models import shared_model

            encoder = shared_model(cfg.model, device=cfg.device, dtype=cfg.dtype)
        tables = random_init_tables(cfg, encoder, list(lengths) if several else None, texts)
    for n, run in runs.items():
        add_baselines(run, names, model_tables=tables.get(n))
