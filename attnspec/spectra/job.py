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
import sys
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch

from attnspec.errors import InputError, ModelLoadError, ResultsError
from attnspec.runtime.signals import sigterm_as_interrupt
from attnspec.spectra.aggregate import SpectrumAccumulator
from attnspec.spectra.centred import centred_stack
from attnspec.spectra.checkpoint import STATE_FILE, RunState, read_state, shard_indices, write_state
from attnspec.spectra.config import (
    DEFAULT_BATCH_SIZE,
    KIND,
    SpectrumConfig,
    SpectrumOutcome,
    draw_inputs,
)
from attnspec.spectra.data.selection import selection_of
from attnspec.spectra.engine import resolve_method, singular_values
from attnspec.spectra.metrics import row_entropy
from attnspec.spectra.result_checks import SCALING_KIND  # a run may live inside its scaling study
from attnspec.spectra.run_error import LONGN_COVERAGE, RunBounds, stated_error
from attnspec.storage.results import (
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


def _previous_meta(out: Path) -> dict[str, Any] | None:
    """A resumed run's meta.json, if it is there and readable."""
    try:
        return read_meta(out)
    except (ResultsError, OSError, ValueError):
        return None


def _recorded_figures(out: Path) -> dict[str, Any] | None:
    """The plotting choices a run's meta.json recorded, if it is there and readable (a
    resume trusts only state.npz; meta.json may be missing)."""
    try:
        return read_meta(out).get("figures")
    except (ResultsError, OSError, ValueError):
        return None


def _pad_batch(batch: list[list[int]], pad_id: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Right-pad token lists → input_ids (B, n_max) and attention_mask (B, n_max)."""
    n = max(len(x) for x in batch)
    ids = torch.full((len(batch), n), pad_id, dtype=torch.long)
    mask = torch.zeros((len(batch), n), dtype=torch.long)
    for b, x in enumerate(batch):
        ids[b, : len(x)] = torch.tensor(x, dtype=torch.long)
        mask[b, : len(x)] = 1
    return ids, mask


def _recorded_inputs(st: RunState, meta: dict[str, Any] | None) -> tuple[str | None, str | None]:
    """(inputs_sha256, selection rule) the checkpoint's inputs were drawn with: from the state,
    else (a state written before it kept the digest) from its meta.json's corpus record."""
    corpus = (meta or {}).get("corpus")
    corpus = corpus if isinstance(corpus, dict) else {}  # a meta.json edited into another shape records nothing
    recorded = st.inputs_sha256 or corpus.get("inputs_sha256")
    return recorded if isinstance(recorded, str) else None, selection_of(corpus)


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
    raise ResultsError(
        f"checkpoint {st.path} was computed on other inputs than this run draws (inputs_sha256 "
        f"{recorded[:12]}... there, {now[:12]}... now: the corpus, the tokenizer or the selection "
        f"changed){hint}; nothing was changed"
    )


def _identity_diffs(stored: dict[str, Any], wanted: dict[str, Any]) -> list[str]:
    wanted = json.loads(json.dumps(wanted))
    keys = sorted(set(stored) | set(wanted))
    return [f"{k}: {stored.get(k)!r} there vs {wanted.get(k)!r} now" for k in keys if stored.get(k) != wanted.get(k)]


def up_to_date(cfg: SpectrumConfig, encoder: Any | None = None) -> bool:
    """True when ``cfg.out`` already holds this very run, complete, with its tables: there is
    nothing to compute, and the command reports the run as ``make`` does ("up to date").

    Asked before the model loads. ``--overwrite`` (recompute) and ``--resume`` keep their
    meaning (False here). An ``--out`` holding another run is refused in one line
    (:class:`ResultsError` naming the parameters that differ).

    Parameters
    ----------
    cfg : SpectrumConfig
        The job; ``cfg.out`` is the run's directory.
    encoder : LoadedModel, optional
        The model given as an object: its content is digested as the run recorded it (its
        parameters), not from the files its name points at.

    Returns
    -------
    bool
        True when ``cfg.out`` holds this run's meta.json with status ``complete``, every
        input done, and ``spectrum.parquet`` and ``metrics.parquet``; always False with
        ``overwrite`` or ``resume``.

    Raises
    ------
    ResultsError
        ``cfg.out`` holds another run or other files, or this run computed on model or data
        files that changed since.
    """
    if cfg.overwrite or cfg.resume or not (cfg.out / META_FILE).is_file():
        return False
    check_same_run(cfg.out, cfg.identity(), kind=KIND)  # raises on another run's directory
    meta = read_meta(cfg.out)
    _check_same_files(cfg, meta, encoder)
    tables = all((cfg.out / f"{name}.parquet").is_file() for name in ("spectrum", "metrics"))
    return meta.get("status") == "complete" and tables and meta.get("inputs_done") == meta.get("inputs_total")


def _check_same_files(cfg: SpectrumConfig, meta: dict[str, Any], encoder: Any | None) -> None:
    """Refuse a finished run whose model or data changed since (found before anything loads:
    the weights, tokenizer and config files, and a corpus given as one file; a model given as
    an object is digested as the run digested it, attnspec.spectra.content.loaded_content)."""
    from attnspec.spectra.content import cached_file_digest, content_diffs, loaded_content, named_content

    recorded = meta.get("content")
    if not isinstance(recorded, dict):
        return  # a run written before its content was recorded
    now = named_content(cfg.model) if encoder is None else loaded_content(cfg.model, encoder)
    diffs = content_diffs(recorded, now)
    corpus = meta.get("corpus") if isinstance(meta.get("corpus"), dict) else {}
    data = Path(cfg.data).expanduser()
    if data.is_file() and isinstance(corpus.get("sha256"), str) and corpus.get("files") == 1:
        now = cached_file_digest(data)
        if now != corpus["sha256"]:
            diffs.append(f"the data file changed (sha256 {corpus['sha256'][:12]}... there, {now[:12]}... now)")
    if diffs:
        raise ResultsError(
            f"--out {cfg.out} holds this run computed on other content: {'; '.join(diffs)}; "
            "use --overwrite to recompute or choose another --out"
        )


def prepare_out(cfg: SpectrumConfig) -> tuple[bool, RunState | None]:
    """Decide, before anything is computed, whether ``cfg.out`` is started, resumed or refused.

    The caller holds the output lock. The state file, not meta.json, decides what a resume
    continues from; a directory whose meta.json was deleted but whose state is intact can
    still be resumed (its identity is in the state).

    Parameters
    ----------
    cfg : SpectrumConfig
        The job: its ``out``, its identity, and ``overwrite`` / ``resume``.

    Returns
    -------
    tuple of (bool, RunState or None)
        (True, the verified checkpoint) to resume; (False, None) to start afresh: the
        directory is absent or empty, or ``overwrite`` is set.

    Raises
    ------
    ResultsError
        ``cfg.out`` holds another run, a checkpoint of another run, this run (complete, or
        unfinished without ``resume``), a partial merge, or a checkpoint that fails the
        identity or coverage check.
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
            raise ResultsError(
                f"--out {out} holds a checkpoint of a different run ({'; '.join(diffs)}); choose another directory"
            )
        if cfg.overwrite:
            return False, None
        if not cfg.resume:
            raise ResultsError(
                f"--out {out} holds a checkpoint of this run ({st.inputs_done} of {st.inputs_total} "
                "inputs) but no meta.json; pass --resume to continue it (meta.json is rebuilt) "
                "or --overwrite to start again"
            )
        return _resumable(cfg, st)
    check_same_run(out, cfg.identity(), kind=KIND)
    if cfg.overwrite:
        return False, None
    meta = read_meta(out)
    status = meta.get("status")
    if not cfg.resume:
        if status == "complete":
            raise ResultsError(
                f"--out {out} already holds this run, complete; use --overwrite to recompute or choose another --out"
            )
        raise ResultsError(
            f"--out {out} holds a {status} run of this job ({meta.get('inputs_done')} of {meta.get('inputs_total')} "
            "inputs); pass --resume to continue it or --overwrite to start again"
        )
    st = read_state(state_path)
    diffs = _identity_diffs(st.identity, cfg.identity())
    if diffs:
        raise ResultsError(
            f"checkpoint {state_path} fails the identity check: it belongs to another run "
            f"({'; '.join(diffs)}); nothing was changed"
        )
    return _resumable(cfg, st)


def _resumable(cfg: SpectrumConfig, st: RunState) -> tuple[bool, RunState]:
    if st.merge_of and not st.complete:
        missing = (
            f"shards {', '.join(f'{i}/{st.merge_of}' for i in st.missing_shards)} missing"
            if st.missing_shards
            else f"{st.inputs_done} of {st.inputs_total} inputs"
        )
        raise ResultsError(
            f"--out {cfg.out} holds a partial merge ({missing}); it cannot be resumed: finish the "
            "shards (--resume in each) and merge them again"
        )
    if st.complete:
        raise ResultsError(
            f"--out {cfg.out} already holds this run, complete; nothing to resume (use --overwrite to recompute)"
        )
    if not np.array_equal(st.covered, shard_indices(cfg.shard, st.inputs_done)):
        raise ResultsError(
            f"checkpoint {st.path} fails the coverage check: it does not cover the first "
            f"{st.inputs_done} inputs of this {'shard' if cfg.shard else 'run'}, so it cannot be resumed"
        )
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
    ``cfg.out`` is checked (writable, not held by another process, holding nothing or a
    resumable checkpoint of this run) before anything is computed, and locked for the
    whole run. SIGTERM is handled like Ctrl-C: the partial result is saved, resumable.

    Parameters
    ----------
    cfg : SpectrumConfig
        The job: model, corpus, n, inputs, seed, engine, ``out``, ``resume``/``overwrite``;
        validated first.
    progress : bool
        Print progress lines on stderr.
    encoder : attnspec.spectra.models.LoadedModel, optional
        An already-loaded model (the Python API and the tests pass one). Default: load
        ``cfg.model``.
    texts : list of str, optional
        Texts that replace the corpus ``cfg.data`` (``cfg.data`` then only labels them).
    on_checkpoint : callable, optional
        Called with the number of inputs done after each checkpoint (tests use it to
        simulate an interruption).
    inputs : attnspec.spectra.data.inputs.Inputs, optional
        Token windows of at most ``seq_len`` tokens each that replace the corpus draw; the
        multi-length job passes the same documents cut to each length.

    Returns
    -------
    SpectrumOutcome
        ``out``, ``status`` (``"complete"``, ``"partial"`` when ``--max-time`` stopped it,
        ``"interrupted"``), inputs done and total, wall time.
    """
    cfg.validate()
    with (
        writing_to(
            cfg.out, f"attnspec spectrum --model {cfg.model} --data {cfg.data}", kind=KIND, nests_in=(SCALING_KIND,)
        ),
        sigterm_as_interrupt(),
    ):
        return _run_locked(
            cfg, progress=progress, encoder=encoder, texts=texts, on_checkpoint=on_checkpoint, inputs=inputs
        )


def _run_locked(
    cfg: SpectrumConfig,
    *,
    progress: bool,
    encoder: Any | None,
    texts: list[str] | None,
    on_checkpoint: Callable[[int], None] | None,
    inputs: Any | None = None,
) -> SpectrumOutcome:
    t_start = time.perf_counter()
    resuming, previous = prepare_out(cfg)
    encoder, method, batch_size = _prepare_model(cfg, encoder)
    inputs, selected, positions, selection_total = _select_inputs(cfg, encoder, texts, inputs)
    total = len(selected)
    windows = _layer_windows(encoder)  # causal sliding window per layer (None: full), before any work
    shape = (encoder.num_layers, encoder.num_heads, cfg.seq_len)
    content = _content(cfg, encoder, inputs.meta)
    state, wall_before = _start_state(
        cfg, previous if resuming else None, shape, total, selection_total, inputs.meta, content
    )
    base_meta = {
        **_base_meta(
            cfg,
            encoder,
            inputs.meta,
            method=method,
            windows=windows,
            batch_size=batch_size,
            total=total,
            resuming=resuming,
        ),
        "content": content,
    }

    def checkpoint(snap: _Progress, status: str, t_run: float) -> None:
        # state.npz first: it alone is trusted on resume; tables and meta.json follow from it
        wall = round(wall_before + t_run, 3)
        with result_files(cfg.out):  # all renamed together at the end, meta.json last
            write_state(
                cfg.out / STATE_FILE,
                snap.acc,
                identity=cfg.identity(),
                inputs_done=snap.done,
                inputs_total=total,
                selection_total=selection_total,
                covered=shard_indices(cfg.shard, snap.done),
                wall_time_s=wall,
                inputs_sha256=inputs.meta.get("inputs_sha256"),
                content=content,
            )
            tables = snap.acc.tables()
            write_table(cfg.out, "spectrum", tables.spectrum, csv=cfg.csv)
            write_table(cfg.out, "metrics", _with_kinds(tables.metrics, base_meta), csv=cfg.csv)
            write_table(cfg.out, "inputs", tables.inputs, csv=cfg.csv)
            write_meta(cfg.out, {**base_meta, "status": status, **_progress_meta(snap, wall, sink)})

    bounds = None
    if method == "longn":  # a resumed run's bounds so far come back from its meta.json
        previous_meta = _previous_meta(cfg.out) if resuming else None
        bounds = RunBounds.from_meta((previous_meta or {}).get("svd_error_run"), encoder.num_layers, encoder.num_heads)
    sink = _Sink(
        cfg.model, method, windows, list(encoder.layer_causal) or [bool(encoder.causal)] * encoder.num_layers, bounds
    )
    state, status = _run_batches(
        cfg,
        encoder,
        sink,
        state,
        selected,
        positions,
        batch_size=batch_size,
        shape=shape,
        t_start=t_start,
        progress=progress,
        checkpoint=checkpoint,
        on_checkpoint=on_checkpoint,
    )
    checkpoint(state, status, time.perf_counter() - t_start)
    return SpectrumOutcome(cfg.out, status, state.done, total, wall_before + time.perf_counter() - t_start)


def _progress_meta(snap: _Progress, wall: float, sink: Any) -> dict[str, Any]:
    """What meta.json says of a checkpoint's progress: inputs done, wall time, the metrics its
    aggregate lacks (saved before they existed) and, for longn, the run's error bounds."""
    return {
        "inputs_done": snap.done,
        "wall_time_s": wall,
        **({"metrics_absent": list(snap.acc.absent)} if snap.acc.absent else {}),
        **({"svd_error_run": sink.bounds.to_meta(LONGN_COVERAGE)} if sink.bounds else {}),
    }


def _content(cfg: SpectrumConfig, encoder: Any, corpus_meta: dict[str, Any]) -> dict[str, Any]:
    """What this run computes on (attnspec.spectra.content): weights, tokenizer, inputs and, in a
    scaling study, the documents every length is cut from."""
    from attnspec.spectra.content import loaded_content

    keys = ("inputs_sha256", "documents_sha256")
    return {**loaded_content(cfg.model, encoder), **{k: corpus_meta[k] for k in keys if corpus_meta.get(k)}}


def _prepare_model(cfg: SpectrumConfig, encoder: Any | None) -> tuple[Any, str, int]:
    """The model (loaded unless given), the engine method and the batch size, checked
    against the run's length and the memory one batch needs."""
    from attnspec.errors import check_memory
    from attnspec.spectra.shared_models import shared_model

    if encoder is None:
        encoder = shared_model(cfg.model, device=cfg.device, dtype=cfg.dtype)
    if cfg.seq_len > encoder.max_seq_len:
        raise InputError(
            f"--seq-len {cfg.seq_len} exceeds what {cfg.model} allows ({encoder.max_seq_len} tokens, special tokens included)"
        )
    method = resolve_method(cfg.svd_method, encoder.device)
    batch_size = cfg.batch_size if cfg.batch_size is not None else DEFAULT_BATCH_SIZE.get(encoder.device.type, 1)
    # one layer's scores and P for the whole batch, (B, H, n, n) each, and the copy the SVD factorises
    if encoder.device.type == "cpu":  # (a GPU's memory is not what /proc/meminfo reports)
        check_memory(
            f"--batch-size {batch_size} at --seq-len {cfg.seq_len} ({encoder.num_heads} heads)",
            3 * batch_size * encoder.num_heads * cfg.seq_len**2 * max(4, torch.finfo(encoder.dtype).bits // 8),
        )
    return encoder, method, batch_size


def _select_inputs(
    cfg: SpectrumConfig, encoder: Any, texts: list[str] | None, inputs: Any | None
) -> tuple[Any, list[list[int]], np.ndarray, int]:
    """The seeded selection (unless given), this shard's part of it, and each input's place in it."""
    if inputs is None:
        inputs = draw_inputs(cfg, encoder.tokenizer, texts)
    selected = inputs.input_ids
    _check_ids_fit(encoder, selected)
    positions = np.arange(len(selected))  # place of each input in the seeded selection
    if cfg.shard is not None:
        i, n = cfg.shard
        return inputs, selected[i::n], positions[i::n], len(selected)
    return inputs, selected, positions, len(selected)


def _check_ids_fit(encoder: Any, selected: list[list[int]]) -> None:
    """Refuse, before any forward pass, token ids the model's embedding table has no row for
    (a tokenizer that is not the model's: a GPT-2 tokenizer on a BERT, a config with a smaller
    vocabulary); the embedding lookup would fail with a bare IndexError. The ids actually
    drawn are compared, not ``len(tokenizer)``: many embeddings are padded past the tokenizer."""
    embedding = getattr(getattr(encoder, "model", None), "get_input_embeddings", lambda: None)()
    rows = getattr(embedding, "num_embeddings", None)
    top = max((max(ids) for ids in selected if ids), default=-1)
    if isinstance(rows, int) and top >= rows:
        size = len(encoder.tokenizer) if hasattr(encoder.tokenizer, "__len__") else "?"
        raise InputError(
            f"the tokenizer produced token id {top}, but the model's embedding has {rows} rows (ids "
            f"0..{rows - 1}; the tokenizer has {size} tokens): the tokenizer is not this model's; use "
            "the tokenizer saved with the model"
        )


def _start_state(
    cfg: SpectrumConfig,
    previous: RunState | None,
    shape: tuple[int, int, int],
    total: int,
    selection_total: int,
    corpus_meta: dict[str, Any],
    content: dict[str, Any],
) -> tuple[_Progress, float]:
    """An empty aggregate, or the checkpoint to resume once it is shown to be this run's."""
    if previous is None:
        return _Progress(SpectrumAccumulator(*shape, rank_tol=cfg.rank_tol), 0), 0.0
    if previous.acc.shape != shape:
        raise ResultsError(
            f"checkpoint {previous.path} fails the identity check: its aggregate has shape "
            f"{previous.acc.shape}, this run needs {shape}"
        )
    if (previous.inputs_total, previous.selection_total) != (total, selection_total):
        raise ResultsError(
            f"checkpoint {previous.path} fails the identity check: it belongs to a selection of "
            f"{previous.selection_total} inputs ({previous.inputs_total} in this shard), this run "
            f"selects {selection_total} ({total}); was the corpus changed?"
        )
    _check_same_inputs(previous, cfg.out, corpus_meta)
    _check_same_content(previous, content)
    if previous.acc.absent_note:  # resumed without the metrics its state predates: said once, in one line
        print(f"note: {cfg.out}: {previous.acc.absent_note}", file=sys.stderr)
    return _Progress(previous.acc, previous.inputs_done), previous.wall_time_s


def _check_same_content(st: RunState, content: dict[str, Any]) -> None:
    """Refuse to add to a checkpoint computed on other weights or another tokenizer under the
    same names (a folder overwritten in place): the aggregate would match neither model."""
    from attnspec.spectra.content import content_diffs

    diffs = content_diffs(st.content, content)
    if diffs:
        raise ResultsError(
            f"checkpoint {st.path} was computed on other content than this run: {'; '.join(diffs)}; "
            "nothing was changed (recompute with --overwrite, or restore what changed)"
        )


def _base_meta(
    cfg: SpectrumConfig,
    encoder: Any,
    corpus_meta: dict[str, Any],
    *,
    method: str,
    windows: list[int | None],
    batch_size: int,
    total: int,
    resuming: bool,
) -> dict[str, Any]:
    """meta.json of the run, without what changes per checkpoint (status, inputs done, time)."""
    return {
        "kind": KIND,
        "identity": cfg.identity(),
        "config": {k: (str(v) if isinstance(v, Path) else v) for k, v in asdict(cfg).items()},
        **encoder.describe(),
        "corpus": corpus_meta,
        "padding_policy": (
            f"short_policy={cfg.short_policy}; padding rows and columns removed (P restricted to real tokens); "
            "a matrix shorter than seq_len counts as zero-extended (its curve is 1 past its length)"
            + ("; causal P: lower-triangular, its real block is the P of the input alone" if encoder.causal else "")
        ),
        "svd_method": method,
        "svd_method_error": stated_error(method, str(encoder.dtype).removeprefix("torch.")),
        **_attention_meta(encoder, windows),
        "batch_size": batch_size,
        "batch_size_source": "--batch-size" if cfg.batch_size is not None else f"default for {encoder.device.type}",
        "seed": cfg.seed,
        "inputs_total": total,
        "environment": environment_meta(),
        # how the figures were drawn (attnspec.spectra.figure_record.FIGURES_KEY): kept across --resume
        **({"figures": _recorded_figures(cfg.out)} if resuming and _recorded_figures(cfg.out) else {}),
    }


class _Sink:
    """Receives one layer's P at a time under capture: its singular values and row entropy
    are computed as it appears and kept in ``pending`` until the batch is aggregated.

    ``singular_values`` and ``row_entropy`` are looked up in this module at each call
    (benchmarks/bench_spectrum.py times them by replacing them here)."""

    def __init__(
        self,
        model: str,
        method: str,
        windows: list[int | None],
        layer_causal: list[bool],
        bounds: RunBounds | None = None,
    ) -> None:
        self.model, self.method, self.windows, self.layer_causal = model, method, windows, layer_causal
        # (layer, singular values, row entropy, singular values of P minus its mean row or None)
        self.pending: list[tuple[int, torch.Tensor, torch.Tensor, torch.Tensor | None]] = []
        self.tokens: list[list[int]] = []  # the batch's inputs: longn seeds each matrix from its own input
        self.bounds = bounds  # longn's per-matrix bounds over the committed batches
        self.pending_bounds: list[tuple[int, dict[str, torch.Tensor]]] = []
        self.scratch: list[torch.Tensor] = []  # row_entropy's workspace, 4 MB for the whole run
        self.window_checked: set[int] = set()  # layers whose window was checked against P (first long-enough batch)

    def __call__(self, la: Any) -> None:
        from attnspec.spectra.layer_windows import window_violation
        from attnspec.spectra.stochastic import check_stochastic

        if not self.scratch or self.scratch[0].device != la.probs.device:
            self.scratch[:] = [
                torch.empty(max(1 << 20, la.probs.shape[-1]), dtype=torch.float32, device=la.probs.device)
            ]
        # (B, H, n) float64 singular values, descending; (B, H) mean normalised row entropy
        window = self.windows[la.layer]
        if window is not None and la.layer not in self.window_checked:
            worst = window_violation(la.probs, la.mask, window)
            if worst is not None and worst > 0:
                raise ModelLoadError(
                    f"layer {la.layer} of {self.model}: its config gives a sliding window of {window} "
                    f"but P is {worst:.3g} outside it; the model does not apply the window its "
                    "config declares, so its row entropy cannot be normalised"
                )
            if worst is not None:  # checked once on an input longer than the window
                self.window_checked.add(la.layer)
        check_stochastic(la.probs, la.mask, layer=la.layer, model=self.model)  # before its spectrum is taken
        if self.bounds is not None:  # longn: draws seeded per input, per-matrix bounds kept
            from attnspec.spectra.longn import input_seeds

            seeds = input_seeds(self.tokens, la.layer, la.probs.shape[1])  # (B, H)
            sv, bounds = singular_values(la.probs, self.method, seeds=seeds, return_error=True)
            self.pending_bounds.append((la.layer, bounds))
            centred = None  # longn's draws are seeded for P; C's spectrum is not estimated
        else:
            sv = singular_values(la.probs, self.method)
            centred = singular_values(centred_stack(la.probs, la.mask), self.method)  # (B, H, n): c_centred
        self.pending.append(
            (
                la.layer,
                sv,
                row_entropy(
                    la.probs, la.mask, causal=self.layer_causal[la.layer], window=window, workspace=self.scratch[0]
                ),
                centred,
            )
        )

    def commit_bounds(self) -> None:
        """The batch went into the aggregate: its bounds join the run's."""
        for layer, bounds in self.pending_bounds:
            if self.bounds is not None:
                self.bounds.add(layer, bounds)
        self.pending_bounds.clear()


def _run_batches(
    cfg: SpectrumConfig,
    encoder: Any,
    sink: _Sink,
    state: _Progress,
    selected: list[list[int]],
    positions: np.ndarray,
    *,
    batch_size: int,
    shape: tuple[int, int, int],
    t_start: float,
    progress: bool,
    checkpoint: Callable[[_Progress, str, float], None],
    on_checkpoint: Callable[[int], None] | None,
) -> tuple[_Progress, str]:
    """The batches still to do, each committed whole; a checkpoint every ``checkpoint_every``.

    Singular values are computed as each layer's P appears, and added to a fresh batch
    aggregate; only once the whole batch went through is it merged into a copy of the
    running aggregate, which then replaces it (one assignment, see _Progress).
    Returns the state reached and the status: complete, partial (max_time) or interrupted."""
    from attnspec.spectra.capture import capture_attention

    total = len(selected)
    pad_id = encoder.pad_token_id  # decoder tokenizers often have no pad token; padding is masked anyway
    status = "complete"
    from attnspec.runtime.progress import Progress, progress_sink

    bar = Progress(
        f"spectrum {cfg.model} · {cfg.data}", total, unit="inputs", say=progress_sink(progress), done=state.done
    )
    batches_since = 0
    try:
        with capture_attention(encoder.model, sink) as cap:
            while state.done < total:
                if cfg.max_time is not None and time.perf_counter() - t_start > cfg.max_time:
                    status = "partial"
                    break
                batch = selected[state.done : state.done + batch_size]
                ids, mask = _pad_batch(batch, pad_id)
                sink.pending.clear()
                sink.pending_bounds.clear()
                sink.tokens = batch
                cap.forward(ids.to(encoder.device), mask.to(encoder.device))
                batch_acc = SpectrumAccumulator(*shape, rank_tol=cfg.rank_tol)
                batch_acc.add_batch(sink.pending, positions[state.done : state.done + len(batch)])
                sink.pending.clear()
                updated = state.acc.copy()
                updated.merge(batch_acc)
                _before_commit()
                state = _Progress(updated, state.done + len(batch))  # the commit: one assignment
                sink.commit_bounds()
                bar.advance(len(batch))
                batches_since += 1
                if batches_since >= cfg.checkpoint_every and state.done < total:
                    checkpoint(state, "partial", time.perf_counter() - t_start)
                    batches_since = 0
                    if on_checkpoint is not None:
                        on_checkpoint(state.done)
    except KeyboardInterrupt:
        status = "interrupted"
    finally:
        bar.close()
    if status == "complete" and state.done < total:  # pragma: no cover - defensive
        status = "partial"
    return state, status


def _layer_windows(encoder: Any) -> list[int | None]:
    """Each captured layer's causal sliding window, from the model's config (attnspec.spectra.layer_windows)."""
    from attnspec.spectra.layer_windows import check_windows, layer_windows

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
        meta["decoder_input"] = (
            "teacher-forced on the same window: decoder_start_token_id followed by the encoder "
            "input shifted right by one (same length, same padding), so cross-attention P is "
            "n x n with the encoder's real positions as columns"
        )
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
