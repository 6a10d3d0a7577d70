"""The parameters of one ``sa-check`` run, validated before any computation."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass, field, fields
from typing import Any

from attnspec.errors import InputError
from attnspec.theory.expressivity.params import FACTORIZATIONS, SUPPORTS, check_choice, check_int, check_params

#: The grid of ``--sweep``.
FULL_SWEEP_L: tuple[int, ...] = (64, 128, 256, 512, 1024, 2048, 4096)
FULL_SWEEP_K: tuple[int, ...] = (1, 2, 4, 8, 16, 32)


def _option(name: str) -> Any:
    """The declaration of ``sa-check``'s option ``name`` (:data:`attnspec.options.checks.SA_CHECK`)."""
    from attnspec.options.checks import SA_CHECK

    return next(o for o in SA_CHECK if o.name == name)


def _default(name: str) -> Any:
    return _option(name).default


def _check_declared(name: str, value: Any, label: str | None = None) -> None:
    """An integer within the bounds declared for option ``name``; the message names ``label``."""
    opt = _option(name)
    check_int(label or name, value, int(opt.low), None if opt.high is None else int(opt.high))


def _int_list(name: str, value: Any) -> tuple[int, ...]:
    """A comma list as typed (``"64,128"``), a single int, or any sequence or array of ints;
    an empty item (``"64,"``) and a value given twice (``"16,16"``: the sweep would count its
    configurations twice in the fit) are refused."""
    import numbers

    from attnspec.errors import as_list

    if isinstance(value, str):
        parts = [x.strip() for x in value.split(",")]
        if any(not p for p in parts):
            raise InputError(f"{name} has an empty item in {value!r}; write the values separated by single commas")
        try:
            vals: list[Any] = [int(x) for x in parts]
        except ValueError:
            raise InputError(f"{name} must be a comma list of integers, got {value!r}") from None
    elif isinstance(value, numbers.Integral):
        vals = [value]
    else:
        vals = as_list(name, value)
    for v in vals:
        if isinstance(v, bool) or not isinstance(v, numbers.Integral):
            raise InputError(f"{name} must be a comma list of integers, got {value!r}")
    if not vals:
        raise InputError(f"{name} must list at least one integer, got {value!r}")
    twice = sorted({int(v) for v in vals if [int(x) for x in vals].count(int(v)) > 1})
    if twice:
        raise InputError(f"{name} lists {', '.join(map(str, twice))} more than once; give each value once")
    return tuple(int(v) for v in vals)


@dataclass
class Config:
    """Parameters of one ``sa-check`` run: its options (:data:`attnspec.options.checks.SA_CHECK`,
    where each is described with its range), dashes as underscores, and ``scaling_L``.

    With ``sweep`` the (L, k) sweep runs the full grid :data:`FULL_SWEEP_L` × :data:`FULL_SWEEP_K`
    instead of ``sweep_L`` × ``sweep_k``. Every part of the run draws from its own seed, so the
    tables are the same for ``jobs`` 1 and 2.
    """

    L: int = _default("L")
    k: int = _default("k")
    eps: float = _default("eps")
    delta: float = _default("delta")
    m: float = _default("m")
    M: float = _default("M")
    beta: float = _default("beta")
    trials: int = _default("trials")
    support: str = _default("support")
    factorization: str = _default("factorization")
    seed: int = _default("seed")
    scaling_L: int = 64  # not a command-line option: the size of the δ, eps and M/m scaling sweeps
    d: int | None = _default("d")
    sweep: bool = _default("sweep")
    sweep_L: tuple[int, ...] = field(default=_int_list("sweep-L", _default("sweep_L")))
    sweep_k: tuple[int, ...] = field(default=_int_list("sweep-k", _default("sweep_k")))
    sweep_trials: int = _default("sweep_trials")
    threads: int = _default("threads")
    jobs: int = _default("jobs")

    @property
    def grid_L(self) -> list[int]:
        """The sweep's L values (the full grid with ``sweep``)."""
        return list(FULL_SWEEP_L if self.sweep else self.sweep_L)

    @property
    def grid_k(self) -> list[int]:
        """The sweep's k values (the full grid with ``sweep``)."""
        return list(FULL_SWEEP_K if self.sweep else self.sweep_k)

    def validate(self) -> None:
        """Raise :class:`InputError` naming the first bad option and its allowed range."""
        _check_declared("L", self.L)
        check_params(L=self.L, k=self.k, m=self.m, M=self.M, eps=self.eps, delta=self.delta, beta=self.beta)
        _check_declared("trials", self.trials)
        check_choice("support", self.support, SUPPORTS)
        check_choice("factorization", self.factorization, FACTORIZATIONS)
        check_int("seed", self.seed, 0)
        check_int("scaling_L", self.scaling_L, 2)
        if self.d is not None:
            _check_declared("d", self.d)
        _check_declared("sweep_trials", self.sweep_trials, "sweep-trials")
        from attnspec.runtime.threads import check_threads

        check_threads(self.threads)  # capped: a huge pool makes OpenMP fail allocating it
        _check_declared("jobs", self.jobs)  # two independent halves: a third process has nothing to do
        if not self.sweep_L or not self.sweep_k:
            raise InputError("sweep-L and sweep-k must each list at least one integer")
        for v in self.sweep_L:
            _check_declared("L", v, "sweep-L values")
        for v in self.sweep_k:
            _check_declared("k", v, "sweep-k values")
        # configurations with k > L are skipped; a k that fits no L would leave it out of
        # the sweep entirely (and a grid with no configuration has nothing to fit)
        too_big = [k for k in self.grid_k if k > max(self.grid_L)]
        if too_big:
            raise InputError(
                f"sweep-k values must be <= the largest sweep-L ({max(self.grid_L)}): every k needs "
                f"a configuration with k <= L, got sweep-k {','.join(map(str, too_big))}"
            )
        # resources last: memory, time and the dimensions searched
        from attnspec.theory.expressivity.resources import check_resources

        check_resources(self)

    def parameters(self) -> dict[str, Any]:
        """The config as a plain dict (for ``meta.json``), with the effective sweep grid.

        Returns
        -------
        dict of str to object
            Every field by name, ``sweep_L`` and ``sweep_k`` replaced by the grid the sweep
            runs (:attr:`grid_L`, :attr:`grid_k`: the full grid with ``sweep``), as lists.
        """
        out = asdict(self)
        out["sweep_L"], out["sweep_k"] = self.grid_L, self.grid_k
        return out

    def identity(self) -> dict[str, Any]:
        """What defines a run (``--out`` refuses a directory holding another run): every
        parameter but ``threads`` and ``jobs`` (neither changes a number), with the effective
        sweep grid.

        Returns
        -------
        dict of str to object
            :meth:`parameters` without ``threads`` and ``jobs``.
        """
        out = self.parameters()
        out.pop("threads")
        out.pop("jobs")
        return out


def config_from_options(options: Mapping[str, Any]) -> Config:
    """A validated :class:`Config` from options keyed by CLI name (``sweep_L`` for ``--sweep-L``).

    Parameters
    ----------
    options : mapping
        Values as typed on the command line or in an experiment TOML; missing keys take
        the defaults; ``None`` values are treated as missing except for ``d``.

    Returns
    -------
    Config

    Raises
    ------
    InputError
        An unknown option, or a value outside its allowed range (the message names both).
    """
    names = {f.name for f in fields(Config)}
    unknown = sorted(set(options) - names)
    if unknown:
        raise InputError(f"unknown sa-check option(s) {', '.join(unknown)}; known: {', '.join(sorted(names))}")
    values = {k: v for k, v in options.items() if v is not None or k == "d"}
    for key in ("sweep_L", "sweep_k"):
        if key in values:
            values[key] = _int_list(key.replace("_", "-"), values[key])
    cfg = Config(**values)
    cfg.validate()
    return cfg
