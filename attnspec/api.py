"""The Python API of the spectrum study: ``attnspec.spectrum(...)``, ``attnspec.load(dir)``.

``attnspec.spectrum`` runs the same job as ``attnspec spectrum`` (it calls
:func:`attnspec.spectra.job.run_spectrum`, the one implementation behind both) and returns
a :class:`SpectrumResult` holding the tidy tables in memory. It accepts a model name (hub
id, local directory, ``"minilm"``) or an already-loaded ``transformers`` model with its
tokenizer, and a corpus (``data=``) or a list of texts (``texts=``).

``attnspec.spectrum`` is this module's plain function :func:`spectrum` (``help(attnspec.spectrum)``
shows its parameters); its signature and the ``Parameters`` of its docstring are read off the
declarations that ``attnspec spectrum``'s options are read off too
(:mod:`attnspec.options.spectrum`). The engine behind it is :mod:`attnspec.spectra.engine`.

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

import shutil
import tempfile
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from attnspec.errors import InputError, ResultsError
from attnspec.options.declaration import check_names, numpydoc_parameters, signature
from attnspec.options.spectrum import POSITIONAL, SPECTRUM, check_given_values
from attnspec.spectrum_arguments import check_arguments, check_lengths, model_of, texts_label

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

__all__ = ["ScalingResult", "SpectrumResult", "load", "spectrum"]

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
        return (
            f"SpectrumResult(model={ident.get('model', m.get('model'))!r} [{family}], data={ident.get('data')!r}, "
            f"n={ident.get('seq_len')}{f' (input lengths {lengths})' if lengths else ''}, "
            f"inputs={m.get('inputs_done')}, layers={layers}, heads={heads}, "
            f"status={m.get('status')!r}{f', path={str(self.path)!r}' if self.path else ''})"
        )

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

        The same table as ``attnspec spectrum`` prints
        (:func:`attnspec.spectra.layer_summary.per_layer`). When an input is shorter than
        ``at`` tokens, c_at is not defined (its curve is 1 there by construction): the column
        is NaN and a warning says why.

        Parameters
        ----------
        at : int, optional
            The index i at which c_i is read, an integer in 1..n. Default: the figures'
            reading point (the index the run's figures recorded, else 128 when n = 512, else
            n / 4, rounded, at least 1).

        Returns
        -------
        pandas.DataFrame
            One row per layer (0-based ``layer`` column): ``median_index_at_0.9_of_mean_curve``
            (the median over heads), a ``median_..._<null>_null`` column per null baseline
            when the run has baselines, ``effective_rank_mean``, ``stable_rank_mean`` (means
            over heads) and ``mean_c_<at>`` (the mean over heads of c_at).

        Raises
        ------
        InputError
            ``at`` not an integer in 1..n, or a result that holds no inputs.
        """
        from attnspec.spectra.layer_summary import per_layer, reading_index
        from attnspec.spectra.reading import short_input_note

        at = reading_index(self.meta, self._n(), at, "at")
        note = short_input_note(self.meta, at)
        if note is not None:
            warnings.warn(note + f"; mean_c_{at} is NaN", stacklevel=2)
        return per_layer(
            self.curves, self.metrics, self.meta, at, baseline_metrics=self.baselines.get("baseline_metrics")
        )

    def plot(self, *, at: int | None = None) -> dict[str, Any]:
        """Figure 1 from the tables: ``{"spectrum_layers": Figure, "spectrum_heatmap": Figure}``.

        The per-layer mean curves (± one std over inputs and heads) and the layer × head
        heatmap of c_at. Nothing is recomputed or written. When an input is shorter than
        ``at`` tokens, a warning says that the heatmap shows 1 for it.

        Parameters
        ----------
        at : int, optional
            The index read by the heatmap, an integer in 1..n. Default: the ``--at`` the run
            recorded, else the figures' reading point (128 when n = 512, else n / 4).

        Returns
        -------
        dict of str to matplotlib.figure.Figure
            ``"spectrum_layers"`` (the curves) and ``"spectrum_heatmap"`` (c_at per layer and head).

        Raises
        ------
        InputError
            ``at`` not an integer in 1..n, or a result that holds no inputs.
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

        The directory then works with ``attnspec plot spectrum``, ``attnspec merge`` (when
        the state is held) and :func:`load`. Written are ``spectrum.parquet``,
        ``metrics.parquet``, with the state ``state.npz`` and ``inputs.parquet``, the
        baselines' tables, and ``meta.json`` last; no figures. :attr:`path` is set to it.

        Parameters
        ----------
        path : str or Path
            The results directory: absent, empty, or this result's own directory.
        csv : bool
            Also write a CSV copy of each table.

        Returns
        -------
        Path
            The directory written.

        Raises
        ------
        InputError
            ``path`` is not a path (``None``, a number, ...).
        ResultsError
            ``path`` is a file, under a file, in /proc, read-only, not writable, or not
            empty; checked before anything is written.
        """
        from attnspec.spectra.scaling import KIND as SCALING
        from attnspec.storage.results import result_files, write_meta, write_table

        saving = _saving_to(path, self.path, "attnspec.SpectrumResult.save", kind="spectrum", nests_in=(SCALING,))
        with saving as (path, _):
            with result_files(path):
                write_table(path, "spectrum", self.curves, csv=csv)
                write_table(path, "metrics", self.metrics, csv=csv)
                if self.state is not None:
                    import numpy as np

                    from attnspec.spectra.checkpoint import save_state

                    save_state(
                        path / STATE_FILE, self.state, {"inputs_done": np.asarray(int(self.meta.get("inputs_done", 0)))}
                    )
                    # per-input summaries (attnspec compare)
                    write_table(path, "inputs", self.state.inputs_table(), csv=csv)
                for name, frame in self.baselines.items():
                    write_table(path, name, frame, csv=csv)
                write_meta(path, self.meta)
        self.path = path
        return path


@dataclass
class ScalingResult:
    """A scaling study held in memory: one :class:`SpectrumResult` per length n, on the same
    documents, and the fit of k ∝ n^β (:mod:`attnspec.spectra.scaling`).

    Attributes
    ----------
    runs : dict of int to SpectrumResult
        Length n → its run, shortest first.
    table : pandas.DataFrame
        Per (n, layer): ``k_mean_curve`` (k90 of the head-averaged mean curve),
        ``effective_rank``, ``inputs`` and the input means of the per-input summaries.
    fits : pandas.DataFrame
        Per fitted metric and layer (``layer`` -1: the mean over layers): ``beta``, its
        bootstrap interval ``low``, ``high`` over inputs, ``scale`` and ``verdict``.
    nulls : pandas.DataFrame
        The real β and k90/n (``real`` first) beside each null baseline every length holds.
    projection : pandas.DataFrame or None
        The Linformer-projection measurement's summary per (k, n), when it was made.
    approx : dict of str to pandas.DataFrame
        The approximations of attention (``approx_summary``, ``approx_rule``,
        ``approx_end_to_end_summary``, the raw ``approx`` table, ...), when measured
        (:mod:`attnspec.spectra.approx.saved`).
    meta : dict
        The study's meta.json (``identity``, ``lengths``, ``projection``, ...).
    path : Path or None
        The study's directory it was loaded from or last saved to.
    """

    runs: dict[int, SpectrumResult]
    fit: Any = field(repr=False)  # attnspec.spectra.scaling.StudyFit
    meta: dict[str, Any] = field(repr=False)
    path: Path | None = None
    projection: pd.DataFrame | None = field(default=None, repr=False)
    projection_errors: pd.DataFrame | None = field(default=None, repr=False)
    approx: dict[str, pd.DataFrame] = field(default_factory=dict, repr=False)

    @property
    def lengths(self) -> list[int]:
        return sorted(self.runs)

    @property
    def table(self) -> pd.DataFrame:
        return self.fit.table

    @property
    def fits(self) -> pd.DataFrame:
        return self.fit.fits

    @property
    def nulls(self) -> pd.DataFrame:
        return self.fit.nulls

    def __repr__(self) -> str:
        ident = self.meta.get("identity", {})
        overall = self.fits[(self.fits["metric"] == "reach_index") & (self.fits["layer"] == -1)]
        beta = f", k90 beta={overall['beta'].iloc[0]:.2f}" if len(overall) else ""
        first = self.runs[self.lengths[0]].meta
        return (
            f"ScalingResult(model={ident.get('model')!r}, data={ident.get('data')!r}, n={self.lengths}, "
            f"inputs={first.get('inputs_done')}{beta}{f', path={str(self.path)!r}' if self.path else ''})"
        )

    def sentence(self) -> str:
        """The real β and k90/n, beside each null's, in one sentence.

        Returns
        -------
        str
            The sentence (:func:`attnspec.spectra.scaling_fit.null_sentence` of :attr:`nulls`),
            each β with its bootstrap interval, stated as a 95% interval.
        """
        from attnspec.spectra.scaling_fit import null_sentence

        return null_sentence(self.nulls)

    def plot(self, out: str | Path | None = None, *, label: str | None = None) -> list[Path]:
        """Draw ``scaling_k90`` and ``scaling_beta`` (PNG and SVG), the figures of ``attnspec
        plot scaling``, from the tables held here.

        Parameters
        ----------
        out : str or Path, optional
            The folder to draw into (checked and locked like ``--out``); default a new
            temporary directory.
        label : str, optional
            Title instead of model · corpus (the lengths and the input count are added).

        Returns
        -------
        list of Path
            The figure files, e.g. for ``IPython.display.Image``.
        """
        import tempfile

        from attnspec.errors import check_path
        from attnspec.plots import short_name
        from attnspec.plots.scaling import plot_scaling
        from attnspec.spectra.scaling import KIND as SCALING
        from attnspec.storage.results import writing_to

        ident = self.meta.get("identity", {})
        title = label or f"{short_name(ident.get('model'))} · {short_name(ident.get('data'))}"
        out = check_path("out", out) if out is not None else Path(tempfile.mkdtemp(prefix="attnspec-scaling-"))
        with writing_to(out, "attnspec.ScalingResult.plot", option="out", kind="figures", nests_in=(KIND, SCALING)):
            return plot_scaling(self.table, self.fits, out, title=title, nulls=self.fit.null_tables)

    def save(self, path: str | Path, *, csv: bool = False) -> Path:
        """Write the study as ``attnspec spectrum --seq-len A,B,...`` lays it out (one run per
        length under ``path/n<len>``, the fit tables, meta.json); returns ``path``.

        :attr:`path` is set to it. Saved to its own directory, only the fit tables, the
        projection's tables and meta.json are rewritten.

        Parameters
        ----------
        path : str or Path
            The study's directory: absent, empty, or this study's own directory.
        csv : bool
            Also write a CSV copy of each table.

        Returns
        -------
        Path
            The directory written.

        Raises
        ------
        InputError
            ``path`` is not a path.
        ResultsError
            ``path`` is a file, under a file, read-only, or not empty; checked first.
        """
        from attnspec.spectra.scaling import KIND as SCALING
        from attnspec.spectra.scaling import run_dir
        from attnspec.storage.results import result_files, write_meta, write_table

        with _saving_to(path, self.path, "attnspec.ScalingResult.save", kind=SCALING) as (path, same):
            with result_files(path):  # every length, the fits and meta.json, or nothing
                for n, run in self.runs.items():
                    if not same:
                        run.save(run_dir(path, n), csv=csv)
                self.fit.save(path, csv=csv)
                for name, frame in (("projection", self.projection_errors), ("projection_summary", self.projection)):
                    if frame is not None:
                        write_table(path, name, frame, csv=csv)
                for name, frame in self.approx.items():
                    write_table(path, name, frame, csv=csv)
                write_meta(path, self.meta)
        self.path = path
        return path


def _load_study(path: Path) -> ScalingResult:
    """A scaling study's directory, every length checked and loaded, the fits computed as
    ``attnspec spectrum --seq-len A,B,...`` computes them (2000 resamples, seed 0)."""
    from attnspec.spectra.approx.saved import read_approx
    from attnspec.spectra.scaling_fit import fit_study, read_runs
    from attnspec.storage.results import read_meta, read_table

    runs = {n: load(d) for n, d in sorted(read_runs(path).items())}
    tables = {
        t: read_table(path, t) if (path / f"{t}.parquet").is_file() else None
        for t in ("projection", "projection_summary")
    }
    return ScalingResult(
        runs=runs,
        fit=fit_study(path),
        meta=read_meta(path),
        path=path,
        projection=tables["projection_summary"],
        projection_errors=tables["projection"],
        approx=read_approx(path),
    )


@contextmanager
def _saving_to(path: Any, held: Path | None, writer: str, **kinds: Any) -> Iterator[tuple[Path, bool]]:
    """Where a result's ``save`` writes, checked and held: ``path`` checked as a path, refused
    when read-only, then held by the CLI's writer (checked: under a file, /proc, full, another
    kind of result; locked; every file renamed into place with meta.json last) and refused
    when it holds files and is not the result's own directory ``held``. Yields the path and
    whether it is that own directory."""
    from attnspec.errors import check_path
    from attnspec.storage.results import holds_files, writing_to

    path = check_path("path", path)
    _refuse_read_only(path)
    same = held is not None and path.exists() and path.resolve() == Path(held).resolve()
    with writing_to(path, writer, option="save path", **kinds):
        if holds_files(path) and not same:
            raise ResultsError(f"{path} is not empty; choose a new directory to save the result")
        yield path, same


def _refuse_read_only(path: Path) -> None:
    """A folder without its owner's write permission is refused even where the process
    could write anyway (root ignores the mode): saving there would defeat its owner's
    intent and, for other users, fail half-way."""
    import os
    import stat

    target = path if path.exists() else next((p for p in path.parents if p.exists()), None)
    if target is not None and target.is_dir() and not target.stat().st_mode & stat.S_IWUSR:
        raise ResultsError(
            f"cannot save to {path}: {target} is read-only (mode {stat.S_IMODE(target.stat().st_mode):o})"
        )
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
        raise ResultsError(
            f"{where} belongs to another run: it holds {int(extra['inputs_done'])} inputs, meta.json "
            f"records {meta.get('inputs_done')}"
        )
    # the curve table is the aggregate's mean (L, H, n) in (layer, head, index) order (SpectrumAccumulator.tables)
    ordered = curves.sort_values(["layer", "head", "index"])["mean"].to_numpy()
    mine = state.curves.mean.ravel()
    if mine.shape != ordered.shape or not np.allclose(mine, ordered, rtol=1e-9, atol=1e-12, equal_nan=True):
        raise ResultsError(
            f"{where} belongs to another run: its aggregate does not reproduce {path / 'spectrum.parquet'}"
        )


def load(path: str | Path) -> SpectrumResult | ScalingResult:
    """Load a spectrum results directory (made by :meth:`SpectrumResult.save` or ``attnspec spectrum``),
    or a scaling study's (``attnspec spectrum --seq-len A,B,...``, :meth:`ScalingResult.save`).

    meta.json and every table are checked first (:mod:`attnspec.spectra.result_checks`), and a
    state.npz must be this run's (identity, inputs and aggregate agree with the tables).

    Parameters
    ----------
    path : str or Path
        A spectrum results directory (``meta.json``, ``spectrum.parquet``,
        ``metrics.parquet``; ``state.npz``, ``inputs.parquet`` and the baselines' tables
        when present).

    Returns
    -------
    SpectrumResult
        The tables, meta.json, the state when saved (``state``, else None), the null
        baselines' tables when the run has any, and ``path``.

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
    from attnspec.spectra.scaling import KIND as SCALING

    path = check_path("path", path)
    meta = check_meta(path, kind=(KIND, SCALING))
    if meta["kind"] == SCALING:
        return _load_study(path)
    curves, metrics = check_curves(path, meta), check_metrics(path, meta)
    check_inputs(path)
    state = None
    if (path / STATE_FILE).is_file():
        from attnspec.spectra.checkpoint import load_state

        state, extra = load_state(path / STATE_FILE)
        _check_state(path, state, extra, meta, curves)
    baselines: dict[str, pd.DataFrame] = {}
    if (meta.get("baselines") or {}).get("names"):
        from attnspec.storage.results import read_table

        baselines = {f"baseline_{t}": read_table(path, f"baseline_{t}") for t in ("spectrum", "metrics", "inputs")}
    return SpectrumResult(curves=curves, metrics=metrics, meta=meta, path=path, state=state, baselines=baselines)


def spectrum(model: Any, data: str | Path | None = None, **arguments: Any) -> SpectrumResult | ScalingResult:
    from attnspec.spectra.nulls import parse_baselines
    from attnspec.spectra.projection import parse_ks

    given = check_names(_API_OPTIONS, arguments, owner="spectrum()")  # model and data are bound by position
    a = {o.name: given.get(o.name, o.default_of("api")) for o in _API_OPTIONS if o.name not in POSITIONAL}
    check_given_values({k: v for k, v in given.items() if k not in ("model", "tokenizer", "texts", "seq_len")})
    baselines, ks = parse_baselines(a["baseline"]), parse_ks(a["projection_k"])
    from attnspec.spectra.approx.saved import make_plan

    approx = make_plan(a["approx"], a["approx_k"], a["approx_split"], seed=a["seed"], steps=a["approx_steps"])
    lengths = check_lengths(a["seq_len"])
    texts, num_inputs, out, short_policy = check_arguments(
        data,
        a["texts"],
        num_inputs=a["num_inputs"],
        seed=a["seed"],
        batch_size=a["batch_size"],
        resume=a["resume"],
        overwrite=a["overwrite"],
        progress=a["progress"],
        out=a["out"],
        short_policy=a["short_policy"],
    )
    # checked above: NumPy integers and booleans become Python ones (meta.json, the identity)
    a.update(
        texts=texts,
        num_inputs=int(num_inputs),
        seed=int(a["seed"]),
        out=out,
        short_policy=short_policy,
        batch_size=None if a["batch_size"] is None else int(a["batch_size"]),
        **{k: bool(a[k]) for k in ("resume", "overwrite", "progress")},
    )
    modes = _training_modes(model)
    try:
        return _spectrum_run(
            model,
            a.pop("tokenizer"),
            data=data,
            lengths=lengths,
            baselines=baselines,
            projection_k=ks,
            approx=approx,
            **{
                k: v
                for k, v in a.items()
                if k not in ("seq_len", "baseline", "projection_k") and not k.startswith("approx")
            },
        )
    finally:
        for module, training in modes:  # the caller's train/eval state, module by module
            module.train(training)


_SPECTRUM_SUMMARY = """The attention spectrum of a transformer: per (layer, head), the mean normalised cumulative
    singular-value curve of P over ``num_inputs`` inputs of ``seq_len`` tokens."""
_SPECTRUM_OUTCOME = """    Returns
    -------
    SpectrumResult or ScalingResult
        For one length: ``.curves`` (layers × heads × seq_len rows), ``.metrics`` (layers ×
        heads rows), ``.meta`` (``family``, ``causal`` and everything meta.json records),
        ``.plot()``, ``.save(dir)``. For several: a :class:`ScalingResult` (``.runs`` by
        length, ``.table``, ``.fits``, ``.nulls``, ``.plot()``, ``.save(dir)``).

    Raises
    ------
    InputError
        Bad arguments (named in the message), before anything is computed: an unknown name,
        ``texts=`` with several lengths (a scaling study draws its documents from ``data=``).
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


#: The options :func:`spectrum` takes, in the order of its signature.
_API_OPTIONS = tuple(o for o in SPECTRUM if o.on("api"))
spectrum.__signature__ = signature(SPECTRUM, positional=len(POSITIONAL)).replace(  # type: ignore[attr-defined]
    return_annotation="SpectrumResult | ScalingResult"
)
spectrum.__annotations__ = {
    **{p.name: p.annotation for p in spectrum.__signature__.parameters.values()},
    "return": "SpectrumResult | ScalingResult",
}
spectrum.__doc__ = f"{_SPECTRUM_SUMMARY}\n\n{numpydoc_parameters(SPECTRUM)}\n\n{_SPECTRUM_OUTCOME}"


def _training_modes(model: Any) -> list[tuple[Any, bool]]:
    """(module, training) of every module of a model object the caller passed (the run puts it in
    eval mode; it is given back as it came); empty for a model named by a string."""
    import torch

    module = getattr(model, "model", model)  # a LoadedModel holds its module
    if not isinstance(module, torch.nn.Module):
        return []
    return [(m, m.training) for m in module.modules()]


def _spectrum_run(
    model: Any,
    tokenizer: Any,
    *,
    data: Any,
    texts: list[str] | None,
    split: Any,
    data_dir: Any,
    lengths: list[int],
    num_inputs: int,
    seed: int,
    batch_size: int | None,
    short_policy: str,
    selection: str,
    device: str,
    dtype: str,
    svd_method: str,
    out: Path | None,
    resume: bool,
    overwrite: bool,
    progress: bool,
    baselines: list[str],
    projection_k: list[int],
    approx: Any = None,
) -> SpectrumResult | ScalingResult:
    """:func:`spectrum` once its arguments are checked: :func:`attnspec.spectra.study.run_study`,
    the function behind ``attnspec spectrum`` too."""
    from attnspec.spectra.config import SpectrumConfig
    from attnspec.spectra.study import run_study

    loaded, name = model_of(model, tokenizer)

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
        model=name,
        data=str(data) if texts is None else texts_label(texts),
        split=split,
        data_dir=None if data_dir is None else str(data_dir),
        seq_len=lengths[-1],
        num_sentences=num_inputs,
        seed=seed,
        short_policy=short_policy,
        selection=selection,
        device=device,
        dtype=dtype if loaded is None else str(loaded.dtype).removeprefix("torch."),
        svd_method=svd_method,
        out=run_dir,
        resume=resume,
        overwrite=overwrite,
        **kwargs,
    )
    try:
        study = run_study(
            cfg,
            lengths,
            progress=progress,
            baselines=baselines,
            projection_k=projection_k,
            encoder=loaded,
            texts=texts,
            command="attnspec.spectrum",
            approx=approx,
        )
        result = None if study.status == "interrupted" else load(study.out)
    finally:
        if tmp is not None:
            shutil.rmtree(tmp, ignore_errors=True)
    return _finished(result, study, kept=out is not None)


def _finished(
    result: SpectrumResult | ScalingResult | None, study: Any, *, kept: bool
) -> SpectrumResult | ScalingResult:
    """The result, or KeyboardInterrupt for an interrupted run; warnings for a run stopped early
    and for inputs shorter than seq_len."""
    outcome = study.last
    if study.status == "interrupted":
        # Ctrl-C (or SIGTERM) is the caller's to handle: a script or notebook must not carry
        # on with a partial result as if it were whole. With out= the partial result is kept
        # there (resumable with resume=True); without, nothing is kept.
        note = (
            (
                f"; {outcome.inputs_done} of {outcome.inputs_total} inputs kept in {outcome.out} "
                "(continue with resume=True)"
            )
            if kept
            else "; nothing kept (no out=)"
        )
        raise KeyboardInterrupt(f"attnspec.spectrum interrupted{note}")
    assert result is not None
    if not kept:
        result.path = None
    if study.status != "complete":
        warnings.warn(
            f"the spectrum run{f' at n = {outcome.out.name[1:]}' if study.scaling else ''} is "
            f"{study.status} ({outcome.inputs_done} of {outcome.inputs_total} inputs)",
            stacklevel=3,
        )
    runs = result.runs if isinstance(result, ScalingResult) else {study.lengths[0]: result}
    for seq_len, run in runs.items():
        lengths = (run.meta.get("corpus") or {}).get("input_lengths") or {}
        if isinstance(lengths.get("min"), int) and lengths["min"] < seq_len:
            from attnspec.spectra.reading import lengths_text

            warnings.warn(
                f"inputs are shorter than seq_len={seq_len} (real lengths {lengths_text(run.meta)}; "
                f"{lengths.get('full', '?')} of {run.meta.get('corpus', {}).get('num_inputs', '?')} have "
                f"all {seq_len} tokens): every curve is 1 past its input's length by construction, so c_i "
                "at an index beyond the shortest input is not a measurement",
                stacklevel=3,
            )
    return result
