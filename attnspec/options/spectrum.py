"""The options of the spectrum study, each declared once (:class:`attnspec.options.declaration.Option`).

:data:`SPECTRUM` lists them in the order of ``attnspec spectrum --help``; the Python API
``attnspec.spectrum`` takes those it has in the same order, ``model`` and ``data`` also by
position. Read off it are the typer options of ``attnspec spectrum``
(:func:`attnspec.options.declaration.typer_command`) and the signature and the ``Parameters`` section
of ``attnspec.spectrum`` (:mod:`attnspec.api`).

The two surfaces differ where the study does: the command line reads text (``--seq-len
64,128``, ``--num-inputs all``) and has flags for its output (``--plots``, ``--label``,
``--quiet``) and for long runs (``--max-time``, ``--shard``, ``--checkpoint-every``); the
Python API also takes a model object with its tokenizer, or the texts themselves, and
returns the tables instead of drawing them. The defaults given here are
:class:`attnspec.spectra.config.SpectrumConfig`'s. The bounds and choices declared here are
the only statement of what each option allows: :func:`check_spectrum_values` checks a run's
values against them (:meth:`~attnspec.spectra.config.SpectrumConfig.validate` calls it, naming
the flags), and the library's lists of choices are read off them (:func:`spectrum_choices`).
This module imports nothing heavy: ``attnspec --help`` stays light.
"""

from __future__ import annotations

import inspect
from collections.abc import Mapping
from typing import Any

from attnspec.options.declaration import Option

_DATA_DIR_HELP = (
    "Folder laid out like shared/data (wikitext103/, imdb/); default $ATTNSPEC_DATA_DIR, else "
    "../shared/data when it exists."
)

SPECTRUM: tuple[Option, ...] = (
    Option(
        "model",
        "str",
        "roberta-base",
        "Hub id (roberta-base, gpt2, EleutherAI/pythia-160m, ...), local model "
        "directory, or alias 'minilm' (installed weights).",
        api_default=inspect.Parameter.empty,
        api_type="str, transformers model, or attnspec.spectra.models.LoadedModel",
        api_help='A hub id, local directory or alias ("minilm"), loaded with eager attention; or an '
        "already-loaded transformers model (then pass tokenizer), encoder or decoder, whose device and "
        "dtype are used as they are.",
    ),
    Option(
        "data",
        "path",
        "wiki103",
        "'wiki103', 'imdb', or a PATH (WikiText .raw, aclImdb dir, .jsonl, .csv, .txt).",
        cli_kind="str",
        api_default=None,
        api_help="'wiki103', 'imdb', or a path (WikiText .raw, aclImdb dir, .jsonl, .csv, .txt). Exactly one of "
        "data and texts.",
    ),
    Option(
        "texts",
        "strs",
        None,
        "The inputs themselves, one document each, cut to seq_len tokens.",
        nullable=True,
        only="api",
        api_type="list of str, optional",
    ),
    Option(
        "tokenizer",
        "object",
        None,
        "Required with a model object; ignored with a name.",
        nullable=True,
        only="api",
        api_type="transformers tokenizer, optional",
    ),
    Option(
        "split",
        "str",
        None,
        "Corpus split (wiki103: validation|test; imdb: test|train). Default: validation / test.",
        nullable=True,
    ),
    Option("data_dir", "path", None, _DATA_DIR_HELP, nullable=True, cli_kind="str"),
    Option(
        "seq_len",
        "int",
        512,
        "n: tokens per input, special tokens included; several (64,128,256,512) run a "
        "scaling study on the same documents, one run per length under --out.",
        also=("ints",),
        cli_kind="str",
        low=2,
        api_help="n: tokens per input, special tokens included. Several strictly increasing lengths ([64, 128, "
        "256]) run a scaling study: the documents are drawn once at the longest length and cut to each "
        "shorter one, one ordinary run per length (under out/n<len> with out), then k ∝ n^β is fitted; a "
        "ScalingResult is returned.",
    ),
    Option(
        "num_inputs",
        "int",
        None,
        "Number of inputs (windows or documents) to average over, or 'all' (every "
        "available input). Default: 1000, or all of them when the corpus has fewer. The Python API's num_inputs; "
        "--num-sentences, the name experiment TOMLs use, is the same option.",
        nullable=True,
        cli_kind="str",
        metavar="N|all",
        aliases=("num-sentences",),
        low=1,
        api_help="Inputs to average over. Default: 1000 for data (as on the command line), every text for texts.",
    ),
    Option(
        "seed",
        "seed",
        0,
        "Chooses the inputs; recorded with the results.",
        api_help="Chooses the inputs (a seeded draw without replacement); recorded.",
    ),
    Option(
        "short_policy",
        "str",
        "skip",
        "Documents shorter than n: skip | keep (as zero-extended P) | pack (concatenate).",
        choices=("skip", "keep", "pack"),
        api_default=None,
        api_help="Documents shorter than seq_len: skip, keep (as zero-extended P) or pack (concatenate); default "
        "skip for data, keep (each text at its own length) for texts.",
    ),
    Option(
        "selection",
        "str",
        "pool",
        "How inputs are drawn. pool (default): a seeded permutation of every "
        "available input, the rule of every earlier version; IMDB-style token counts are cached (~/.cache/attnspec, "
        "or $ATTNSPEC_CACHE_DIR), so only the first run on a corpus tokenises all of it. documents: the first "
        "long-enough documents of a seeded document order; tokenises only what it needs, draws other inputs than "
        "pool.",
        choices=("pool", "documents"),
    ),
    Option(
        "count_available",
        "bool",
        False,
        "With --selection documents: tokenise the whole corpus to record the "
        "exact number of available inputs (the inputs are the same). pool always counts exactly.",
        only="cli",
    ),
    Option(
        "batch_size",
        "int",
        None,
        "Inputs per forward pass (default 4 on CPU and CUDA, measured in "
        "benchmarks/bench_spectrum.py and benchmarks/device_check.json).",
        nullable=True,
        low=1,
    ),
    Option(
        "device",
        "str",
        "auto",
        "auto | cpu | cuda.",
        api_help="auto | cpu | cuda, for a model given by name (a model object stays where it is).",
    ),
    Option(
        "dtype",
        "str",
        "float32",
        "Model precision: float32 | float64 | bfloat16.",
        api_help="Model precision: float32 | float64 | bfloat16, for a model given by name (a model object keeps "
        "its own).",
    ),
    Option(
        "svd_method",
        "str",
        "auto",
        "auto (lapack on the CPU, gram on CUDA) | lapack | svd | gram | gram32 | "
        "longn. All but longn compute the full spectrum exactly (gram32 in float32, the fastest on the CPU for "
        "long causal P); longn approximates it for long n (docs/spectrum.md); meta.json records the method used "
        "and its error.",
        choices=("auto", "lapack", "svd", "gram", "gram32", "longn"),
    ),
    Option(
        "out",
        "path",
        None,
        "Results directory (default results/<model>-<data>-n<seq_len>); with --shard, "
        "'{shard}' in it becomes e.g. 0of4.",
        nullable=True,
        api_help="Results directory to write (as the command line does, with checkpoints); default: a temporary "
        "directory, removed once the tables are in memory (.save() later). A directory that already "
        "holds this run (or study), complete, with these parameters, is up to date: it is loaded and "
        "nothing is computed (only null baselines asked for now and not there yet are added).",
    ),
    Option("csv", "bool", False, "Also write CSV next to the parquet tables.", only="cli"),
    Option("resume", "bool", False, "Continue an interrupted or time-limited run in --out."),
    Option("overwrite", "bool", False, "Recompute a run that --out already holds."),
    Option(
        "max_time",
        "float",
        None,
        "Stop cleanly after this many seconds (resume later).",
        nullable=True,
        only="cli",
        low=0.0,
        low_open=True,
    ),
    Option("checkpoint_every", "int", 8, "Save the aggregate every this many batches.", only="cli", low=1),
    Option(
        "shard",
        "str",
        None,
        "INDEX/COUNT: process every COUNT-th input from INDEX (or 'auto' from "
        "RANK/WORLD_SIZE); merge shards with `attnspec merge`.",
        nullable=True,
        only="cli",
    ),
    Option(
        "rank_tol",
        "float",
        1e-3,
        "Numerical rank counts σ_i > rank_tol·σ_1.",
        only="cli",
        low=0.0,
        high=1.0,
        low_open=True,
        high_open=True,
    ),
    Option(
        "at",
        "int",
        None,
        "Heatmap index, recorded in meta.json for later redraws (default 128 when n = 512, else n/4).",
        nullable=True,
        only="cli",
    ),
    Option("plots", "bool", True, "Draw the figures when the run completes.", flag="--plots/--no-plots", only="cli"),
    Option(
        "label",
        "str",
        None,
        "Figure title instead of the run's own (model · corpus · n · inputs); recorded in meta.json for later redraws.",
        nullable=True,
        only="cli",
    ),
    Option("quiet", "bool", False, "No progress bar.", short="-q", only="cli"),
    Option("progress", "bool", True, "Show a progress bar.", only="api"),
    Option(
        "projection_k",
        "str",
        "64,128,256",
        "With several --seq-len values: the Linformer-projection measurement "
        "on real Q, K, V at these projection dimensions (each n > k), on the first 8 documents: relative error of "
        "softmax(Q(RK)ᵀ)(RV) against PV (Gaussian R) beside the best rank-k error; none: not run.",
        also=("ints",),
        nullable=True,
        metavar="K,K,...|none",
    ),
    Option(
        "approx",
        "str",
        None,
        "With several --seq-len values: approximations of attention applied to real Q, K, V of held-out "
        "documents (linformer-fit, linformer-fit-per-head, linformer-proof, performer, nystrom, or any "
        "registered one), beside uniform attention and the best rank-k P; the error's slope against log2 n "
        "decides whether a fixed k holds; also the sentence-embedding cosine with every layer replaced.",
        also=("strs",),
        nullable=True,
        metavar="NAME,NAME,...",
    ),
    Option(
        "approx_k",
        "str",
        "64,128,256",
        "The k of --approx (projection rows, random features, landmarks); each measured where n > k.",
        also=("ints",),
        metavar="K,K,...",
    ),
    Option(
        "approx_split",
        "str",
        "8,8",
        "TRAIN,HELD_OUT: documents of the study that --approx fits on and measures on (disjoint, drawn by the seed).",
        also=("ints",),
        metavar="TRAIN,HELD_OUT",
    ),
    Option("approx_steps", "int", 150, "Adam steps of each fitted projection of --approx.", low=1),
    Option(
        "baseline",
        "strs",
        None,
        "Null baseline computed beside the result and shown beside the real values: "
        "entropy-matched (random softmax with each head's mean row entropy, its mask and window) | uniform (rows "
        "uniform over their allowed positions) | random-init (the same architecture and inputs, weights "
        "re-initialised by the seed; a second spectrum job). Repeat the option or separate names by commas; "
        "meta.json records them.",
        nullable=True,
        metavar="NAME",
        api_help="Null baselines computed beside the result: entropy-matched, uniform, random-init, a list of them "
        'or a comma list (attnspec.spectra.baselines); recorded in meta["baselines"], their tables in '
        ".baselines, and beside the real values in SpectrumResult.per_layer.",
    ),
)

#: The options the Python API takes by position too, in this order.
POSITIONAL = ("model", "data")


def spectrum_option(name: str) -> Option:
    """The declaration of one spectrum option.

    Parameters
    ----------
    name : str
        The option's name (``short_policy``).

    Returns
    -------
    Option
        Its declaration in :data:`SPECTRUM`.
    """
    for opt in SPECTRUM:
        if opt.name == name:
            return opt
    raise KeyError(f"no spectrum option {name!r}")


def spectrum_choices(name: str) -> tuple[str, ...]:
    """The values a spectrum option allows, as its declaration lists them (the library's
    ``SHORT_POLICIES``, ``SELECTIONS`` and ``METHODS`` read them here).

    Parameters
    ----------
    name : str
        An option declared with ``choices`` (``short_policy``, ``selection``, ``svd_method``).

    Returns
    -------
    tuple of str
        The choices, in the order the messages list them.
    """
    choices = spectrum_option(name).choices
    if choices is None:
        raise KeyError(f"spectrum option {name!r} declares no choices")
    return choices


def check_spectrum_values(values: Mapping[str, Any]) -> None:
    """Refuse a spectrum option's value that its declaration does not allow: of another kind
    (an :class:`~attnspec.errors.OptionError`, exit code 2), or outside its bounds or choices
    (an :class:`~attnspec.errors.InputError`, exit code 1), each in one line naming the flag,
    as the command line, the Python API and an experiment TOML all report it.

    Parameters
    ----------
    values : mapping
        Values by option name (``seq_len``, ``batch_size``, ...), as read off the surface that
        gave them; ``None`` is an option left unset. Names no option declares are ignored.
    """
    from attnspec.options.declaration import check_bounds, check_types

    typed = check_types(SPECTRUM, values, lists=False, text=False)
    check_bounds(SPECTRUM, typed, flags=True)


def check_given_values(values: Mapping[str, Any]) -> None:
    """:func:`check_spectrum_values` on every option a surface passes as given, before anything
    is parsed or loaded: also those no run's config holds (``--approx-steps``), which would
    otherwise be checked only when used. The options the command line reads from text of its
    own (``--seq-len 64,128``, ``--num-inputs all``; declared with ``cli_kind``) are left to
    their parsers.

    Parameters
    ----------
    values : mapping
        Values by option name, as the command line, the Python API or an experiment TOML gave
        them (the TOML's already read as the command line reads text).
    """
    declared = {o.name: o for o in SPECTRUM}
    check_spectrum_values({k: v for k, v in values.items() if k in declared and declared[k].cli_kind is None})


def spectrum_option_names(surface: str) -> tuple[str, ...]:
    """The names of the spectrum options a surface has, in declaration order.

    Parameters
    ----------
    surface : {"cli", "api"}
        ``attnspec spectrum`` or ``attnspec.spectrum``.

    Returns
    -------
    tuple of str
        The option names (``num_inputs``, not its alias).
    """
    return tuple(o.name for o in SPECTRUM if o.on(surface))
