"""One length of a saved scaling study computed again with the code as it is, and the columns it
lacks added.

A metric registered after a study was saved (:mod:`attnspec.spectra.metric_table`) leaves that
study's tables without its columns. Rerunning the whole study costs every length and, for a
scaling study, its approximation measurements; :func:`recompute_length` runs only one length:

1. the study's documents are drawn again as the study drew them (its config, seed and longest
   length, :func:`attnspec.spectra.scaling.draw_documents`) and cut to the length; their digest
   must be the one the saved run recorded;
2. the spectrum job runs on them into a scratch folder, then the nulls the saved run holds, with
   its seed and draws (the random-init null on the very same inputs);
3. every saved table is compared with its recomputed twin (:func:`compare_table`): the same rows
   in the same order, and every saved column equal value for value (NaN where NaN, the dtype
   alike), bit for bit unless a tolerance is given: another CPU or library build rounds float32
   sums differently, which moves a float value in its last digits and nothing else;
4. only when every table agrees and ``write`` is set are the recomputed columns the saved
   tables lack added to them (the saved values are kept as they are), and the run's meta.json
   records what was recomputed and when under ``recomputed`` (one entry per recomputation: the
   columns added, the tolerance, the tables that came out bit for bit, the largest difference
   of every other column).

Nothing the report's freshness reads changes: the study's ``report_run.json`` (its key is the
experiment's arguments and the version) and each length's identity, config and corpus stay as
saved. A table that differs anywhere leaves the run untouched and raises, naming each column.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from attnspec.errors import ResultsError

#: The tables of a spectrum run, and of its nulls, that a recomputation compares.
RUN_TABLES = ("spectrum", "metrics", "inputs")
BASELINE_TABLES = tuple(f"baseline_{t}" for t in RUN_TABLES)


@dataclass(frozen=True)
class TableCheck:
    """One saved table against its recomputed twin.

    Attributes
    ----------
    table : str
        The table's file stem (``metrics``, ``baseline_metrics``, ...).
    added : list of str
        Columns of the recomputed table that the saved one lacks.
    differing : list of str
        Saved columns whose values (or dtype) differ beyond the tolerance, each with its largest
        absolute difference; ``rows`` when the row count differs.
    within : dict of str to float
        Saved float columns whose values differ within the tolerance: column → largest absolute
        difference (empty when every value came out bit for bit).
    missing : list of str
        Saved columns the recomputed table lacks.
    exempt : dict of str to float
        Columns exempted from the agreement that differ beyond the tolerance: column → largest
        absolute difference (recorded, never blocking).
    """

    table: str
    added: list[str] = field(default_factory=list)
    differing: list[str] = field(default_factory=list)
    within: dict[str, float] = field(default_factory=dict)
    missing: list[str] = field(default_factory=list)
    exempt: dict[str, float] = field(default_factory=dict)

    @property
    def identical(self) -> bool:
        """Every saved value came out the same, within the tolerance (added columns aside)."""
        return not self.differing and not self.missing

    @property
    def bit_identical(self) -> bool:
        """Every saved value came out the same bit for bit."""
        return self.identical and not self.within and not self.exempt


@dataclass(frozen=True)
class Recomputed:
    """What :func:`recompute_length` did.

    Attributes
    ----------
    run : Path
        The saved run (``study/n<len>``).
    scratch : Path
        Where the recomputed run and its nulls were written (kept for inspection).
    checks : list of TableCheck
        One per table the saved run holds.
    written : bool
        The added columns were written into the saved run.
    wall_s, cpu_s : float
        Wall and process CPU seconds of the recomputation.
    """

    run: Path
    scratch: Path
    checks: list[TableCheck]
    written: bool
    wall_s: float
    cpu_s: float

    @property
    def identical(self) -> bool:
        """Every saved table came out the same, within the tolerance."""
        return all(c.identical for c in self.checks)

    @property
    def bit_identical(self) -> bool:
        """Every saved table came out the same bit for bit."""
        return all(c.bit_identical for c in self.checks)

    @property
    def added(self) -> dict[str, list[str]]:
        """Table → the columns the recomputation adds (tables that gain none left out)."""
        return {c.table: c.added for c in self.checks if c.added}


def _difference(a: pd.Series, b: pd.Series, rtol: float, atol: float) -> tuple[str | None, float]:
    """(why ``a`` and ``b`` differ beyond ``|a − b| <= atol + rtol·|a|``, None when they do not; the
    largest absolute difference, 0 when bit for bit the same). NaN must meet NaN, dtypes must
    match, and columns that are not float must be equal."""
    if a.dtype != b.dtype:
        return f"dtype {a.dtype} against {b.dtype}", float("nan")
    if not pd.api.types.is_float_dtype(a.dtype):
        return (None, 0.0) if a.equals(b) else ("values differ", float("nan"))
    x, y = a.to_numpy(dtype=float), b.to_numpy(dtype=float)
    if np.array_equal(x, y, equal_nan=True):
        return None, 0.0
    if not np.array_equal(np.isnan(x), np.isnan(y)):
        return "NaN in one table only", float("nan")
    both = ~np.isnan(x)
    gap = np.abs(x[both] - y[both])
    worst = float(gap.max())
    if np.all(gap <= atol + rtol * np.abs(x[both])):
        return None, worst
    return f"largest difference {worst:.3g}", worst


def compare_table(
    table: str,
    saved: pd.DataFrame,
    fresh: pd.DataFrame,
    *,
    rtol: float = 0.0,
    atol: float = 0.0,
    exempt: Sequence[str] = (),
) -> TableCheck:
    """A saved table against its recomputed twin, column by column.

    Parameters
    ----------
    table : str
        The table's file stem, for the record.
    saved : pandas.DataFrame
        The table as saved.
    fresh : pandas.DataFrame
        The same table recomputed.
    rtol, atol : float
        A float value agrees when ``|saved − recomputed| <= atol + rtol·|saved|``; 0 and 0 (the
        default): bit for bit.
    exempt : sequence of str
        Columns whose differences are recorded (``exempt``) but do not count against agreement:
        values that rounding alone decides, such as the tail curve of an exactly rank-one P.

    Returns
    -------
    TableCheck
        Rows are compared in order: a different row count is ``rows`` in ``differing``.
    """
    added = [c for c in fresh.columns if c not in saved.columns]
    missing = [c for c in saved.columns if c not in fresh.columns]
    if len(saved) != len(fresh):
        return TableCheck(table, added, [f"rows ({len(saved)} saved, {len(fresh)} recomputed)"], {}, missing)
    differing, within, excused = [], {}, {}
    for column in saved.columns:
        if column in fresh.columns:
            pair = saved[column].reset_index(drop=True), fresh[column].reset_index(drop=True)
            why, worst = _difference(*pair, rtol, atol)
            if why is not None and column in exempt:
                excused[column] = worst
            elif why is not None:
                differing.append(f"{column} ({why})")
            elif worst > 0:
                within[column] = worst
    return TableCheck(table, added, differing, within, missing, excused)


def _study_config(run: Path, scratch: Path, data_dir: str | None) -> Any:
    """The saved run's job, writing into ``scratch`` (never resuming, never over a result)."""
    import dataclasses

    from attnspec.spectra.config import SpectrumConfig
    from attnspec.storage.results import read_meta

    saved = read_meta(run).get("config") or {}
    fields = {f.name for f in dataclasses.fields(SpectrumConfig)}
    kw = {k: v for k, v in saved.items() if k in fields}
    kw.update(out=scratch, resume=False, overwrite=False, max_time=None, csv=False, shard=None)
    if data_dir is not None:
        kw["data_dir"] = data_dir
    return SpectrumConfig(**kw)


def study_inputs(study: Path, seq_len: int, cfg: Any, encoder: Any) -> Any:
    """The inputs a scaling study gave its run at ``seq_len``: its documents drawn at its longest
    length, cut to ``seq_len``; refused when their digest is not the one the run recorded.

    Parameters
    ----------
    study : Path
        The scaling study's folder.
    seq_len : int
        One of its lengths.
    cfg : attnspec.spectra.config.SpectrumConfig
        The run's job (its seed, corpus and count draw the documents).
    encoder : LoadedModel
        Its tokenizer makes the windows.

    Returns
    -------
    attnspec.spectra.data.inputs.Inputs

    Raises
    ------
    ResultsError
        ``seq_len`` is not a length of the study, or the inputs differ from the saved run's.
    """
    from attnspec.spectra.scaling import cut_inputs, draw_documents, run_dir
    from attnspec.storage.results import read_meta

    lengths = [int(n) for n in read_meta(study).get("lengths") or []]
    if seq_len not in lengths:
        raise ResultsError(f"{study} has no run at n = {seq_len}; its lengths are {lengths}")
    drawn = draw_documents(replace(cfg, seq_len=lengths[-1]), encoder)
    drawn.meta["documents_sha256"] = drawn.meta.get("inputs_sha256")  # as the study records it
    inputs = drawn if seq_len == lengths[-1] else cut_inputs(drawn, encoder.tokenizer, seq_len)
    recorded = (read_meta(run_dir(study, seq_len)).get("corpus") or {}).get("inputs_sha256")
    if recorded != inputs.meta.get("inputs_sha256"):
        raise ResultsError(
            f"{run_dir(study, seq_len)}: the inputs drawn again have digest {inputs.meta.get('inputs_sha256')}, "
            f"the run recorded {recorded}; the corpus or the drawing rule changed, nothing to compare"
        )
    return inputs


def _complete(outcome: Any) -> None:
    """A recomputed run that stopped early (Ctrl-C, SIGTERM) ends the recomputation: a part of the
    inputs is not the run it is compared with."""
    if outcome.status != "complete":
        raise ResultsError(
            f"the recomputation stopped early ({outcome.status}, {outcome.inputs_done} of {outcome.inputs_total} "
            "inputs); nothing was compared or written"
        )


def _fresh_run(cfg: Any, inputs: Any, encoder: Any, record: dict[str, Any], progress: bool) -> Path:
    """The run and the nulls of ``record`` (the saved run's ``baselines``) computed into
    ``cfg.out/run``; the random-init null on the same inputs, its model re-initialised as
    :func:`attnspec.spectra.random_init.reinitialised` does."""
    from attnspec.spectra.baselines import add_baselines
    from attnspec.spectra.job import run_spectrum
    from attnspec.spectra.nulls import needs_model
    from attnspec.spectra.random_init import reinitialised
    from attnspec.storage.results import read_table

    scratch = Path(cfg.out)
    run = scratch / "run"
    _complete(run_spectrum(replace(cfg, out=run), progress=progress, encoder=encoder, inputs=inputs))
    names = list(record.get("names") or [])
    if not names:
        return run
    model_tables = None
    if any(needs_model(b) for b in names):
        null_run = scratch / "random-init"
        null = reinitialised(encoder, cfg.seed)
        _complete(run_spectrum(replace(cfg, out=null_run), progress=progress, encoder=null, inputs=inputs))
        model_tables = {t: read_table(null_run, t) for t in RUN_TABLES}
    add_baselines(run, names, seed=record.get("seed"), draws=int(record["draws"]), model_tables=model_tables)
    return run


def _saved_tables(run: Path) -> list[str]:
    return [t for t in (*RUN_TABLES, *BASELINE_TABLES) if (run / f"{t}.parquet").is_file()]


def _write_added(run: Path, fresh: Path, checks: list[TableCheck], entry: dict[str, Any]) -> None:
    """Each saved table with the recomputed columns it lacks (in the recomputed table's column
    order, saved values untouched), and ``entry`` appended to meta.json's ``recomputed``."""
    from attnspec.storage.results import read_meta, read_table, result_files, write_meta, write_table

    meta = read_meta(run)
    with result_files(run):
        for check in checks:
            if not check.added:
                continue
            saved, new = read_table(run, check.table), read_table(fresh, check.table)
            for column in check.added:
                saved[column] = new[column].to_numpy()
            write_table(run, check.table, saved[[c for c in new.columns if c in saved.columns]])
        write_meta(run, {**meta, "recomputed": [*(meta.get("recomputed") or []), entry]})


def _reusable(scratch: Path, run: Path) -> Path | None:
    """The complete recomputation an earlier call left in ``scratch`` for ``run`` (its identity,
    inputs and nulls the saved run's), or None."""
    from attnspec.storage.results import read_meta

    fresh = scratch / "run"
    if not (fresh / "meta.json").is_file():
        return None
    done, saved = read_meta(fresh), read_meta(run)
    same = (
        done.get("status") == "complete"
        and done.get("identity") == saved.get("identity")
        and (done.get("corpus") or {}).get("inputs_sha256") == (saved.get("corpus") or {}).get("inputs_sha256")
        and (done.get("baselines") or {}).get("names") == (saved.get("baselines") or {}).get("names")
    )
    return fresh if same else None


def _recompute(
    study: Path, seq_len: int, run: Path, scratch: Path, *, encoder: Any, data_dir: str | None, progress: bool
) -> Path:
    """The run at ``seq_len`` and its nulls computed again into ``scratch/run``."""
    from attnspec.spectra.shared_models import shared_model
    from attnspec.storage.results import read_meta

    if scratch.exists() and any(scratch.iterdir()):
        raise ResultsError(f"--scratch {scratch} is not empty; give an absent or empty folder")
    cfg = _study_config(run, scratch, data_dir)
    if encoder is None:
        encoder = shared_model(cfg.model, device=cfg.device, dtype=cfg.dtype)
    inputs = study_inputs(study, seq_len, cfg, encoder)
    return _fresh_run(cfg, inputs, encoder, read_meta(run).get("baselines") or {}, progress)


def _entry(done: Recomputed, rtol: float, atol: float, exempt: Mapping[str, str], reused: Path | None) -> dict:
    """The record of one recomputation, appended to the run's meta.json ``recomputed``."""
    from attnspec.storage.results import environment_meta

    excused = {f"{c.table}.{col}": worst for c in done.checks for col, worst in c.exempt.items()}
    return {
        "utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "by": "attnspec.spectra.recompute.recompute_length",
        "columns_added": done.added,
        "tables_compared": [c.table for c in done.checks],
        "tolerance": {"rtol": rtol, "atol": atol},
        "bit_identical": [c.table for c in done.checks if c.bit_identical],
        # the saved values were kept; these are how far the recomputed ones lie from them
        "largest_differences": {c.table: c.within for c in done.checks if c.within},
        "exempt": {key: {"reason": why, "largest_difference": excused.get(key, 0.0)} for key, why in exempt.items()},
        **({"reused_scratch": str(reused)} if reused is not None else {}),
        "wall_time_s": round(done.wall_s, 1),
        "cpu_time_s": round(done.cpu_s, 1),
        "environment": environment_meta(),
    }


def recompute_length(
    study: Path,
    seq_len: int,
    *,
    scratch: Path,
    write: bool = False,
    encoder: Any | None = None,
    data_dir: str | None = None,
    progress: bool = True,
    rtol: float = 0.0,
    atol: float = 0.0,
    exempt: Mapping[str, str] | None = None,
    reuse: bool = False,
) -> Recomputed:
    """Compute one length of a saved scaling study again, compare every saved table with it, and,
    when all agree and ``write`` is set, add the columns the saved tables lack.

    Parameters
    ----------
    study : Path
        A complete scaling study's folder (``attnspec spectrum --seq-len 64,...,512``).
    seq_len : int
        The length to recompute (its run is ``study/n<seq_len>``).
    scratch : Path
        An absent or empty folder for the recomputed run and its nulls; kept afterwards.
    write : bool
        Add the recomputed columns to the saved run when every saved value came out the same.
    encoder : LoadedModel, optional
        The study's model, already loaded (default: loaded from the run's config).
    data_dir : str, optional
        The corpora's folder, in place of the one the run recorded.
    progress : bool
        Progress lines on stderr.
    rtol, atol : float
        The agreement asked of every saved float value (:func:`compare_table`); 0 and 0 (the
        default): bit for bit. Recorded with the columns added.
    exempt : mapping of str to str, optional
        ``"table.column"`` → why its values are not held to the agreement (the tail curve of the
        uniform null: an exactly rank-one P, whose σ₂ … σ_n are rounding); their largest
        difference is recorded with the reason.
    reuse : bool
        Compare with the complete recomputation an earlier call left in ``scratch`` (the same
        identity, inputs and nulls) instead of computing again.

    Returns
    -------
    Recomputed

    Raises
    ------
    ResultsError
        Not a complete run of a scaling study, a scratch folder that is not empty (and not
        reusable), inputs whose digest differs from the saved run's, or (with ``write``) a saved
        value that came out different: the run is then left as it was.
    """
    from attnspec.spectra.result_checks import SCALING_KIND
    from attnspec.spectra.scaling import run_dir
    from attnspec.storage.results import read_meta, read_table

    study, scratch, exempt = Path(study), Path(scratch), dict(exempt or {})
    run = run_dir(study, seq_len)
    meta = read_meta(study)
    if meta.get("kind") != SCALING_KIND:
        raise ResultsError(
            f"{study} is not a scaling study (meta.json kind {meta.get('kind')!r}); give the study's folder"
        )
    lengths = [int(n) for n in meta.get("lengths") or []]
    if seq_len not in lengths:
        raise ResultsError(f"{study} has no run at n = {seq_len}; its lengths are {lengths}")
    if read_meta(run).get("status") != "complete":
        raise ResultsError(f"{run} is not a complete run of a scaling study; recompute a length of a finished study")
    wall, cpu = time.perf_counter(), time.process_time()
    reused = _reusable(scratch, run) if reuse else None
    fresh = reused or _recompute(study, seq_len, run, scratch, encoder=encoder, data_dir=data_dir, progress=progress)
    checks = []
    for t in _saved_tables(run):
        excused = [key.split(".", 1)[1] for key in exempt if key.split(".", 1)[0] == t]
        checks.append(compare_table(t, read_table(run, t), read_table(fresh, t), rtol=rtol, atol=atol, exempt=excused))
    done = Recomputed(run, scratch, checks, False, time.perf_counter() - wall, time.process_time() - cpu)
    if not write:
        return done
    if not done.identical:
        said = "; ".join(
            f"{c.table}: {', '.join(c.differing + [f'{m} missing' for m in c.missing])}"
            for c in checks
            if not c.identical
        )
        raise ResultsError(f"{run} was left as saved: the recomputed values differ ({said})")
    _write_added(run, fresh, checks, _entry(done, rtol, atol, exempt, reused))
    return replace(done, written=True)
