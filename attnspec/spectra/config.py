"""What a spectrum run is asked to do: :class:`SpectrumConfig` (its identity is what a resume and a
merge compare), the defaults, and the parsers of ``--num-inputs`` and ``--shard``.
"""

from __future__ import annotations

import numbers
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

from attnspec.errors import InputError, OptionError
from attnspec.spectra.data.corpus import CORPUS_NAMES
from attnspec.spectra.longn import LongnParams
from attnspec.spectra.metrics import RANK_TOL
from attnspec.spectra.result_checks import SPECTRUM_KIND

#: The kind a spectrum run's meta.json records (named once, in result_checks, which reads it back).
KIND = SPECTRUM_KIND


# Inputs per forward pass when --batch-size is not given, per device type. CPU: measured by
# benchmarks/bench_spectrum.py (section "batch": a 12-layer, 12-head RoBERTa-style encoder
# at n = 512, the same 4 inputs, batch sizes interleaved, best of 2 rounds, on the loaded
# 2-core machine): batch 4 took 17.9 s/input against 24.9 s/input for batch 1, with 1.6 %
# more peak RSS (1,238 vs 1,218 MB), so 4 stays. CUDA: on an H200 (benchmarks/device_check.json,
# RoBERTa-base shape, n = 512, gram) batch 32 took 0.622 s/input against 0.643 at batch 4: the
# singular values, not the forward pass, set the pace, so 4 stays there too.
DEFAULT_BATCH_SIZE = {"cpu": 4, "cuda": 4}


#: Measured error of each exact engine method against float64 SVD (numpy dgesdd) on real attention:
#: benchmarks/bench_long_context.py on SmolLM2-135M (one WikiText-103 window, 9 heads per layer
#: measured), largest over the lengths measured; docs/spectrum.md "Long context". The approximate
#: ``longn`` states its parameters here and its error per matrix (attnspec.spectra.run_error).
SVD_METHOD_ERROR: dict[str, dict[str, Any]] = {
    "lapack": {
        "curve_max_abs": 8.5e-8,
        "effective_rank_max_rel": 2.4e-7,
        "stable_rank_max_rel": 7.1e-7,
        "measured_at_n": [128, 512, 1024],
        "by": "benchmarks/bench_long_context.py (SmolLM2-135M)",
    },
    # layers 0, 18 (attention-sink heads: the dominant pair is deflated first) and 29, n = 1024 and 2048
    "gram": {
        "curve_max_abs": 5.6e-9,
        "tail_curve_max_abs": 1.5e-8,
        "effective_rank_max_rel": 1.1e-7,
        "stable_rank_max_rel": 3.7e-15,
        "measured_at_n": [1024, 2048],
        "by": "benchmarks/bench_long_context.py (SmolLM2-135M, layers 0, 18 and 29)",
    },
    # float32 Gram matrix (attnspec.spectra.gram32), against float64 gram / SVD of the same P, the largest
    # error over: n = 2048, every layer and head of one window (270 matrices: 2.4e-4 and 2.6e-4,
    # benchmarks/bench_long_context_2048_all.json); n = 4096, one window, 72 matrices of layers 3, 7, 11,
    # 15, 18, 22, 26 and 29 (2.3e-4, and the largest σ₁-less curve error, on a sink head of layer 18);
    # n = 256, every layer and head of one window (1.2e-4 and 1.4e-4)
    "gram32": {
        "curve_max_abs": 2.5e-4,
        "tail_curve_max_abs": 3.2e-4,
        "measured_at_n": [256, 2048, 4096],
        "factorised_in": "float32",
        "sigma_abs_error": "at most about 2.4e-4 * sigma_1 per value "
        "(sqrt(eps32) * sigma_1; sigma_(k+1) where the top k <= 8 pairs "
        "are deflated)",
        "by": "SmolLM2-135M, WikiText-103; docs/spectrum.md, Long context",
    },
    # approximate (attnspec.spectra.longn): no error figure holds for every matrix, so each matrix
    # gets its own bound, computed in the run and recorded in meta.json's ``svd_error_run``
    "longn": {
        "approximate": True,
        "params": LongnParams().as_dict(),
        "error": "per matrix: a-posteriori bounds on the cumulative curve, the curve without sigma_1 and "
        "sum sigma (attnspec.spectra.longn, 'Error'), largest per (layer, head) and over the run in "
        "svd_error_run; their coverage is stated there",
        "energy": "sum sigma^2 = ||P||_F^2 exactly",
    },
}


#: Inputs of a spectrum run when --num-inputs is not given (fewer if the corpus has fewer).
DEFAULT_NUM_SENTENCES = 1000


@dataclass
class SpectrumConfig:
    """Everything that defines a spectrum run (see ``attnspec spectrum --help``)."""

    model: str = "roberta-base"
    data: str = "wiki103"
    split: str | None = None
    data_dir: str | None = None
    seq_len: int = 512
    # --num-inputs: an int, "all" (every available input) or None: DEFAULT_NUM_SENTENCES, or
    # every input when the corpus has fewer (so the default never fails on a small corpus).
    # The field keeps the name recorded in meta.json and state.npz: a run's identity compares it.
    num_sentences: int | str | None = None
    seed: int = 0
    short_policy: str = "skip"
    batch_size: int | None = None  # None: DEFAULT_BATCH_SIZE of the device
    device: str = "auto"
    dtype: str = "float32"
    svd_method: str = "auto"
    shard: tuple[int, int] | None = None  # (index, count), 0-based index
    out: Path = field(default_factory=lambda: Path("results/spectrum"))
    csv: bool = False
    resume: bool = False
    overwrite: bool = False
    max_time: float | None = None  # seconds
    checkpoint_every: int = 8  # batches
    rank_tol: float = RANK_TOL  # relative tolerance of the numerical rank
    count_available: bool = False  # selection "documents": tokenise the whole corpus for the exact number of windows
    selection: str = "pool"  # how inputs are drawn (attnspec.spectra.data.selection.SELECTIONS)

    def validate(self) -> None:
        """Refuse a value its option's declaration does not allow
        (:func:`attnspec.options.spectrum.check_spectrum_values`, naming the flag), then the
        combinations no single declaration can state.

        Raises
        ------
        OptionError
            A value of another kind than its option's (exit code 2).
        InputError
            A value outside its option's bounds or choices, or two options that exclude each other.
        """
        from attnspec.options.spectrum import SPECTRUM, check_spectrum_values, spectrum_option

        # every declared option the config holds as given; --shard is held parsed (INDEX, COUNT),
        # --num-inputs also as 'all' (both checked below)
        check_spectrum_values(
            {
                o.name: getattr(self, o.name)
                for o in SPECTRUM
                if o.name in _FIELDS and o.name not in ("shard", "num_sentences")
            }
        )
        if self.num_sentences is not None and self.num_sentences != "all":
            # --num-inputs takes 'all' beside its declared integers: worded as the command line's parser
            low = spectrum_option("num_inputs").low
            message = f"--num-inputs must be an integer >= {low:g} or 'all', got {self.num_sentences!r}"
            if isinstance(self.num_sentences, bool) or not isinstance(self.num_sentences, numbers.Integral):
                raise OptionError(message)
            if self.num_sentences < low:
                raise InputError(message)
        if self.selection == "documents" and (self.short_policy == "pack" or CORPUS_NAMES.get(self.data) == "wiki103"):
            # checked again in load_inputs for any source; here the known cases fail before the model loads
            raise InputError(
                "--selection documents needs one window per document: not with --short-policy pack, "
                f"nor with {self.data} (WikiText is packed into windows); use --selection pool"
            )
        if self.resume and self.overwrite:
            raise InputError("--resume and --overwrite exclude each other")
        if self.shard is not None:
            i, n = self.shard
            if n < 1 or not 0 <= i < n:
                raise InputError(f"--shard must be INDEX/COUNT with 0 <= INDEX < COUNT, got {i}/{n}")

    def identity(self) -> dict[str, Any]:
        """The parameters that make two runs the same run (resume and merge check them).

        Returns
        -------
        dict of str to object
            ``model``, ``data``, ``split``, ``seq_len``, ``num_sentences`` (``"up to
            1000"`` for the default), ``seed``, ``short_policy``, ``dtype``, ``svd_method``,
            ``rank_tol``, ``shard`` (``"i/N"`` or None) and, when not ``"pool"``,
            ``selection``: meta.json's ``identity``.
        """
        return {
            "model": self.model,
            "data": self.data,
            "split": self.split,
            "seq_len": self.seq_len,
            "num_sentences": (f"up to {DEFAULT_NUM_SENTENCES}" if self.num_sentences is None else self.num_sentences),
            "seed": self.seed,
            "short_policy": self.short_policy,
            "dtype": self.dtype,
            "svd_method": self.svd_method,
            "rank_tol": self.rank_tol,
            "shard": None if self.shard is None else f"{self.shard[0]}/{self.shard[1]}",
            # only when not the default, so that runs made before the option existed (all
            # "pool", or "documents" for one-window-per-document corpora in one release) keep
            # their identity; the inputs' digest, checked on resume and merge, tells them apart
            **({"selection": self.selection} if self.selection != "pool" else {}),
        }


#: The fields of SpectrumConfig (those named as a spectrum option are checked by its declaration).
_FIELDS = frozenset(f.name for f in fields(SpectrumConfig))


def inputs_request(num_sentences: int | str | None) -> dict[str, Any]:
    """``--num-inputs`` as :func:`attnspec.spectra.data.inputs.load_inputs` arguments: N → exactly N;
    ``"all"`` → every available input; None (the default) → DEFAULT_NUM_SENTENCES, or all
    of them when fewer exist.

    Parameters
    ----------
    num_sentences : int, str or None
        A positive integer, ``"all"``, or None (:func:`parse_num_sentences`).

    Returns
    -------
    dict of str to object
        ``{"num_inputs": int or None, "at_most": bool}``: how many inputs to draw (None:
        all), and whether fewer are accepted when the corpus has fewer.
    """
    if num_sentences is None:
        return {"num_inputs": DEFAULT_NUM_SENTENCES, "at_most": True}
    if num_sentences == "all":
        return {"num_inputs": None, "at_most": False}
    return {"num_inputs": num_sentences, "at_most": False}


def draw_inputs(cfg: SpectrumConfig, tokenizer: Any, texts: list[str] | None = None) -> Any:
    """The seeded selection of input windows that a spectrum job's configuration asks for.

    Parameters
    ----------
    cfg : SpectrumConfig
        The job: its corpus, split, data folder, length, number of inputs, seed, short-document
        policy and selection rule.
    tokenizer : Any
        The model's tokenizer, which makes the windows.
    texts : list of str, optional
        Texts given in memory, in place of ``cfg.data``.

    Returns
    -------
    attnspec.spectra.data.inputs.Inputs
    """
    from attnspec.spectra.data.inputs import load_inputs

    return load_inputs(
        cfg.data if texts is None else texts,
        tokenizer,
        seq_len=cfg.seq_len,
        **inputs_request(cfg.num_sentences),
        seed=cfg.seed,
        split=cfg.split,
        data_dir=cfg.data_dir,
        short_policy=cfg.short_policy,
        count_available=cfg.count_available,
        selection=cfg.selection,
    )


def parse_num_sentences(text: str | None, option: str = "--num-inputs") -> int | str | None:
    """``--num-inputs`` (or ``--num-sentences``, the same option, named ``option`` in an error):
    ``"all"``, a positive integer, or None (the default, see SpectrumConfig).

    Parameters
    ----------
    text : str, optional
        The option's text: ``"all"`` (any case), or an integer, spaces around it ignored
        and ``,`` or ``_`` allowed between digits (``"10,000"``); None when not given.
    option : str
        The option's name, as the error message names it.

    Returns
    -------
    int, str or None
        The count, ``"all"``, or None for the default.

    Raises
    ------
    OptionError
        ``text`` is not a number (a usage error, exit status 2).
    InputError
        The number is below 1.
    """
    if text is None:
        return None
    t = text.strip().lower()
    if t == "all":
        return "all"
    # a number is shown as a number, as a TOML or the Python API give it; other text quoted
    shown = t if t.lstrip("-").isdigit() else repr(text)
    message = f"{option} must be an integer >= 1 or 'all', got {shown}"
    try:
        value = int(t.replace(",", "").replace("_", ""))
    except ValueError:
        raise OptionError(message) from None  # not a number at all: a usage error (exit 2)
    if value < 1:
        raise InputError(message)
    return value


def parse_shard(text: str | None) -> tuple[int, int] | None:
    """``"i/N"`` → (i, N); ``"auto"`` reads RANK and WORLD_SIZE (torchrun, accelerate).

    Parameters
    ----------
    text : str, optional
        ``--shard``: ``"i/N"`` (shard i of N, 0-based) or ``"auto"``; None for the whole run.

    Returns
    -------
    tuple of (int, int) or None
        (i, N) with ``0 <= i < N``, or None when ``text`` is None.

    Raises
    ------
    InputError
        Not two integers separated by ``/``, ``i`` outside 0..N-1, or ``"auto"`` without
        RANK and WORLD_SIZE in the environment.
    """
    import os

    if text is None:
        return None
    if text == "auto":
        if "RANK" not in os.environ or "WORLD_SIZE" not in os.environ:
            raise InputError(
                "--shard auto needs the RANK and WORLD_SIZE environment variables (set by torchrun / accelerate launch)"
            )
        text = f"{os.environ['RANK']}/{os.environ['WORLD_SIZE']}"
    try:
        i, n = (int(p) for p in text.split("/"))
    except ValueError:
        raise InputError(f"--shard must be INDEX/COUNT (e.g. 0/4) or auto, got {text!r}") from None
    if n < 1 or not 0 <= i < n:
        raise InputError(f"--shard must be INDEX/COUNT with 0 <= INDEX < COUNT, got {text!r}")
    return i, n


@dataclass
class SpectrumOutcome:
    out: Path
    status: str  # "complete", "partial" (max-time) or "interrupted"
    inputs_done: int
    inputs_total: int
    wall_time_s: float
