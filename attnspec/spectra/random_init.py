"""The random-init null: the same architecture, tokenizer and inputs, weights re-initialised.

The nulls of :mod:`attnspec.spectra.baselines` are random P matrices; this one keeps
everything a model is made of but what training taught it: the model's own class is built
again from its config, so its weights are the library's initialisation drawn from a seed
(``child_seed(seed, "random-init")``, inside ``torch.random.fork_rng``, so the caller's
global random state is untouched). The spectrum job then runs on the very inputs of the
real run, and its tables join the other nulls' (``baseline = "random-init"``).

What this does not test: the initialisation is the library's default for the class
(e.g. BERT's N(0, 0.02) weights), one draw per seed; another initialisation scale would give
another null.
"""

from __future__ import annotations

import tempfile
from dataclasses import replace
from pathlib import Path
from typing import Any

import pandas as pd
import torch


def reinitialised(encoder: Any, seed: int) -> Any:
    """A copy of ``encoder`` (a LoadedModel) whose model has freshly initialised weights.

    Parameters
    ----------
    encoder : LoadedModel
        The real model (unchanged).
    seed : int
        Seed of the initialisation.

    Returns
    -------
    LoadedModel
    """
    from attnspec.numerics.stats import child_seed

    model = encoder.model
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(child_seed(seed, "random-init"))
        fresh = type(model)(model.config)
    fresh = fresh.to(device=encoder.device, dtype=encoder.dtype).eval()
    return replace(encoder, model=fresh)


def random_init_tables(
    cfg: Any, encoder: Any, lengths: list[int] | None = None, texts: list[str] | None = None
) -> dict[int, dict[str, pd.DataFrame]]:
    """The spectrum tables of the re-initialised model on the run's own inputs.

    ``cfg`` is the real run's SpectrumConfig (its seed draws the same inputs; ``texts`` when
    the run was given texts); ``lengths``: several lengths run it as the scaling study did
    (the same documents cut to each n).

    Parameters
    ----------
    cfg : SpectrumConfig
        The real run's config.
    encoder : LoadedModel
        The real model, re-initialised here.
    lengths : list of int, optional
        The scaling study's lengths; None: the run's own length.
    texts : list of str, optional
        The texts the run was given instead of a corpus.

    Returns
    -------
    dict of int to dict of str to pandas.DataFrame
        n → ``{"spectrum", "metrics", "inputs"}`` tables.
    """
    from attnspec.spectra.job import run_spectrum
    from attnspec.spectra.scaling import run_dir, run_scaling
    from attnspec.storage.results import read_table

    null = reinitialised(encoder, cfg.seed)
    with tempfile.TemporaryDirectory(prefix="attnspec-random-init-") as tmp:
        out = Path(tmp) / "run"
        base = replace(cfg, out=out, resume=False, overwrite=False, shard=None, max_time=None)
        if lengths and len(lengths) > 1:
            outcomes = run_scaling(base, lengths, progress=False, encoder=null)
            dirs = {n: run_dir(out, n) for n in lengths}
        else:
            outcomes = [run_spectrum(base, progress=False, encoder=null, texts=texts)]
            dirs = {cfg.seq_len: out}
        _require_complete(outcomes, len(dirs))
        return {n: {t: read_table(d, t) for t in ("spectrum", "metrics", "inputs")} for n, d in dirs.items()}


def _require_complete(outcomes: list[Any], runs: int) -> None:
    """Every run of the null finished, or the reason it did not: a null computed on part of
    the inputs is not the null of the run, so it is never handed on as one.

    Parameters
    ----------
    outcomes : list of SpectrumOutcome
        The null's runs, one per length run.
    runs : int
        The lengths the null was asked for.

    Raises
    ------
    KeyboardInterrupt
        A run was interrupted (Ctrl-C, SIGTERM): the interruption is the caller's, as if
        it had reached it directly.
    ResultsError
        A run stopped early for another reason (the null has no time limit of its own).
    """
    from attnspec.errors import ResultsError

    for outcome in outcomes:
        if outcome is not None and outcome.status == "interrupted":
            raise KeyboardInterrupt(
                f"in the random-init null after {outcome.inputs_done} of {outcome.inputs_total} "
                "inputs; the null is not recorded (the same command computes it)"
            )
        if outcome is not None and outcome.status != "complete":
            raise ResultsError(
                f"the random-init null stopped early ({outcome.status}, {outcome.inputs_done} of "
                f"{outcome.inputs_total} inputs); it was not recorded"
            )
    if len(outcomes) != runs:  # pragma: no cover - a length that stops early ends the study
        raise ResultsError(f"the random-init null ran {len(outcomes)} of its {runs} lengths; it was not recorded")
