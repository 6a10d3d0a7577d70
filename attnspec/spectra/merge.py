"""``attnspec merge``: shards of one run (or partial runs) merged into one result, exactly.

The accumulator is a sufficient statistic, so the merge of every shard equals a single run
up to float64 rounding; a merge refuses shards of different runs, a shard given twice,
overlapping inputs and, unless asked, a missing or unfinished shard.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from attnspec.errors import InputError, ResultsError
from attnspec.spectra.aggregate import merge_accumulators
from attnspec.spectra.checkpoint import STATE_FILE, RunState, read_state, write_state
from attnspec.spectra.config import KIND
from attnspec.spectra.job import _recorded_inputs, _with_kinds
from attnspec.spectra.result_checks import SCALING_KIND  # a run may live inside its scaling study
from attnspec.storage.results import (
    environment_meta,
    holds_files,
    read_meta,
    result_files,
    write_meta,
    write_table,
    writing_to,
)


def merge_runs(dirs: list[Path], out: Path, *, csv: bool = False, allow_partial: bool = False) -> dict[str, Any]:
    """Merge shard directories of one run into ``out`` (tables, state and meta).

    Each shard's verified state says which shard i of N it is and which inputs it covers.
    The merge refuses shards of different runs, a shard given twice, overlapping inputs,
    and, unless ``allow_partial``, a missing or unfinished shard; with ``allow_partial``
    the result is marked ``status: partial`` with the missing and unfinished shards
    listed (and a later ``--resume`` refuses it instead of taking it for complete).

    Parameters
    ----------
    dirs : list of Path
        The shards' results directories.
    out : Path
        The merged run's directory: absent or empty.
    csv : bool
        Also write a CSV copy of each table.
    allow_partial : bool
        Merge even when shards are missing or unfinished.

    Returns
    -------
    dict
        The merged run's meta.json (``status``, ``inputs_done``, ``inputs_total``,
        ``missing_shards``, ``unfinished_shards``, ...).

    Raises
    ------
    ResultsError
        Shards of different runs, a shard given twice, overlapping inputs, a missing or
        unfinished shard without ``allow_partial``, or an ``out`` that is not empty.
    """
    if len(dirs) < 1:
        raise InputError("merge needs at least one results directory")
    out = Path(out)
    with writing_to(
        out, "attnspec merge", kind=KIND, nests_in=(SCALING_KIND,)
    ):  # usable and ours before anything is read
        if holds_files(out):
            raise ResultsError(f"--out {out} is not empty; choose a new directory for the merged result")
        return _merge_locked(dirs, out, csv=csv, allow_partial=allow_partial)


def _merge_locked(dirs: list[Path], out: Path, *, csv: bool, allow_partial: bool) -> dict[str, Any]:
    states, metas, base = _read_shards(dirs)
    shards = [st.identity.get("shard") for st in states]
    count, missing, unfinished = _shard_layout(dirs, shards, states, allow_partial=allow_partial)
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
        raise ResultsError(
            f"the shards were drawn from different inputs (inputs_sha256 {listing}); "
            "the corpus, the tokenizer or the selection differs between them"
        )
    content = _same_content(dirs, states)
    merged = merge_accumulators([st.acc for st in states])
    identity = {**base, "shard": None}
    done = int(len(covered))
    complete = not missing and not unfinished
    meta = {
        **{
            k: v
            for k, v in metas[0].items()
            if k
            not in ("identity", "inputs_done", "inputs_total", "wall_time_s", "status", "environment", "metrics_absent")
        },
        "identity": identity,
        "status": "complete" if complete else "partial",
        "inputs_done": done,
        "inputs_total": selection_total,
        "missing_shards": [f"{i}/{count}" for i in missing],
        "unfinished_shards": unfinished,
        "wall_time_s": round(sum(st.wall_time_s for st in states), 3),
        **({"content": content} if content else {}),
        "merged_from": [
            {"dir": str(d), "shard": s, "inputs_done": st.inputs_done} for d, s, st in zip(dirs, shards, states)
        ],
        "environment": environment_meta(),
        **_merged_bounds(metas, merged.shape),
        **({"metrics_absent": list(merged.absent)} if merged.absent else {}),
    }
    tables = merged.tables()
    with result_files(out):  # whole or nothing: a full disk leaves no lone state.npz
        # a partial merge records its missing shards in the state too, so no resume takes it for whole
        write_state(
            out / STATE_FILE,
            merged,
            identity=identity,
            inputs_done=done,
            inputs_total=selection_total,
            selection_total=selection_total,
            covered=np.sort(covered),
            wall_time_s=meta["wall_time_s"],
            missing_shards=missing,
            merge_of=count,
            inputs_sha256=known.pop() if known else None,
            content=content,
        )
        write_table(out, "spectrum", tables.spectrum, csv=csv)
        write_table(out, "metrics", _with_kinds(tables.metrics, meta), csv=csv)
        write_table(out, "inputs", tables.inputs, csv=csv)
        write_meta(out, meta)
    return meta


def _same_content(dirs: list[Path], states: list[RunState]) -> dict[str, Any] | None:
    """The content record the shards share (attnspec.spectra.content), refused in one line where
    two were computed on other weights, tokenizer or inputs under the same names; None when
    no shard recorded one."""
    from attnspec.spectra.content import content_diffs

    recorded = [(d, st.content) for d, st in zip(dirs, states) if st.content]
    for d, c in recorded[1:]:
        diffs = content_diffs(recorded[0][1], c)
        if diffs:
            raise ResultsError(
                f"{d} was computed on other content than {recorded[0][0]} ('there' is the first, "
                f"'now' this one): {'; '.join(diffs)}; they are not shards of one run"
            )
    return dict(recorded[0][1]) if recorded else None


def _read_shards(dirs: list[Path]) -> tuple[list[RunState], list[dict[str, Any]], dict[str, Any]]:
    """Every directory's verified state and meta.json, refused unless all are spectrum runs of
    one run (the same identity but for the shard). Returns the states, metas and that identity."""
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
        diffs = [
            f"{k}: {base.get(k)!r} vs {other.get(k)!r}"
            for k in sorted(set(base) | set(other))
            if base.get(k) != other.get(k)
        ]
        if diffs:
            raise ResultsError(f"{d} is not a shard of the same run as {dirs[0]} ({'; '.join(diffs)})")
    return states, metas, base


def _shard_layout(
    dirs: list[Path], shards: list[Any], states: list[RunState], *, allow_partial: bool
) -> tuple[int, list[int], list[str]]:
    """(N of the split, the missing shard indices, the unfinished shards), refused where the
    shards cannot form one run (a whole run among shards, a shard twice, different splits) or,
    unless ``allow_partial``, where a shard is missing or unfinished."""
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
    unfinished = [
        f"{s} ({st.inputs_done} of {st.inputs_total} inputs)" for s, st in zip(shards, states) if not st.complete
    ]
    if (missing or unfinished) and not allow_partial:
        what = []
        if missing:
            what.append(f"shard{'s' if len(missing) > 1 else ''} {', '.join(f'{i}/{count}' for i in missing)} missing")
        if unfinished:
            what.append(f"unfinished: {', '.join(unfinished)}")
        raise ResultsError(
            f"cannot merge an incomplete run ({'; '.join(what)}); finish and add the missing shards "
            "(--resume), or pass --allow-partial to write a result marked partial"
        )
    return count, missing, unfinished


def _merged_bounds(metas: list[dict[str, Any]], shape: tuple[int, int, int]) -> dict[str, Any]:
    """longn shards: the largest per-matrix bound of any shard, per (layer, head) (empty otherwise)."""
    from attnspec.spectra.run_error import LONGN_COVERAGE, RunBounds

    records = [m.get("svd_error_run") for m in metas if m.get("svd_error_run")]
    if not records:
        return {}
    out = RunBounds(shape[0], shape[1])
    for record in records:
        out.merge(RunBounds.from_meta(record, shape[0], shape[1]))
    return {"svd_error_run": out.to_meta(records[0].get("coverage", LONGN_COVERAGE))}
