"""How the rank attention needs grows with the sequence length n: running the study.

Linformer's second premise is that the rank P needs does not grow with n (its projection
dimension k is O(log n / ε²), "independent of n" in practice). This module measures it:

* :func:`run_scaling` runs the spectrum job at several lengths on the *same documents*
  (drawn once at the longest length, then cut to each shorter one) with one model load,
  writing one ordinary spectrum run per length under ``OUT/n<len>/``;
* :func:`merge_scaling` merges the shards of such a study, length by length.

Reading the runs back and fitting k ∝ n^β (:func:`scaling_table`, :func:`fit_scaling`,
:func:`fit_study`, ...) is :mod:`attnspec.spectra.scaling_fit`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np

from attnspec.errors import InputError, ResultsError
from attnspec.options.spectrum import spectrum_option
from attnspec.spectra.result_checks import SCALING_KIND
from attnspec.storage.results import (
    check_same_run,
    environment_meta,
    holds_files,
    read_meta,
    result_files,
    write_meta,
    write_table,
    writing_to,
)

#: The kind a scaling study's meta.json records (named once, in result_checks, which reads it back).
KIND = SCALING_KIND


def parse_lengths(text: str | int | Sequence[int]) -> list[int]:
    """``"64,128,256"`` (or an int, or a sequence) → the lengths, each an integer >= 2.

    A list must be strictly increasing and have no empty items: ``64,,128`` (a typo for
    one length more or less?) and ``128,64`` are refused, naming the list, rather than
    guessed at.

    Parameters
    ----------
    text : str, int or sequence of int
        ``--seq-len``: ``"64,128,256"`` (spaces ignored), one length, or a list of lengths.

    Returns
    -------
    list of int
        The lengths, strictly increasing, each >= 2.

    Raises
    ------
    InputError
        A value that is not an integer, an empty item, a length below 2, a repeated length
        or lengths out of order.
    """
    if isinstance(text, (int, np.integer)) and not isinstance(text, bool):
        items = [int(text)]
    elif isinstance(text, str):
        parts = text.replace(" ", "").split(",")
        if text.strip() and any(not p for p in parts):
            raise InputError(
                f"--seq-len has an empty item in {text!r}; give integers separated by single commas (64,128,256)"
            )
        try:
            items = [int(t) for t in parts if t]
        except ValueError:
            raise InputError(
                f"--seq-len must be an integer or a comma-separated list of integers (64,128,256), got {text!r}"
            ) from None
    elif isinstance(text, Sequence):
        if not all(isinstance(t, (int, np.integer)) and not isinstance(t, bool) for t in text):
            raise InputError(f"--seq-len values must be integers, got {list(text)!r}")
        items = [int(t) for t in text]
    else:
        raise InputError(f"--seq-len must be an integer or a list of integers, got {text!r}")
    if not items:
        raise InputError(f"--seq-len needs at least one length, got {text!r}")
    low = spectrum_option("seq_len").low
    bad = [n for n in items if n < low]
    if bad:
        raise InputError(f"--seq-len must be an integer >= {low:g}, got {bad[0]}")
    if len(set(items)) != len(items):
        raise InputError(f"--seq-len lists a length twice: {text!r}")
    if items != sorted(items):
        raise InputError(
            f"--seq-len lengths must be strictly increasing, got {text!r}; write {','.join(map(str, sorted(items)))}"
        )
    return items


def cut_inputs(inputs: Any, tokenizer: Any, seq_len: int) -> Any:
    """The same documents cut to ``seq_len`` tokens (special tokens kept at both ends).

    Parameters
    ----------
    inputs : attnspec.spectra.data.inputs.Inputs
        Windows drawn at a length >= ``seq_len``.
    tokenizer : transformers tokenizer
        The one the windows were made with (its special-token template is re-applied).
    seq_len : int
        New length, special tokens included.

    Returns
    -------
    attnspec.spectra.data.inputs.Inputs
        The first ``seq_len`` minus the special tokens' count of text tokens of each window,
        between the special tokens; its meta records the cut and the new inputs' digest.

    Raises
    ------
    InputError
        ``seq_len`` leaves no room for text next to the special tokens.
    """
    from attnspec.spectra.data.inputs import Inputs, inputs_digest, length_summary
    from attnspec.spectra.data.windows import _special_template

    prefix, suffix = _special_template(tokenizer)
    width = seq_len - len(prefix) - len(suffix)
    if width < 1:
        raise InputError(
            f"--seq-len {seq_len} leaves no room for text next to the tokenizer's {len(prefix) + len(suffix)} special tokens"
        )
    cut = []
    for ids in inputs.input_ids:
        text = ids[len(prefix) : len(ids) - len(suffix)]  # (l - specials,)
        cut.append(prefix + text[:width] + suffix)
    lengths = [len(x) for x in cut]
    meta = {
        **inputs.meta,
        "seq_len": seq_len,
        "cut_from_seq_len": inputs.meta.get("seq_len"),
        "text_tokens_per_window": width,
        "selection": f"{inputs.meta.get('selection')}, drawn at seq_len {inputs.meta.get('seq_len')} and cut to the first {width} text tokens",
        "input_lengths": length_summary(lengths, seq_len),
        "inputs_sha256": inputs_digest(cut),  # of these cut inputs, not of the longer ones they come from
    }
    return Inputs(input_ids=cut, meta=meta)


def run_dir(out: Path, seq_len: int) -> Path:
    """Where the run at ``seq_len`` lives inside a scaling directory.

    Parameters
    ----------
    out : Path
        The scaling directory.
    seq_len : int
        One of its lengths n.

    Returns
    -------
    Path
        ``out/n<seq_len>``.
    """
    return Path(out) / f"n{seq_len}"


def draw_documents(cfg: Any, encoder: Any) -> Any:
    """The documents of a study, drawn at ``cfg.seq_len`` (its longest length) as the study draws them.

    Parameters
    ----------
    cfg : attnspec.spectra.config.SpectrumConfig
        The job at the study's longest length.
    encoder : LoadedModel
        Its tokenizer makes the windows.

    Returns
    -------
    attnspec.spectra.data.inputs.Inputs
    """
    from attnspec.spectra.config import draw_inputs

    return draw_inputs(cfg, encoder.tokenizer)


def run_scaling(
    cfg: Any,
    lengths: Sequence[int],
    *,
    progress: bool = True,
    encoder: Any | None = None,
    projection_k: Sequence[int] = (),
) -> list[Any]:
    """The spectrum job at every length in ``lengths`` on the same documents, one model load.

    Parameters
    ----------
    cfg : attnspec.spectra.config.SpectrumConfig
        The job; its ``seq_len`` is ignored and its ``out`` becomes the scaling directory.
    lengths : sequence of int
        At least two distinct lengths (see :func:`parse_lengths`).
    progress : bool
        Print each length's progress lines on stderr.
    encoder : attnspec.spectra.models.Encoder, optional
        An already-built encoder (tests).
    projection_k : sequence of int
        Projection dimensions of the Linformer-projection measurement
        (:mod:`attnspec.spectra.projection`), run once every length is complete on the first
        :data:`~attnspec.spectra.projection.DEFAULT_INPUTS` documents at each n with n > k;
        written to ``projection.parquet`` and ``projection_summary.parquet``. Empty: not run.

    Returns
    -------
    list of SpectrumOutcome, one per length, shortest first. A length that stops early
    (``--max-time``, Ctrl-C) ends the job; ``resume`` continues every length.
    """
    lengths = parse_lengths(lengths)
    if len(lengths) < 2:
        raise InputError(f"a scaling run needs at least two lengths, got {lengths}")
    replace(cfg, seq_len=lengths[-1]).validate()
    # checked and locked before the model loads (re-entrant: the CLI has claimed it already)
    with writing_to(Path(cfg.out), f"attnspec spectrum --seq-len {','.join(map(str, lengths))}", kind=KIND):
        return _run_scaling_locked(cfg, lengths, progress=progress, encoder=encoder, projection_k=list(projection_k))


def _run_scaling_locked(
    cfg: Any, lengths: list[int], *, progress: bool, encoder: Any | None, projection_k: list[int]
) -> list[Any]:
    from attnspec.spectra.job import run_spectrum
    from attnspec.spectra.shared_models import shared_model

    longest = lengths[-1]
    out = Path(cfg.out)
    identity = {**replace(cfg, seq_len=longest).identity(), "seq_len": lengths}
    check_same_run(out, identity, kind=KIND)
    if encoder is None:
        encoder = shared_model(cfg.model, device=cfg.device, dtype=cfg.dtype)
    if longest > encoder.max_seq_len:
        raise InputError(
            f"--seq-len {longest} exceeds what {cfg.model} allows ({encoder.max_seq_len} tokens, special tokens included)"
        )
    drawn = draw_documents(replace(cfg, seq_len=longest), encoder)
    # every length is cut from these documents: recorded in each length's content, checked by the fit
    drawn.meta["documents_sha256"] = drawn.meta.get("inputs_sha256")
    out.mkdir(parents=True, exist_ok=True)
    # the record of approximations measured on these documents stays with them (they resume by it)
    earlier = read_meta(out) if cfg.resume and (out / "meta.json").is_file() else {}
    write_meta(
        out,
        {
            "kind": KIND,
            "identity": identity,
            "lengths": lengths,
            "runs": [run_dir(Path("."), n).name for n in lengths],
            "environment": environment_meta(),
            **{k: earlier[k] for k in ("approx",) if k in earlier},
        },
    )
    outcomes = []
    for n in lengths:
        inputs = drawn if n == longest else cut_inputs(drawn, encoder.tokenizer, n)
        sub = replace(cfg, seq_len=n, out=run_dir(out, n))
        if cfg.resume and not sub.out.exists():
            sub = replace(sub, resume=False)
        if cfg.resume and sub.out.exists() and read_meta(sub.out).get("status") == "complete":
            outcomes.append(None)  # done in an earlier invocation
            continue
        outcome = run_spectrum(sub, progress=progress, encoder=encoder, inputs=inputs)
        outcomes.append(outcome)
        if outcome.status != "complete":
            break
    else:
        if projection_k and cfg.shard is None:
            _projection(out, encoder, drawn, lengths, projection_k, seed=cfg.seed)
    return outcomes


def _projection(out: Path, encoder: Any, drawn: Any, lengths: list[int], ks: list[int], *, seed: int) -> None:
    """The Linformer-projection measurement of a finished study (kept when already made with these ks)."""
    from attnspec.spectra.projection import DEFAULT_INPUTS, measure_projection, summarise, unmeasurable
    from attnspec.storage.results import result_files

    meta = read_meta(out)
    record = {
        "k": ks,
        "inputs": DEFAULT_INPUTS,
        "seed": seed,
        "lengths": lengths,
        "projection": "E = F = R, Gaussian k x n with entries N(0, 1/k), one R per (n, k, input, layer)",
    }
    if meta.get("projection") == record and (out / "projection.parquet").is_file():
        return
    reason = unmeasurable(encoder)
    if reason is not None:
        write_meta(out, {**meta, "projection": {**record, "not_measured": reason}})
        return
    first = type(drawn)(input_ids=drawn.input_ids[:DEFAULT_INPUTS], meta=drawn.meta)
    by_length = {n: (first if n == lengths[-1] else cut_inputs(first, encoder.tokenizer, n)).input_ids for n in lengths}
    errors = measure_projection(encoder, by_length, ks, seed=seed)
    with result_files(out):
        write_table(out, "projection", errors)
        if len(errors):
            write_table(out, "projection_summary", summarise(errors, seed=seed))
        write_meta(out, {**meta, "projection": record})


def merge_scaling(dirs: Sequence[Path], out: Path, *, csv: bool = False, allow_partial: bool = False) -> dict[str, Any]:
    """Merge shards of one scaling run: every length merges like a spectrum run, into ``out/n<len>``.

    ``out`` is written whole or not at all, its ``meta.json`` last.

    Parameters
    ----------
    dirs : sequence of Path
        The shards' scaling directories (the same lengths in each).
    out : Path
        The merged scaling directory: absent or empty.
    csv : bool
        Also write a CSV copy of each table.
    allow_partial : bool
        Merge even when shards are missing or unfinished (``attnspec merge --allow-partial``);
        the result is then marked ``partial``.

    Returns
    -------
    dict
        ``inputs_done`` and ``inputs_total`` (of the longest length), ``lengths``,
        ``status`` (``"complete"`` or ``"partial"``), ``missing_shards``,
        ``unfinished_shards``.

    Raises
    ------
    ResultsError
        A directory that is not a scaling run, lengths that differ, or an ``out`` that is
        not empty.
    """
    metas = [read_meta(d) for d in dirs]
    lengths = metas[0].get("lengths")
    for d, m in zip(dirs, metas):
        if m.get("kind") != KIND:
            raise ResultsError(
                f"{d} holds a {m.get('kind')!r} result, not a scaling run; merge scaling shards only with each other"
            )
        if m.get("lengths") != lengths:
            raise ResultsError(f"{d} has lengths {m.get('lengths')}, {dirs[0]} has {lengths}")
    out = Path(out)
    with writing_to(out, "attnspec merge", kind=KIND):  # re-entrant: the CLI has claimed it already
        if holds_files(out):  # the lock file of the command that claimed it does not count
            raise ResultsError(f"--out {out} is not empty; choose a new directory for the merged result")
        with result_files(out):  # every length and the study's meta.json, or nothing (a full disk)
            return _merge_scaling_locked(dirs, metas, out, lengths, csv=csv, allow_partial=allow_partial)


def _merge_scaling_locked(
    dirs: Sequence[Path], metas: list[dict[str, Any]], out: Path, lengths: list[int], *, csv: bool, allow_partial: bool
) -> dict[str, Any]:
    from attnspec.spectra.merge import merge_runs

    done, total, partial = 0, 0, []
    missing: set[str] = set()
    unfinished: set[str] = set()
    for n in lengths:
        meta = merge_runs([run_dir(d, n) for d in dirs], run_dir(out, n), csv=csv, allow_partial=allow_partial)
        done, total = int(meta["inputs_done"]), int(meta["inputs_total"])
        if meta["status"] != "complete":
            partial.append(n)
            missing.update(meta.get("missing_shards", []))
            unfinished.update(meta.get("unfinished_shards", []))
    status = "partial" if partial else "complete"
    identity = {**metas[0]["identity"], "shard": None}
    write_meta(
        out,
        {
            "kind": KIND,
            "identity": identity,
            "lengths": lengths,
            "runs": [f"n{n}" for n in lengths],
            "status": status,
            "partial_lengths": partial,
            "merged_from": [str(d) for d in dirs],
            "environment": environment_meta(),
        },
    )
    return {
        "inputs_done": done,
        "inputs_total": total,
        "lengths": lengths,
        "status": status,
        "missing_shards": sorted(missing),
        "unfinished_shards": sorted(unfinished),
    }
