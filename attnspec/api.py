"""The Python API of the spectrum study: ``attnspec.spectrum(...)``, ``attnspec.load(dir)``.

``attnspec.spectrum`` runs the same job as ``attnspec spectrum`` (it calls
:func:`attnspec.spectra.job.run_spectrum`, the one implementation behind both) and returns
a :class:`SpectrumResult` holding the tidy tables in memory. It accepts a model name (hub
id, local directory, ``"minilm"``) or an already-loaded ``transformers`` model with its
tokenizer, and a corpus (``data=``) or a list of texts (``texts=``).

``attnspec.spectrum`` is this module's plain function :func:`spectrum` (``help(attnspec.spectrum)``
shows its parameters); the engine behind it is :mod:`attnspec.spectra.engine`.

Examples
--------
>>> import attnspec
>>> res = attnspec.spectrum(model="minilm", data="wiki103", seq_len=128, num_inputs=8, seed=0)
>>> res.curves.head()            # one row per (layer, head, index)
>>> res.metrics                  # one row per (layer, head)
>>> figs = res.plot()            # {"spectrum_layers": Figure, "spectrum_heatmap": Figure}
>>> res.save("results/minilm-wiki103")
>>> again = attnspec.load("results/minilm-wiki103")
"""

from __future__ import annotations

import hashlib
import shutil
import tempfile
import warnings
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from attnspec.errors import InputError, ResultsError

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

__all__ = ["SpectrumResult", "load", "spectrum"]

KIND = "spectrum"
STATE_FILE = "state.npz"


@dataclass
class SpectrumResult:
    """The outcome of one spectrum run, held in memory.

    Attributes
    ----------
    curves : pandas.DataFrame
        One row per (layer, head, index): ``layer, head, index, mean, std, count`` —
        the mean and standard deviation over inputs of the normalised cumulative
        singular-value curve c_i (layers and heads 0-based, index 1-based).
    metrics : pandas.DataFrame
        One row per (layer, head): effective rank, stable rank, the index where the curve
        reaches 0.9, each as mean and std over inputs.
    meta : dict
        How the run was made (model, family, causal, corpus, seq_len, seed, status, ...),
        the contents of meta.json.
    path : Path or None
        The results directory the result was loaded from or last saved to.
    baselines : dict of str to pandas.DataFrame
        The null baselines' tables (``baseline_spectrum``, ``baseline_metrics``,
        ``baseline_inputs``: the tables above with a ``baseline`` column), when the run has
        any (``meta["baselines"]``); empty otherwise.
    """

    curves: pd.DataFrame
    metrics: pd.DataFrame
    meta: dict[str, Any]
    path: Path | None = None
    state: Any = field(default=None, repr=False)  # SpectrumAccumulator: what `attnspec merge` needs
    baselines: dict[str, pd.DataFrame] = field(default_factory=dict, repr=False)

    def __repr__(self) -> str:
        m = self.meta
        ident = m.get("identity", {})
        family = m.get("family", "?") + (", causal P" if m.get("causal") else "")
        layers = int(self.curves["layer"].nunique()) if len(self.curves) else 0
        heads = int(self.curves["head"].nunique()) if len(self.curves) else 0
        from attnspec.spectra.reading import lengths_text

        lengths = lengths_text(m)
        return (f"SpectrumResult(model={ident.get('model', m.get('model'))!r} [{family}], data={ident.get('data')!r}, "
                f"n={ident.get('seq_len')}{f' (input lengths {lengths})' if lengths else ''}, "
                f"inputs={m.get('inputs_done')}, layers={layers}, heads={heads}, "
                f"status={m.get('status')!r}{f', path={str(self.path)!r}' if self.path else ''})")

    @property
    def family(self) -> str | None:
        """``"encoder"`` or ``"decoder"`` (None for runs made before attnspec recorded it)."""
        return self.meta.get("family")

    @property
    def causal(self) -> bool | None:
        """True when P is lower-triangular (decoder language models)."""
        return self.meta.get("causal")

    def per_layer(self, at: int | None = None) -> pd.DataFrame:
        """Per layer, heads averaged: mean c_at, median reach index, mean effective and stable rank.

        ``at`` defaults to the figures' reading point (128 when n = 512, else n / 4); an
        integer in 1..n. When an input is shorter than ``at`` tokens, c_at is not defined
        (its curve is 1 there by construction): the column is NaN and a warning says why.

        Raises
        ------
        InputError
            ``at`` not an integer in 1..n, or a result that holds no inputs.
        """
        from attnspec.spectra.reading import check_at, default_at, short_input_note

        n = self._n()
        at = check_at(default_at(n) if at is None else at, n, "at")
        heat = self.curves[self.curves["index"] == at].groupby("layer")["mean"].mean().rename(f"mean_c_{at}")
        note = short_input_note(self.meta, at)
        if note is not None:
            warnings.warn(note + f"; mean_c_{at} is NaN", stacklevel=2)
            heat[:] = float("nan")
        reach = [c for c in self.metrics.columns if c.endswith("_of_mean_curve")][0]
        g = self.metrics.groupby("layer")
        out = g[["effective_rank_mean", "stable_rank_mean"]].mean()
        out.insert(0, "median_" + reach, g[reach].median())
        if "baseline_metrics" in self.baselines:  # the same statistic of each null, beside the real one
            nulls = self.baselines["baseline_metrics"]
            for name, m in nulls.groupby("baseline", sort=False):
                out.insert(1, f"median_{reach}_{name}_null", m.groupby("layer")[reach].median())
        return out.join(heat, how="left").reset_index()

    def plot(self, *, at: int | None = None) -> dict[str, Any]:
        """Figure 1 from the tables: ``{"spectrum_layers": Figure, "spectrum_heatmap": Figure}``.

        The per-layer mean curves (± one std over inputs and heads) and the layer × head
        heatmap of c_at (``at`` as in :meth:`per_layer`). Nothing is recomputed or written.
        """
        from attnspec.spectra.figure_record import figure_choices
        from attnspec.spectra.reading import check_at, short_input_note

        n = self._n()
        if at is not None:
            at = check_at(at, n, "at")
        note = short_input_note(self.meta, figure_choices(self.meta, n, at=at)["at"])  # the index the heatmap reads
        if note is not None:
            warnings.warn(note + "; the heatmap shows 1 for those inputs", stacklevel=2)
        from attnspec.plots.spectrum import run_figures

        return run_figures(self.curves, self.meta, at=at)

    def _n(self) -> int:
        """n of the curves; :class:`InputError` for a result that holds no inputs."""
        done = self.meta.get("inputs_done")
        if not len(self.curves) or done == 0:
            raise InputError("this result holds no inputs (inputs_done 0): nothing to read or draw")
        return int(self.curves["index"].max())

    def save(self, path: str | Path, *, csv: bool = False) -> Path:
        """Write the result as a results directory (the CLI's layout); returns its path.

        ``path`` must be absent or empty (or this result's own directory). The directory
        then works with ``attnspec plot spectrum``, ``attnspec merge`` (when the state is
        held) and :func:`load`.

        Raises
        ------
        InputError
            ``path`` is not a path (``None``, a number, ...).
        ResultsError
            ``path`` is a file, under a file, in /proc, read-only, not writable, or not
            empty; checked before anything is written.
        """
        from attnspec.errors import check_path
        from attnspec.results import holds_files, result_files, write_meta, write_table, writing_to
        from attnspec.spectra.scaling import KIND as SCALING

        path = check_path("path", path)
        _refuse_read_only(path)
        same = self.path is not None and path.exists() and path.resolve() == Path(self.path).resolve()
        # the CLI's writer: checked (under a file, /proc, read-only, full, another kind of result), locked,
        # every file renamed into place together with meta.json last
        with writing_to(path, "attnspec.SpectrumResult.save", option="save path", kind="spectrum", nests_in=(SCALING,)):
            if holds_files(path) and not same:
                raise ResultsError(f"{path} is not empty; choose a new directory to save the result")
            with result_files(path):
                write_table(path, "spectrum", self.curves, csv=csv)
                write_table(path, "metrics", self.metrics, csv=csv)
                if self.state is not None:
                    import numpy as np

                    from attnspec.spectra.checkpoint import save_state

                    save_state(path / STATE_FILE, self.state,
                               {"inputs_done": np.asarray(int(self.meta.get("inputs_done", 0)))})
                    # per-input summaries (attnspec compare)
                    write_table(path, "inputs", self.state.inputs_table(), csv=csv)
                for name, frame in self.baselines.items():
                    write_table(path, name, frame, csv=csv)
                write_meta(path, self.meta)
        self.path = path
        return path


def _refuse_read_only(path: Path) -> None:
    """A folder without its owner's write permission is refused even where the process
    could write anyway (root ignores the mode): saving there would defeat its owner's
    intent and, for other users, fail half-way."""
    import os
    import stat

    target = path if path.exists() else next((p for p in path.parents if p.exists()), None)
    if target is not None and target.is_dir() and not target.stat().st_mode & stat.S_IWUSR:
        raise ResultsError(f"cannot save to {path}: {target} is read-only (mode {stat.S_IMODE(target.stat().st_mode):o})")
    if target is not None and target.is_dir() and not os.access(target, os.W_OK):
        raise ResultsError(f"cannot save to {path}: {target} is not writable by this user")


def _check_state(path: Path, state: Any, extra: dict[str, Any], meta: dict[str, Any], curves: pd.DataFrame) -> None:
    """Refuse a state.npz that is not this run's: its identity (when recorded), its number
    of inputs and its aggregate must agree with meta.json and the curve table."""
    import json

    import numpy as np

    where = path / STATE_FILE
    if "identity" in extra:
        try:
            ident = json.loads(str(extra["identity"]))
        except json.JSONDecodeError:
            ident = None
        if ident != meta.get("identity"):
            raise ResultsError(f"{where} belongs to another run: its identity differs from {path / 'meta.json'}'s")
    if "inputs_done" in extra and int(extra["inputs_done"]) != meta.get("inputs_done"):
        raise ResultsError(f"{where} belongs to another run: it holds {int(extra['inputs_done'])} inputs, meta.json "
                           f"records {meta.get('inputs_done')}")
    # the curve table is the aggregate's mean (L, H, n) in (layer, head, index) order (SpectrumAccumulator.tables)
    ordered = curves.sort_values(["layer", "head", "index"])["mean"].to_numpy()
    mine = state.curves.mean.ravel()
    if mine.shape != ordered.shape or not np.allclose(mine, ordered, rtol=1e-9, atol=1e-12, equal_nan=True):
        raise ResultsError(f"{where} belongs to another run: its aggregate does not reproduce {path / 'spectrum.parquet'}")


def load(path: str | Path) -> SpectrumResult:
    """Load a spectrum results directory (made by :meth:`SpectrumResult.save` or ``attnspec spectrum``).

    meta.json and every table are checked first (:mod:`attnspec.spectra.result_checks`), and a
    state.npz must be this run's (identity, inputs and aggregate agree with the tables).

    Raises
    ------
    InputError
        ``path`` is not a path (``None``, a number, ...).
    ResultsError
        When ``path`` is not a results directory of a spectrum run, or a file in it has the
        wrong shape or belongs to another run (one line naming the file).
    """
    from attnspec.errors import check_path
    from attnspec.spectra.result_checks import check_curves, check_inputs, check_meta, check_metrics

    path = check_path("path", path)
    meta = check_meta(path, kind=KIND)
    curves, metrics = check_curves(path, meta), check_metrics(path, meta)
    check_inputs(path)
    state = None
    if (path / STATE_FILE).is_file():
        from attnspec.spectra.checkpoint import load_state

        state, extra = load_state(path / STATE_FILE)
        _check_state(path, state, extra, meta, curves)
    baselines: dict[str, pd.DataFrame] = {}
    if (meta.get("baselines") or {}).get("names"):
        from attnspec.results import read_table

        baselines = {f"baseline_{t}": read_table(path, f"baseline_{t}") for t in ("spectrum", "metrics", "inputs")}
    return SpectrumResult(curves=curves, metrics=metrics, meta=meta, path=path, state=state, baselines=baselines)


def _texts_label(texts: list[str]) -> str:
    digest = hashlib.sha256()
    for t in texts:
        digest.update(t.encode("utf-8", "replace"))
        digest.update(b"\xff")
    return f"texts:{len(texts)}:{digest.hexdigest()[:16]}"


def spectrum(
    model: Any,
    data: str | Path | None = None,
    *,
    texts: list[str] | None = None,
    tokenizer: Any = None,
    seq_len: int = 512,
    num_inputs: int | None = None,
    seed: int = 0,
    split: str | None = None,
    data_dir: str | Path | None = None,
    short_policy: str | None = None,
    selection: str = "pool",
    batch_size: int | None = None,
    device: str = "auto",
    dtype: str = "float32",
    svd_method: str = "auto",
    out: str | Path | None = None,
    resume: bool = False,
    overwrite: bool = False,
    progress: bool = True,
    baseline: str | Sequence[str] | None = None,
) -> SpectrumResult:
    """The attention spectrum of a transformer: per (layer, head), the mean normalised cumulative
    singular-value curve of P over ``num_inputs`` inputs of ``seq_len`` tokens.

    Parameters
    ----------
    model : str, transformers model, or attnspec.spectra.models.LoadedModel
        A hub id, local directory or alias (``"minilm"``), loaded with eager attention; or
        an already-loaded ``transformers`` model (then pass ``tokenizer``), encoder or
        decoder, whose device and dtype are used as they are.
    data : str or path, optional
        ``"wiki103"``, ``"imdb"`` or a path (see ``attnspec spectrum --help``). Exactly one
        of ``data`` and ``texts``.
    texts : list of str, optional
        The inputs themselves, one document each, cut to ``seq_len`` tokens.
    tokenizer : transformers tokenizer, optional
        Required with a model object; ignored with a name.
    seq_len : int
        n, tokens per input, special tokens included.
    num_inputs : int, optional
        Inputs to average over. Default: 1000 for ``data`` (the CLI's default), every text
        for ``texts``.
    seed : int
        Chooses the inputs (a seeded draw without replacement); recorded.
    split, data_dir : optional
        Corpus split and data folder, as on the command line.
    short_policy : {"skip", "keep", "pack"}, optional
        Documents shorter than ``seq_len``; default ``"skip"`` for ``data``, ``"keep"``
        (each text at its own length) for ``texts``.
    selection : {"pool", "documents"}
        How the inputs are drawn, as ``--selection``: ``"pool"`` (default, a seeded
        permutation of every available input) or ``"documents"`` (the first long-enough
        documents of a seeded order; tokenises only what it needs).
    batch_size : int, optional
        Inputs per forward pass (default: the CLI's default).
    device, dtype : str
        For a model given by name: ``auto | cpu | cuda`` and ``float32 | float64 | bfloat16``.
    svd_method : {"auto", "lapack", "svd", "gram", "gram32", "longn"}
        Singular-value engine; all exact but ``longn`` (approximate, for long n:
        attnspec.spectra.longn; meta.json states its error). ``gram32`` (float32 Gram
        matrix, attnspec.spectra.gram32) is the fastest exact one for long causal P on the CPU.
    out : str or path, optional
        Results directory to write (as the CLI does, with checkpoints); default: a
        temporary directory, removed once the tables are in memory (``.save()`` later).
    resume, overwrite : bool
        As ``--resume`` / ``--overwrite`` for ``out``.
    progress : bool
        Show a progress bar.
    baseline : str or sequence of str, optional
        Null baselines computed beside the result, as ``--baseline``: ``"entropy-matched"``,
        ``"uniform"``, ``"random-init"``, a list of them or a comma list (attnspec.spectra.baselines); recorded
        in ``meta["baselines"]``, their tables in ``.baselines``, and beside the real values
        in :meth:`SpectrumResult.per_layer`.

    Returns
    -------
    SpectrumResult
        ``.curves`` (layers × heads × seq_len rows), ``.metrics`` (layers × heads rows),
        ``.meta`` (``family``, ``causal`` and everything meta.json records), ``.plot()``,
        ``.save(dir)``.

    Raises
    ------
    InputError
        Bad arguments (named in the message), before anything is computed.
    ResultsError
        An unusable ``out`` (a file, under a file, read-only, another run), before anything
        is computed.
    ModelLoadError
        A model that cannot be loaded (a folder without a tokenizer, damaged weights, ...).
    KeyboardInterrupt
        Ctrl-C or SIGTERM during the run, after the partial result is saved when ``out`` is
        given (continue with ``resume=True``); nothing is returned.

    Warns
    -----
    UserWarning
        When inputs are shorter than ``seq_len`` (their real lengths are in ``meta["corpus"]
        ["input_lengths"]``: min, median, max), and when a run stops early (``status``).
    """
    from attnspec.spectra.nulls import parse_baselines

    baselines = parse_baselines(baseline)
    texts, num_inputs, out, short_policy = _checked_arguments(
        data, texts, seq_len=seq_len, num_inputs=num_inputs, seed=seed, batch_size=batch_size, resume=resume,
        overwrite=overwrite, progress=progress, out=out, short_policy=short_policy)
    # checked above: NumPy integers and booleans become Python ones (meta.json, the identity)
    seq_len, num_inputs, seed = int(seq_len), int(num_inputs), int(seed)
    batch_size = None if batch_size is None else int(batch_size)
    resume, overwrite, progress = bool(resume), bool(overwrite), bool(progress)
    modes = _training_modes(model)
    try:
        return _spectrum_run(model, tokenizer, data=data, texts=texts, split=split, data_dir=data_dir,
                             seq_len=seq_len, num_inputs=num_inputs, seed=seed, batch_size=batch_size,
                             short_policy=short_policy, selection=selection, device=device, dtype=dtype,
                             svd_method=svd_method, out=out, resume=resume, overwrite=overwrite, progress=progress,
                             baselines=baselines)
    finally:
        for module, training in modes:  # the caller's train/eval state, module by module
            module.train(training)


def _training_modes(model: Any) -> list[tuple[Any, bool]]:
    """(module, training) of every module of a model object the caller passed (the run puts it in
    eval mode; it is given back as it came); empty for a model named by a string."""
    import torch

    module = getattr(model, "model", model)  # a LoadedModel holds its module
    if not isinstance(module, torch.nn.Module):
        return []
    return [(m, m.training) for m in module.modules()]


def _spectrum_run(model: Any, tokenizer: Any, *, data: Any, texts: list[str] | None, split: Any, data_dir: Any,
                  seq_len: int, num_inputs: int, seed: int, batch_size: int | None, short_policy: str,
                  selection: str, device: str, dtype: str, svd_method: str, out: Path | None, resume: bool,
                  overwrite: bool, progress: bool, baselines: list[str]) -> SpectrumResult:
    """:func:`spectrum` once its arguments are checked."""
    from attnspec.spectra.config import SpectrumConfig
    from attnspec.spectra.job import run_spectrum

    loaded, name = _model_of(model, tokenizer)

    tmp: str | None = None
    if out is None:
        if resume:
            raise InputError("resume=True needs out= (the directory of the run to continue)")
        tmp = tempfile.mkdtemp(prefix="attnspec-spectrum-")
    run_dir = Path(out) if out is not None else Path(tmp) / "run"
    kwargs: dict[str, Any] = {}
    if batch_size is not None:
        kwargs["batch_size"] = batch_size
    cfg = SpectrumConfig(
        model=name, data=str(data) if texts is None else _texts_label(texts), split=split,
        data_dir=None if data_dir is None else str(data_dir), seq_len=seq_len, num_sentences=num_inputs, seed=seed,
        short_policy=short_policy, selection=selection, device=device,
        dtype=dtype if loaded is None else str(loaded.dtype).removeprefix("torch."),
        svd_method=svd_method, out=run_dir, resume=resume, overwrite=overwrite, **kwargs,
    )
    try:
        outcome = run_spectrum(cfg, progress=progress, encoder=loaded, texts=texts)
        if baselines and outcome.status == "complete":
            _add_baselines(cfg, baselines, loaded, texts)
        result = load(outcome.out) if outcome.status != "interrupted" else None
    finally:
        if tmp is not None:
            shutil.rmtree(tmp, ignore_errors=True)
    return _finished(result, outcome, kept=out is not None, seq_len=seq_len)


def _add_baselines(cfg: Any, baselines: list[str], loaded: Any, texts: list[str] | None) -> None:
    """The null baselines of a complete run, written beside its tables under its lock."""
    from attnspec.results import writing_to
    from attnspec.spectra.baselines import add_to_study
    from attnspec.spectra.scaling import KIND as SCALING

    with writing_to(cfg.out, "attnspec.spectrum(baseline=...)", kind="spectrum", nests_in=(SCALING,)):
        add_to_study(cfg, baselines, encoder=loaded, texts=texts)


def _checked_arguments(data: Any, texts: Any, *, seq_len: Any, num_inputs: Any, seed: Any, batch_size: Any,
                       resume: Any, overwrite: Any, progress: Any, out: Any,
                       short_policy: str | None) -> tuple[list[str] | None, int, Path | None, str]:
    """:func:`spectrum`'s arguments checked before anything is computed, with their defaults
    filled in: (texts, num_inputs, out, short_policy)."""
    if (data is None) == (texts is None):
        raise InputError("give exactly one of data= (a corpus name or path) and texts= (a list of strings)")
    import numbers

    from attnspec.errors import check_bool, check_seed, check_texts

    if texts is not None:
        texts = check_texts("texts", texts)
    if num_inputs is None:
        num_inputs = len(texts) if texts is not None else 1000
    for label, value, low in (("seq_len", seq_len, 2), ("num_inputs", num_inputs, 1),
                              ("batch_size", 1 if batch_size is None else batch_size, 1)):
        if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < low:
            raise InputError(f"{label} must be an integer >= {low}, got {value!r}")
    check_seed("seed", seed)
    for label, value in (("resume", resume), ("overwrite", overwrite), ("progress", progress)):
        check_bool(label, value)
    if data is not None and not isinstance(data, (str, Path)):
        raise InputError(f"data must be a corpus name or a path, got {data!r}")
    if data is not None:
        from attnspec.spectra.data.corpus import check_data_name

        check_data_name(data, "data")  # before the model loads
    if out is not None:
        from attnspec.errors import check_path

        out = check_path("out", out)
    if short_policy is None:
        short_policy = "keep" if texts is not None else "skip"
    return texts, num_inputs, out, short_policy


def _model_of(model: Any, tokenizer: Any) -> tuple[Any, str]:
    """(the loaded model or None when it is to be loaded by name, the name the run records)."""
    import torch

    from attnspec.spectra.models import LoadedModel, wrap_model

    if isinstance(model, LoadedModel):
        return model, model.name
    if isinstance(model, torch.nn.Module):
        if tokenizer is None:
            raise InputError(f"a model object ({type(model).__name__}) needs its tokenizer: pass tokenizer=")
        loaded = wrap_model(model, tokenizer)
        return loaded, loaded.name
    if isinstance(model, (str, Path)):
        return None, str(model)
    raise InputError(f"model must be a name, a path or a transformers model, got {type(model).__name__}")


def _finished(result: SpectrumResult | None, outcome: Any, *, kept: bool, seq_len: int) -> SpectrumResult:
    """The result, or KeyboardInterrupt for an interrupted run; warnings for a run stopped early
    and for inputs shorter than seq_len."""
    if outcome.status == "interrupted":
        # Ctrl-C (or SIGTERM) is the caller's to handle: a script or notebook must not carry
        # on with a partial result as if it were whole. With out= the partial result is kept
        # there (resumable with resume=True); without, nothing is kept.
        note = (f"; {outcome.inputs_done} of {outcome.inputs_total} inputs kept in {outcome.out} "
                "(continue with resume=True)") if kept else "; nothing kept (no out=)"
        raise KeyboardInterrupt(f"attnspec.spectrum interrupted{note}")
    assert result is not None
    if not kept:
        result.path = None
    if outcome.status != "complete":
        warnings.warn(f"the spectrum run is {outcome.status} ({outcome.inputs_done} of {outcome.inputs_total} inputs)",
                      stacklevel=3)
    lengths = (result.meta.get("corpus") or {}).get("input_lengths") or {}
    if isinstance(lengths.get("min"), int) and lengths["min"] < seq_len:
        from attnspec.spectra.reading import lengths_text

        warnings.warn(f"inputs are shorter than seq_len={seq_len} (real lengths {lengths_text(result.meta)}; "
                      f"{lengths.get('full', '?')} of {result.meta.get('corpus', {}).get('num_inputs', '?')} have all "
                      f"{seq_len} tokens): every curve is 1 past its input's length by construction, so c_i at an "
                      "index beyond the shortest input is not a measurement", stacklevel=3)
    return result
