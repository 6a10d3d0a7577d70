"""The decoder section's study, gathered from saved results once per report.

Per corpus with a causal run (:class:`Corpus`): the decoder run the section reads, the
encoder run beside it at the same n, their statistics, contrasts and depth trends, the β fits
of both models' scaling runs, and the decoder runs past its scaling study's lengths (the long
end). The numbers come from :mod:`attnspec.spectra.decoder_study`; the section's text and
the summary's lines that read them are :mod:`attnspec.report.decoder`'s.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from attnspec.spectra.decoder_study import FEW_INPUTS, Run

__all__ = ["DEPTH", "Corpus", "Study", "build_study"]

#: The quantities whose trend over depth question 3 reads.
DEPTH = ("c_at", "reach_index", "effective_rank", "row_entropy")


@dataclass
class Corpus:
    """Everything the section says about one corpus."""

    data: str
    decoder: Run  # the decoder run the depth part reads (the longest n shared with the encoder, else the longest)
    compare_ns: list[int]  # lengths with both a decoder and an encoder run (the two longest)
    stats: dict[tuple[bool, int], pd.DataFrame] = field(default_factory=dict)  # (causal, n) → run_statistics
    runs: dict[tuple[bool, int], Run] = field(default_factory=dict)
    contrasts: dict[int, pd.DataFrame] = field(default_factory=dict)  # n → contrast(decoder, encoder)
    trends: dict[bool, pd.DataFrame] = field(default_factory=dict)  # causal → depth trends at the depth n
    fits: list[tuple[Run, pd.DataFrame]] = field(default_factory=list)  # beta fits (full range and shared range)
    # the long end: decoder runs longer than its scaling study (n → run, run_statistics), and the
    # scaling study's longest run with its statistics, which the long runs are read against
    long: dict[int, tuple[Run, pd.DataFrame]] = field(default_factory=dict)
    base: tuple[Run, pd.DataFrame] | None = None


@dataclass
class Study:
    """Every corpus the section reads, the results it could not read, and whether a run has too
    few inputs for conclusions."""

    corpora: list[Corpus]
    problems: list[str]
    few: bool  # a run has fewer than FEW_INPUTS inputs


#: The last study built, under the signature of the results it was built from: the summary
#: and the section read the same study, computed once per report.
_LAST: dict[tuple[Any, ...], Study | None] = {}


def _signature(experiments: Sequence[Any], results: Path) -> tuple[Any, ...]:
    """Which experiments, and the size and time of every result table they could read."""
    root = Path(results)
    files = sorted(p for e in experiments for p in (root / e.name).rglob("*") if p.suffix in (".json", ".parquet"))
    return (
        str(root.resolve()),
        tuple(e.name for e in experiments),
        tuple((str(p), p.stat().st_mtime_ns, p.stat().st_size) for p in files),
    )


def build_study(experiments: Sequence[Any], results: Path) -> Study | None:
    """The study from the saved results; None when no causal run is there.

    Parameters
    ----------
    experiments : sequence of Experiment
        The report's experiments.
    results : Path
        The folder of every experiment's results directory.

    Returns
    -------
    Study or None
    """
    try:
        key = _signature(experiments, results)
    except OSError:  # a file went away while being listed (a run still writing): no caching
        return _build_study(experiments, results)
    if key not in _LAST:
        _LAST.clear()
        _LAST[key] = _build_study(experiments, results)
    return _LAST[key]


def _build_study(experiments: Sequence[Any], results: Path) -> Study | None:
    from attnspec.spectra.decoder_study import best_run, collect_runs, shared_lengths

    runs, problems = collect_runs(experiments, results)
    corpora = []
    for data in dict.fromkeys(r.data for r in runs if r.causal):
        shared = shared_lengths(runs, data)
        compare_ns = shared[-2:][::-1]  # longest first
        depth_n = compare_ns[0] if compare_ns else max(r.n for r in runs if r.causal and r.data == data)
        dec = best_run(runs, causal=True, data=data, n=depth_n)
        c = Corpus(data=data, decoder=dec, compare_ns=compare_ns)
        try:
            _fill(c, runs)
        except Exception as e:  # noqa: BLE001 - a broken result must not stop the report
            problems.append(f"{data}: {type(e).__name__}: {e}")
            continue
        corpora.append(c)
    if not corpora and not problems:
        return None
    used = [r for c in corpora for r in c.runs.values()]
    return Study(corpora=corpora, problems=problems, few=any(r.inputs < FEW_INPUTS for r in used))


def _fill(c: Corpus, runs: Sequence[Run]) -> None:
    import warnings

    from attnspec.spectra.decoder_study import best_run, contrast, run_depth_trends, run_statistics

    with warnings.catch_warnings():  # a short input leaves c_at out, which the tables show as missing
        warnings.simplefilter("ignore")
        for n in c.compare_ns or [c.decoder.n]:
            for causal in (True, False):
                r = best_run(runs, causal=causal, data=c.data, n=n)
                if r is not None:
                    c.runs[(causal, n)] = r
                    c.stats[(causal, n)] = run_statistics(r.path)
            if (False, n) in c.stats:
                c.contrasts[n] = contrast(c.stats[(True, n)], c.stats[(False, n)])
        n = c.decoder.n
        for causal in (True, False):
            if (causal, n) in c.runs:
                c.trends[causal] = run_depth_trends(c.runs[(causal, n)].path, DEPTH)
    c.fits = _fits(c, runs)
    _fill_long(c, runs)


def _fill_long(c: Corpus, runs: Sequence[Run]) -> None:
    """The decoder runs on this corpus longer than every length of its scaling study (the
    long-context experiments), and that study's longest run, each with its statistics."""
    from attnspec.spectra.decoder_study import best_run, run_statistics

    scaled = [r for r in runs if r.causal and r.data == c.data and r.scaling is not None]
    if not scaled:
        return
    top = max(r.n for r in scaled)
    singles = [r for r in runs if r.causal and r.data == c.data and r.scaling is None and r.n > top]
    for n in sorted({r.n for r in singles}):
        r = best_run(singles, causal=True, data=c.data, n=n)
        c.long[n] = (r, run_statistics(r.path))
    if c.long:
        base = best_run(scaled, causal=True, data=c.data, n=top)
        shown = c.stats.get((True, top)) if c.runs.get((True, top)) == base else None  # computed already
        c.base = (base, shown if shown is not None else run_statistics(base.path))


def _fits(c: Corpus, runs: Sequence[Run]) -> list[tuple[Run, pd.DataFrame]]:
    """β of k90 for the decoder's and the encoder's scaling runs on this corpus: each over
    its own lengths, then both over the lengths they share (when that is another range)."""
    from attnspec.spectra.decoder_study import beta_fits

    scaling: dict[bool, Run] = {}
    for causal in (True, False):
        found = [r for r in runs if r.causal == causal and r.data == c.data and r.scaling is not None]
        if found:
            best = max(found, key=lambda r: r.inputs)
            scaling[causal] = best
    out = [(r, beta_fits(r.scaling)) for r in scaling.values()]
    if len(scaling) == 2:
        lengths = {causal: {x.n for x in runs if x.scaling == r.scaling} for causal, r in scaling.items()}
        shared = sorted(lengths[True] & lengths[False])
        if len(shared) >= 2 and any(set(shared) != v for v in lengths.values()):
            # only the runs whose own range is wider are fitted again (no row twice)
            out += [
                (r, beta_fits(r.scaling, shared)) for causal, r in scaling.items() if lengths[causal] != set(shared)
            ]
    return out
