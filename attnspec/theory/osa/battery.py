"""The osa-check battery: ``config_from_options → run → BatteryResult``.

Options are keyed by their CLI names with underscores (``d_v`` for ``--d-v``); every
value is validated by :meth:`OsaCheckConfig.validate` before any computation, and an
error names the option and what is allowed.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from attnspec.errors import InputError, check_memory
from attnspec.numerics.linalg import SCHEDULES, ns_schedule
from attnspec.options.checks import OSA_CHECK, option_names
from attnspec.runtime.threads import torch_threads
from attnspec.theorem.result import BatteryResult
from attnspec.theory.osa.groups import LAYER_STEPS, jacobian_n

COMMAND = "osa-check"
DEFAULT_ALPHAS: tuple[float, ...] = (0.05, 0.5, 2.0)
DEFAULT_SCHEDULES: tuple[str, ...] = ("cubic", "muon", "polar-express")
#: The declared options, by name: their bounds are the ranges :meth:`OsaCheckConfig.validate` enforces.
_DECLARED = {o.name: o for o in OSA_CHECK}
#: |alpha| beyond this makes ||S||₂ (hence e^{||S||₂} in the Thm 3.1 bounds and the dense
#: exponentials of Thm 2.1) leave the range float64 represents: alpha = 1e308 overflows S.
ALPHA_MAX = _DECLARED["alpha"].high
#: Largest Newton–Schulz step K of the Thm 3.1 sweep.
STEPS_MAX = int(_DECLARED["steps"].high)
#: A schedule must keep every singular value of the pre-normalised M_0 (in [0, 1]) below
#: this at every step. Newton–Schulz approximates the polar factor (σ → 1): Lemma C.1 bounds
#: the cubic's iterates by √3, the named schedules stay below 2 (Muon 1.20, Polar Express
#: 1.99). A schedule that sends σ beyond 10 is not an orthogonalisation, and [S] = BᵀSB grows
#: as σ², the Thm 3.1 error as σ⁴: exp[S] and the bounds lose all precision, then overflow.
SIGMA_MAX = 10.0


def parse_schedule(text: str) -> str | list[tuple[float, ...]]:
    """A ``--schedule`` value: a name, or custom coefficients ``a,b[,c]`` (one step, repeated)
    or ``a,b,c;a,b,c;...`` (one tuple per step, the last repeated).

    Parameters
    ----------
    text : str

    Returns
    -------
    str or list of tuple of float
    """
    t = str(text).strip()
    if any(ch.isdigit() for ch in t):
        try:
            return [tuple(float(v) for v in part.split(",")) for part in t.split(";") if part.strip()]
        except ValueError:
            raise InputError(
                f"--schedule must be one of {', '.join(SCHEDULES)} or coefficients like '1.5,-0.5' or "
                f"'3,-3.2,1.2;1.875,-1.25,0.375', got {text!r}"
            ) from None
    return t


@dataclass(frozen=True)
class OsaCheckConfig:
    """The parameters of one osa-check run (recorded in ``meta.json``); the ranges allowed are
    those :data:`~attnspec.options.checks.OSA_CHECK` declares and :meth:`validate` enforces.

    Parameters
    ----------
    seed : int
        Root seed; every instance's own seed is recorded in the tables.
    alphas : tuple of float
        alpha of the Thm 2.1/3.1/2.2 instances.
    steps : int
        Theorem 3.1 is checked at K = 0..steps.
    schedules : tuple
        Newton–Schulz schedules: names or custom coefficient tuples.
    d_model, d_v : int
        Width and head width of the Jacobian check; its instance has N = 3 d_v tokens
        (low-rank regime), plus one full-span case N = 2 d_v.
    trials : int
        Random instances per configuration.
    timing : bool
        Also time the forward pass for ``timing_ns``.
    """

    seed: int = 0
    alphas: tuple[float, ...] = DEFAULT_ALPHAS
    steps: int = 12
    schedules: tuple[Any, ...] = DEFAULT_SCHEDULES
    d_model: int = 8
    d_v: int = 2
    trials: int = 3
    timing: bool = True
    #: N of the timing sweep: up to 2,048 (N = 4,096 doubled the sweep's time; the exponents
    #: over 256..16,384 are in benchmarks/bench_osa.py).
    timing_ns: tuple[int, ...] = field(default=(256, 512, 1024, 2048))

    def validate(self) -> OsaCheckConfig:
        """Raise :class:`InputError` naming the first bad option and its allowed range.

        The Jacobian check's memory is checked too (a lower bound of its peak), before any
        computation.

        Returns
        -------
        OsaCheckConfig
            This config, unchanged, once every option is checked.

        Raises
        ------
        InputError
            The first option out of its range, or a Jacobian check that could not fit in
            memory.
        """
        from attnspec.theory.osa.lemc1 import scalar_range

        _int("--seed", self.seed, 0)
        if not self.alphas:
            raise InputError("--alpha needs at least one value")
        for a in self.alphas:
            if isinstance(a, bool) or not isinstance(a, (int, float)) or not math.isfinite(a) or abs(a) > ALPHA_MAX:
                raise InputError(f"--alpha must be a finite number in [-{ALPHA_MAX:g}, {ALPHA_MAX:g}], got {a!r}")
        _declared_int("steps", self.steps)
        if not self.schedules:
            raise InputError(f"--schedule needs at least one of {', '.join(SCHEDULES)} or custom coefficients")
        for sch in self.schedules:
            try:
                steps = ns_schedule(sch, max(self.steps, LAYER_STEPS, 1))
            except InputError as exc:
                raise InputError(f"--schedule: {exc}") from None
            if any(len(t) < 2 for t in steps):
                raise InputError(
                    f"--schedule {_display(sch)}: each Newton–Schulz step needs 2 or 3 coefficients "
                    "(a σ + b σ³ [+ c σ⁵]); one coefficient scales every singular value alike and "
                    "cannot orthogonalise"
                )
            top = scalar_range(sch, max(self.steps, LAYER_STEPS), grid=2001)[1]
            if not top <= SIGMA_MAX:
                raise InputError(
                    f"--schedule {_display(sch)} must keep the singular values of M_0 (in [0, 1]) within "
                    f"[0, {SIGMA_MAX:g}] over K = 0..{max(self.steps, LAYER_STEPS)}; they reach {top:.3g}"
                )
        _declared_int("d_v", self.d_v)
        _declared_int("d_model", self.d_model)
        if 2 * self.d_v > self.d_model:
            raise InputError(
                f"--d-v: the initialisation needs 2*d_v <= d_model, got d_v={self.d_v}, d_model={self.d_model}"
            )
        # One draw of the Jacobian check holds J, its Theorem 4.1 form and a term of it, each
        # (N d_model)² float64 with N = 3 d_v, and the d_model × d_model weight factors: a lower
        # bound of the peak, so a request refused here could never have run.
        nd = jacobian_n(self.d_v) * self.d_model
        check_memory(
            f"--d-model {self.d_model} with --d-v {self.d_v} (the Jacobian check)",
            8.0 * (3 * nd * nd + 2 * self.d_model * self.d_model),
        )
        _declared_int("trials", self.trials)
        if not isinstance(self.timing, bool):
            raise InputError(f"--timing must be true or false, got {self.timing!r}")
        for n in self.timing_ns:
            _int("timing N", n, 2)
        return self

    def identity(self) -> dict[str, Any]:
        """The parameters that define the run, JSON-ready (what ``--out`` compares).

        Returns
        -------
        dict of str to object
            Every field by name; ``alphas`` and ``timing_ns`` as lists, each schedule as its
            name or as a list of its steps' coefficient lists.
        """
        d = asdict(self)
        d["alphas"] = list(self.alphas)
        d["schedules"] = [s if isinstance(s, str) else [list(t) for t in s] for s in self.schedules]
        d["timing_ns"] = list(self.timing_ns)
        return d


def _display(sch: Any) -> str:
    from attnspec.theory.osa.instances import schedule_name

    return repr(schedule_name(sch))


def _int(name: str, value: Any, low: int, high: int | None = None) -> None:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise InputError(f"{name} must be an integer, got {value!r}")
    if value < low or (high is not None and value > high):
        allowed = f">= {low}" if high is None else f"in [{low}, {high}]"
        raise InputError(f"{name} must be an integer {allowed}, got {value!r}")


def _declared_int(name: str, value: Any) -> None:
    """An integer option within the bounds :data:`~attnspec.options.checks.OSA_CHECK` declares."""
    opt = _DECLARED[name]
    _int(opt.label, value, int(opt.low), None if opt.high is None else int(opt.high))


def _as_tuple(v: Any) -> tuple:
    if v is None:
        return ()
    return tuple(v) if isinstance(v, (list, tuple)) else (v,)


def config_from_options(options: Mapping[str, Any]) -> OsaCheckConfig:
    """The validated config of osa-check options (CLI names, dashes as underscores).

    Parameters
    ----------
    options : mapping
        ``seed``, ``alpha`` (a number or a list), ``steps``, ``schedule`` (names, custom
        strings like ``"1.5,-0.5"`` or coefficient lists), ``d_model``, ``d_v``, ``trials``,
        ``timing``; missing or None values take the defaults.

    Returns
    -------
    OsaCheckConfig
    """
    opts = {str(k).replace("-", "_"): v for k, v in options.items() if v is not None}
    names = option_names(COMMAND)  # declared in attnspec.options.checks
    unknown = sorted(set(opts) - set(names))
    if unknown:
        raise InputError(f"osa-check has no option {unknown[0]!r}; options: {', '.join(names)}")
    kw: dict[str, Any] = {}
    if "alpha" in opts and _as_tuple(opts["alpha"]):
        kw["alphas"] = tuple(
            float(a) if isinstance(a, (int, float)) and not isinstance(a, bool) else a for a in _as_tuple(opts["alpha"])
        )
    if "schedule" in opts and _as_tuple(opts["schedule"]):
        kw["schedules"] = tuple(parse_schedule(s) if isinstance(s, str) else s for s in _as_tuple(opts["schedule"]))
    for name in ("seed", "steps", "d_model", "d_v", "trials", "timing"):
        if name in opts:
            kw[name] = opts[name]
    return OsaCheckConfig(**kw).validate()


def run(config: OsaCheckConfig, *, progress: Callable[[str], None] | None = None) -> BatteryResult:
    """Run every OSA check and, if ``config.timing``, the timing sweep.

    The claim groups (:data:`attnspec.theory.osa.groups.GROUPS`) run through
    :func:`attnspec.theorem.groups.run_groups`: where it may fork, the Jacobian theorems,
    Lemmas C.1 and C.7 and the printed formulas in a second process while this one computes the
    others and then the timing sweep (one core each on a 2-core machine: the forward pass is
    timed in CPU seconds, which the other process does not count).

    Parameters
    ----------
    config : OsaCheckConfig
        The validated options.
    progress : callable, optional
        Receives one line per step; None: silent.

    Returns
    -------
    BatteryResult
        Verdict rows keyed on ``osa.*`` claim ids; tables ``thm21``,
        ``layer_orthogonality``, ``thm31``, ``thm31_violations``, ``thm42``, ``thm22``,
        ``jacobian``, ``jacobian_full_span``, ``lemma_c2``, ``lemma_c3``, ``lemma_c7``, ``algorithm1``, ``printed``
        (and ``timing``).
    """
    from attnspec.theorem.groups import run_groups
    from attnspec.theory.osa.groups import GROUPS, TIMING, mark_paper_params, parallel_note

    config.validate()
    t0 = time.perf_counter()
    # The checks use tiny matrices: one thread avoids oversubscription (restored after) — for
    # torch and for the BLAS under NumPy/SciPy (SciPy's expm of a 96×96 matrix took 0.2 s with
    # two OpenBLAS threads on a busy 2-core machine, 3 ms with one).
    # SciPy brings its own OpenBLAS, loaded by its first import: threadpool_limits only limits
    # the libraries loaded when it is entered, so SciPy is imported first (imported lazily
    # inside the checks, its BLAS kept two threads and scipy.linalg.expm of N <= 96 took
    # ~50 ms instead of ~3 ms: Thm 2.1's stage 3.2 CPU-s instead of 0.45).
    import scipy.linalg  # noqa: F401
    from threadpoolctl import threadpool_limits

    groups = [g for g in GROUPS if config.timing or g is not TIMING]
    with torch_threads(1), threadpool_limits(limits=1, user_api="blas"):
        rows, tables = run_groups(groups, config, progress=progress, beside_note=parallel_note(config))
    mark_paper_params(rows)
    meta = {
        "parameters": config.identity(),
        "seed": config.seed,
        "wall_seconds": round(time.perf_counter() - t0, 3),
        "tables": ["verdicts", *tables],
    }
    return BatteryResult(COMMAND, rows, tables, meta)


def summary_line(result: BatteryResult) -> str:
    """One line for the terminal: verdict counts and the fitted timing exponents.

    Parameters
    ----------
    result : BatteryResult

    Returns
    -------
    str
    """
    counts: dict[str, int] = {}
    for r in result.verdicts:
        counts[r.verdict] = counts.get(r.verdict, 0) + 1
    line = f"{len(result.verdicts)} verdicts: " + ", ".join(f"{v} {k}" for k, v in sorted(counts.items()))
    tm = result.tables.get("timing")
    if tm is not None and len(tm):
        from attnspec.theory.osa.timing import fitted_exponent

        slopes = ", ".join(f"{m} N^{fitted_exponent(tm, m):.2f}" for m in tm.method.unique())
        line += f"; forward time ∝ {slopes} (N = {tm.n.min()}..{tm.n.max()}, d_v = 64)"
    return line


__all__: Sequence[str] = ("OsaCheckConfig", "config_from_options", "run", "parse_schedule")
