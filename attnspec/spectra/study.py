"""A spectrum study: one run at one length, or a scaling study at several, up to date as ``make``.

``attnspec spectrum`` and :func:`attnspec.spectrum` both call :func:`run_study`, so a scaling
study (several lengths, one ordinary run per length under ``OUT/n<len>/``,
:mod:`attnspec.spectra.scaling`) runs the same from Python as from the command line, and both
treat a results directory the same way:

* a directory that already holds this study, complete, with these parameters, is *up to
  date*: nothing is computed, and only the null baselines asked for now and not there yet
  are added (:func:`study_up_to_date`);
* one holding another run is refused in one line (:func:`attnspec.storage.results.check_same_run`);
* otherwise the job runs (or resumes, or recomputes with ``overwrite``), then the nulls are
  added beside the complete result.

Drawing figures and printing are the callers' (the spectrum wing never imports the plots).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from attnspec.errors import InputError
from attnspec.spectra.config import KIND, SpectrumConfig, SpectrumOutcome
from attnspec.spectra.result_checks import SCALING_KIND
from attnspec.spectra.scaling import parse_lengths, run_dir
from attnspec.storage.results import writing_to


@dataclass(frozen=True)
class StudyOutcome:
    """What :func:`run_study` did.

    Attributes
    ----------
    out : Path
        The run's directory, or the scaling study's (one run per length under ``out/n<len>``).
    lengths : list of int
        The lengths n, shortest first; one for a single run.
    outcomes : list of SpectrumOutcome or None
        The runs computed now, shortest first; ``None`` for a length a resumed study had
        finished before. A length that stopped early ends the list. Empty when up to date.
    up_to_date : bool
        ``out`` already held this study, complete: nothing was computed.
    baselines : list of str
        The null baselines asked for (added beside a complete study).
    added : list of str
        Those of ``baselines`` computed now (the study lacked them).
    """

    out: Path
    lengths: list[int]
    outcomes: list[SpectrumOutcome | None] = field(default_factory=list)
    up_to_date: bool = False
    baselines: list[str] = field(default_factory=list)
    added: list[str] = field(default_factory=list)

    @property
    def scaling(self) -> bool:
        return len(self.lengths) > 1

    @property
    def last(self) -> SpectrumOutcome | None:
        """The last run computed now (None when up to date or every length was done before)."""
        done = [o for o in self.outcomes if o is not None]
        return done[-1] if done else None

    @property
    def status(self) -> str:
        """``complete``, or the status of the run that stopped early (``partial``, ``interrupted``)."""
        last = self.last
        return "complete" if last is None else last.status

    def run_dirs(self) -> dict[int, Path]:
        """Length → the directory of its run.

        Returns
        -------
        dict of int to Path
            Each length n → ``out/n<len>`` in a scaling study; the single length → ``out``
            for one run.
        """
        return {n: run_dir(self.out, n) for n in self.lengths} if self.scaling else {self.lengths[0]: self.out}


def default_out(model: str, data: str, lengths: Sequence[int], shard: tuple[int, int] | None = None) -> Path:
    """``results/<model>-<data>-n<len>`` for one length (``-shard<i>of<N>`` for a shard), or
    ``results/<model>-<data>-scaling`` for a scaling study.

    Parameters
    ----------
    model : str
        The model's name, alias or path (its last component is used).
    data : str
        The corpus's name or path (its last component, without a file's suffix).
    lengths : sequence of int
        The study's lengths n; more than one makes a scaling study.
    shard : tuple of (int, int), optional
        (i, N): shard i of N, named for a single length only.

    Returns
    -------
    Path
        Relative to the working directory, under ``results``; characters other than
        letters, digits, ``.``, ``_`` and ``-`` are replaced by ``-``.
    """
    tail = "scaling" if len(lengths) > 1 else f"n{lengths[0]}"
    slug = re.sub(r"[^A-Za-z0-9._-]+", "-", f"{Path(model).name}-{Path(data).stem}-{tail}").strip("-")
    if shard is not None and len(lengths) == 1:
        slug += f"-shard{shard[0]}of{shard[1]}"
    return Path("results") / slug


def resolve_out(out: Path | None, model: str, data: str, lengths: Sequence[int], shard: tuple[int, int] | None) -> Path:
    """``out`` with ``{shard}`` filled in (``0of4``), or :func:`default_out`.

    Parameters
    ----------
    out : Path, optional
        ``--out`` as given, possibly holding ``{shard}``; None for :func:`default_out`.
    model, data : str
        The model and the corpus, named by :func:`default_out`.
    lengths : sequence of int
        The study's lengths n.
    shard : tuple of (int, int) or None
        (i, N): shard i of N, or None for the whole run.

    Returns
    -------
    Path
        The results directory.

    Raises
    ------
    InputError
        ``out`` holds ``{shard}`` and no shard is given.
    """
    if out is not None and "{shard}" in str(out):
        if shard is None:
            raise InputError(f"--out {out} contains {{shard}} but no --shard was given")
        out = Path(str(out).replace("{shard}", f"{shard[0]}of{shard[1]}"))
    return Path(out) if out is not None else default_out(model, data, lengths, shard)


def check_study(
    cfg: SpectrumConfig,
    lengths: str | int | Sequence[int],
    baselines: Sequence[str] = (),
    *,
    texts: list[str] | None = None,
) -> tuple[SpectrumConfig, list[int]]:
    """The study's options checked before anything is locked or loaded: (the job at the
    longest length, the lengths).

    Parameters
    ----------
    cfg : SpectrumConfig
        The job; its ``seq_len`` is replaced by the longest length.
    lengths : int, str or sequence of int
        n, or several strictly increasing lengths (``"64,128,256"``, :func:`parse_lengths`).
    baselines : sequence of str
        The null baselines asked for; refused for a shard of a single run.
    texts : list of str, optional
        The inputs given in place of a corpus; refused with several lengths.

    Returns
    -------
    tuple of (SpectrumConfig, list of int)
        The job at the longest length, validated, and the lengths, strictly increasing.

    Raises
    ------
    InputError
        Lengths that are not strictly increasing integers >= 2, nulls asked of a shard,
        ``texts`` with several lengths, or an option of ``cfg`` out of range.
    """
    lengths = parse_lengths(lengths)
    if baselines and cfg.shard is not None and len(lengths) == 1:
        raise InputError(
            f"--baseline {','.join(baselines)} needs the whole run's row entropy, not a shard's: "
            "merge the shards, then run the same command without --shard"
        )
    if texts is not None and len(lengths) > 1:
        raise InputError(
            f"seq_len {lengths} with texts=: a scaling study draws its documents from a corpus "
            "(data=) at the longest length and cuts them; give one seq_len with texts="
        )
    cfg = replace(cfg, seq_len=lengths[-1])
    cfg.validate()
    return cfg, lengths


def study_kind(lengths: Sequence[int]) -> tuple[str, tuple[str, ...]]:
    """(the kind meta.json records, the kinds it may lie inside): a run may live in its scaling study.

    Parameters
    ----------
    lengths : sequence of int
        The study's lengths n.

    Returns
    -------
    tuple of (str, tuple of str)
        For several lengths the scaling kind, inside nothing; for one, the spectrum kind,
        which may lie inside a scaling study.
    """
    return (SCALING_KIND, ()) if len(lengths) > 1 else (KIND, (SCALING_KIND,))


def study_up_to_date(cfg: SpectrumConfig, lengths: Sequence[int], encoder: Any | None = None) -> bool:
    """True when ``cfg.out`` already holds this study, complete: every length's run with these
    parameters (:func:`attnspec.spectra.job.up_to_date`). A directory holding another run is
    refused (:class:`~attnspec.errors.ResultsError` naming what differs).

    Parameters
    ----------
    cfg : SpectrumConfig
        The job; ``cfg.out`` is the run's directory, or the study's (one run per length
        under ``out/n<len>``). With ``overwrite`` or ``resume`` nothing is up to date.
    lengths : sequence of int
        The study's lengths n, shortest first.
    encoder : LoadedModel, optional
        The model given as an object (its parameters are compared, not files).

    Returns
    -------
    bool
        Whether every length's run is there, complete, with its tables.

    Raises
    ------
    ResultsError
        A length's directory holds another run, or its model or data files changed since.
    """
    from attnspec.spectra.job import up_to_date

    if len(lengths) == 1:
        return up_to_date(replace(cfg, seq_len=lengths[0]), encoder)
    return all(up_to_date(replace(cfg, seq_len=n, out=run_dir(cfg.out, n)), encoder) for n in lengths)


def missing_baselines(outcome: StudyOutcome) -> list[str]:
    """The nulls asked for that some length of a complete study does not hold yet.

    Parameters
    ----------
    outcome : StudyOutcome
        A complete study; its ``baselines`` are the nulls asked for.

    Returns
    -------
    list of str
        The missing nulls, in the order of ``outcome.baselines``; a null held with other
        draws or another seed counts as missing.
    """
    from attnspec.spectra.baselines import missing

    return sorted(
        {b for run in outcome.run_dirs().values() for b in missing(run, outcome.baselines)}, key=outcome.baselines.index
    )


def run_study(
    cfg: SpectrumConfig,
    lengths: str | int | Sequence[int],
    *,
    progress: bool = True,
    baselines: Sequence[str] = (),
    projection_k: Sequence[int] = (),
    encoder: Any | None = None,
    texts: list[str] | None = None,
    command: str = "attnspec spectrum",
) -> StudyOutcome:
    """One spectrum run, or a scaling study when ``lengths`` holds several, in ``cfg.out``.

    Parameters
    ----------
    cfg : SpectrumConfig
        The job; its ``seq_len`` is replaced by the longest length, its ``out`` is the run's
        directory (or the study's).
    lengths : int, str or sequence of int
        n, or several strictly increasing lengths (``"64,128,256"``, :func:`parse_lengths`).
    progress : bool
        A progress bar per run on stderr.
    baselines : sequence of str
        Null baselines added beside the complete study (not to a shard: its nulls need the
        merged row entropy).
    projection_k : sequence of int
        A scaling study's Linformer-projection dimensions (:mod:`attnspec.spectra.projection`).
    encoder : LoadedModel, optional
        An already-loaded model (else ``cfg.model`` is loaded, only when something is computed).
    texts : list of str, optional
        The inputs of a single run, in place of the corpus ``cfg.data``.
    command : str
        Who holds ``cfg.out``'s lock (named when another process finds it taken).

    Returns
    -------
    StudyOutcome
    """
    from attnspec.spectra.baselines import add_to_study
    from attnspec.spectra.nulls import parse_baselines

    baselines = parse_baselines(list(baselines))
    cfg, lengths = check_study(cfg, lengths, baselines, texts=texts)
    kind, nests_in = study_kind(lengths)
    scaling = len(lengths) > 1
    from attnspec.spectra.shared_models import sharing_models

    # the job and a model null load the same model once; the scope ends with this call
    with (
        writing_to(Path(cfg.out), command, kind=kind, nests_in=nests_in),
        sharing_models(),
    ):  # re-entrant: the CLI holds it already
        if texts is None:
            from attnspec.spectra.data.corpus import check_data_name

            check_data_name(cfg.data)  # a misspelt corpus name: after the directory, before the model loads
        if study_up_to_date(cfg, lengths, encoder):
            outcome = StudyOutcome(Path(cfg.out), lengths, up_to_date=True, baselines=baselines)
        elif scaling:
            from attnspec.spectra.scaling import run_scaling

            outcome = StudyOutcome(
                Path(cfg.out),
                lengths,
                baselines=baselines,
                outcomes=run_scaling(cfg, lengths, progress=progress, encoder=encoder, projection_k=projection_k),
            )
        else:
            from attnspec.spectra.job import run_spectrum

            outcome = StudyOutcome(
                Path(cfg.out),
                lengths,
                baselines=baselines,
                outcomes=[run_spectrum(cfg, progress=progress, encoder=encoder, texts=texts)],
            )
        if outcome.status == "complete" and cfg.shard is None and baselines:
            added = missing_baselines(outcome)
            if added:
                add_to_study(cfg, baselines, lengths=lengths, encoder=encoder, texts=texts)
                outcome = replace(outcome, added=added)
    return outcome
