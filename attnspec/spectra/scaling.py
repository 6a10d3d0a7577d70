"""How the rank attention needs grows with the sequence length n.

Linformer's second premise is that the rank P needs does not grow with n (its projection
dimension k is O(log n / ε²), "independent of n" in practice). This module measures it:

* :func:`run_scaling` runs the spectrum job at several lengths on the *same documents*
  (drawn once at the longest length, then cut to each shorter one) with one model load,
  writing one ordinary spectrum run per length under ``OUT/n<len>/``;
* :func:`scaling_table` reads them back: per (n, layer) the index where the layer's mean
  curve reaches 0.9, the effective rank, and the input means of the per-input summaries;
* :func:`fit_scaling` fits k ∝ n^β per layer and overall by least squares on log–log
  axes, with a bootstrap interval over inputs (inputs are resampled jointly across
  lengths, since each length sees the same documents), and :func:`verdict` reads β.

The fitted k is the mean over inputs of a per-input value (the head mean, per layer, of
the index where that input's curve reaches 0.9, or of the smallest rank whose best
rank-k approximation has relative Frobenius error <= ε): a mean over inputs is what a
bootstrap over inputs can resample from the small per-input table each run keeps.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from attnspec.errors import InputError, ResultsError
from attnspec.spectra.reading import FITTED, LINEAR_ABOVE, NO_GROWTH_BELOW  # noqa: F401  (read with the fits)
from attnspec.spectra.result_checks import SCALING_KIND
from attnspec.storage.results import (
    check_same_run,
    environment_meta,
    holds_files,
    read_meta,
    read_table,
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
    bad = [n for n in items if n < 2]
    if bad:
        raise InputError(f"--seq-len must be >= 2, got {bad[0]}")
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
    from attnspec.spectra.config import inputs_request
    from attnspec.spectra.data.inputs import load_inputs
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
    drawn = load_inputs(
        cfg.data,
        encoder.tokenizer,
        seq_len=longest,
        **inputs_request(cfg.num_sentences),
        seed=cfg.seed,
        split=cfg.split,
        data_dir=cfg.data_dir,
        short_policy=cfg.short_policy,
        selection=cfg.selection,
        count_available=cfg.count_available,
    )
    # every length is cut from these documents: recorded in each length's content, checked by the fit
    drawn.meta["documents_sha256"] = drawn.meta.get("inputs_sha256")
    out.mkdir(parents=True, exist_ok=True)
    write_meta(
        out,
        {
            "kind": KIND,
            "identity": identity,
            "lengths": lengths,
            "runs": [run_dir(Path("."), n).name for n in lengths],
            "environment": environment_meta(),
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


def _layer_mean_curve(spectrum: pd.DataFrame) -> pd.DataFrame:
    """Mean over heads of the mean curve, per (layer, index)."""
    return spectrum.groupby(["layer", "index"], as_index=False)["mean"].mean()


def read_runs(out: Path) -> dict[int, Path]:
    """Length → run directory of the finished lengths of a scaling directory (at least two).

    Every file is checked first (:func:`attnspec.spectra.result_checks.check_scaling_run`): the
    lengths meta.json records must agree with each run's own seq_len and curve table.

    Parameters
    ----------
    out : Path
        A scaling directory (``attnspec spectrum --seq-len 64,128,...``).

    Returns
    -------
    dict of int to Path
        n → the run directory ``out/n<n>``, for each finished length.

    Raises
    ------
    ResultsError
        ``out`` is not a scaling run, or a file in it is damaged or disagrees with meta.json.
    """
    from attnspec.spectra.result_checks import check_meta, check_scaling_run

    meta = check_meta(out)
    if meta.get("kind") != KIND:
        raise ResultsError(
            f"{out} holds a {meta.get('kind')!r} result, not a scaling run (attnspec spectrum --seq-len 64,128,...)"
        )
    return check_scaling_run(out)


def _source_table(run: Path, source: str, table: str) -> pd.DataFrame:
    """A run's ``table`` (spectrum, metrics, inputs) for ``source``: "real" or a null baseline's name."""
    if source == REAL:
        return read_table(run, table)
    from attnspec.spectra.nulls import read_baseline

    return read_baseline(run, source, table)


#: The source of a scaling table or fit measured on the model's own P (the others are null baselines).
REAL = "real"


def scaling_table(out: Path, level: float = 0.9, source: str = REAL) -> pd.DataFrame:
    """Per (n, layer): index where the layer's mean curve reaches ``level``, effective rank, per-input means.

    Columns: ``n``, ``layer``, ``k_mean_curve`` (first index where the head-averaged mean
    curve reaches ``level``), ``effective_rank`` (mean over heads and inputs), ``inputs``,
    and the input means of every column of ``inputs.parquet``. ``source``: ``"real"`` (the
    model's P) or a null baseline every length holds (an "input" of a null is a draw).

    Parameters
    ----------
    out : Path
        A scaling directory.
    level : float
        The level the head-averaged mean curve must reach, in (0, 1].
    source : str
        ``"real"`` or the name of a null baseline.

    Returns
    -------
    pandas.DataFrame
        One row per (layer, n), sorted by layer then n, with the columns above.
    """
    import torch

    from attnspec.spectra.metrics import reach_index

    rows = []
    for n, d in read_runs(out).items():
        curve = _layer_mean_curve(_source_table(d, source, "spectrum"))
        metrics = _source_table(d, source, "metrics")
        inputs = _source_table(d, source, "inputs")
        per_layer = inputs.groupby("layer").mean(numeric_only=True).drop(columns="input")
        for layer, g in curve.groupby("layer"):
            c = torch.tensor(g.sort_values("index")["mean"].to_numpy())
            row = {
                "n": n,
                "layer": int(layer),
                "k_mean_curve": int(reach_index(c, level)),
                "effective_rank": float(metrics.loc[metrics["layer"] == layer, "effective_rank_mean"].mean()),
                "inputs": int(inputs.loc[inputs["layer"] == layer, "input"].nunique()),
            }
            row.update({f"{c}_input_mean": float(per_layer.loc[layer, c]) for c in per_layer.columns})
            rows.append(row)
    return pd.DataFrame(rows).sort_values(["layer", "n"]).reset_index(drop=True)


def power_law(n: np.ndarray, k: np.ndarray) -> tuple[float, float]:
    """Least-squares fit of log k = a + β log n.

    Parameters
    ----------
    n : numpy.ndarray, shape (m,)
        Lengths, positive.
    k : numpy.ndarray, shape (m,)
        The values at those lengths, positive.

    Returns
    -------
    beta, scale : float
        The exponent β and exp(a): k ≈ scale·n^β.
    """
    x, y = np.log(np.asarray(n, dtype=float)), np.log(np.asarray(k, dtype=float))
    beta, a = np.polyfit(x, y, 1)
    return float(beta), float(np.exp(a))


@dataclass(frozen=True)
class PowerFit:
    """k ∝ n^β for one layer (``layer`` = -1 for the mean over layers) and one metric."""

    metric: str
    layer: int
    beta: float
    low: float
    high: float
    scale: float
    verdict: str


def verdict(low: float, high: float) -> str:
    """Reading of a β interval against :data:`NO_GROWTH_BELOW` and :data:`LINEAR_ABOVE`.

    Parameters
    ----------
    low, high : float
        The interval's ends.

    Returns
    -------
    str
        "does not grow with n", "grows about linearly with n", "grows with n, sublinearly"
        or "inconclusive", each with the thresholds it was read against.
    """
    if high < NO_GROWTH_BELOW:
        return f"does not grow with n (β < {NO_GROWTH_BELOW:g})"
    if low > LINEAR_ABOVE:
        return f"grows about linearly with n (β > {LINEAR_ABOVE:g})"
    if low > NO_GROWTH_BELOW and high < LINEAR_ABOVE:
        return f"grows with n, sublinearly ({NO_GROWTH_BELOW:g} < β < {LINEAR_ABOVE:g})"
    return f"inconclusive (interval crosses {NO_GROWTH_BELOW:g} or {LINEAR_ABOVE:g})"


def fit_per_input(
    lengths: Sequence[int],
    values: np.ndarray,
    *,
    metric: str = "k",
    level: float = 0.95,
    resamples: int = 2000,
    seed: int = 0,
) -> list[PowerFit]:
    """Fit k ∝ n^β per layer and overall, with a percentile bootstrap over inputs.

    Parameters
    ----------
    lengths : sequence of int, length T
        The sequence lengths n.
    values : array, shape (T, m, L)
        Per-input values at each length (the same m inputs at every length) per layer;
        positive, at least 2 lengths and 2 inputs.
    metric : str
        The metric's name, recorded in each fit.
    level : float
        The interval's level.
    resamples : int
        Bootstrap resamples (of the m inputs, jointly across lengths).
    seed : int
        Seed of the bootstrap.

    Returns
    -------
    list of PowerFit: layers 0..L-1, then layer -1 for the mean over layers.
    """
    from attnspec.numerics.stats import numpy_rng

    n = np.asarray(lengths, dtype=float)
    v = np.asarray(values, dtype=float)
    if v.ndim != 3 or v.shape[0] != n.size:
        raise InputError(f"values must have shape ({n.size}, inputs, layers), got {v.shape}")
    if n.size < 2 or v.shape[1] < 2:
        raise InputError(
            f"a power-law fit with a bootstrap needs >= 2 lengths and >= 2 inputs, got {n.size} and {v.shape[1]}"
        )
    if not np.all(v > 0):
        raise InputError("every value must be positive for a log–log fit")
    v = np.concatenate([v, v.mean(axis=2, keepdims=True)], axis=2)  # (T, m, L + 1): last = mean over layers
    x = np.log(n) - np.log(n).mean()

    def slopes(means: np.ndarray) -> np.ndarray:  # (..., T, L+1) → (..., L+1)
        y = np.log(means)
        return np.einsum("t,...tl->...l", x, y - y.mean(axis=-2, keepdims=True)) / (x @ x)

    point = slopes(v.mean(axis=1))  # (L+1,)
    rng = numpy_rng(seed)
    m = v.shape[1]
    boot = np.empty((resamples, v.shape[2]))
    for b0 in range(0, resamples, 50):  # chunks keep memory at 50·T·m·(L+1) floats
        idx = rng.integers(0, m, size=(min(50, resamples - b0), m))  # (b, m)
        means = v[:, idx, :].mean(axis=2)  # (T, b, L+1)
        boot[b0 : b0 + idx.shape[0]] = slopes(np.moveaxis(means, 0, 1))
    alpha = (1 - level) / 2
    lo, hi = np.quantile(boot, [alpha, 1 - alpha], axis=0)
    fits = []
    for j in range(v.shape[2]):
        layer = j if j < v.shape[2] - 1 else -1
        scale = float(np.exp(np.log(v.mean(axis=1)[:, j]).mean() - point[j] * np.log(n).mean()))
        fits.append(
            PowerFit(
                metric, layer, float(point[j]), float(lo[j]), float(hi[j]), scale, verdict(float(lo[j]), float(hi[j]))
            )
        )
    return fits


def fit_scaling(
    out: Path, *, resamples: int = 2000, seed: int = 0, level: float = 0.95, source: str = REAL
) -> pd.DataFrame:
    """Power-law fits of every :data:`FITTED` metric of a scaling directory, per layer and overall.

    Uses the inputs present at every length (joined on their position in the selection).
    Columns: ``metric``, ``layer`` (-1 = mean over layers), ``beta``, ``low``, ``high``,
    ``scale`` (k ≈ scale·n^β), ``verdict``, ``inputs``, ``level``, ``resampled`` (what the
    bootstrap resamples). A deterministic null (one matrix per length: uniform) is fitted
    exactly, its interval is the point.

    Parameters
    ----------
    out : Path
        A scaling directory.
    resamples : int
        Bootstrap resamples, >= 100.
    seed : int
        Seed of the bootstrap, >= 0.
    level : float
        The intervals' level, in (0, 1).
    source : str
        ``"real"`` (the model's P) or the name of a null baseline every length holds.

    Returns
    -------
    pandas.DataFrame
        One row per (metric, layer), with the columns above.

    Raises
    ------
    InputError
        An argument out of range, or a bootstrap that would not fit in memory.
    ResultsError
        Fewer than two inputs (draws) present at every length.
    """
    from attnspec.errors import check_int, check_memory, check_range

    check_int("resamples", resamples, low=100)  # as `plot scaling --resamples` (min 100)
    check_int("seed", seed, low=0)
    if isinstance(level, bool) or not isinstance(level, (int, float)):
        raise InputError(f"level must be a number in (0, 1), got {level!r}")
    check_range("level", float(level), low=0, high=1, low_open=True, high_open=True)
    runs = read_runs(out)
    lengths = sorted(runs)
    tables = {n: _source_table(runs[n], source, "inputs") for n in lengths}
    layers = max(int(t["layer"].nunique()) for t in tables.values())
    # the bootstrap keeps resamples x (layers + 1) float64 slopes, and np.quantile copies them
    check_memory(f"--resamples {resamples} (the bootstrap over {layers} layers)", 2 * 8 * resamples * (layers + 1))
    common = set.intersection(*(set(t["input"].unique()) for t in tables.values()))
    exact = source != REAL and len(common) == 1  # a deterministic null: one matrix per length
    if len(common) < 2 and not exact:
        raise ResultsError(
            f"{out}: fewer than two {'inputs' if source == REAL else 'draws'} are present at every length"
        )
    keep = np.array(sorted(common))
    from attnspec.spectra.nulls import MODEL_NULLS

    resampled = (
        "exact (one deterministic matrix per length)"
        if exact
        else "inputs (documents, jointly across lengths)"
        if source == REAL or source in MODEL_NULLS
        else "draws of the null (jointly across lengths)"
    )
    rows = []
    for metric in FITTED:
        stack = []
        for n in lengths:
            t = tables[n]
            wide = t[t["input"].isin(keep)].pivot(index="input", columns="layer", values=metric).loc[keep]
            stack.append(wide.to_numpy())  # (m, L)
        fits = (
            _exact_fits(lengths, np.stack(stack), metric)
            if exact
            else fit_per_input(lengths, np.stack(stack), metric=metric, resamples=resamples, seed=seed, level=level)
        )
        for f in fits:
            rows.append({**f.__dict__, "inputs": int(keep.size), "level": level, "resampled": resampled})
    return pd.DataFrame(rows)


def _exact_fits(lengths: Sequence[int], values: np.ndarray, metric: str) -> list[PowerFit]:
    """Least-squares β per layer and over layers of one deterministic series, values (T, 1, L)."""
    v = np.asarray(values, dtype=float)[:, 0, :]  # (T, L)
    v = np.concatenate([v, v.mean(axis=1, keepdims=True)], axis=1)  # (T, L + 1)
    fits = []
    for j in range(v.shape[1]):
        beta, scale = power_law(np.asarray(lengths), v[:, j])
        fits.append(PowerFit(metric, j if j < v.shape[1] - 1 else -1, beta, beta, beta, scale, verdict(beta, beta)))
    return fits


def null_comparison(
    out: Path, *, resamples: int = 2000, seed: int = 0, level: float = 0.95, metric: str = "reach_index"
) -> pd.DataFrame:
    """β and the constant k/n of the model's P beside every null baseline the study holds.

    One row per source (``real`` first, then each null every length holds): ``beta``,
    ``low``, ``high`` (over layers' mean, :func:`fit_scaling`), ``verdict``, ``resampled``,
    and per length ``share_n<len>`` = mean over layers and inputs (draws) of k/n, and
    ``share_ratio`` = real k/n over this source's k/n at the longest length (1 for real).

    Parameters
    ----------
    out : Path
        A scaling directory.
    resamples : int
        Bootstrap resamples of each fit, >= 100.
    seed : int
        Seed of the bootstraps, >= 0.
    level : float
        The intervals' level, in (0, 1).
    metric : str
        The fitted metric compared (default ``reach_index``, k90).

    Returns
    -------
    pandas.DataFrame
        One row per source, with the columns above and ``source``, ``metric``, ``inputs``.
    """
    from attnspec.spectra.nulls import baselines_of

    runs = read_runs(out)
    lengths = sorted(runs)
    nulls = [b for b in baselines_of(runs[lengths[0]]) if all(b in baselines_of(runs[n]) for n in lengths)]
    rows = []
    for source in (REAL, *nulls):
        fit = fit_scaling(out, resamples=resamples, seed=seed, level=level, source=source)
        f = fit[(fit["metric"] == metric) & (fit["layer"] == -1)].iloc[0]
        row = {
            "source": source,
            "metric": metric,
            "beta": float(f["beta"]),
            "low": float(f["low"]),
            "high": float(f["high"]),
            "verdict": f["verdict"],
            "resampled": f["resampled"],
            "inputs": int(f["inputs"]),
        }
        for n in lengths:
            row[f"share_n{n}"] = float(_source_table(runs[n], source, "inputs")[metric].mean()) / n
        rows.append(row)
    table = pd.DataFrame(rows)
    last = f"share_n{lengths[-1]}"
    table["share_ratio"] = float(table.loc[0, last]) / table[last]
    return table


@dataclass(frozen=True)
class StudyFit:
    """The fits of a scaling study (:func:`fit_study`).

    Attributes
    ----------
    table : pandas.DataFrame
        :func:`scaling_table`: per (n, layer), k90 of the mean curve, effective rank, input means.
    fits : pandas.DataFrame
        :func:`fit_scaling`: k ∝ n^β per metric and layer (-1 = mean over layers), CI, verdict.
    nulls : pandas.DataFrame
        :func:`null_comparison`: the real β and k/n beside every null the study holds.
    null_tables : dict of str to pandas.DataFrame
        Each null's :func:`scaling_table`.
    """

    table: pd.DataFrame
    fits: pd.DataFrame
    nulls: pd.DataFrame
    null_tables: dict[str, pd.DataFrame]

    def save(self, out: Path, *, csv: bool = False) -> None:
        """``scaling.parquet``, ``scaling_fit.parquet`` and, with nulls, ``scaling_null.parquet`` in ``out``, as one unit.

        Parameters
        ----------
        out : Path
            The scaling study's directory.
        csv : bool
            Also write a CSV copy of each table.
        """
        with result_files(out):
            write_table(out, "scaling", self.table, csv=csv)
            write_table(out, "scaling_fit", self.fits, csv=csv)
            if len(self.nulls) > 1:
                write_table(out, "scaling_null", self.nulls, csv=csv)


def fit_study(out: Path, *, resamples: int = 2000, seed: int = 0) -> StudyFit:
    """Every table and fit of a finished scaling study (nothing is written: :meth:`StudyFit.save`).

    Parameters
    ----------
    out : Path
        A scaling directory, one finished run per length.
    resamples : int
        Bootstrap resamples of each fit, >= 100.
    seed : int
        Seed of the bootstraps, >= 0.

    Returns
    -------
    StudyFit
        :func:`scaling_table`, :func:`fit_scaling` and :func:`null_comparison` (intervals at
        level 0.95) of the model's P, and the scaling table of each null every length holds.

    Raises
    ------
    InputError
        ``resamples`` or ``seed`` out of range, or a bootstrap that would not fit in memory.
    ResultsError
        ``out`` is not a scaling run, a file in it is damaged or disagrees with meta.json,
        or fewer than two inputs (draws) are present at every length.
    """
    nulls = null_comparison(out, resamples=resamples, seed=seed)
    return StudyFit(
        table=scaling_table(out),
        fits=fit_scaling(out, resamples=resamples, seed=seed),
        nulls=nulls,
        null_tables={s: scaling_table(out, source=s) for s in nulls["source"] if s != REAL},
    )


def null_sentence(table: pd.DataFrame, *, level: float = 0.95) -> str:
    """The real β and k/n beside each null's, in one sentence (:func:`null_comparison`'s table).

    A null whose β interval overlaps the real one is said, in the same sentence, to give the
    same exponent: the exponent then does not tell this model's attention from chance, and
    the constant k/n is the finding.

    Parameters
    ----------
    table : pandas.DataFrame
        :func:`null_comparison`'s table.
    level : float
        The intervals' level, as the sentence states it.

    Returns
    -------
    str
        The sentence.
    """
    from attnspec.numerics.stats import format_interval
    from attnspec.spectra.nulls import LABELS

    shares = sorted((c for c in table.columns if c.startswith("share_n")), key=lambda c: int(c[len("share_n") :]))
    last = shares[-1]
    n = int(last[len("share_n") :])
    real = table[table["source"] == REAL].iloc[0]
    what = "k90" if real["metric"] == "reach_index" else str(real["metric"])
    text = (
        f"For this model on this corpus, {what} grows as n^{real['beta']:.2f} "
        f"({level:.0%} interval {format_interval(real['low'], real['high'])}, resampling {real['resampled']})"
    )
    parts = []
    for r in table[table["source"] != REAL].itertuples():
        ci = format_interval(r.low, r.high, exact=r.resampled.startswith("exact"))
        overlap = r.low <= real["high"] and real["low"] <= r.high
        alike = r.verdict == real["verdict"]  # e.g. both "grows about linearly with n"
        parts.append(
            f"the {LABELS.get(r.source, r.source)} gives β = {r.beta:.2f} "
            f"({ci}{'' if ci == 'exact' else ', resampling ' + r.resampled})"
            + (
                ", the same exponent: β does not tell this attention from chance"
                if overlap
                else f", read alike ({r.verdict}): β does not tell this attention from chance"
                if alike
                else ""
            )
        )
    if parts:
        text += "; " + "; ".join(parts)
    text += f". At n = {n}, {what}/n is {real[last]:.3g}"
    for r in table[table["source"] != REAL].itertuples():
        text += f" against {getattr(r, last):.3g} for the {LABELS.get(r.source, r.source)} (real/null = {r.share_ratio:.2f})"
    return text + "."
