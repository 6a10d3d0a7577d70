"""Singular values of attention matrices, their cumulative curves, and mergeable aggregates.

The quantity (Linformer, Wang et al. 2020, Section 3 and Figure 1): for P ∈ R^{n×n} with
singular values σ_1 >= ... >= σ_n, the normalised cumulative curve

    c_i = (σ_1 + ... + σ_i) / (σ_1 + ... + σ_n),   i = 1..n,

averaged over inputs per (layer, head, i).

Engine (:func:`singular_values`), on (..., n, n) stacks; every method computes the full
spectrum (no truncation, no randomisation):

* ``lapack`` — LAPACK's divide-and-conquer SVD, values only (``?gesdd``, jobz = "N"), in
  the input's precision, from the OpenBLAS that SciPy ships, called on many matrices at
  once from a thread pool (ctypes releases the GIL; one BLAS thread per call, because at
  n = 512 one factorisation parallelises poorly and independent ones perfectly). Float32
  bidiagonalisation is backward stable: each σ is off by about ε₃₂·σ₁, so the curve is
  within ~1e-7 of float64 SVD on real attention (tolerance 1e-4; tested).
* ``svd``  — ``torch.linalg.svdvals`` in the input's precision, on its device.
* ``gram`` — the eigenvalues λ of G = P Pᵀ formed in float64 (LAPACK's two-stage
  ``dsyevd_2stage`` on the CPU, ``torch.linalg.eigvalsh`` elsewhere), σ = √λ. Squaring
  costs √ε₆₄ ≈ 1e-8·σ₁ per value: the most accurate route, slower than ``lapack`` on float32.
* ``auto`` (default) — ``lapack`` on the CPU (``svd`` if SciPy's OpenBLAS is missing),
  ``svd`` on CUDA.

Aggregation (:class:`SpectrumAccumulator`): per (layer, head, index) the count, mean and
sum of squared deviations (Chan et al.'s pairwise update), so shards computed anywhere
merge into the statistics of the union (equal to a single run up to float64 rounding).
"""

from __future__ import annotations

import ctypes
import glob
import os
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import torch

from attnspec.errors import InputError, ResultsError

METHODS: tuple[str, ...] = ("auto", "lapack", "svd", "gram")
#: The level at which the "index where the mean curve reaches" metric is read.
REACH_LEVEL = 0.9
#: Linformer's Figure 1 reads the cumulative curve at index 128 of n = 512.
PAPER_READING = (128, 512)


def default_at(seq_len: int) -> int:
    """The index at which a cumulative curve of length n is read: 128 when n = 512 (the
    paper's reading point), else n / 4 (rounded, at least 1)."""
    at, n = PAPER_READING
    return at if seq_len == n else max(1, round(seq_len / 4))


def check_at(at: int, seq_len: int) -> int:
    """``at`` in 1..n, else :class:`InputError` naming it."""
    if not 1 <= at <= seq_len:
        raise InputError(f"--at must be in 1..{seq_len} (the run's seq_len), got {at}")
    return at


# ---------------------------------------------------------------------------------------
# Engine
# ---------------------------------------------------------------------------------------
_INT, _CHAR, _PTR = ctypes.c_int, ctypes.c_char, ctypes.c_void_p
#: LAPACKE signatures used here (row-major layout, jobz = "N": values only).
_SIGNATURES: dict[str, list[Any]] = {
    # lapack_int LAPACKE_?gesdd(int layout, char jobz, lapack_int m, lapack_int n, T* a, lapack_int lda,
    #                           T* s, T* u, lapack_int ldu, T* vt, lapack_int ldvt)
    "sgesdd": [_INT, _CHAR, _INT, _INT, _PTR, _INT, _PTR, _PTR, _INT, _PTR, _INT],
    "dgesdd": [_INT, _CHAR, _INT, _INT, _PTR, _INT, _PTR, _PTR, _INT, _PTR, _INT],
    # lapack_int LAPACKE_dsyevd_2stage(int layout, char jobz, char uplo, lapack_int n, double* a,
    #                                  lapack_int lda, double* w)
    "dsyevd_2stage": [_INT, _CHAR, _CHAR, _INT, _PTR, _INT, _PTR],
}
_ROW_MAJOR = 101


@lru_cache(maxsize=None)
def _lapack(routine: str) -> Any | None:
    """``LAPACKE_<routine>`` from the OpenBLAS that SciPy ships (32-bit ints), or None when absent.

    SciPy's wheels bundle ``libscipy_openblas`` with its symbols prefixed ``scipy_``;
    calling it through ctypes releases the GIL, so independent problems run in parallel
    on a thread pool.
    """
    try:
        import scipy
    except ImportError:  # pragma: no cover - scipy is a dependency
        return None
    base = Path(scipy.__file__).parent
    patterns = [str(base.parent / "scipy.libs" / "libscipy_openblas*.so*"), str(base / ".dylibs" / "libscipy_openblas*.dylib")]
    for pattern in patterns:
        for path in sorted(glob.glob(pattern)):
            try:
                lib = ctypes.CDLL(path)
            except OSError:
                continue
            for name in (f"scipy_LAPACKE_{routine}", f"LAPACKE_{routine}"):
                fn = getattr(lib, name, None)
                if fn is not None:
                    fn.restype = ctypes.c_int
                    fn.argtypes = _SIGNATURES[routine]
                    return fn
    return None


def _run_pool(call: Any, m: int, workers: int, what: str) -> None:
    """Run ``call(i)`` for i < m on ``workers`` threads, one BLAS thread each.

    At n = 512 one factorisation parallelises poorly inside BLAS; independent ones
    parallelise perfectly across threads.
    """
    from threadpoolctl import threadpool_limits

    with threadpool_limits(limits=1, user_api="blas"):
        if workers > 1 and m > 1:
            with ThreadPoolExecutor(max_workers=workers) as pool:
                infos = list(pool.map(call, range(m)))
        else:
            infos = [call(i) for i in range(m)]
    bad = [i for i, info in enumerate(infos) if info != 0]
    if bad:
        raise np.linalg.LinAlgError(f"{what} failed on matrices {bad[:5]} (info {infos[bad[0]]})")


def _svdvals_gesdd(a: np.ndarray, workers: int) -> np.ndarray:
    """Singular values (descending) of a (m, n, n) C-contiguous float32/float64 stack; destroys ``a``."""
    routine = "sgesdd" if a.dtype == np.float32 else "dgesdd"
    fn = _lapack(routine)
    m, n, _ = a.shape
    out = np.empty((m, n), dtype=a.dtype)

    def one(i: int) -> int:
        return fn(_ROW_MAJOR, b"N", n, n, a[i].ctypes.data, n, out[i].ctypes.data, None, 1, None, 1)

    _run_pool(one, m, workers, routine)
    return out


def _eigvalsh_2stage(gram: np.ndarray, workers: int) -> np.ndarray:
    """Eigenvalues (ascending) of a (m, n, n) float64 C-contiguous symmetric stack; destroys ``gram``."""
    fn = _lapack("dsyevd_2stage")
    m, n, _ = gram.shape
    out = np.empty((m, n), dtype=np.float64)

    def one(i: int) -> int:
        return fn(_ROW_MAJOR, b"N", b"L", n, gram[i].ctypes.data, n, out[i].ctypes.data)

    _run_pool(one, m, workers, "dsyevd_2stage")
    return out


def resolve_method(method: str, device: torch.device | str) -> str:
    """``auto`` → ``lapack`` on the CPU (``svd`` where SciPy's OpenBLAS is missing), ``svd`` on CUDA."""
    if method not in METHODS:
        raise InputError(f"--svd-method must be one of {', '.join(METHODS)}, got {method!r}")
    if method == "auto":
        if torch.device(device).type == "cuda" or _lapack("sgesdd") is None:
            return "svd"
        return "lapack"
    return method


def singular_values(probs: torch.Tensor, method: str = "auto", *, workers: int | None = None) -> torch.Tensor:
    """All singular values of each matrix in a stack, in descending order.

    Parameters
    ----------
    probs : Tensor, shape (..., n, n)
        Square matrices (any float dtype, any device).
    method : {"auto", "lapack", "svd", "gram"}
        See the module docstring.
    workers : int, optional
        Threads for the CPU LAPACK paths (default: ``torch.get_num_threads()``).

    Returns
    -------
    Tensor, shape (..., n), float64, on the CPU, descending, non-negative.
    """
    if probs.dim() < 2 or probs.shape[-1] != probs.shape[-2]:
        raise InputError(f"expected a stack of square matrices (..., n, n), got shape {tuple(probs.shape)}")
    method = resolve_method(method, probs.device)
    lead, n = probs.shape[:-2], probs.shape[-1]
    flat = probs.reshape(-1, n, n)  # (m, n, n)
    if flat.dtype not in (torch.float32, torch.float64):
        flat = flat.float()  # bfloat16/float16 models: factorise in float32
    workers = workers or torch.get_num_threads()
    if method == "svd":
        sv = torch.linalg.svdvals(flat).to(torch.float64).cpu()  # descending already
    elif method == "lapack":
        if _lapack("sgesdd") is None:
            raise InputError("--svd-method lapack needs SciPy's bundled OpenBLAS, which was not found; use svd or gram")
        a = flat.detach().cpu().numpy().copy()  # gesdd overwrites its input
        sv = torch.from_numpy(_svdvals_gesdd(a, workers)).to(torch.float64)
    else:  # gram
        x = flat.to(torch.float64)
        gram = x @ x.mT  # (m, n, n), symmetric positive semi-definite
        if gram.device.type == "cpu" and _lapack("dsyevd_2stage") is not None:
            lam = torch.from_numpy(_eigvalsh_2stage(np.ascontiguousarray(gram.numpy()), workers))
        else:
            lam = torch.linalg.eigvalsh(gram).cpu()
        sv = lam.clamp_min(0).sqrt().flip(-1)  # ascending eigenvalues -> descending σ
    return sv.clamp_min(0).reshape(*lead, n)


def cumulative_curve(sv: torch.Tensor) -> torch.Tensor:
    """c_i = (σ_1 + ... + σ_i) / Σσ along the last axis; shape unchanged."""
    total = sv.sum(dim=-1, keepdim=True)
    if bool((total <= 0).any()):
        raise InputError("a matrix with all singular values zero has no normalised curve")
    return sv.cumsum(dim=-1) / total


def effective_rank(sv: torch.Tensor) -> torch.Tensor:
    """exp(entropy of p = σ/Σσ) along the last axis (Roy & Vetterli 2007); shape (...)."""
    p = sv / sv.sum(dim=-1, keepdim=True)
    ent = -(p * torch.where(p > 0, p.log(), torch.zeros_like(p))).sum(dim=-1)
    return ent.exp()


def stable_rank(sv: torch.Tensor) -> torch.Tensor:
    """‖P‖_F² / ‖P‖_2² = Σσ² / σ_1² along the last axis; shape (...)."""
    return (sv**2).sum(dim=-1) / sv[..., 0] ** 2


def reach_index(curves: torch.Tensor, level: float = REACH_LEVEL) -> torch.Tensor:
    """1-based first index i with c_i >= level, along the last axis; shape (...)."""
    return (curves < level - 1e-12).sum(dim=-1) + 1


# ---------------------------------------------------------------------------------------
# Aggregation
# ---------------------------------------------------------------------------------------
class _Moments:
    """count, mean and M2 (sum of squared deviations) over a leading sample axis.

    ``count`` has shape ``shape[:-1]`` when values carry a trailing index axis, so one
    count serves every index of a (layer, head) curve.
    """

    def __init__(self, shape: tuple[int, ...]) -> None:
        self.count = np.zeros(shape[:2], dtype=np.int64)  # (L, H)
        self.mean = np.zeros(shape, dtype=np.float64)
        self.m2 = np.zeros(shape, dtype=np.float64)

    def _bcast(self, c: np.ndarray) -> np.ndarray:
        return c.reshape(c.shape + (1,) * (self.mean.ndim - 2)).astype(np.float64)

    def merge_stats(self, count: np.ndarray, mean: np.ndarray, m2: np.ndarray, where: tuple[Any, ...] = ()) -> None:
        """Chan et al. (1979) pairwise merge of (count, mean, m2) into the slice ``where``."""
        na = self._bcast(self.count[where])
        nb = self._bcast(np.asarray(count))
        n = na + nb
        with np.errstate(invalid="ignore", divide="ignore"):
            delta = mean - self.mean[where]
            frac = np.where(n > 0, nb / np.where(n > 0, n, 1), 0.0)
            self.mean[where] = self.mean[where] + delta * frac
            self.m2[where] = self.m2[where] + m2 + delta**2 * na * frac
        self.count[where] = self.count[where] + count

    def add_samples(self, values: np.ndarray, where: tuple[Any, ...]) -> None:
        """Add samples ``values`` of shape (m, *slice_shape) to the slice ``where``."""
        m = values.shape[0]
        mean = values.mean(axis=0)
        m2 = ((values - mean) ** 2).sum(axis=0)
        count = np.full(self.count[where].shape, m, dtype=np.int64)
        self.merge_stats(count, mean, m2, where)

    def std(self) -> np.ndarray:
        c = self._bcast(self.count)
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(c > 1, np.sqrt(np.maximum(self.m2, 0) / np.maximum(c - 1, 1)), np.nan)


@dataclass(frozen=True)
class SpectrumTables:
    """The finished aggregates as tidy tables."""

    spectrum: pd.DataFrame  # one row per (layer, head, index)
    metrics: pd.DataFrame  # one row per (layer, head)


class SpectrumAccumulator:
    """Streaming statistics of cumulative curves and rank metrics per (layer, head).

    Parameters
    ----------
    num_layers, num_heads, seq_len : int
        Shape of the aggregate: curves have ``seq_len`` indices.
    """

    METRICS: tuple[str, ...] = ("effective_rank", "stable_rank", "reach_index")

    def __init__(self, num_layers: int, num_heads: int, seq_len: int) -> None:
        for name, v in (("num_layers", num_layers), ("num_heads", num_heads), ("seq_len", seq_len)):
            if v < 1:
                raise InputError(f"{name} must be >= 1, got {v}")
        self.shape = (num_layers, num_heads, seq_len)
        self.curves = _Moments(self.shape)
        self.metrics = {name: _Moments((num_layers, num_heads)) for name in self.METRICS}

    @property
    def count(self) -> np.ndarray:
        return self.curves.count

    def add(self, layer: int, sv: torch.Tensor) -> None:
        """Add one layer's singular values, shape (B, H, l) with l <= seq_len.

        Curves of matrices shorter than ``seq_len`` (inputs shorter than the window) are
        those of the zero-extended matrix: c_i = 1 for i beyond their length.
        """
        L, H, n = self.shape
        if not 0 <= layer < L:
            raise InputError(f"layer must be in 0..{L - 1}, got {layer}")
        if sv.dim() != 3 or sv.shape[1] != H or sv.shape[2] > n:
            raise InputError(f"singular values must have shape (B, {H}, <= {n}), got {tuple(sv.shape)}")
        if sv.shape[2] < n:
            sv = torch.nn.functional.pad(sv, (0, n - sv.shape[2]))
        curves = cumulative_curve(sv)  # (B, H, n)
        self.curves.add_samples(curves.numpy(), (layer,))
        per_matrix = {
            "effective_rank": effective_rank(sv),
            "stable_rank": stable_rank(sv),
            "reach_index": reach_index(curves).to(torch.float64),
        }
        for name, values in per_matrix.items():  # each (B, H)
            self.metrics[name].add_samples(values.numpy(), (layer,))

    def merge(self, other: SpectrumAccumulator) -> None:
        """Fold ``other`` (a shard of the same shape) into this accumulator."""
        if other.shape != self.shape:
            raise ResultsError(f"cannot merge aggregates of shape {other.shape} into {self.shape}")
        self.curves.merge_stats(other.curves.count, other.curves.mean, other.curves.m2)
        for name in self.METRICS:
            o = other.metrics[name]
            self.metrics[name].merge_stats(o.count, o.mean, o.m2)

    # -- persistence -------------------------------------------------------------------
    def state(self) -> dict[str, np.ndarray]:
        out = {"shape": np.asarray(self.shape), "count": self.curves.count, "mean": self.curves.mean, "m2": self.curves.m2}
        for name, mom in self.metrics.items():
            out[f"{name}.count"] = mom.count
            out[f"{name}.mean"] = mom.mean
            out[f"{name}.m2"] = mom.m2
        return out

    @classmethod
    def from_state(cls, state: dict[str, np.ndarray]) -> SpectrumAccumulator:
        try:
            acc = cls(*(int(v) for v in state["shape"]))
            acc.curves.count[...] = state["count"]
            acc.curves.mean[...] = state["mean"]
            acc.curves.m2[...] = state["m2"]
            for name, mom in acc.metrics.items():
                mom.count[...] = state[f"{name}.count"]
                mom.mean[...] = state[f"{name}.mean"]
                mom.m2[...] = state[f"{name}.m2"]
        except (KeyError, ValueError, TypeError, InputError) as e:
            raise ResultsError(f"aggregate state is incomplete or has the wrong shape: {e}") from None
        return acc

    def copy(self) -> SpectrumAccumulator:
        """An independent copy (the run updates a copy, then swaps it in: see spectrum_run)."""
        return SpectrumAccumulator.from_state({k: np.array(v, copy=True) for k, v in self.state().items()})

    def verify(self, inputs_done: int | None = None, *, tol: float = 1e-9) -> None:
        """Check the invariants every honest aggregate satisfies; raise :class:`ResultsError` if not.

        The message starts with the name of the failed check ("finite check: ...").
        Generic over the state's arrays (every float array finite, every count equal to
        ``inputs_done``), then specific to the statistics: a mean cumulative curve lies
        in [0, 1], does not decrease, and ends at 1; squared deviations are >= 0; mean
        effective and stable rank and reach index lie in [1, seq_len].
        """
        state = self.state()
        for name, a in state.items():
            if np.issubdtype(a.dtype, np.floating) and not np.all(np.isfinite(a)):
                raise ResultsError(f"finite check: '{name}' holds NaN or infinite values")
        # every input adds one matrix per (layer, head): every count equals inputs_done
        counts = {name: a for name, a in state.items() if name == "count" or name.endswith(".count")}
        values = np.unique(np.concatenate([a.ravel() for a in counts.values()])) if counts else np.array([])
        if np.any(values < 0):
            raise ResultsError("count check: negative counts")
        if len(values) > 1:
            raise ResultsError(f"count check: the statistics disagree on how many matrices they hold "
                               f"({values[:4].tolist()})")
        if inputs_done is not None and len(values) and values[0] != inputs_done:
            raise ResultsError(f"count check: the statistics hold {values[0]} matrices per head, but the state "
                               f"records {inputs_done} inputs done")
        seen = self.curves.count > 0  # (L, H)
        if not seen.any():
            return
        mean = self.curves.mean[seen]  # (m, n)
        if mean.min() < -tol or mean.max() > 1 + tol:
            raise ResultsError(f"range check: a mean cumulative value lies outside [0, 1] "
                               f"(min {mean.min():.6g}, max {mean.max():.6g})")
        if np.any(np.diff(mean, axis=-1) < -tol):
            raise ResultsError("range check: a mean cumulative curve decreases")
        if np.any(np.abs(mean[:, -1] - 1) > 1e-6):
            raise ResultsError("range check: a mean cumulative curve does not end at 1")
        scale = np.maximum(1.0, self.curves.count[seen].max())
        if np.any(self.curves.m2[seen] < -tol * scale):
            raise ResultsError("range check: negative squared deviations in 'm2'")
        n = self.shape[2]
        for name in self.METRICS:
            mom = self.metrics[name]
            m = mom.mean[mom.count > 0]
            if m.size and (m.min() < 1 - 1e-6 or m.max() > n + 1e-6):
                raise ResultsError(f"range check: mean {name} outside [1, {n}] (min {m.min():.6g}, max {m.max():.6g})")
            if np.any(mom.m2 < -tol * scale):
                raise ResultsError(f"range check: negative squared deviations in '{name}.m2'")

    # -- output ------------------------------------------------------------------------
    def tables(self) -> SpectrumTables:
        L, H, n = self.shape
        layer, head, index = np.meshgrid(np.arange(L), np.arange(H), np.arange(1, n + 1), indexing="ij")
        count = np.broadcast_to(self.curves.count[:, :, None], self.shape)
        spectrum = pd.DataFrame(
            {
                "layer": layer.ravel(),
                "head": head.ravel(),
                "index": index.ravel(),
                "mean": self.curves.mean.ravel(),
                "std": self.curves.std().ravel(),
                "count": count.ravel(),
            }
        )
        lh_layer, lh_head = np.meshgrid(np.arange(L), np.arange(H), indexing="ij")
        metrics = pd.DataFrame({"layer": lh_layer.ravel(), "head": lh_head.ravel(), "count": self.curves.count.ravel()})
        mean_curve = torch.from_numpy(self.curves.mean)
        metrics[f"index_at_{REACH_LEVEL:g}_of_mean_curve"] = reach_index(mean_curve).numpy().ravel()
        for name, mom in self.metrics.items():
            metrics[f"{name}_mean"] = mom.mean.ravel()
            metrics[f"{name}_std"] = mom.std().ravel()
        metrics.loc[metrics["count"] == 0, f"index_at_{REACH_LEVEL:g}_of_mean_curve"] = -1
        return SpectrumTables(spectrum=spectrum, metrics=metrics)


#: Name of the digest entry stored inside every state file.
DIGEST_KEY = "digest"


def state_digest(arrays: dict[str, np.ndarray]) -> str:
    """SHA-256 over every array of a state (name, dtype, shape and bytes), except the digest.

    Generic on purpose: whatever arrays the accumulator or the run adds to the state are
    covered without listing them here.
    """
    import hashlib

    h = hashlib.sha256()
    for name in sorted(arrays):
        if name == DIGEST_KEY:
            continue
        a = np.ascontiguousarray(np.asarray(arrays[name]))
        h.update(f"{name}\0{a.dtype.str}\0{a.shape}\0".encode())
        h.update(a.tobytes())
    return h.hexdigest()


def save_state(path: Path, acc: SpectrumAccumulator, extra: dict[str, np.ndarray] | None = None) -> None:
    """Write the accumulator and ``extra`` arrays to ``path`` as ONE atomic .npz with a digest.

    Everything a resume or a merge needs (the aggregate, how many and which inputs it
    covers, the run's identity) goes into this one file, so the aggregate and the record
    of what it covers can never disagree after an interruption.
    """
    from attnspec.results import atomic_path

    arrays = {**acc.state(), **{k: np.asarray(v) for k, v in (extra or {}).items()}}
    clash = set(acc.state()) & set(extra or {})
    if clash or DIGEST_KEY in arrays:
        raise InputError(f"state entries {sorted(clash | ({DIGEST_KEY} & set(arrays)))} are reserved")
    arrays[DIGEST_KEY] = np.asarray(state_digest(arrays))
    with atomic_path(Path(path)) as tmp:
        with open(tmp, "wb") as f:  # a file object: np.savez would append ".npz" to a name
            np.savez(f, **arrays)
            f.flush()
            os.fsync(f.fileno())


def read_state_arrays(path: Path) -> dict[str, np.ndarray]:
    """Every array of the state file at ``path``, digest verified; :class:`ResultsError` otherwise."""
    path = Path(path)
    if not path.is_file():
        raise ResultsError(f"{path.parent} has no aggregate state ({path.name})")
    try:
        with np.load(path, allow_pickle=False) as z:
            state = {k: z[k] for k in z.files}
    except Exception as e:  # BadZipFile, EOFError, zlib.error, ValueError, OSError: all mean "damaged"
        reason = (str(e).splitlines() or [""])[0] or type(e).__name__
        raise ResultsError(f"checkpoint {path} is unreadable (truncated or not a state file): {reason}") from None
    if DIGEST_KEY not in state:
        raise ResultsError(f"checkpoint {path} fails the digest check: it has no digest (written by an older "
                           "attnspec, or not a state file), so it cannot be verified; recompute with --overwrite")
    if str(state[DIGEST_KEY]) != state_digest(state):
        raise ResultsError(f"checkpoint {path} fails the digest check: its contents were altered or damaged "
                           "after it was written")
    return state


def load_state(path: Path, *, inputs_done: int | None = None) -> tuple[SpectrumAccumulator, dict[str, np.ndarray]]:
    """Read and verify a state written by :func:`save_state`.

    Checks, in order: readable .npz; digest; every accumulator array present with the
    right shape; :meth:`SpectrumAccumulator.verify` against the stored ``inputs_done``
    (or the ``inputs_done`` given). Any failure raises :class:`ResultsError` naming the
    file and the failed check; nothing is modified.

    Returns
    -------
    (SpectrumAccumulator, dict)
        The aggregate, and the other arrays of the state (``inputs_done``, ...).
    """
    path = Path(path)
    state = read_state_arrays(path)
    try:
        acc = SpectrumAccumulator.from_state(state)
    except ResultsError as e:
        raise ResultsError(f"checkpoint {path} fails the structure check: {e}") from None
    own = set(acc.state())
    extra = {k: v for k, v in state.items() if k not in own and k != DIGEST_KEY}
    if inputs_done is None and "inputs_done" in extra:
        inputs_done = int(extra["inputs_done"])
    try:
        acc.verify(inputs_done)
    except ResultsError as e:
        raise ResultsError(f"checkpoint {path} fails the {e}") from None
    return acc, extra


def merge_accumulators(accs: Sequence[SpectrumAccumulator]) -> SpectrumAccumulator:
    if not accs:
        raise ResultsError("nothing to merge")
    out = SpectrumAccumulator(*accs[0].shape)
    for a in accs:
        out.merge(a)
    return out


# ---------------------------------------------------------------------------------------
# `attnspec.spectrum(...)`: the Python API's entry point shares this module's name
# ---------------------------------------------------------------------------------------
class _CallableModule(type(os)):  # type(os) is types.ModuleType
    """Importing ``attnspec.spectrum`` binds this module to ``attnspec.spectrum``, hiding a
    function of that name; calling the module runs :func:`attnspec.api.spectrum` instead."""

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        from attnspec.api import spectrum

        return spectrum(*args, **kwargs)


import sys as _sys  # noqa: E402

_sys.modules[__name__].__class__ = _CallableModule
