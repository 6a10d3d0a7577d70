"""The fixed-k measurement as part of a scaling study: run, saved, resumed.

:func:`add_to_study` runs :func:`~attnspec.spectra.approx.study.measure_approximations` on a
complete (unsharded or merged) scaling study's own documents, one length at a time, and
saves in the study's directory:

* the raw tables ``approx``, ``approx_fits``, ``approx_end_to_end`` (encoders), ``approx_loss``
  (causal models) (every length done so far);
* their summaries ``approx_summary``, ``approx_layers``, ``approx_rule``,
  ``approx_end_to_end_summary``, ``approx_loss_summary`` (:mod:`.rule`);
* ``meta.json["approx"]``: the plan (methods, k, split, seed, budget), the lengths done,
  the methods refused and why, and ``status``.

A length is written whole with the record that names it, so an interrupted measurement
resumes at the first length not done; a study measured with another plan is measured anew.
Shards do not measure (a split needs the whole selection); a merged study does when run
again with ``--resume --approx ...``.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd

if TYPE_CHECKING:  # the measurement imports torch; reading a saved study does not need it
    from attnspec.spectra.approx.measure import ApproxPlan

#: The raw tables and the summaries saved beside a study.
RAW_TABLES = ("approx", "approx_fits", "approx_end_to_end", "approx_loss")
SUMMARY_TABLES = (
    "approx_summary",
    "approx_layers",
    "approx_rule",
    "approx_end_to_end_summary",
    "approx_loss_summary",
)


def parse_split(value: str | Sequence[int]) -> tuple[int, int]:
    """``"8,8"`` or a pair → (training documents, held-out documents).

    Parameters
    ----------
    value : str or sequence of int
        ``--approx-split``.

    Returns
    -------
    (int, int)
    """
    from attnspec.errors import InputError

    try:
        items = [int(t) for t in value.split(",")] if isinstance(value, str) else [int(t) for t in value]
    except (TypeError, ValueError):
        items = []
    if len(items) != 2 or items[0] < 0 or items[1] < 2:
        raise InputError(
            f"--approx-split must be TRAIN,HELD_OUT with TRAIN >= 0 and HELD_OUT >= 2 (8,8), got {value!r}"
        )
    return items[0], items[1]


def make_plan(methods: Any, ks: Any, split: Any, *, seed: int, steps: int | None = None) -> ApproxPlan | None:
    """The plan of ``--approx``, ``--approx-k`` and ``--approx-split`` (None: not asked for).

    Parameters
    ----------
    methods : str, sequence of str or None
        ``--approx``.
    ks : str, int or sequence of int
        ``--approx-k``.
    split : str or sequence of int
        ``--approx-split``.
    seed : int
        The study's seed.
    steps : int, optional
        Adam steps of each fit (default :data:`~.linformer_fit.DEFAULT_STEPS`).

    Returns
    -------
    ApproxPlan or None
    """
    from attnspec.errors import InputError
    from attnspec.spectra.approx.registry import parse_approx
    from attnspec.spectra.projection import parse_ks

    names = parse_approx(methods)
    if not names:
        return None
    k = parse_ks(ks)
    if not k:
        raise InputError("--approx needs at least one --approx-k value (64,128,256)")
    train, held = parse_split(split)
    budget = {} if steps is None else {"steps": int(steps)}
    from attnspec.spectra.approx.measure import ApproxPlan

    return ApproxPlan(names, k, train=train, held_out=held, seed=int(seed), budget=budget)


def _documents(cfg: Any, lengths: list[int], encoder: Any) -> dict[int, list[list[int]]]:
    """The study's documents cut to each length, drawn as the study drew them."""
    from dataclasses import replace

    from attnspec.spectra.scaling import cut_inputs, draw_documents

    drawn = draw_documents(replace(cfg, seq_len=lengths[-1]), encoder)
    return {n: (drawn if n == lengths[-1] else cut_inputs(drawn, encoder.tokenizer, n)).input_ids for n in lengths}


def add_to_study(out: Path, cfg: Any, lengths: list[int], plan: ApproxPlan, *, encoder: Any | None = None) -> bool:
    """Measure the approximations of a complete scaling study in ``out`` (resuming by length).

    Parameters
    ----------
    out : Path
        The study's directory (complete, not a shard).
    cfg : SpectrumConfig
        The study's job (model, corpus, selection, seed).
    lengths : list of int
        The study's lengths.
    plan : ApproxPlan
    encoder : LoadedModel, optional
        The model, when already loaded.

    Returns
    -------
    bool
        Whether anything was measured (False: already complete with this plan).
    """
    from attnspec.spectra.approx.study import measure_approximations
    from attnspec.spectra.shared_models import shared_model
    from attnspec.storage.results import read_meta, read_table_if_held, result_files, write_meta, write_table

    record = {**plan.record(), "lengths": lengths}
    held = read_meta(out).get("approx") or {}
    if {k: held.get(k) for k in record} == record and held.get("status") == "complete":
        return False
    done = list(held.get("lengths_done", [])) if {k: held.get(k) for k in record} == record else []
    if encoder is None:
        encoder = shared_model(cfg.model, device=cfg.device, dtype=cfg.dtype)
    from attnspec.spectra.approx.measure import layer_causal, refusals

    refused = refusals(plan, layer_causal(encoder))
    if not _sees_scores(encoder):
        reason = "P is captured through hooks on modules whose Q, K, V attnspec cannot read"
        write_meta(out, {**read_meta(out), "approx": {**record, "status": "not measured", "not_measured": reason}})
        return False
    documents = _documents(cfg, lengths, encoder)
    raw = {t: read_table_if_held(out, t) if done else None for t in RAW_TABLES}
    for n in (n for n in lengths if n not in done):
        part = measure_approximations(encoder, {n: documents[n]}, plan)
        raw = {t: _joined(raw[t], part[t]) for t in RAW_TABLES}
        done.append(n)
        status = "complete" if len(done) == len(lengths) else "partial"
        with result_files(out):
            _write(out, raw, plan, write_table)
            write_meta(
                out,
                {**read_meta(out), "approx": {**record, "lengths_done": done, "refused": refused, "status": status}},
            )
    return True


def _joined(held: pd.DataFrame | None, part: pd.DataFrame | None) -> pd.DataFrame:
    """The rows of the lengths done and of the one just measured (an empty frame when neither
    has rows: the end-to-end table of the other kind of model, or every table at a length where
    no k < n measures anything)."""
    frames = [f for f in (held, part) if f is not None and len(f)]
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()


def _write(out: Path, raw: dict[str, pd.DataFrame], plan: ApproxPlan, write_table: Any) -> None:
    from attnspec.spectra.approx.rule import tables

    for name, frame in raw.items():
        if frame is not None and len(frame.columns):
            write_table(out, name, frame)
    errors = raw.get("approx")
    if errors is None or not len(errors):  # only lengths with no k < n so far: nothing to summarise
        return
    for name, frame in tables(raw, seed=plan.seed).items():
        write_table(out, name, frame)


def read_approx(out: Path) -> dict[str, pd.DataFrame]:
    """The approximation tables a study's directory holds (empty when not measured); its
    ``approx_rule`` follows the rule of :mod:`.rule` even when saved without its deciding columns.

    Parameters
    ----------
    out : Path

    Returns
    -------
    dict of str to DataFrame
    """
    from attnspec.spectra.approx.rule import rule_table
    from attnspec.storage.results import read_meta, read_table_if_held

    found = {t: read_table_if_held(Path(out), t) for t in RAW_TABLES + SUMMARY_TABLES}
    held = {k: v for k, v in found.items() if v is not None}
    if "approx_rule" in held:  # a rule saved without a deciding column is read again from the errors
        held["approx_rule"] = rule_table(held, seed=int((read_meta(Path(out)).get("approx") or {}).get("seed", 0)))
    return held


def _sees_scores(encoder: Any) -> bool:
    """Whether the capture hands Q, K, V: through the registry always, through hooks only for an
    attention module whose layout :mod:`attnspec.spectra.score_parts` reads (MPNet)."""
    from attnspec.spectra.score_parts import reads_score_parts

    if getattr(encoder, "capture_path", "registry") == "registry":
        return True
    return any(reads_score_parts(m) for m in encoder.model.modules())
