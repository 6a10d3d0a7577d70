"""The claim registry: every statement attnspec checks, as data.

A *claim* is one statement of one paper (a lemma, a theorem, an equation, a printed
formula). It has a stable id (``linformer.thm1.eq3``, ``osa.thm31.eq10``,
``expressivity.thm1.onsupport``), the paper and the place in it, the statement in words,
the *readings* under which attnspec checks it (a statement that can be read two ways is
checked both ways, each reading a separate verdict row), and the command that checks it.

Verdict rows (:class:`attnspec.verdicts.classify.VerdictRow`), the tests, ``--json`` and the report
key on ``(claim id, reading)``, never on prose.

Each paper's package registers its claims in its own ``claims`` module
(``attnspec/theory/<paper>/claims.py``), so a newcomer who knows the claim finds the
module in one step; :func:`catalogue` imports those modules on first use.

Example
-------
>>> from attnspec import claim_registry
>>> c = claim_registry.get("linformer.thm1.eq3")  # doctest: +SKIP
>>> [r.name for r in c.readings]                  # doctest: +SKIP
['relative', 'additive']
"""

from __future__ import annotations

import difflib
import importlib
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from attnspec.theorem.registry import RegistryView


def _citations() -> dict[str, str]:
    from attnspec.theorem.registry import papers

    return {key: paper.citation() for key, paper in papers().items()}


def _claim_modules() -> dict[str, str]:
    from attnspec.theorem.registry import commands

    found: dict[str, str] = {}
    for c in commands().values():
        if c.claims_module is not None:
            found.setdefault(c.paper, c.claims_module)
    return found


#: The papers, by the short key used as the first part of every claim id → the one citation
#: (:class:`attnspec.theorem.registry.Paper`): every registered paper, built-in or installed.
PAPERS: Mapping[str, str] = RegistryView(_citations)

#: The modules that register each paper's claims (imported lazily by :func:`catalogue`); a
#: plug-in whose module registers its claims on import has none.
CATALOGUE_MODULES: Mapping[str, str] = RegistryView(_claim_modules)

_ID = re.compile(r"^[a-z]+(\.[a-z0-9_]+)+$")
_READING = re.compile(r"^[a-z0-9][a-z0-9_\-]*$")


@dataclass(frozen=True)
class Reading:
    """One way of reading a claim, checked as its own verdict row.

    Parameters
    ----------
    name : str
        Short stable key, lower case (``"relative"``, ``"additive"``, ``"as-stated"``).
    description : str
        What exactly is tested under this reading, in one or two sentences.
    """

    name: str
    description: str


@dataclass(frozen=True)
class Claim:
    """One checkable statement of a paper.

    Parameters
    ----------
    id : str
        Stable dotted id, ``<paper>.<place>[.<part>]``, e.g. ``"linformer.thm1.eq3"``.
    where : str
        The place in the paper, e.g. ``"Theorem 1, eq. (3)"``.
    statement : str
        The statement, in words close to the paper's.
    readings : tuple of Reading
        The readings under which it is checked (at least one).
    command : str
        The attnspec command whose output carries its rows, e.g. ``"jl-check"``.
    notes : str, optional
        The module that checks it.
    paper_params : str, optional
        The parameters the paper itself fixes for this claim, in words (e.g. ``"QR or cubic
        Newton–Schulz with K = 6 (Sec. 5)"``). Empty when the paper fixes none: the rows a
        check marks ``at_paper_params`` are then the claim's own setting (a theorem's k) at
        attnspec's default parameters, and are called so.
    source : str, optional
        Where the statement comes from: ``"paper"`` (the paper itself, the default) or the
        notes on it with a page (``"notes p. 3"``); summaries count failures per source.
    """

    id: str
    where: str
    statement: str
    readings: tuple[Reading, ...]
    command: str
    notes: str = field(default="")
    paper_params: str = field(default="")
    source: str = field(default="paper")

    def __post_init__(self) -> None:
        if not _ID.match(self.id):
            raise ValueError(f"claim id {self.id!r} must be dotted lower-case words, e.g. 'linformer.thm1.eq3'")
        if self.paper not in PAPERS:
            raise ValueError(f"claim id {self.id!r} must start with a paper key: one of {sorted(PAPERS)}")
        if self.source != "paper" and not self.source.startswith("notes"):
            raise ValueError(f"claim {self.id!r}: source must be 'paper' or 'notes p. N', got {self.source!r}")
        if not self.readings:
            raise ValueError(f"claim {self.id!r} needs at least one reading")
        names = [r.name for r in self.readings]
        if len(set(names)) != len(names):
            raise ValueError(f"claim {self.id!r} has duplicate readings: {names}")
        for n in names:
            if not _READING.match(n):
                raise ValueError(f"reading {n!r} of {self.id!r} must be a lower-case key like 'as-stated'")

    @property
    def paper(self) -> str:
        """The paper key (the first part of the id)."""
        return self.id.split(".", 1)[0]

    @property
    def name(self) -> str:
        """A short human name from :attr:`where`: ``"Theorem 1, eq. (3); Appendix A, eq.
        (20)"`` → ``"Theorem 1 (eq. 3)"`` (its first place; a list of equations is kept as
        printed)."""
        first = self.where.split(";")[0].strip()
        m = re.match(r"^(.*?),\s*(eqs?\.)\s*\((\w+(?:\.\w+)?)\)(?:\s*[–-]\s*\((\w+)\))?(.*)$", first)
        if m and not m.group(5).lstrip().startswith(","):  # "eqs. (8), (22), (24)": a list, keep as printed
            head, eq, a, b, rest = m.groups()
            return f"{head} ({eq} {a}{'–' + b if b else ''}){rest}"
        return first

    @property
    def label(self) -> str:
        """The name a one-screen table shows: a short name registered with
        :func:`register_short_names`, else :attr:`name`."""
        return _SHORT.get(self.id, self.name)

    def reading(self, name: str) -> Reading:
        """The reading called ``name``; ValueError naming the allowed ones otherwise.

        Parameters
        ----------
        name : str
            A reading's key, e.g. ``"as-stated"``.

        Returns
        -------
        Reading
        """
        for r in self.readings:
            if r.name == name:
                return r
        raise ValueError(f"claim {self.id!r} has no reading {name!r}; readings: {[r.name for r in self.readings]}")


_REGISTRY: dict[str, Claim] = {}
#: claim id -> a short name for one-screen tables (:attr:`Claim.label`), where :attr:`Claim.name` is long
_SHORT: dict[str, str] = {}


def register_short_names(names: dict[str, str]) -> None:
    """Short names for claims whose :attr:`Claim.name` does not fit a table column.

    Parameters
    ----------
    names : dict of str to str
        Claim id → the short name :attr:`Claim.label` gives (a later name for an id replaces
        an earlier one).
    """
    _SHORT.update(names)


def register(*claims: Claim) -> None:
    """Add claims to the registry. Registering the same id twice with different content is an error.

    Parameters
    ----------
    *claims : Claim
        The claims to add; one identical to a registered claim is accepted again.

    Raises
    ------
    ValueError
        An id already registered with different content.
    """
    for c in claims:
        old = _REGISTRY.get(c.id)
        if old is not None and old != c:
            raise ValueError(f"claim id {c.id!r} is registered twice with different content")
        _REGISTRY[c.id] = c


def _load(papers: Iterable[str] | None = None) -> None:
    modules = dict(CATALOGUE_MODULES)  # loads the built-in and installed registrations first
    for paper in papers if papers is not None else modules:
        module = modules.get(paper)
        if module is None:  # a plug-in's claims were registered when its module was imported
            continue
        try:
            importlib.import_module(module)
        except ModuleNotFoundError as exc:
            # Only a missing catalogue module itself is tolerated (a paper package not built
            # yet); an import error inside it is a bug and propagates.
            if exc.name != module and not module.startswith(f"{exc.name}."):
                raise


def catalogue(paper: str | None = None) -> list[Claim]:
    """Every registered claim (of one paper, if given), sorted by id.

    Parameters
    ----------
    paper : str, optional
        A key of :data:`PAPERS`.

    Returns
    -------
    list of Claim
    """
    if paper is not None and paper not in PAPERS:
        raise ValueError(f"paper must be one of {sorted(PAPERS)}, got {paper!r}")
    _load([paper] if paper else None)
    return sorted((c for c in _REGISTRY.values() if paper is None or c.paper == paper), key=lambda c: c.id)


def check_paper(paper: str | None) -> str | None:
    """``paper`` if it is None or a key of :data:`PAPERS`, else the CLI's one-line error.

    Parameters
    ----------
    paper : str or None
        The value of ``--paper`` (``paper=``).

    Returns
    -------
    str or None
        ``paper``, unchanged.

    Raises
    ------
    InputError
        ``paper`` is not a key of :data:`PAPERS` (``--paper must be one of linformer, osa, ...``).
    """
    if paper is not None and paper not in PAPERS:
        from attnspec.errors import InputError

        raise InputError(f"--paper must be one of {', '.join(PAPERS)}, got {paper!r}")
    return paper


def catalogue_frame(paper: str | None = None) -> Any:
    """The catalogue as a DataFrame, one row per claim, sorted by id: ``id, paper, name``
    (e.g. "Theorem 1 (eq. 3)"), ``where, statement, readings`` (their names, in order),
    ``reading_descriptions`` (name → what is tested), ``command, notes``.

    This is ``attnspec.claims(paper=None)``.

    Parameters
    ----------
    paper : str, optional
        Only this paper's claims: a key of :data:`PAPERS` (``"linformer"``, ``"osa"``,
        ``"expressivity"``). Default: every paper.

    Returns
    -------
    pandas.DataFrame
        One row per claim, with the columns above.

    Raises
    ------
    InputError
        ``paper`` is not a key of :data:`PAPERS`.
    """
    import pandas as pd

    found = catalogue(check_paper(paper))
    cols = ["id", "paper", "name", "where", "statement", "readings", "reading_descriptions", "command", "notes"]
    return pd.DataFrame.from_records(
        [
            {
                "id": c.id,
                "paper": c.paper,
                "name": c.name,
                "where": c.where,
                "statement": c.statement,
                "readings": [r.name for r in c.readings],
                "reading_descriptions": {r.name: r.description for r in c.readings},
                "command": c.command,
                "notes": c.notes,
            }
            for c in found
        ],
        columns=cols,
    )


def get(claim_id: str) -> Claim:
    """The claim with this id; ValueError with the nearest ids if there is none.

    Parameters
    ----------
    claim_id : str
        A registered claim id, e.g. ``"linformer.thm1.eq3"``; its paper's catalogue is
        loaded first when needed.

    Returns
    -------
    Claim
    """
    if claim_id not in _REGISTRY:
        paper = claim_id.split(".", 1)[0]
        _load([paper] if paper in PAPERS else None)
    try:
        return _REGISTRY[claim_id]
    except KeyError:
        close = difflib.get_close_matches(claim_id, list(_REGISTRY), n=3)
        hint = f"; did you mean {', '.join(close)}?" if close else "; `attnspec claims` lists them"
        raise ValueError(f"unknown claim id {claim_id!r}{hint}") from None


def check_rows(rows: Iterable[object]) -> None:
    """Raise ValueError unless every row names a registered claim and one of its readings.

    Batteries call this on their output, so a typo in an id or a reading cannot reach a table.

    Parameters
    ----------
    rows : iterable of VerdictRow
        :class:`attnspec.verdicts.classify.VerdictRow` objects, or anything with ``claim`` and
        ``reading`` attributes.
    """
    for r in rows:
        get(r.claim).reading(r.reading)  # type: ignore[attr-defined]
