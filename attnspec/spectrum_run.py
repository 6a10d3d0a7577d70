"""The spectrum job: corpus → encoder under capture → singular values → aggregates → results.

One function, :func:`run_spectrum`, does the whole job for the CLI and for library users.
It is resumable: every ``checkpoint_every`` batches (and on Ctrl-C or ``max_time``) the
aggregate state and the tables computed so far are written atomically, and ``resume=True``
continues from the inputs already done. Shards (``shard=(i, N)``) take every N-th input of
the same seeded selection, so ``attnspec merge`` of all shards equals a single run.

What is trusted (docs/spectrum.md, "What survives what"): ``state.npz`` alone. It holds the
aggregate, the run's identity, which inputs it covers (their indices in the seeded
selection) and a digest; it is verified on every load, and written as one atomic file, so
the aggregate and the record of what it covers never disagree. ``meta.json`` and the
tables are derived from it. One process at a time writes a results directory (a lock).
"""

from __future__ import annotations

import contextlib
import json
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import torch

from attnspec.corpora import CORPUS_NAMES, SELECTIONS, SHORT_POLICIES, selection_of
from attnspec.errors import InputError, ModelLoadError, ResultsError
from attnspec.results import (
    META_FILE,
    check_same_run,
    environment_meta,
    holds_files,
    read_meta,
    result_files,
    write_meta,
    write_table,
    writing_to,
)
from attnspec.scaling import KIND as SCALING_KIND  # a run may live inside its scaling study
from attnspec.signals import sigterm_as_interrupt
from attnspec.spectra.longn import LongnParams
from attnspec.spectrum import (
    METHODS,
    RANK_TOL,
    SpectrumAccumulator,
    load_state,
    merge_accumulators,
    resolve_method,
    row_entropy,
    save_state,
    singular_values,
)

STATE_FILE = "state.npz"
KIND = "spectrum"
# Inputs per forward pass when --batch-size is not given, per device type. CPU: measured by
# benchmarks/bench_spectrum.py (section "batch": a 12-layer, 12-head RoBERTa-style encoder
# at n = 512, the same 4 inputs, batch sizes interleaved, best of 2 rounds, on the loaded
# 2-core machine): batch 4 took 17.9 s/input against 24.9 s/input for batch 1, with 1.6 %
# more peak RSS (1,238 vs 1,218 MB), so 4 stays. CUDA: not measured (no GPU on the project's
# machines); 4 as on the CPU. The benchmark's batch section measures it where a GPU exists.
DEFAULT_BATCH_SIZE = {"cpu": 4, "cuda": 4}


#: Measured error of each engine method against float64 SVD (numpy dgesdd) on real attention:
#: benchmarks/bench_long_context.py on SmolLM2-135M (one WikiText-103 window, layers 0 and 29,
#: 9 heads each), largest over the lengths measured; docs/spectrum.md "Long context". For the
#: approximate ``longn`` this is its stated error (and meta.json records its parameters).
SVD_METHOD_ERROR: dict[str, dict[str, Any]] = {
    "lapack": {"curve_max_abs": 8.5e-8, "effective_rank_max_rel": 2.4e-7, "stable_rank_max_rel": 7.1e-7,
               "measured_at_n": [128, 512, 1024], "by": "benchmarks/bench_long_context.py (SmolLM2-135M)"},
    "gram": {"curve_max_abs": 1.8e-9, "effective_rank_max_rel": 3.2e-8, "stable_rank_max_rel": 2.5e-15,
             "measured_at_n": [128, 512, 1024, 2048], "by": "benchmarks/bench_long_context.py (SmolLM2-135M)"},
    # approximate (attnspec.spectra.longn): its parameters and the largest errors measured against
    # float64 SVD on real SmolLM2 P; the nuclear mass also has a per-matrix bound from its probes
    "longn": {"approximate": True, "params": LongnParams().as_dict(),
              "curve_max_abs": 6.5e-3, "energy_curve_max_abs": 3.7e-3, "tail_curve_max_abs": 6.7e-3,
              "effective_rank_max_rel": 2.3e-2, "stable_rank_max_rel": 1.5e-6, "sigma2_over_sigma1_max_rel": 3.5e-4,
              "nuclear_norm_max_rel": 4.6e-3, "reach_index_max_abs": 17, "rank_for_error_0.1_max_abs": 10,
              "numerical_rank_max_abs": 293,
              "nuclear_norm_bound": "per matrix, 4 standard errors of the probes' control-variate estimate",
              "measured_at_n": [1024, 2048], "by": "benchmarks/bench_long_context.py (SmolLM2-135M, layers 0 and 29)"},
}

#: Inputs of a spectrum run when --num-sentences is not given (fewer if the corpus has fewer).
DEFAULT_NUM_SENTENCES = 1000


@dataclass
class SpectrumConfig:
    """Everything that defines a spectrum run (see ``attnspec spectrum --help``)."""

    model: str = "roberta-base"
    data: str = "wiki103"
    split: str | None = None
    data_dir: str | None = None
    seq_len: int = 512
    # An int, "all" (every available input) or None: DEFAULT_NUM_SENTENCES, or every
    # input when the corpus has fewer (so the default never fails on a small corpus).
    num_sentences: int | str | None = None
    seed: int = 0
    short_policy: str = "skip"
    batch_size: int | None = None  # None: DEFAULT_BATCH_SIZE of the device
    device: str = "auto"
    dtype: str = "float32"
    svd_method: str = "auto"
    shard: tuple[int, int] | None = None  # (index, count), 0-based index
    out: Path = field(default_factory=lambda: Path("results/spectrum"))
    csv: bool = False
    resume: bool = False
    overwrite: bool = False
    max_time: float | None = None  # seconds
    checkpoint_every: int = 8  # batches
    rank_tol: float = RANK_TOL  # relative tolerance of the numerical rank
    count_available: bool = False  # selection "documents": tokenise the whole corpus for the exact number of windows
    selection: str = "pool"  # how inputs are drawn (attnspec.corpora.SELECTIONS)

    def validate(self) -> None:
        if self.seq_len < 2:
            raise InputError(f"--seq-len must be >= 2, got {self.seq_len}")
        if self.num_sentences is not None and self.num_sentences != "all":
            if isinstance(self.num_sentences, bool) or not isinstance(self.num_sentences, int) or self.num_sentences <= 0:
                raise InputError(f"--num-sentences must be an integer >= 1 or 'all', got {self.num_sentences!r}")
        if self.batch_size is not None and self.batch_size < 1:
            raise InputError(f"--batch-size must be >= 1, got {self.batch_size}")
        if self.seed < 0:
            raise InputError(f"--seed must be >= 0, got {self.seed}")
        if self.short_policy not in SHORT_POLICIES:
            raise InputError(f"--short-policy must be one of {', '.join(SHORT_POLICIES)}, got {self.short_policy!r}")
        if self.svd_method not in METHODS:
            raise InputError(f"--svd-method must be one of {', '.join(METHODS)}, got {self.svd_method!r}")
        if self.max_time is not None and not self.max_time > 0:
            raise InputError(f"--max-time must be > 0 seconds, got {self.max_time}")
        if self.checkpoint_every < 1:
            raise InputError(f"--checkpoint-every must be >= 1, got {self.checkpoint_every}")
        if not 0 < self.rank_tol < 1:
            raise InputError(f"--rank-tol must be in (0, 1), got {self.rank_tol}")
        if self.selection not in SELECTIONS:
            raise InputError(f"--selection must be one of {', '.join(SELECTIONS)}, got {self.selection!r}")
        if self.selection == "documents" and (self.short_policy == "pack" or CORPUS_NAMES.get(self.data) == "wiki103"):
            # checked again in load_inputs for any source; here the known cases fail before the model loads
            raise InputError("--selection documents needs one window per document: not with --short-policy pack, "
                             f"nor with {self.data} (WikiText is packed into windows); use --selection pool")
        if self.resume and self.overwrite:
            raise InputError("--resume and --overwrite exclude each other")
        if self.shard is not None:
            i, n = self.shard
            if n < 1 or not 0 <= i < n:
                raise InputError(f"--shard must be INDEX/COUNT with 0 <= INDEX < COUNT, got {i}/{n}")

    def identity(self) -> dict[str, Any]:
        """The parameters that make two runs the same run (resume and merge check them)."""
        return {
            "model": self.model,
            "data": self.data,
            "split": self.split,
            "seq_len": self.seq_len,
            "num_sentences": (f"up to {DEFAULT_NUM_SENTENCES}" if self.num_sentences is None
                              else self.num_sentences),
            "seed": self.seed,
            "short_policy": self.short_policy,
            "dtype": self.dtype,
            "svd_method": self.svd_method,
            "rank_tol": self.rank_tol,
            "shard": None if self.shard is None else f"{self.shard[0]}/{self.shard[1]}",
            # only when not the default, so that runs made before the option existed (all
            # "pool", or "documents" for one-window-per-document corpora in one release) keep
            # their identity; the inputs' digest, checked on resume and merge, tells them apart
            **({"selection": self.selection} if self.selection != "pool" else {}),
        }


def _recorded_figures(out: Path) -> dict[str, Any] | None:
    """The plotting choices a run's meta.json recorded, if it is there and readable (a
    resume trusts only state.npz; meta.json may be missing)."""
    try:
        return read_meta(out).get("figures")
    except (ResultsError, OSError, ValueError):
        return None


def inputs_request(num_sentences: int | str | None) -> dict[str, Any]:
    """``--num-sentences`` as :func:`attnspec.corpora.load_inputs` arguments: N → exactly N;
    ``"all"`` → every available input; None (the default) → DEFAULT_NUM_SENTENCES, or all
    of them when fewer exist."""
    if num_sentences is None:
        return {"num_inputs": DEFAULT_NUM_SENTENCES, "at_most": True}
    if num_sentences == "all":
        return {"num_inputs": None, "at_most": False}
    return {"num_inputs": num_sentences, "at_most": False}


def parse_num_sentences(text: str | None) -> int | str | None:
    """``--num-sentences``: ``"all"``, a positive integer, or None (the default, see SpectrumConfig)."""
    if text is None:
        return None
    t = text.strip().lower()
    if t == "all":
        return "all"
    try:
        value = int(t.replace(",", "").replace("_", ""))
    except ValueError:
        value = 0
    if value < 1:
        raise InputError(f"--num-sentences must be an integer >= 1 or 'all', got {text!r}")
    return value


def parse_shard(text: str | None) -> tuple[int, int] | None:
    """``"i/N"`` → (i, N); ``"auto"`` reads RANK and WORLD_SIZE (torchrun, accelerate)."""
    import os

    if text is None:
        return None
    if text == "auto":
        if "RANK" not in os.environ or "WORLD_SIZE" not in os.environ:
            raise InputError("--shard auto needs the RANK and WORLD_SIZE environment variables (set by torchrun / accelerate launch)")
        text = f"{os.environ['RANK']}/{os.environ['WORLD_SIZE']}"
    try:
        i, n = (int(p) for p in text.split("/"))
    except ValueError:
        raise InputError(f"--shard must be INDEX/COUNT (e.g. 0/4) or auto, got {text!r}") from None
    if n < 1 or not 0 <= i < n:
        raise InputError(f"--shard must be INDEX/COUNT with 0 <= INDEX < COUNT, got {text!r}")
    return i, n


@dataclass
class SpectrumOutcome:
    out: Path
    status: str  # "complete", "partial" (max-time) or "interrupted"
    inputs_done: int
    inputs_total: int
    wall_time_s: float


def _pad_batch(batch: list[list[int]], pad_id: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Right-pad token lists → input_ids (B, n_max) and attention_mask (B, n_max)."""
    n = max(len(x) for x in batch)
    ids = torch.full((len(batch), n), pad_id, dtype=torch.long)
    mask = torch.zeros((len(batch), n), dtype=torch.long)
    for b, x in enumerate(batch):
        ids[b, : len(x)] = torch.tensor(x, dtype=torch.long)
        mask[b, : len(x)] = 1
    return ids, mask


# ---------------------------------------------------------------------------------------
# The checkpoint: one verified file
# ---------------------------------------------------------------------------------------
@dataclass
class RunState:
    """A verified ``state.npz``: the aggregate and everything needed to trust it.

    ``covered`` holds the indices, in the seeded selection of the whole run, of the
    inputs the aggregate contains (shard i of N covers i, i + N, i + 2N, ...).
    """

    path: Path
    acc: SpectrumAccumulator
    identity: dict[str, Any]
    inputs_done: int
    inputs_total: int  # inputs this run (or shard) has to cover
    selection_total: int  # inputs in the whole run's selection (all shards)
    covered: np.ndarray  # (inputs_done,) int64
    wall_time_s: float
    missing_shards: list[int]  # shards absent from a partial merge (empty otherwise)
    merge_of: int  # N when this state is a merge of N shards, 0 for a run
    inputs_sha256: str | None = None  # digest of the whole run's selection (None: written before it was kept)

    @property
    def complete(self) -> bool:
        return self.inputs_done == self.inputs_total and not self.missing_shards


def shard_indices(shard: tuple[int, int] | None, count: int) -> np.ndarray:
    """Indices in the whole selection of a shard's first ``count`` inputs, shape (count,)."""
    i, n = shard if shard is not None else (0, 1)
    return i + n * np.arange(count, dtype=np.int64)


def write_state(path: Path, acc: SpectrumAccumulator, *, identity: dict[str, Any], inputs_done: int, inputs_total: int,
                selection_total: int, covered: np.ndarray, wall_time_s: float, missing_shards: list[int] = (),
                merge_of: int = 0, inputs_sha256: str | None = None) -> None:
    """Write the aggregate and the record of what it covers as one atomic, digested file."""
    save_state(path, acc, {
        "identity": np.asarray(json.dumps(identity, sort_keys=True)),
        "inputs_done": np.asarray(inputs_done, dtype=np.int64),
        "inputs_total": np.asarray(inputs_total, dtype=np.int64),
        "selection_total": np.asarray(selection_total, dtype=np.int64),
        "covered": np.asarray(covered, dtype=np.int64),
        "wall_time_s": np.asarray(float(wall_time_s)),
        "missing_shards": np.asarray(list(missing_shards), dtype=np.int64),
        "merge_of": np.asarray(merge_of, dtype=np.int64),
        **({"inputs_sha256": np.asarray(inputs_sha256)} if inputs_sha256 else {}),
    })


def read_state(path: Path) -> RunState:
    """Load and verify ``path``: readable, digest, structure, statistics, coverage.

    Raises :class:`ResultsError` naming the file and the failed check; changes nothing.
    """
    path = Path(path)
    acc, extra = load_state(path)  # readable, digest, structure, counts vs inputs_done, ranges
    needed = ("identity", "inputs_done", "inputs_total", "selection_total", "covered")
    missing = [k for k in needed if k not in extra]
    if missing:
        raise ResultsError(f"checkpoint {path} fails the structure check: no {', '.join(missing)} "
                           "(written by an older attnspec?); recompute with --overwrite")
    try:
        identity = json.loads(str(extra["identity"]))
    except json.JSONDecodeError:
        raise ResultsError(f"checkpoint {path} fails the identity check: its identity is not JSON") from None
    done, total, sel = (int(extra[k]) for k in ("inputs_done", "inputs_total", "selection_total"))
    covered = np.asarray(extra["covered"], dtype=np.int64).ravel()
    if len(covered) != done:
        raise ResultsError(f"checkpoint {path} fails the coverage check: it records {done} inputs done but covers "
                           f"{len(covered)}")
    if not 0 <= done <= total <= sel:
        raise ResultsError(f"checkpoint {path} fails the coverage check: {done} done of {total} (selection {sel})")
    if len(covered) and (len(np.unique(covered)) != len(covered) or covered.min() < 0 or covered.max() >= sel):
        raise ResultsError(f"checkpoint {path} fails the coverage check: input indices repeated or outside 0..{sel - 1}")
    missing_shards = [int(v) for v in np.asarray(extra.get("missing_shards", np.zeros(0))).ravel()]
    merge_of = int(extra.get("merge_of", 0))
    if not merge_of:  # a run (or shard) processes its inputs in order: it covers a prefix of them
        shard = identity.get("shard")
        try:
            pair = None if shard is None else tuple(int(v) for v in str(shard).split("/"))
        except ValueError:
            raise ResultsError(f"checkpoint {path} fails the identity check: shard {shard!r} is not INDEX/COUNT") from None
        if not np.array_equal(covered, shard_indices(pair, done)):
            raise ResultsError(f"checkpoint {path} fails the coverage check: the inputs it records are not the first "
                               f"{done} of its {'shard ' + str(shard) if shard else 'run'}")
    digest = str(extra["inputs_sha256"]) if "inputs_sha256" in extra else None
    return RunState(path, acc, identity, done, total, sel, covered, float(extra.get("wall_time_s", 0.0)),
                    missing_shards, merge_of, digest)


def _recorded_inputs(st: RunState, meta: dict[str, Any] | None) -> tuple[str | None, str | None]:
    """(inputs_sha256, selection rule) the checkpoint's inputs were drawn with: from the state,
    else (a state written before it kept the digest) from its meta.json's corpus record."""
    corpus = (meta or {}).get("corpus") or {}
    return st.inputs_sha256 or corpus.get("inputs_sha256"), selection_of(corpus)


def _check_same_inputs(st: RunState, out: Path, corpus_meta: dict[str, Any]) -> None:
    """Refuse to add to a checkpoint made on other inputs than this run draws (another corpus
    file, tokenizer or selection rule): the aggregate would silently mix two selections."""
    meta = None
    if (out / META_FILE).is_file():
        with contextlib.suppress(ResultsError):
            meta = read_meta(out)
    recorded, rule = _recorded_inputs(st, meta)
    now = corpus_meta.get("inputs_sha256")
    if recorded is None or now is None or recorded == now:
        return
    hint = ""
    if rule == "documents":
        hint = "; it was drawn with --selection documents: resume with that option"
    raise ResultsError(f"checkpoint {st.path} was computed on other inputs than this run draws (inputs_sha256 "
                       f"{recorded[:12]}... there, {now[:12]}... now: the corpus, the tokenizer or the selection "
                       f"changed){hint}; nothing was changed")


def _identity_diffs(stored: dict[str, Any], wanted: dict[str, Any]) -> list[str]:
    wanted = json.loads(json.dumps(wanted))
    keys = sorted(set(stored) | set(wanted))
    return [f"{k}: {stored.get(k)!r} there vs {wanted.get(k)!r} now" for k in keys if stored.get(k) != wanted.get(k)]


def up_to_date(cfg: SpectrumConfig) -> bool:
    """True when ``cfg.out`` already holds this very run, complete, with its tables: there is
    nothing to compute, and the command reports the run as ``make`` does ("up to date").

    Asked before the model loads. ``--overwrite`` (recompute) and ``--resume`` keep their
    meaning (False here). An ``--out`` holding another run is refused in one line
    (:class:`ResultsError` naming the parameters that differ), as before.
    """
    if cfg.overwrite or cfg.resume or not (cfg.out / META_FILE).is_file():
        return False
    check_same_run(cfg.out, cfg.identity(), kind=KIND)  # raises on another run's directory
    meta = read_meta(cfg.out)
    tables = all((cfg.out / f"{name}.parquet").is_file() for name in ("spectrum", "metrics"))
    return meta.get("status") == "complete" and tables and meta.get("inputs_done") == meta.get("inputs_total")


def prepare_out(cfg: SpectrumConfig) -> tuple[bool, RunState | None]:
    """Decide, before anything is computed, whether ``cfg.out`` is started, resumed or refused.

    Returns (resuming, verified state). The caller holds the output lock. The state file,
    not meta.json, decides what a resume continues from; a directory whose meta.json was
    deleted but whose state is intact can still be resumed (its identity is in the state).
    """
    out = cfg.out
    state_path = out / STATE_FILE
    if not holds_files(out):
        return False, None
    if not (out / META_FILE).is_file():
        if not state_path.is_file():
            check_same_run(out, cfg.identity(), kind=KIND)  # raises: not empty, no meta.json
        st = read_state(state_path)
        diffs = _identity_diffs(st.identity, cfg.identity())
        if diffs:
            raise ResultsError(f"--out {out} holds a checkpoint of a different run ({'; '.join(diffs)}); "
                               "choose another directory")
        if cfg.overwrite:
            return False, None
        if not cfg.resume:
            raise ResultsError(f"--out {out} holds a checkpoint of this run ({st.inputs_done} of {st.inputs_total} "
                               "inputs) but no meta.json; pass --resume to continue it (meta.json is rebuilt) "
                               "or --overwrite to start again")
        return _resumable(cfg, st)
    check_same_run(out, cfg.identity(), kind=KIND)
    if cfg.overwrite:
        return False, None
    meta = read_meta(out)
    status = meta.get("status")
    if not cfg.resume:
        if status == "complete":
            raise ResultsError(f"--out {out} already holds this run, complete; use --overwrite to recompute "
                               "or choose another --out")
        raise ResultsError(
            f"--out {out} holds a {status} run of this job ({meta.get('inputs_done')} of {meta.get('inputs_total')} "
            "inputs); pass --resume to continue it or --overwrite to start again"
        )
    st = read_state(state_path)
    diffs = _identity_diffs(st.identity, cfg.identity())
    if diffs:
        raise ResultsError(f"checkpoint {state_path} fails the identity check: it belongs to another run "
                           f"({'; '.join(diffs)}); nothing was changed")
    return _resumable(cfg, st)


def _resumable(cfg: SpectrumConfig, st: RunState) -> tuple[bool, RunState]:
    if st.merge_of and not st.complete:
        missing = f"shards {', '.join(f'{i}/{st.merge_of}' for i in st.missing_shards)} missing" if st.missing_shards \
            else f"{st.inputs_done} of {st.inputs_total} inputs"
        raise ResultsError(f"--out {cfg.out} holds a partial merge ({missing}); it cannot be resumed: finish the "
                           "shards (--resume in each) and merge them again")
    if st.complete:
        raise ResultsError(f"--out {cfg.out} already holds this run, complete; nothing to resume "
                           "(use --overwrite to recompute)")
    if not np.array_equal(st.covered, shard_indices(cfg.shard, st.inputs_done)):
        raise ResultsError(f"checkpoint {st.path} fails the coverage check: it does not cover the first "
                           f"{st.inputs_done} inputs of this {'shard' if cfg.shard else 'run'}, so it cannot be resumed")
    return True, st


@dataclass(frozen=True)
class _Progress:
    """The aggregate and how many inputs it holds, swapped in as ONE object.

    Each batch is added to a copy, and the copy replaces the previous progress in a single
    assignment, so an interruption at any point (even between the update and the count)
    leaves a consistent pair for the checkpoint.
    """

    acc: SpectrumAccumulator
    done: int


def run_spectrum(
    cfg: SpectrumConfig,
    *,
    progress: bool = True,
    encoder: Any | None = None,
    texts: list[str] | None = None,
    on_checkpoint: Callable[[int], None] | None = None,
    inputs: Any | None = None,
) -> SpectrumOutcome:
    """Run (or resume) the spectrum job described by ``cfg``; write results to ``cfg.out``.

    The one implementation behind ``attnspec spectrum`` and :func:`attnspec.spectrum`.
    ``encoder`` is an already-loaded :class:`attnspec.models.LoadedModel` (the Python API
    and the tests pass one; default: load ``cfg.model``). ``texts`` replaces the corpus
    ``cfg.data`` by a list of texts (``cfg.data`` then only labels them).
    ``cfg.out`` is checked (writable, not held by another process, holding nothing or a
    resumable checkpoint of this run) before anything is computed, and locked for the
    whole run. SIGTERM is handled like Ctrl-C: the partial result is saved, resumable.
    ``on_checkpoint(inputs_done)`` is called after each checkpoint (tests use it to
    simulate an interruption). ``inputs`` (an :class:`attnspec.corpora.Inputs` of at most
    ``seq_len`` tokens each) replaces the corpus draw; the multi-length job passes the same
    documents cut to each length.
    """
    cfg.validate()
    with writing_to(cfg.out, f"attnspec spectrum --model {cfg.model} --data {cfg.data}", kind=KIND,
                    nests_in=(SCALING_KIND,)), sigterm_as_interrupt():
        return _run_locked(cfg, progress=progress, encoder=encoder, texts=texts, on_checkpoint=on_checkpoint, inputs=inputs)


def _run_locked(cfg: SpectrumConfig, *, progress: bool, encoder: Any | None, texts: list[str] | None,
                on_checkpoint: Callable[[int], None] | None, inputs: Any | None = None) -> SpectrumOutcome:
    from attnspec.capture import LayerAttention, capture_attention
    from attnspec.corpora import load_inputs
    from attnspec.models import load_model
    from attnspec.windows import window_violation

    t_start = time.perf_counter()
    resuming, previous = prepare_out(cfg)

    if encoder is None:
        encoder = load_model(cfg.model, device=cfg.device, dtype=cfg.dtype)
    if cfg.seq_len > encoder.max_seq_len:
        raise InputError(
            f"--seq-len {cfg.seq_len} exceeds what {cfg.model} allows ({encoder.max_seq_len} tokens, special tokens included)"
        )
    method = resolve_method(cfg.svd_method, encoder.device)
    batch_size = cfg.batch_size if cfg.batch_size is not None else DEFAULT_BATCH_SIZE.get(encoder.device.type, 1)
    from attnspec.errors import check_memory

    # one layer's scores and P for the whole batch, (B, H, n, n) each, and the copy the SVD factorises
    if encoder.device.type == "cpu":  # (a GPU's memory is not what /proc/meminfo reports)
        check_memory(f"--batch-size {batch_size} at --seq-len {cfg.seq_len} ({encoder.num_heads} heads)",
                     3 * batch_size * encoder.num_heads * cfg.seq_len**2 * max(4, torch.finfo(encoder.dtype).bits // 8))
    if inputs is None:
        inputs = load_inputs(
            cfg.data if texts is None else texts, encoder.tokenizer, seq_len=cfg.seq_len,
            **inputs_request(cfg.num_sentences), seed=cfg.seed, split=cfg.split, data_dir=cfg.data_dir,
            short_policy=cfg.short_policy, count_available=cfg.count_available, selection=cfg.selection,
        )
    selected = inputs.input_ids
    selection_total = len(selected)
    positions = np.arange(len(selected))  # place of each input in the seeded selection
    if cfg.shard is not None:
        i, n = cfg.shard
        selected = selected[i::n]
        positions = positions[i::n]
    total = len(selected)
    causal = bool(encoder.causal)  # row i of a causal P has i + 1 allowed entries (row entropy)
    windows = _layer_windows(encoder)  # causal sliding window per layer (None: full), before any work
    # per layer: P lower-triangular (encoder-decoders mix kinds; decoder-only models are causal throughout)
    layer_causal = list(encoder.layer_causal) or [causal] * encoder.num_layers

    shape = (encoder.num_layers, encoder.num_heads, cfg.seq_len)
    state = _Progress(SpectrumAccumulator(*shape, rank_tol=cfg.rank_tol), 0)
    wall_before = 0.0
    if resuming:
        assert previous is not None
        if previous.acc.shape != shape:
            raise ResultsError(f"checkpoint {previous.path} fails the identity check: its aggregate has shape "
                               f"{previous.acc.shape}, this run needs {shape}")
        if (previous.inputs_total, previous.selection_total) != (total, selection_total):
            raise ResultsError(f"checkpoint {previous.path} fails the identity check: it belongs to a selection of "
                               f"{previous.selection_total} inputs ({previous.inputs_total} in this shard), this run "
                               f"selects {selection_total} ({total}); was the corpus changed?")
        _check_same_inputs(previous, cfg.out, inputs.meta)
        state = _Progress(previous.acc, previous.inputs_done)
        wall_before = previous.wall_time_s

    base_meta: dict[str, Any] = {
        "kind": KIND,
        "identity": cfg.identity(),
        "config": {k: (str(v) if isinstance(v, Path) else v) for k, v in asdict(cfg).items()},
        **encoder.describe(),
        "corpus": inputs.meta,
        "padding_policy": (
            f"short_policy={cfg.short_policy}; padding rows and columns removed (P restricted to real tokens); "
            "a matrix shorter than seq_len counts as zero-extended (its curve is 1 past its length)"
            + ("; causal P: lower-triangular, its real block is the P of the input alone" if encoder.causal else "")
        ),
        "svd_method": method,
        "svd_method_error": SVD_METHOD_ERROR.get(method),
        **_attention_meta(encoder, windows),
        "batch_size": batch_size,
        "batch_size_source": "--batch-size" if cfg.batch_size is not None else f"default for {encoder.device.type}",
        "seed": cfg.seed,
        "inputs_total": total,
        "environment": environment_meta(),
        # how the figures were drawn (attnspec.figure_record.FIGURES_KEY): kept across --resume
        **({"figures": _recorded_figures(cfg.out)} if resuming and _recorded_figures(cfg.out) else {}),
    }
    pad_id = encoder.pad_token_id  # decoder tokenizers often have no pad token; padding is masked anyway

    def checkpoint(snap: _Progress, status: str, t_run: float) -> None:
        # state.npz first: it alone is trusted on resume; tables and meta.json follow from it
        wall = round(wall_before + t_run, 3)
        with result_files(cfg.out):  # all renamed together at the end, meta.json last
            _write_checkpoint(snap, status, wall)

    def _write_checkpoint(snap: _Progress, status: str, wall: float) -> None:
        write_state(cfg.out / STATE_FILE, snap.acc, identity=cfg.identity(), inputs_done=snap.done, inputs_total=total,
                    selection_total=selection_total, covered=shard_indices(cfg.shard, snap.done), wall_time_s=wall,
                    inputs_sha256=inputs.meta.get("inputs_sha256"))
        tables = snap.acc.tables()
        write_table(cfg.out, "spectrum", tables.spectrum, csv=cfg.csv)
        write_table(cfg.out, "metrics", _with_kinds(tables.metrics, base_meta), csv=cfg.csv)
        write_table(cfg.out, "inputs", tables.inputs, csv=cfg.csv)
        write_meta(cfg.out, {**base_meta, "status": status, "inputs_done": snap.done, "wall_time_s": wall})

    # Singular values are computed as each layer's P appears, and added to a fresh batch
    # aggregate; only once the whole batch went through is it merged into a copy of the
    # running aggregate, which then replaces it (one assignment, see _Progress).
    pending: list[tuple[int, torch.Tensor, torch.Tensor]] = []

    scratch: list[torch.Tensor] = []  # row_entropy's workspace, 4 MB for the whole run
    window_checked: set[int] = set()  # layers whose window was checked against P (first long-enough batch)

    def sink(la: LayerAttention) -> None:
        if not scratch or scratch[0].device != la.probs.device:
            scratch[:] = [torch.empty(max(1 << 20, la.probs.shape[-1]), dtype=torch.float32, device=la.probs.device)]
        # (B, H, n) float64 singular values, descending; (B, H) mean normalised row entropy
        window = windows[la.layer]
        if window is not None and la.layer not in window_checked:
            worst = window_violation(la.probs, la.mask, window)
            if worst is not None and worst > 0:
                raise ModelLoadError(f"layer {la.layer} of {cfg.model}: its config gives a sliding window of {window} "
                                     f"but P is {worst:.3g} outside it; the model does not apply the window its "
                                     "config declares, so its row entropy cannot be normalised")
            if worst is not None:  # checked once on an input longer than the window
                window_checked.add(la.layer)
        pending.append((la.layer, singular_values(la.probs, method),
                        row_entropy(la.probs, la.mask, causal=layer_causal[la.layer], window=window,
                                    workspace=scratch[0])))

    status = "complete"
    bar = None
    if progress:
        from tqdm.auto import tqdm

        bar = tqdm(total=total, initial=state.done, unit="sent", desc=f"spectrum {cfg.model} · {cfg.data}",
                   dynamic_ncols=True)
    batches_since = 0
    try:
        with capture_attention(encoder.model, sink) as cap:
            while state.done < total:
                if cfg.max_time is not None and time.perf_counter() - t_start > cfg.max_time:
                    status = "partial"
                    break
                batch = selected[state.done : state.done + batch_size]
                ids, mask = _pad_batch(batch, pad_id)
                pending.clear()
                cap.forward(ids.to(encoder.device), mask.to(encoder.device))
                batch_acc = SpectrumAccumulator(*shape, rank_tol=cfg.rank_tol)
                batch_acc.add_batch(pending, positions[state.done : state.done + len(batch)])
                pending.clear()
                updated = state.acc.copy()
                updated.merge(batch_acc)
                _before_commit()
                state = _Progress(updated, state.done + len(batch))  # the commit: one assignment
                if bar is not None:
                    bar.update(len(batch))
                batches_since += 1
                if batches_since >= cfg.checkpoint_every and state.done < total:
                    checkpoint(state, "partial", time.perf_counter() - t_start)
                    batches_since = 0
                    if on_checkpoint is not None:
                        on_checkpoint(state.done)
    except KeyboardInterrupt:
        status = "interrupted"
    finally:
        if bar is not None:
            bar.close()
    if status == "complete" and state.done < total:  # pragma: no cover - defensive
        status = "partial"
    checkpoint(state, status, time.perf_counter() - t_start)
    return SpectrumOutcome(cfg.out, status, state.done, total, wall_before + time.perf_counter() - t_start)


def _layer_windows(encoder: Any) -> list[int | None]:
    """Each captured layer's causal sliding window, from the model's config (attnspec.windows)."""
    from attnspec.windows import check_windows, layer_windows

    windows = layer_windows(encoder.config, encoder.num_layers)
    check_windows(windows, causal=bool(encoder.causal), model=str(encoder.name))
    return windows


def _attention_meta(encoder: Any, windows: list[int | None]) -> dict[str, Any]:
    """meta.json: per layer, the kind of attention and the window its row entropy is normalised by."""
    own = "decoder_self_causal" if encoder.causal else "encoder_self"
    kinds = [own if k == "self" else k for k in (encoder.kinds or ["self"] * len(windows))]
    meta: dict[str, Any] = {
        "layers": [{"layer": i, "kind": k, "sliding_window": w} for i, (k, w) in enumerate(zip(kinds, windows))],
        "row_entropy_normaliser": "log of the positions row i may attend to: the real length (encoder self, "
                                  "cross), real positions <= i (causal), at most the layer's sliding window w",
    }
    if "cross" in kinds:
        meta["decoder_input"] = ("teacher-forced on the same window: decoder_start_token_id followed by the encoder "
                                 "input shifted right by one (same length, same padding), so cross-attention P is "
                                 "n x n with the encoder's real positions as columns")
    return meta


def _with_kinds(metrics: Any, meta: dict[str, Any]) -> Any:
    """The metrics table with each layer's kind of attention (meta.json ``layers``), when recorded."""
    kinds = {int(d["layer"]): str(d["kind"]) for d in meta.get("layers") or []}
    if not kinds or "layer" not in metrics:
        return metrics
    out = metrics.copy()
    out.insert(int(list(out.columns).index("layer")) + 1, "kind", out["layer"].map(kinds))
    return out


def _before_commit() -> None:
    """A no-op between a batch's aggregate update and its commit; fault-injection tests
    replace it to interrupt the run exactly there."""


def merge_runs(dirs: list[Path], out: Path, *, csv: bool = False, allow_partial: bool = False) -> dict[str, Any]:
    """Merge shard directories of one run into ``out`` (tables, state and meta).

    Each shard's verified state says which shard i of N it is and which inputs it covers.
    The merge refuses shards of different runs, a shard given twice, overlapping inputs,
    and, unless ``allow_partial``, a missing or unfinished shard; with ``allow_partial``
    the result is marked ``status: partial`` with the missing and unfinished shards
    listed (and a later ``--resume`` refuses it instead of taking it for complete).
    """
    if len(dirs) < 1:
        raise InputError("merge needs at least one results directory")
    out = Path(out)
    with writing_to(out, "attnspec merge", kind=KIND, nests_in=(SCALING_KIND,)):  # usable and ours before anything is read
        if holds_files(out):
            raise ResultsError(f"--out {out} is not empty; choose a new directory for the merged result")
        return _merge_locked(dirs, out, csv=csv, allow_partial=allow_partial)


def _merge_locked(dirs: list[Path], out: Path, *, csv: bool, allow_partial: bool) -> dict[str, Any]:
    states: list[RunState] = []
    metas: list[dict[str, Any]] = []
    for d in dirs:
        meta = read_meta(d)
        if meta.get("kind") != KIND:
            raise ResultsError(f"{d} holds a {meta.get('kind')!r} result, not a spectrum run")
        states.append(read_state(Path(d) / STATE_FILE))
        metas.append(meta)
    base = {k: v for k, v in states[0].identity.items() if k != "shard"}
    for d, st in zip(dirs[1:], states[1:]):
        other = {k: v for k, v in st.identity.items() if k != "shard"}
        diffs = [f"{k}: {base.get(k)!r} vs {other.get(k)!r}" for k in sorted(set(base) | set(other))
                 if base.get(k) != other.get(k)]
        if diffs:
            raise ResultsError(f"{d} is not a shard of the same run as {dirs[0]} ({'; '.join(diffs)})")
    shards = [st.identity.get("shard") for st in states]
    if len(dirs) > 1 and any(s is None for s in shards):
        whole = [str(d) for d, s in zip(dirs, shards) if s is None][0]
        raise ResultsError(f"{whole} is a whole run, not a shard; its inputs overlap every shard of the same run")
    if len(set(map(str, shards))) != len(shards):
        dup = sorted({str(s) for s in shards if list(map(str, shards)).count(str(s)) > 1})
        raise ResultsError(f"the same shard {', '.join(dup)} appears twice among {', '.join(map(str, dirs))}")
    count = 1
    present: list[int] = []
    if shards[0] is not None:
        pairs = [tuple(int(v) for v in s.split("/")) for s in shards]
        counts = {n for _, n in pairs}
        if len(counts) > 1:
            raise ResultsError(f"shards of different splits cannot be merged: {', '.join(shards)}")
        count = counts.pop()
        present = [i for i, _ in pairs]
    else:
        present = [0]
    missing = sorted(set(range(count)) - set(present))
    unfinished = [f"{s} ({st.inputs_done} of {st.inputs_total} inputs)" for s, st in zip(shards, states)
                  if not st.complete]
    if (missing or unfinished) and not allow_partial:
        what = []
        if missing:
            what.append(f"shard{'s' if len(missing) > 1 else ''} {', '.join(f'{i}/{count}' for i in missing)} "
                        f"missing")
        if unfinished:
            what.append(f"unfinished: {', '.join(unfinished)}")
        raise ResultsError(f"cannot merge an incomplete run ({'; '.join(what)}); finish and add the missing shards "
                           "(--resume), or pass --allow-partial to write a result marked partial")
    covered = np.concatenate([st.covered for st in states])
    if len(np.unique(covered)) != len(covered):
        raise ResultsError("the shards cover some inputs twice; they are not disjoint shards of one run")
    selection_total = states[0].selection_total
    if any(st.selection_total != selection_total for st in states):
        raise ResultsError("the shards come from selections of different sizes (was the corpus changed?)")
    digests = {str(d): _recorded_inputs(st, meta)[0] for d, st, meta in zip(dirs, states, metas)}
    known = {v for v in digests.values() if v is not None}
    if len(known) > 1:
        listing = ", ".join(f"{d}: {v[:12]}..." for d, v in digests.items() if v is not None)
        raise ResultsError(f"the shards were drawn from different inputs (inputs_sha256 {listing}); "
                           "the corpus, the tokenizer or the selection differs between them")
    merged = merge_accumulators([st.acc for st in states])
    identity = {**base, "shard": None}
    done = int(len(covered))
    complete = not missing and not unfinished
    meta = {
        **{k: v for k, v in metas[0].items()
           if k not in ("identity", "inputs_done", "inputs_total", "wall_time_s", "status", "environment")},
        "identity": identity,
        "status": "complete" if complete else "partial",
        "inputs_done": done,
        "inputs_total": selection_total,
        "missing_shards": [f"{i}/{count}" for i in missing],
        "unfinished_shards": unfinished,
        "wall_time_s": round(sum(st.wall_time_s for st in states), 3),
        "merged_from": [{"dir": str(d), "shard": s, "inputs_done": st.inputs_done}
                        for d, s, st in zip(dirs, shards, states)],
        "environment": environment_meta(),
    }
    tables = merged.tables()
    with result_files(out):  # whole or nothing: a full disk leaves no lone state.npz
        # a partial merge records its missing shards in the state too, so no resume takes it for whole
        write_state(out / STATE_FILE, merged, identity=identity, inputs_done=done, inputs_total=selection_total,
                    selection_total=selection_total, covered=np.sort(covered), wall_time_s=meta["wall_time_s"],
                    missing_shards=missing, merge_of=count, inputs_sha256=known.pop() if known else None)
        write_table(out, "spectrum", tables.spectrum, csv=csv)
        write_table(out, "metrics", _with_kinds(tables.metrics, meta), csv=csv)
        write_table(out, "inputs", tables.inputs, csv=csv)
        write_meta(out, meta)
    return meta
