"""Declaring a check: its paper, its claims, its options, its grid, and one seeded trial.

A :class:`Check` is everything attnspec needs to check a paper's claims numerically::

    check = Check(
        command="favor", paper=PAPER, summary="...",
        options=(Option("d", "int", 16, "Dimension d, >= 2.", low=2), ...),
        grid=lambda o: [{"d": o["d"], "m": o["m"], "r": r} for r in (0.5, 1.0)],
        setup=instance,      # (point, rng) -> named numbers drawn once per point (inputs, exact laws)
        trial=draw,          # (point, instance, rng) -> named numbers of one random draw
        claims=(Claim("performer.lemma1", where="Lemma 1 (Sec. 2.3)", statement="...",
                      reading=Covers(value="prf", target="sm")), ...),
    ).register()

:meth:`Check.register` registers the paper, the claims (:mod:`attnspec.verdicts.registry`) and
the command (:mod:`attnspec.theorem.registry`); the check is then its own battery
(``config_from_options`` and ``run``, :mod:`attnspec.battery`), run by
:func:`attnspec.theorem.runner.run_check`. A check always has the options ``seed`` and
``trials`` (added at their defaults when not declared) and ``jobs`` (processes).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from attnspec.options.declaration import Option
from attnspec.theorem.readings import Reading
from attnspec.theorem.registry import Command, Paper, register_command, register_paper

#: Options every check takes, added when the check does not declare them.
COMMON_OPTIONS: tuple[Option, ...] = (
    Option("trials", "int", 2000, "Monte Carlo trials per grid point, >= 2.", low=2),
    Option("seed", "seed", 0, "Seed of every random draw; recorded with the results."),
    Option("jobs", "int", 1, "Processes for the grid points (forked; the same numbers), >= 1.", low=1),
)


@dataclass(frozen=True)
class Claim:
    """One statement of the paper, and how it is read.

    Parameters
    ----------
    id : str
        ``<paper key>.<place>[.<part>]``, e.g. ``"performer.lemma1.unbiased"``.
    where : str
        The place in the paper, e.g. ``"Lemma 1 (Sec. 2.3, p. 5)"``.
    statement : str
        The statement, in words close to the paper's.
    reading : Reading or tuple of Reading
        How it is decided (:mod:`attnspec.theorem.readings`); a statement that can be read
        two ways is given both, each with its own ``name`` and verdict rows.
    hypotheses : str
        What the statement assumes, in words.
    source : str
        Where the statement comes from: ``"paper"``, or the notes on it (with page).
    label : str, optional
        A short name for one-screen tables.
    """

    id: str
    where: str
    statement: str
    reading: Reading | tuple[Reading, ...]
    hypotheses: str = ""
    source: str = "paper"
    label: str = ""

    @property
    def readings(self) -> tuple[Reading, ...]:
        """The claim's readings, one or more."""
        return self.reading if isinstance(self.reading, tuple) else (self.reading,)

    def registered(self, command: str) -> Any:
        """The claim as the claim registry holds it.

        Parameters
        ----------
        command : str
            The command that checks it.

        Returns
        -------
        attnspec.verdicts.registry.Claim
        """
        from attnspec.verdicts.registry import Claim as RegisteredClaim
        from attnspec.verdicts.registry import Reading as RegisteredReading

        hyp = f" Hypotheses: {self.hypotheses}." if self.hypotheses else ""
        readings = tuple(RegisteredReading(r.name, r.description or type(r).__name__) for r in self.readings)
        return RegisteredClaim(
            id=self.id, where=self.where, statement=self.statement + hyp, readings=readings, command=command,
            source=self.source,
        )  # fmt: skip


class CheckConfig(dict):  # type: ignore[type-arg]
    """A check's validated options; its identity (what makes two runs the same) leaves out ``jobs``."""

    def identity(self) -> dict[str, Any]:
        """The options that define the run's numbers.

        Returns
        -------
        dict
        """
        return {k: v for k, v in self.items() if k != "jobs"}


Grid = Callable[[Mapping[str, Any]], list[dict[str, Any]]]
Setup = Callable[[dict[str, Any], Any], Mapping[str, float]]
Trial = Callable[[dict[str, Any], Mapping[str, float], Any], Mapping[str, float]]


@dataclass(frozen=True)
class Check:
    """A paper's claims, checked on a grid by seeded random draws (or exact laws alone).

    Parameters
    ----------
    command : str
        The command name (``attnspec check favor``).
    paper : Paper
        The paper (registered with the check).
    claims : tuple of Claim
        The claims, each with its reading.
    options : tuple of Option
        The check's own options; ``trials``, ``seed`` and ``jobs`` are added when absent.
    grid : callable
        ``grid(options) -> list of dict``: the points, each a dict of parameters (its verdict
        rows' parameters). Default: one point, the options themselves.
    setup : callable, optional
        ``setup(point, rng) -> dict``: what is fixed at a point: numbers (exact laws, claimed
        values; tabulated and read by the claims) and arrays (an input drawn once; handed to
        every trial only).
    trial : callable, optional
        ``trial(point, instance, rng) -> dict``: the named numbers of one random draw; None for
        a check of exact laws alone.
    summary : str
        One line: what the check checks.
    validate : callable, optional
        ``validate(options)`` raises :class:`attnspec.errors.InputError` for a combination of
        options the bounds cannot express.
    look : int
        Trials per look of the sequential rule (:mod:`attnspec.theorem.sequential`).
    plotter : callable or str, optional
        Draws the figures of a saved result (``"module:function"``).
    seeds : callable, optional
        ``seeds(options, index, point) -> int``: the seed of grid point ``index``, for a check
        whose draws must keep seeds set elsewhere (a measurement other code reads, a published
        table). Default :func:`attnspec.theorem.runner.point_seed`. It must depend on the options
        and the point alone, so that forked and resumed points draw the same numbers.
    context : callable, optional
        ``context(point) -> dict``: exact values at a grid point (seeds, indices, labels: numbers
        a float would round, or no numbers at all) that its readings' hooks read as
        :attr:`~attnspec.theorem.readings.Point.context`; never tabulated or saved, so it must
        depend on the point's parameters alone (or be fixed, as in
        :func:`attnspec.theorem.measured.read_off`).
    """

    command: str
    paper: Paper
    claims: tuple[Claim, ...]
    options: tuple[Option, ...] = ()
    grid: Grid | None = None
    setup: Setup | None = None
    trial: Trial | None = None
    summary: str = ""
    validate: Callable[[Mapping[str, Any]], None] | None = None
    look: int = 500
    plotter: Callable[..., Any] | str | None = None
    seeds: Callable[[Mapping[str, Any], int, dict[str, Any]], int] | None = None
    context: Callable[[dict[str, Any]], Mapping[str, Any]] | None = None
    _declared: tuple[Option, ...] = field(default=(), init=False, repr=False)

    def __post_init__(self) -> None:
        names = {o.name for o in self.options}
        object.__setattr__(self, "_declared", (*self.options, *(o for o in COMMON_OPTIONS if o.name not in names)))
        for c in self.claims:
            if c.id.split(".", 1)[0] != self.paper.key:
                raise ValueError(f"claim id {c.id!r} must start with the paper key {self.paper.key!r}")

    @property
    def declared(self) -> tuple[Option, ...]:
        """Every option of the check: its own, then the common ones it did not declare."""
        return self._declared

    def register(self) -> Check:
        """Register the paper, the claims and the command; return the check.

        Returns
        -------
        Check
        """
        import sys

        from attnspec.verdicts import registry as claim_registry

        origin = sys._getframe(1).f_globals.get("__name__")  # the module declaring the check
        register_paper(self.paper)
        claim_registry.register(*(c.registered(self.command) for c in self.claims))
        claim_registry.register_short_names({c.id: c.label for c in self.claims if c.label})
        register_command(
            Command(
                self.command, paper=self.paper.key, battery=self, options=self.declared,
                run_arguments=("out", "resume", "csv", "plots"), plotter=self.plotter, summary=self.summary,
                origin=origin,
            )
        )  # fmt: skip
        return self

    def points(self, options: Mapping[str, Any]) -> list[dict[str, Any]]:
        """The grid at these options.

        Parameters
        ----------
        options : mapping
            The validated options.

        Returns
        -------
        list of dict
        """
        own = {o.name: options[o.name] for o in self.options if o.name in options}
        return [dict(p) for p in self.grid(options)] if self.grid is not None else [own]

    # The battery interface (attnspec.battery.run_battery).
    def config_from_options(self, options: Mapping[str, Any]) -> dict[str, Any]:
        """The validated options, as the run's config.

        Parameters
        ----------
        options : mapping
            Every declared option, type-checked, at its default when not given.

        Returns
        -------
        dict
        """
        config = CheckConfig(options)
        if self.validate is not None:
            self.validate(config)
        if not self.points(config):
            from attnspec.errors import InputError

            raise InputError(f"{self.command}: these options give an empty grid")
        return config

    def run(self, config: Mapping[str, Any], *, progress: Any = None, previous: Any = None) -> Any:
        """Run the check (:func:`attnspec.theorem.runner.run_check`).

        Parameters
        ----------
        config : mapping
            From :meth:`config_from_options`.
        progress : callable, optional
            Receives one-line messages.
        previous : dict of DataFrame, optional
            The tables of an interrupted run of the same options (``--resume``).

        Returns
        -------
        BatteryResult
        """
        from attnspec.theorem.runner import run_check

        return run_check(self, config, progress=progress, previous=previous)
