"""The spectrum job: corpus → encoder under capture → singular values → aggregates → results.

One function, :func:`run_spectrum`, does the whole job for the CLI and for library users.
It is resumable: every ``checkpoint_every`` batches (and on Ctrl-C or ``max_time``) the
aggregate state and the tables computed so far are written atomically, and ``resume=True``
continues from the inputs already done. Shards (``shard=(i, N)``) take every N-th input of
the same seeded selection, so ``attnspec merge`` of all shards equals a single run.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import torch

from attnspec.corpora import SHORT_POLICIES
from attnspec.errors import InputError, ResultsError
from attnspec.results import check_same_run, environment_meta, read_meta, write_meta, write_table
from attnspec.spectrum import (
    METHODS,
    SpectrumAccumulator,
    load_state,
    merge_accumulators,
    resolve_method,
    save_state,
    singular_values,
)

STATE_FILE = "state.npz"
KIND = "spectrum"


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
    batch_size: int = 4
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

    def validate(self) -> None:
        if self.seq_len < 2:
            raise InputError(f"--seq-len must be >= 2, got {self.seq_len}")
        if self.num_sentences is not None and self.num_sentences != "all":
            if isinstance(self.num_sentences, bool) or not isinstance(self.num_sentences, int) or self.num_sentences <= 0:
                raise InputError(f"--num-sentences must be an integer >= 1 or 'all', got {self.num_sentences!r}")
        if self.batch_size < 1:
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
            "shard": None if self.shard is None else f"{self.shard[0]}/{self.shard[1]}",
        }


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


def prepare_out(cfg: SpectrumConfig) -> tuple[bool, dict[str, Any] | None]:
    """Check ``cfg.out`` before anything is computed. Returns (resuming, previous meta)."""
    same = check_same_run(cfg.out, cfg.identity(), kind=KIND)
    if not same:
        return False, None
    meta = read_meta(cfg.out)
    status = meta.get("status")
    if cfg.overwrite:
        return False, None
    if cfg.resume:
        if status == "complete":
            raise ResultsError(f"--out {cfg.out} already holds this run, complete; nothing to resume (use --overwrite to recompute)")
        return True, meta
    if status == "complete":
        raise ResultsError(f"--out {cfg.out} already holds this run, complete; use --overwrite to recompute or choose another --out")
    raise ResultsError(
        f"--out {cfg.out} holds a {status} run of this job ({meta.get('inputs_done')} of {meta.get('inputs_total')} inputs); "
        "pass --resume to continue it or --overwrite to start again"
    )


def run_spectrum(
    cfg: SpectrumConfig,
    *,
    progress: bool = True,
    encoder: Any | None = None,
    on_checkpoint: Callable[[int], None] | None = None,
) -> SpectrumOutcome:
    """Run (or resume) the spectrum job described by ``cfg``; write results to ``cfg.out``.

    ``encoder`` lets tests pass an already-built :class:`attnspec.models.Encoder`.
    ``on_checkpoint(inputs_done)`` is called after each checkpoint (tests use it to
    simulate an interruption).
    """
    from attnspec.capture import LayerAttention, capture_attention
    from attnspec.corpora import load_inputs
    from attnspec.models import load_encoder

    t_start = time.perf_counter()
    cfg.validate()
    resuming, previous = prepare_out(cfg)

    if encoder is None:
        encoder = load_encoder(cfg.model, device=cfg.device, dtype=cfg.dtype)
    if cfg.seq_len > encoder.max_seq_len:
        raise InputError(
            f"--seq-len {cfg.seq_len} exceeds what {cfg.model} allows ({encoder.max_seq_len} tokens, special tokens included)"
        )
    method = resolve_method(cfg.svd_method, encoder.device)
    inputs = load_inputs(
        cfg.data, encoder.tokenizer, seq_len=cfg.seq_len,
        num_inputs={None: DEFAULT_NUM_SENTENCES, "all": None}.get(cfg.num_sentences, cfg.num_sentences),  # type: ignore[arg-type]
        at_most=cfg.num_sentences is None, seed=cfg.seed,
        split=cfg.split, data_dir=cfg.data_dir, short_policy=cfg.short_policy,
    )
    selected = inputs.input_ids
    if cfg.shard is not None:
        i, n = cfg.shard
        selected = selected[i::n]
    total = len(selected)

    acc = SpectrumAccumulator(encoder.num_layers, encoder.num_heads, cfg.seq_len)
    done = 0
    wall_before = 0.0
    if resuming:
        acc, extra = load_state(cfg.out / STATE_FILE)
        done = int(extra.get("inputs_done", np.asarray(0)))
        wall_before = float(previous.get("wall_time_s", 0.0)) if previous else 0.0
        if acc.shape != (encoder.num_layers, encoder.num_heads, cfg.seq_len):
            raise ResultsError(f"--out {cfg.out}: stored aggregate has shape {acc.shape}, this run needs "
                               f"{(encoder.num_layers, encoder.num_heads, cfg.seq_len)}")

    cfg.out.mkdir(parents=True, exist_ok=True)
    base_meta: dict[str, Any] = {
        "kind": KIND,
        "identity": cfg.identity(),
        "config": {k: (str(v) if isinstance(v, Path) else v) for k, v in asdict(cfg).items()},
        **encoder.describe(),
        "corpus": inputs.meta,
        "padding_policy": (
            f"short_policy={cfg.short_policy}; padding rows and columns removed (P restricted to real tokens); "
            "a matrix shorter than seq_len counts as zero-extended (its curve is 1 past its length)"
        ),
        "svd_method": method,
        "seed": cfg.seed,
        "inputs_total": total,
        "environment": environment_meta(),
        # how the figures were drawn (attnspec.plots.spectrum.FIGURES_KEY): kept across --resume
        **({"figures": previous["figures"]} if resuming and previous and "figures" in previous else {}),
    }
    pad_id = encoder.tokenizer.pad_token_id if encoder.tokenizer.pad_token_id is not None else 0

    def checkpoint(status: str, t_run: float) -> None:
        save_state(cfg.out / STATE_FILE, acc, {"inputs_done": np.asarray(done)})
        tables = acc.tables()
        write_table(cfg.out, "spectrum", tables.spectrum, csv=cfg.csv)
        write_table(cfg.out, "metrics", tables.metrics, csv=cfg.csv)
        write_meta(cfg.out, {**base_meta, "status": status, "inputs_done": done,
                             "wall_time_s": round(wall_before + t_run, 3)})

    # Singular values are computed as each layer's P appears, but added to the aggregate
    # only once the whole batch has gone through, so an interruption mid-forward never
    # leaves layers with different counts.
    pending: list[tuple[int, torch.Tensor]] = []

    def sink(la: LayerAttention) -> None:
        pending.append((la.layer, singular_values(la.probs, method)))  # (B, H, n) float64, descending

    status = "complete"
    bar = None
    if progress:
        from tqdm.auto import tqdm

        bar = tqdm(total=total, initial=done, unit="sent", desc=f"spectrum {cfg.model} · {cfg.data}", dynamic_ncols=True)
    batches_since = 0
    try:
        with capture_attention(encoder.model, sink) as cap:
            while done < total:
                if cfg.max_time is not None and time.perf_counter() - t_start > cfg.max_time:
                    status = "partial"
                    break
                batch = selected[done : done + cfg.batch_size]
                ids, mask = _pad_batch(batch, pad_id)
                pending.clear()
                cap.forward(ids.to(encoder.device), mask.to(encoder.device))
                for layer, sv in pending:
                    acc.add(layer, sv)
                pending.clear()
                done += len(batch)
                if bar is not None:
                    bar.update(len(batch))
                batches_since += 1
                if batches_since >= cfg.checkpoint_every and done < total:
                    checkpoint("partial", time.perf_counter() - t_start)
                    batches_since = 0
                    if on_checkpoint is not None:
                        on_checkpoint(done)
    except KeyboardInterrupt:
        status = "interrupted"
    finally:
        if bar is not None:
            bar.close()
    if status == "complete" and done < total:  # pragma: no cover - defensive
        status = "partial"
    checkpoint(status, time.perf_counter() - t_start)
    return SpectrumOutcome(cfg.out, status, done, total, wall_before + time.perf_counter() - t_start)


def merge_runs(dirs: list[Path], out: Path, *, csv: bool = False, allow_partial: bool = False) -> dict[str, Any]:
    """Merge shard directories of one run into ``out`` (tables, state and meta)."""
    if len(dirs) < 1:
        raise InputError("merge needs at least one results directory")
    accs, metas = [], []
    for d in dirs:
        meta = read_meta(d)
        if meta.get("kind") != KIND:
            raise ResultsError(f"{d} holds a {meta.get('kind')!r} result, not a spectrum run")
        if meta.get("status") != "complete" and not allow_partial:
            raise ResultsError(f"{d} is {meta.get('status')} ({meta.get('inputs_done')} of {meta.get('inputs_total')} inputs); "
                               "finish it with --resume or pass --allow-partial")
        acc, _ = load_state(Path(d) / STATE_FILE)
        accs.append(acc)
        metas.append(meta)
    base = {k: v for k, v in metas[0]["identity"].items() if k != "shard"}
    for d, m in zip(dirs[1:], metas[1:]):
        other = {k: v for k, v in m["identity"].items() if k != "shard"}
        diffs = [f"{k}: {base.get(k)!r} vs {other.get(k)!r}" for k in base if base.get(k) != other.get(k)]
        if diffs:
            raise ResultsError(f"{d} is not a shard of the same run as {dirs[0]} ({'; '.join(diffs)})")
    shards = [m["identity"].get("shard") for m in metas]
    if len(set(map(str, shards))) != len(shards):
        raise ResultsError(f"the same shard appears twice among {[str(d) for d in dirs]}: {shards}")
    if len(dirs) > 1:
        whole = [str(d) for d, s in zip(dirs, shards) if s is None]
        if whole:
            raise ResultsError(f"{whole[0]} is a whole run, not a shard; its inputs overlap every shard of the same run")
        counts = {s.split("/")[1] for s in shards}
        if len(counts) > 1:
            raise ResultsError(f"shards of different splits cannot be merged: {shards}")
    merged = merge_accumulators(accs)
    out = Path(out)
    if out.exists() and any(out.iterdir()):
        raise ResultsError(f"--out {out} is not empty; choose a new directory for the merged result")
    identity = {**base, "shard": None}
    done = int(sum(m.get("inputs_done", 0) for m in metas))
    meta = {
        **{k: v for k, v in metas[0].items() if k not in ("identity", "inputs_done", "inputs_total", "wall_time_s", "status", "environment")},
        "identity": identity,
        "status": "complete" if all(m.get("status") == "complete" for m in metas) else "partial",
        "inputs_done": done,
        "inputs_total": int(sum(m.get("inputs_total", 0) for m in metas)),
        "wall_time_s": round(sum(float(m.get("wall_time_s", 0.0)) for m in metas), 3),
        "merged_from": [{"dir": str(d), "shard": m["identity"].get("shard"), "inputs_done": m.get("inputs_done")} for d, m in zip(dirs, metas)],
        "environment": environment_meta(),
    }
    tables = merged.tables()
    out.mkdir(parents=True, exist_ok=True)
    save_state(out / STATE_FILE, merged, {"inputs_done": np.asarray(done)})
    write_table(out, "spectrum", tables.spectrum, csv=csv)
    write_table(out, "metrics", tables.metrics, csv=csv)
    write_meta(out, meta)
    return meta
