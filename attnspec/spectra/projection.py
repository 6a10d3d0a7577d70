"""The quantity Linformer's method needs, measured on a model's real Q, K, V.

Linformer (Wang et al. 2020, Theorem 2 and Figure 3) replaces P V = softmax(Q Kᵀ/√d) V by
softmax(Q (E K)ᵀ/√d) (F V) with k × n projections E, F, and argues that k can stay fixed as n
grows. That claim is about the projected product, which uses V (rank d), not about the
spectrum of P alone. For each fixed k and growing n this module measures, per (input, layer,
head), on the model's own Q, K, V (captured with P through the attention-function registry):

* ``linformer_error`` = ‖softmax(Q (R K)ᵀ·s) (R V) − P V‖_F / ‖P V‖_F with E = F = R, a
  Gaussian Johnson–Lindenstrauss matrix (k × n, entries N(0, 1/k); not Theorem 2's E = δR,
  F = e^(−δ)R, which :mod:`attnspec.spectra.approx` applies), one R per
  (n, k, input, layer) shared by the layer's heads, and s the layer's own score scaling; a
  layer that adds a bias B to its scores (MPNet's relative position bias) has the projection
  applied to the whole score matrix, S Rᵀ = s·Q (R K)ᵀ + B Rᵀ;
* ``best_rank_error`` = ‖(P − P_k) V‖_F / ‖P V‖_F with P_k the best rank-k approximation of P
  (truncated SVD, computed as Σ_{i>k} σ_i² ‖w_iᵀV‖² from the eigenvectors w_i of PᵀP): the
  error of the best rank-k approximation of P applied to these V — a reference, since E and
  F act on K and V, not on P.

What this does not test: Linformer *trains* E and F; trained projections may do much better
than a random R. Causal (decoder) layers are left out: a projection along the sequence mixes
future positions into every row. Only real tokens are used (padding rows and columns cut).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from attnspec.errors import InputError, ModelLoadError

if TYPE_CHECKING:  # pragma: no cover
    # torch only where P is measured: reading a saved summary (plot scaling, the report) needs none
    import torch

#: Projection dimensions measured when none are given (Linformer's Figure 3 uses 128 and 256).
DEFAULT_KS: tuple[int, ...] = (64, 128, 256)
#: Inputs of the scaling study's selection the measurement runs on (the first ones, at every n).
DEFAULT_INPUTS = 8


def parse_ks(value: str | int | Sequence[int] | None) -> list[int]:
    """``"64,128,256"``, an int or a sequence → the projection dimensions (each >= 1, distinct);
    ``"none"`` or None → [].

    Parameters
    ----------
    value : str, int, sequence of int or None
        ``--projection-k``.

    Returns
    -------
    list of int

    Raises
    ------
    InputError
        A value that is not an integer >= 1, or a repeated one.
    """
    if value is None or (isinstance(value, str) and value.strip().lower() == "none"):
        return []
    try:
        items = (
            [int(value)]
            if isinstance(value, (int, np.integer)) and not isinstance(value, bool)
            else [int(t) for t in str(value).replace(" ", "").split(",")]
            if isinstance(value, str)
            else [int(t) for t in value]
        )
    except (TypeError, ValueError):
        raise InputError(
            f"--projection-k must be integers separated by commas (64,128,256) or none, got {value!r}"
        ) from None
    if not items or any(k < 1 for k in items) or len(set(items)) != len(items):
        raise InputError(f"--projection-k must be distinct integers >= 1 (64,128,256) or none, got {value!r}")
    return sorted(items)


def input_errors(
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    p: torch.Tensor,
    scaling: float,
    ks: Sequence[int],
    generators: Sequence[torch.Generator],
    bias: torch.Tensor | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Both relative errors of one input's layer, for every k.

    Parameters
    ----------
    q : Tensor (H, l, d)
        The queries.
    k, v : Tensor (H_kv, l, d)
        Keys and values, H a multiple of H_kv (grouped-query heads share their key and
        value head).
    p : Tensor (H, l, l)
        The layer's P on the real tokens.
    scaling : float
        The layer's score scaling s (scores = s·Q Kᵀ).
    ks : sequence of int, each < l
    generators : one torch.Generator per k (R's seed).
    bias : Tensor (H, l, l), optional
        The additive score bias B of the layer (P = softmax(s·Q Kᵀ + B)); projected with
        the keys: S Rᵀ = s·Q (R K)ᵀ + B Rᵀ.

    Returns
    -------
    (linformer_error, best_rank_error), each (len(ks), H) float64.
    """
    import torch

    H, l = p.shape[0], p.shape[-1]
    rep = H // k.shape[0]
    k64 = k.double().repeat_interleave(rep, dim=0)  # (H, l, d)
    v64 = v.double().repeat_interleave(rep, dim=0)  # (H, l, d)
    q64, p64 = q.double(), p.double()
    pv = p64 @ v64  # (H, l, d)
    norm = torch.linalg.matrix_norm(pv)  # (H,)
    # P = Σ σ_i u_i w_iᵀ, so ‖(P − P_k) V‖_F² = Σ_{i>k} σ_i² ‖w_iᵀ V‖²: the right singular vectors
    # and σ² from eigh(PᵀP) (several times cheaper than a full SVD), a sum of non-negative terms
    from attnspec.spectra.engine import symmetric_eigh

    lam, w = symmetric_eigh(
        p64.mT @ p64
    )  # (H, l) ascending, (H, l, l); LAPACK per matrix (torch's batched eigh is slow on CPU)
    lam, w = lam.flip(-1).clamp_min(0), w.flip(-1)  # descending: column i is w_i
    mass = lam * (w.mT @ v64).square().sum(-1)  # (H, l): σ_i² ‖w_iᵀ V‖²
    lin = np.empty((len(ks), H))
    best = np.empty((len(ks), H))
    for i, (kk, g) in enumerate(zip(ks, generators)):
        if not 1 <= kk < l:
            raise InputError(f"projection dimension k = {kk} must be in 1..{l - 1} for an input of {l} tokens")
        r = torch.randn(kk, l, generator=g, dtype=torch.float64) / kk**0.5  # (k, l), entries N(0, 1/k)
        scores = scaling * (q64 @ (r @ k64).mT)  # (H, l, k)
        if bias is not None:
            scores = scores + bias.double() @ r.mT  # B Rᵀ: (H, l, l) @ (l, k)
        approx = torch.softmax(scores, dim=-1) @ (r @ v64)  # (H, l, d)
        lin[i] = (torch.linalg.matrix_norm(approx - pv) / norm).numpy()
        best[i] = (mass[:, kk:].sum(-1).sqrt() / norm).numpy()
    return lin, best


class ProjectionSink:
    """Capture sink: per layer and input, both errors for every k < the input's length.

    Causal layers are not measured (a sequence projection would mix future positions into
    their rows).

    Parameters
    ----------
    ks : sequence of int
        Projection dimensions k.
    seed : int
        Seed of the projections R.
    n : int
        The window length, recorded in each row.
    layer_causal : sequence of bool
        Per layer, whether its P is causal.
    """

    def __init__(self, ks: Sequence[int], seed: int, n: int, layer_causal: Sequence[bool]) -> None:
        self.ks, self.seed, self.n, self.layer_causal = list(ks), int(seed), int(n), list(layer_causal)
        self.input_index: list[int] = []  # position in the selection of each input of the batch
        self.rows: list[dict[str, Any]] = []

    def __call__(self, la: Any) -> None:
        from attnspec.numerics.stats import child_seed, torch_generator

        if self.layer_causal[la.layer]:
            return  # a sequence projection mixes future positions into causal rows: not measured
        if la.query is None:
            raise ModelLoadError(
                "this model's attention is captured through hooks on modules whose Q, K, V attnspec cannot "
                "read; the Linformer-projection measurement needs them"
            )
        for b, idx in enumerate(self.input_index):
            keep = la.mask[b]
            l = int(keep.sum())
            ks = [k for k in self.ks if k < l]
            if not ks:
                continue
            gens = [torch_generator(child_seed(self.seed, "projection", self.n, k, idx, la.layer)) for k in ks]
            lin, best = input_errors(
                la.query[b][:, keep].cpu(),
                la.key[b][:, keep].cpu(),
                la.value[b][:, keep].cpu(),
                la.probs[b][:, keep][:, :, keep].cpu(),
                la.scaling,
                ks,
                gens,
                None if la.bias is None else la.bias[b][:, keep][:, :, keep].cpu(),
            )
            for i, k in enumerate(ks):
                for h in range(lin.shape[1]):
                    self.rows.append(
                        {
                            "n": self.n,
                            "k": k,
                            "input": idx,
                            "layer": la.layer,
                            "head": h,
                            "linformer_error": float(lin[i, h]),
                            "best_rank_error": float(best[i, h]),
                        }
                    )


def measure_projection(
    encoder: Any, inputs_by_length: dict[int, list[list[int]]], ks: Sequence[int], *, seed: int, batch_size: int = 4
) -> pd.DataFrame:
    """Both errors for every length, input, layer, head and k < n (see the module docstring).

    Parameters
    ----------
    encoder : LoadedModel
        The model (captured through the attention-function registry, or through hooks on
        modules whose Q, K, V and bias :mod:`attnspec.spectra.score_parts` reads).
    inputs_by_length : dict of int to list of list of int
        n → token lists (the same documents cut to each n).
    ks : sequence of int
        Projection dimensions k; only k < n is measured.
    seed : int
        Seed of the projections R.
    batch_size : int
        Inputs per forward pass.

    Returns
    -------
    pandas.DataFrame
        One row per (n, k, input, layer, head): ``linformer_error``, ``best_rank_error``;
        ``input`` is the position in each list.
    """
    import torch

    from attnspec.spectra.capture import capture_attention
    from attnspec.spectra.job import _pad_batch

    causal = list(encoder.layer_causal) or [bool(encoder.causal)] * encoder.num_layers
    frames = []
    for n, token_lists in inputs_by_length.items():
        sink = ProjectionSink(ks, seed, n, causal)
        with torch.no_grad(), capture_attention(encoder.model, sink, scores=True) as cap:
            for start in range(0, len(token_lists), batch_size):
                batch = token_lists[start : start + batch_size]
                ids, mask = _pad_batch(batch, encoder.pad_token_id)
                sink.input_index = list(range(start, start + len(batch)))
                cap.forward(ids.to(encoder.device), mask.to(encoder.device))
        frames.append(pd.DataFrame(sink.rows, columns=COLUMNS))
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=COLUMNS)


#: Columns of the per-(n, k, input, layer, head) table.
COLUMNS = ["n", "k", "input", "layer", "head", "linformer_error", "best_rank_error"]


def unmeasurable(encoder: Any) -> str | None:
    """Why the measurement cannot run on ``encoder`` (None when it can).

    Parameters
    ----------
    encoder : LoadedModel

    Returns
    -------
    str or None
    """
    causal = list(encoder.layer_causal) or [bool(encoder.causal)] * encoder.num_layers
    if all(causal):
        return "every layer is causal: a projection along the sequence would mix future positions into each row"
    if getattr(encoder, "capture_path", "registry") != "registry":
        from attnspec.spectra.score_parts import reads_score_parts

        if not any(reads_score_parts(m) for m in encoder.model.modules()):
            return "P is captured through hooks on modules whose Q, K, V attnspec cannot read"
    return None


def summarise(errors: pd.DataFrame, *, resamples: int = 2000, seed: int = 0, level: float = 0.95) -> pd.DataFrame:
    """Per (n, k): the mean over inputs, layers and heads of both errors, with a percentile
    bootstrap over inputs (``resampled`` says so), and the layer means' min and max.

    Parameters
    ----------
    errors : pandas.DataFrame
        :func:`measure_projection`'s rows.
    resamples : int
        Bootstrap resamples.
    seed : int
        Seed of the bootstrap.
    level : float
        The intervals' level.

    Returns
    -------
    pandas.DataFrame
        One row per (n, k).
    """
    from attnspec.numerics.stats import numpy_rng

    rows = []
    alpha = (1 - level) / 2
    for (n, k), g in errors.groupby(["n", "k"]):
        row: dict[str, Any] = {
            "n": int(n),
            "k": int(k),
            "inputs": int(g["input"].nunique()),
            "resampled": "inputs (documents)",
            "level": level,
        }
        for col in ("linformer_error", "best_rank_error"):
            per_input = g.groupby("input")[col].mean().to_numpy()  # (m,) each input's mean over layers and heads
            row[col] = float(per_input.mean())
            if per_input.size > 1:
                idx = numpy_rng(seed).integers(0, per_input.size, size=(resamples, per_input.size))
                row[f"{col}_low"], row[f"{col}_high"] = (
                    float(x) for x in np.quantile(per_input[idx].mean(axis=1), [alpha, 1 - alpha])
                )
            else:
                row[f"{col}_low"] = row[f"{col}_high"] = float("nan")
            per_layer = g.groupby("layer")[col].mean()
            row[f"{col}_layer_min"], row[f"{col}_layer_max"] = float(per_layer.min()), float(per_layer.max())
        rows.append(row)
    return pd.DataFrame(rows)


def projection_sentence(summary: pd.DataFrame, k: int = 128) -> str:
    """How the error at fixed ``k`` moves from the smallest to the largest n (one sentence).

    Parameters
    ----------
    summary : pandas.DataFrame
        :func:`summarise`'s table.
    k : int
        The projection dimension read.

    Returns
    -------
    str
    """
    from attnspec.numerics.stats import format_interval

    s = summary[summary["k"] == k].sort_values("n")
    if s.empty:
        return f"No length above k = {k} was measured, so the Linformer-projection error at k = {k} is not available."
    a, b = s.iloc[0], s.iloc[-1]

    def one(r: pd.Series) -> str:
        return (
            f"{r['linformer_error']:.3f} {format_interval(r['linformer_error_low'], r['linformer_error_high'], 3)} "
            f"at n = {int(r['n'])} (best rank-{k}: {r['best_rank_error']:.3f})"
        )

    span = one(a) if len(s) == 1 else f"{one(a)} to {one(b)}"
    worse = " (above 1: farther from PV than the zero matrix)" if float(s["linformer_error"].min()) >= 1 else ""
    return (
        f"For this model on this corpus, Linformer-style attention with a random Gaussian projection of k = {k} "
        f"has relative error ‖softmax(Q(RK)ᵀ)(RV) − PV‖_F/‖PV‖_F of {span}{worse}, intervals resampling "
        f"{int(a['inputs'])} inputs; Linformer trains its projections, which may do better than a random R."
    )
