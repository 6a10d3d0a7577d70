"""The error a spectrum run states for itself, recorded in its meta.json.

Two parts:

* :func:`stated_error` — what the engine method promises at the dtype the model ran in: the
  measured error of each exact method (``SVD_METHOD_ERROR``), the measured cost of running the
  model in bfloat16 (its P differ from the float32 model's, whatever the engine), float64
  factorisation for a float64 model; and for ``longn`` the kind of bound each matrix gets.
* :class:`RunBounds` — for ``longn``, the per-matrix bounds computed in the run
  (:func:`attnspec.spectra.longn.longn_singular_values`), kept as their largest value per
  (layer, head) and over the run, with the number of matrices they cover. Shards and resumed
  pieces combine by the maximum, so a merged run states the largest bound of any of its matrices.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from attnspec.spectra.config import SVD_METHOD_ERROR

#: The bounds kept per matrix (keys of longn's bounds): the cumulative curve, the curve without
#: σ₁ (max over indices of the absolute error) and the relative error of Σσ.
BOUND_KEYS: tuple[str, ...] = ("curve", "tail_curve", "nuclear")

#: What the per-matrix bounds' coverage was measured to be (each bound is ERROR_SIGMAS standard
#: errors of the probes plus deterministic terms; tests/unit/test_longn.py and
#: benchmarks/bench_long_context.py count the matrices whose exact error exceeds it).
LONGN_COVERAGE = (
    "measured: every bound held on 28 of 28 planted matrices (tests/unit/test_longn.py) and the "
    "curve bounds on 72 of 72 real SmolLM2-135M P at n = 1024 (8 layers, 2 WikiText-103 windows; "
    "docs/spectrum.md, Long context); statistical bounds (4 standard errors of 8 probes), not sure ones"
)

#: Running the model in bfloat16 changes P itself: measured on SmolLM2-135M (WikiText-103, 2
#: windows of n = 512 tokens, all 30 layers x 9 heads), the largest difference of the curves from
#: the float32 model's, each factorised exactly (benchmarks/bench_long_context_dtype.json). It is a
#: measurement on those matrices, not a bound: longer inputs and other models may differ more.
BFLOAT16_MODEL_ERROR: dict[str, Any] = {
    "curve_max_abs_vs_float32_model": 9.6e-3,
    "tail_curve_max_abs_vs_float32_model": 2.0e-2,
    "by": "benchmarks/bench_long_context.py --dtype-check --n 512 (SmolLM2-135M, 2 windows, all layers and heads)",
}


def stated_error(method: str, dtype: str) -> dict[str, Any]:
    """meta.json's ``svd_method_error``: the error of ``method`` on P from a model run in ``dtype``.

    Parameters
    ----------
    method : str
        The engine's method (``lapack``, ``svd``, ``gram``, ``longn``).
    dtype : str
        The model's dtype (``float32``, ``float64``, ``bfloat16``).

    Returns
    -------
    dict
        The measured or stated error figures and how they were obtained; for a bfloat16
        model also ``approximate`` and the model's own precision.
    """
    base = dict(SVD_METHOD_ERROR.get(method) or {})
    if dtype == "float64" and method in ("lapack", "svd"):
        # the same backward-stable factorisations in float64: each σ within about 1e-16·σ₁·n of P's;
        # the float32 measurements do not apply
        base = {
            "factorised_in": "float64",
            "sigma_abs_error": "about 2.2e-16 * sigma_1 per value (backward stable)",
            "measured_float32_figures_do_not_apply": True,
            "by": "LAPACK dgesdd error analysis",
        }
    elif dtype == "float64" and method == "gram":
        base = {**base, "note": "gram squares P in float64 at every dtype: the figures are its own"}
    elif dtype == "float64" and method == "gram32":
        # a float64 model's P goes to the float64 gram (attnspec.spectra.engine): its figures apply
        base = {
            **dict(SVD_METHOD_ERROR["gram"]),
            "factorised_in": "float64",
            "note": "gram32 leaves float64 P to the float64 gram: the figures are gram's",
        }
    if dtype == "bfloat16":
        base = {
            **base,
            "model_dtype": dtype,
            "approximate": True,
            "model_precision": {
                **BFLOAT16_MODEL_ERROR,
                "note": f"P computed by a {dtype} model differs from the float32 model's; "
                "the engine factorises it in float32",
            },
        }
    return base


def is_approximate(meta: dict[str, Any]) -> str | None:
    """The first line a summary owes its reader when the run is approximate, else None.

    Parameters
    ----------
    meta : dict
        A spectrum run's meta.json.

    Returns
    -------
    str or None
        ``"approximate: ..."`` naming longn spectra (with their bound) and a bfloat16 model.
    """
    stated = meta.get("svd_method_error") or {}
    run = meta.get("svd_error_run") or {}
    parts = []
    if meta.get("svd_method") == "longn":
        bound = run.get("curve_max_abs_bound")
        parts.append(
            "longn spectra"
            + (
                f" (curve error <= {bound:.2g}, the largest per-matrix bound; its coverage: meta.json svd_error_run)"
                if bound is not None
                else ""
            )
        )
    if stated.get("model_dtype"):
        curve = (stated.get("model_precision") or {}).get("curve_max_abs_vs_float32_model")
        parts.append(
            f"{stated['model_dtype']} model (curves differed from the float32 model's by up to {curve:g} "
            "on SmolLM2-135M at n = 512)"
            if curve is not None
            else f"{stated['model_dtype']} model"
        )
    return ("approximate: " + "; ".join(parts)) if parts else None


class RunBounds:
    """Largest per-matrix bound per (layer, head), over the matrices computed so far.

    Parameters
    ----------
    num_layers, num_heads : int
        The run's shape.
    """

    def __init__(self, num_layers: int, num_heads: int) -> None:
        self.max = {k: np.zeros((num_layers, num_heads)) for k in BOUND_KEYS}
        self.matrices = 0

    def add(self, layer: int, bounds: dict[str, torch.Tensor]) -> None:
        """One layer of a batch: bounds[k] of shape (B, H).

        Parameters
        ----------
        layer : int
            The layer, 0-based.
        bounds : dict of str to torch.Tensor, shape (B, H)
            The longn per-matrix bounds, by :data:`BOUND_KEYS`.
        """
        for k in BOUND_KEYS:
            b = bounds[k].detach().to(torch.float64).numpy()  # (B, H)
            self.max[k][layer] = np.maximum(self.max[k][layer], b.max(axis=0))
        self.matrices += int(bounds[BOUND_KEYS[0]].numel())

    def merge(self, other: RunBounds) -> None:
        """Fold another shard's bounds into these (largest values, matrices added).

        Parameters
        ----------
        other : RunBounds
            Of the same shape.
        """
        for k in BOUND_KEYS:
            self.max[k] = np.maximum(self.max[k], other.max[k])
        self.matrices += other.matrices

    def to_meta(self, coverage: str) -> dict[str, Any]:
        """meta.json's ``svd_error_run`` record.

        Parameters
        ----------
        coverage : str
            Which matrices the bounds cover, in words.

        Returns
        -------
        dict
            What the bounds are, their coverage, the matrices counted, the largest value of
            each bound, and each per (layer, head).
        """
        return {
            "what": "per-matrix a-posteriori bounds computed in this run (attnspec.spectra.longn, 'Error'): "
            "curve = max_i |c_i - exact c_i|, tail_curve the same without sigma_1, nuclear = "
            "|sum sigma - exact| / sum sigma; their largest value over the run and per (layer, head)",
            "coverage": coverage,
            "matrices": self.matrices,
            **{
                f"{k}_max_abs_bound" if k != "nuclear" else "nuclear_max_rel_bound": float(self.max[k].max())
                for k in BOUND_KEYS
            },
            "per_layer_head": {k: np.round(self.max[k], 8).tolist() for k in BOUND_KEYS},
        }

    @classmethod
    def from_meta(cls, record: dict[str, Any] | None, num_layers: int, num_heads: int) -> RunBounds:
        """A record read back (a resumed run, a shard); an empty record when absent or of another shape.

        Parameters
        ----------
        record : dict or None
            A :meth:`to_meta` record.
        num_layers, num_heads : int
            The run's shape.

        Returns
        -------
        RunBounds
        """
        out = cls(num_layers, num_heads)
        per = (record or {}).get("per_layer_head") or {}
        try:
            arrays = {k: np.asarray(per[k], dtype=np.float64) for k in BOUND_KEYS}
        except (KeyError, TypeError, ValueError):
            return out
        if all(a.shape == (num_layers, num_heads) for a in arrays.values()):
            out.max, out.matrices = arrays, int(record.get("matrices", 0))
        return out
