"""What one ``sa-check`` run will cost, estimated from its parameters before any work.

A request such as ``--L 1000000000000`` or ``--trials 1000000000000`` would otherwise reach
numpy's allocator (MemoryError after the imports); :func:`check_resources` refuses it in one
line naming the option, its value, the estimate and the limit. The estimates are upper-end
models of the code, not measurements:

* memory: the dense L×L arrays of the largest L the run touches (A, B, masks, the
  d → ∞ draws: about :data:`BYTES_PER_ENTRY` bytes per entry), one batch of the exact
  sampler (capped at :data:`BATCH_BYTES`), and the per-trial tables (about
  :data:`BYTES_PER_TRIAL` bytes per trial and configuration);
* time: floating-point operations (the exact sampler's O(L³) per trial, the d → ∞ law's
  O(k L²) per draw, the orthogonal search's QR) at :data:`FLOPS` per second, against
  :data:`MAX_SECONDS`;
* dimensions: every d the run searches must stay below 2^53, where float64 still counts
  degrees of freedom exactly (a tiny ``--delta`` or ``--eps`` pushes the JL dimension past it);
  a ``--d`` the user asks for must stay below 2^44, where the float32 products still resolve
  its draws (:data:`MAX_MEASURED_DIMENSION`).
"""

from __future__ import annotations

import math
from typing import Protocol

from attnspec.errors import InputError, check_memory


class RunSize(Protocol):
    """The parameters of an ``sa-check`` run that its cost depends on; a
    :class:`attnspec.theory.expressivity.config.Config` provides them (this module does not
    import it: the config calls :func:`check_resources` while it validates itself)."""

    L: int
    k: int
    eps: float
    delta: float
    m: float
    M: float
    beta: float
    trials: int
    scaling_L: int
    d: int | None
    sweep_trials: int

    @property
    def grid_L(self) -> list[int]: ...

    @property
    def grid_k(self) -> list[int]: ...


BYTES_PER_ENTRY = 96
BATCH_BYTES = 200 * 2**20
BYTES_PER_TRIAL = 512
#: A conservative single-thread rate (the 2-core project machine does 10–40 GFLOP/s).
FLOPS = 2e9
#: The longest run accepted: one day of computation at :data:`FLOPS`.
MAX_SECONDS = 86_400.0
#: The largest dimension d searched: float64 counts integers exactly below 2^53.
MAX_DIMENSION = 2.0**53
#: The largest ``--d`` measured: the exact sampler forms RᵀR = T Tᵀ / d in float32, and T's
#: diagonal sqrt(χ²_{d−i}) ≈ √d ± 0.7 loses that fluctuation to rounding once √d nears 2^24
#: (the median error times √d, constant in d, drifts 4 % at d = 3e14 and 25 % at 1e15; it
#: is exact to 4 digits at 1e14). Two bits below that: 2^44 ≈ 1.8e13.
MAX_MEASURED_DIMENSION = 2**44


def _largest_L(cfg: RunSize) -> tuple[str, int]:
    """The option that sets the largest L of the run, and that L."""
    sweep_max = max(cfg.grid_L)
    return ("--L", cfg.L) if cfg.L >= sweep_max else ("--sweep-L", sweep_max)


def _memory_parts(cfg: RunSize) -> dict[str, float]:
    """Bytes the run holds at its peak, per option that drives them (upper-end model,
    module docstring): the largest L, ``--trials`` and ``--sweep-trials``.
    """
    opt, L = _largest_L(cfg)
    configs = len(cfg.grid_L) * len(cfg.grid_k)
    return {
        f"{opt} {L}": float(BYTES_PER_ENTRY) * L * L + min(BATCH_BYTES, 24.0 * L * L),
        f"--trials {cfg.trials}": float(BYTES_PER_TRIAL) * cfg.trials,
        f"--sweep-trials {cfg.sweep_trials}": float(BYTES_PER_TRIAL) * configs * cfg.sweep_trials,
    }


def seconds_estimate(cfg: RunSize) -> float:
    """Seconds of computation at :data:`FLOPS` (upper-end model, module docstring).

    Parameters
    ----------
    cfg : RunSize
        The run's sizes (its config).

    Returns
    -------
    float
    """
    from attnspec.theory.expressivity.params import EXACT_TRIALS

    L, k, n = float(cfg.L), float(cfg.k), float(cfg.trials)
    flops = n * (L * L * (4 + 2 * k))  # the d → ∞ law at the run's L (and its hypotheses' L <= 256)
    flops += min(n, EXACT_TRIALS) * (2 * L**3 + 20 * L * L * (1 + k))  # the exact grid pass
    flops += 10 * n * 2 * L * L * min(L, 64.0)  # the orthogonal search: ~10 d near L, O(L² (L − d)) each
    if cfg.d is not None:
        flops += n * 2 * L * L * min(float(cfg.d), L) * 2
    for Ls in cfg.grid_L:
        for ks in cfg.grid_k:
            if ks > Ls:
                continue
            t = float(cfg.sweep_trials if Ls < 2048 else min(cfg.sweep_trials, 40))
            flops += t * Ls * Ls * (4 + 2 * ks)  # the d → ∞ law
            if Ls <= 128:  # the exact bisection
                flops += 8 * t * 2 * float(Ls) ** 3
            if Ls <= 2048:  # the orthogonal search
                flops += 10 * t * 2 * float(Ls) ** 2 * min(Ls, 64.0)
    Ls = float(min(cfg.scaling_L, cfg.L))
    flops += 14 * 8 * max(50, cfg.trials // 2) * 2 * Ls**3  # the scaling sweeps at L <= scaling_L
    return flops / FLOPS


def check_resources(cfg: RunSize) -> None:
    """Refuse (:class:`InputError`) a run whose memory, time or dimension estimate exceeds
    the limit, naming the option, its value, the estimate and the limit.

    Parameters
    ----------
    cfg : RunSize (a Config whose ranges are already checked)
    """
    # dimensions: the notes' d_JL = 8 ln(4L²/β) k max|B|²/δ² is the largest d searched
    bmax = max(abs(math.log(cfg.M) - math.log(cfg.eps)), abs(math.log(cfg.m) - math.log(cfg.eps)))
    log_d_jl = (
        math.log(8.0 * math.log(4.0 * cfg.L * cfg.L / cfg.beta) * cfg.k)
        + 2 * math.log(max(bmax, 1e-300))
        - 2 * math.log(cfg.delta)
    )
    d_jl = math.exp(min(log_d_jl, 700.0))
    if not log_d_jl < math.log(MAX_DIMENSION):
        raise InputError(
            f"delta={cfg.delta:g} with eps={cfg.eps:g} needs projection dimensions up to about "
            f"{'1e+304 or more' if log_d_jl > 700 else f'{d_jl:.3g}'} (the JL dimension), beyond the limit 2^53 = {MAX_DIMENSION:.3g}; use a larger "
            f"delta or eps"
        )
    if cfg.d is not None and cfg.d > MAX_MEASURED_DIMENSION:
        raise InputError(
            f"d must be <= 2^44 = {MAX_MEASURED_DIMENSION} (the float32 products of the exact sampler "
            f"resolve the draws of a larger d no more), got d={cfg.d}"
        )
    parts = _memory_parts(cfg)
    check_memory(max(parts, key=parts.get), sum(parts.values()))  # named by the option that drives it
    secs = seconds_estimate(cfg)
    if secs > MAX_SECONDS:
        parts = {"--trials": cfg.trials, "--L": cfg.L, "--sweep-trials": cfg.sweep_trials, "--sweep-L": max(cfg.grid_L)}
        named = ", ".join(f"{k} {v}" for k, v in parts.items())
        raise InputError(
            f"this run ({named}) needs about {secs / 3600:.3g} h of computation by estimate, more than "
            f"the limit of {MAX_SECONDS / 3600:.0f} h; ask for fewer trials or a smaller L"
        )
