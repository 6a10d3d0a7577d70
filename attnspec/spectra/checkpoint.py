"""The checkpoint ``state.npz``: write, verify (digest, structure, identity), read.

Everything a resume or a merge needs (the aggregate, how many and which inputs it covers,
the run's identity) goes into this one atomic file with a digest, so the aggregate and the
record of what it covers can never disagree after an interruption.

:func:`save_state` / :func:`load_state` hold the accumulator and any extra arrays;
:func:`write_state` / :func:`read_state` add the run's record (:class:`RunState`: identity,
which inputs of the seeded selection it covers, shards).
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from attnspec.errors import InputError, ResultsError
from attnspec.spectra.aggregate import SpectrumAccumulator

#: Name of the digest entry stored inside every state file.
DIGEST_KEY = "digest"


def state_digest(arrays: dict[str, np.ndarray]) -> str:
    """SHA-256 over every array of a state (name, dtype, shape and bytes), except the digest.

    Generic on purpose: whatever arrays the accumulator or the run adds to the state are
    covered without listing them here.

    Parameters
    ----------
    arrays : dict of str to numpy.ndarray
        The state's arrays (a ``digest`` entry is left out).

    Returns
    -------
    str
        The hex digest.
    """
    import hashlib

    h = hashlib.sha256()
    for name in sorted(arrays):
        if name == DIGEST_KEY:
            continue
        a = np.ascontiguousarray(np.asarray(arrays[name]))
        h.update(f"{name}\0{a.dtype.str}\0{a.shape}\0".encode())
        h.update(a.tobytes())
    return h.hexdigest()


def save_state(path: Path, acc: SpectrumAccumulator, extra: dict[str, np.ndarray] | None = None) -> None:
    """Write the accumulator and ``extra`` arrays to ``path`` as ONE atomic .npz with a digest.

    Everything a resume or a merge needs (the aggregate, how many and which inputs it
    covers, the run's identity) goes into this one file, so the aggregate and the record
    of what it covers can never disagree after an interruption.

    Parameters
    ----------
    path : Path
        The ``state.npz`` file.
    acc : SpectrumAccumulator
        The aggregate.
    extra : dict of str to numpy.ndarray, optional
        Further arrays stored beside it (``inputs_done``, ``identity``, ...).
    """
    from attnspec.storage.results import atomic_path

    arrays = {**acc.state(), **{k: np.asarray(v) for k, v in (extra or {}).items()}}
    clash = set(acc.state()) & set(extra or {})
    if clash or DIGEST_KEY in arrays:
        raise InputError(f"state entries {sorted(clash | ({DIGEST_KEY} & set(arrays)))} are reserved")
    arrays[DIGEST_KEY] = np.asarray(state_digest(arrays))
    with atomic_path(Path(path)) as tmp:
        with open(tmp, "wb") as f:  # a file object: np.savez would append ".npz" to a name
            np.savez(f, **arrays)
            f.flush()
            os.fsync(f.fileno())


def read_state_arrays(path: Path) -> dict[str, np.ndarray]:
    """Every array of the state file at ``path``, digest verified; :class:`ResultsError` otherwise.

    Parameters
    ----------
    path : Path
        A ``state.npz`` file.

    Returns
    -------
    dict of str to numpy.ndarray
    """
    path = Path(path)
    if not path.is_file():
        raise ResultsError(f"{path.parent} has no aggregate state ({path.name})")
    try:
        with np.load(path, allow_pickle=False) as z:
            state = {k: z[k] for k in z.files}
    except Exception as e:  # BadZipFile, EOFError, zlib.error, ValueError, OSError: all mean "damaged"
        reason = (str(e).splitlines() or [""])[0] or type(e).__name__
        raise ResultsError(f"checkpoint {path} is unreadable (truncated or not a state file): {reason}") from None
    if DIGEST_KEY not in state:
        raise ResultsError(
            f"checkpoint {path} fails the digest check: it has no digest (written by an older "
            "attnspec, or not a state file), so it cannot be verified; recompute with --overwrite"
        )
    if str(state[DIGEST_KEY]) != state_digest(state):
        raise ResultsError(
            f"checkpoint {path} fails the digest check: its contents were altered or damaged after it was written"
        )
    return state


def load_state(path: Path, *, inputs_done: int | None = None) -> tuple[SpectrumAccumulator, dict[str, np.ndarray]]:
    """Read and verify a state written by :func:`save_state`.

    Checks, in order: readable .npz; digest; every accumulator array present with the
    right shape; :meth:`SpectrumAccumulator.verify` against the stored ``inputs_done``
    (or the ``inputs_done`` given). Any failure raises :class:`ResultsError` naming the
    file and the failed check; nothing is modified.

    Parameters
    ----------
    path : Path
        A ``state.npz`` file.
    inputs_done : int, optional
        The inputs the aggregate must hold (default: the stored ``inputs_done``).

    Returns
    -------
    (SpectrumAccumulator, dict)
        The aggregate, and the other arrays of the state (``inputs_done``, ...).
    """
    path = Path(path)
    state = read_state_arrays(path)
    try:
        acc = SpectrumAccumulator.from_state(state)
    except ResultsError as e:
        raise ResultsError(f"checkpoint {path} fails the structure check: {e}") from None
    own = set(acc.state())
    extra = {k: v for k, v in state.items() if k not in own and k != DIGEST_KEY}
    if inputs_done is None and "inputs_done" in extra:
        inputs_done = int(extra["inputs_done"])
    try:
        acc.verify(inputs_done)
    except ResultsError as e:
        raise ResultsError(f"checkpoint {path} fails the {e}") from None
    return acc, extra


STATE_FILE = "state.npz"


@dataclass
class RunState:
    """A verified ``state.npz``: the aggregate and everything needed to trust it.

    ``covered`` holds the indices, in the seeded selection of the whole run, of the
    inputs the aggregate contains (shard i of N covers i, i + N, i + 2N, ...).
    """

    path: Path
    acc: SpectrumAccumulator
    identity: dict[str, Any]
    inputs_done: int
    inputs_total: int  # inputs this run (or shard) has to cover
    selection_total: int  # inputs in the whole run's selection (all shards)
    covered: np.ndarray  # (inputs_done,) int64
    wall_time_s: float
    missing_shards: list[int]  # shards absent from a partial merge (empty otherwise)
    merge_of: int  # N when this state is a merge of N shards, 0 for a run
    inputs_sha256: str | None = None  # digest of the whole run's selection (None: written before it was kept)
    content: dict[str, Any] | None = None  # what it was computed on (attnspec.spectra.content); None: not recorded

    @property
    def complete(self) -> bool:
        return self.inputs_done == self.inputs_total and not self.missing_shards


def shard_indices(shard: tuple[int, int] | None, count: int) -> np.ndarray:
    """Indices in the whole selection of a shard's first ``count`` inputs, shape (count,).

    Parameters
    ----------
    shard : (int, int) or None
        (index i, count N) of the shard; None: the whole run.
    count : int
        How many of its inputs.

    Returns
    -------
    numpy.ndarray of int64, shape (count,)
        i, i + N, i + 2N, ...
    """
    i, n = shard if shard is not None else (0, 1)
    return i + n * np.arange(count, dtype=np.int64)


def write_state(
    path: Path,
    acc: SpectrumAccumulator,
    *,
    identity: dict[str, Any],
    inputs_done: int,
    inputs_total: int,
    selection_total: int,
    covered: np.ndarray,
    wall_time_s: float,
    missing_shards: list[int] = (),
    merge_of: int = 0,
    inputs_sha256: str | None = None,
    content: dict[str, Any] | None = None,
) -> None:
    """Write the aggregate and the record of what it covers as one atomic, digested file.

    Parameters
    ----------
    path : Path
        The ``state.npz`` file.
    acc : SpectrumAccumulator
        The aggregate.
    identity : dict
        The run's identity (stored as JSON).
    inputs_done : int
        Inputs the aggregate holds.
    inputs_total : int
        Inputs this run (or shard) has to cover.
    selection_total : int
        Inputs in the whole run's selection (all shards).
    covered : numpy.ndarray of int, shape (inputs_done,)
        The indices, in the whole selection, of the inputs the aggregate holds.
    wall_time_s : float
        Seconds spent so far.
    missing_shards : list of int
        Shards absent from a partial merge.
    merge_of : int
        N when the state merges N shards; 0 for a run.
    inputs_sha256 : str, optional
        Digest of the whole run's selection.
    content : dict, optional
        What the run was computed on (:mod:`attnspec.spectra.content`).
    """
    save_state(
        path,
        acc,
        {
            "identity": np.asarray(json.dumps(identity, sort_keys=True)),
            "inputs_done": np.asarray(inputs_done, dtype=np.int64),
            "inputs_total": np.asarray(inputs_total, dtype=np.int64),
            "selection_total": np.asarray(selection_total, dtype=np.int64),
            "covered": np.asarray(covered, dtype=np.int64),
            "wall_time_s": np.asarray(float(wall_time_s)),
            "missing_shards": np.asarray(list(missing_shards), dtype=np.int64),
            "merge_of": np.asarray(merge_of, dtype=np.int64),
            **({"inputs_sha256": np.asarray(inputs_sha256)} if inputs_sha256 else {}),
            **({"content": np.asarray(json.dumps(content, sort_keys=True))} if content else {}),
        },
    )


def read_state(path: Path) -> RunState:
    """Load and verify ``path``: readable, digest, structure, statistics, coverage.

    Raises :class:`ResultsError` naming the file and the failed check; changes nothing.

    Parameters
    ----------
    path : Path
        A ``state.npz`` file written by :func:`write_state`.

    Returns
    -------
    RunState
    """
    path = Path(path)
    acc, extra = load_state(path)  # readable, digest, structure, counts vs inputs_done, ranges
    needed = ("identity", "inputs_done", "inputs_total", "selection_total", "covered")
    missing = [k for k in needed if k not in extra]
    if missing:
        raise ResultsError(
            f"checkpoint {path} fails the structure check: no {', '.join(missing)} "
            "(written by an older attnspec?); recompute with --overwrite"
        )
    try:
        identity = json.loads(str(extra["identity"]))
    except json.JSONDecodeError:
        raise ResultsError(f"checkpoint {path} fails the identity check: its identity is not JSON") from None
    done, total, sel = (int(extra[k]) for k in ("inputs_done", "inputs_total", "selection_total"))
    covered = np.asarray(extra["covered"], dtype=np.int64).ravel()
    if len(covered) != done:
        raise ResultsError(
            f"checkpoint {path} fails the coverage check: it records {done} inputs done but covers {len(covered)}"
        )
    if not 0 <= done <= total <= sel:
        raise ResultsError(f"checkpoint {path} fails the coverage check: {done} done of {total} (selection {sel})")
    if len(covered) and (len(np.unique(covered)) != len(covered) or covered.min() < 0 or covered.max() >= sel):
        raise ResultsError(
            f"checkpoint {path} fails the coverage check: input indices repeated or outside 0..{sel - 1}"
        )
    missing_shards = [int(v) for v in np.asarray(extra.get("missing_shards", np.zeros(0))).ravel()]
    merge_of = int(extra.get("merge_of", 0))
    if not merge_of:  # a run (or shard) processes its inputs in order: it covers a prefix of them
        shard = identity.get("shard")
        try:
            pair = None if shard is None else tuple(int(v) for v in str(shard).split("/"))
        except ValueError:
            raise ResultsError(
                f"checkpoint {path} fails the identity check: shard {shard!r} is not INDEX/COUNT"
            ) from None
        if not np.array_equal(covered, shard_indices(pair, done)):
            raise ResultsError(
                f"checkpoint {path} fails the coverage check: the inputs it records are not the first "
                f"{done} of its {'shard ' + str(shard) if shard else 'run'}"
            )
    digest = str(extra["inputs_sha256"]) if "inputs_sha256" in extra else None
    content = None
    if "content" in extra:
        try:
            content = json.loads(str(extra["content"]))
        except (ValueError, RecursionError):
            content = None
        if not isinstance(content, dict):
            raise ResultsError(f"checkpoint {path} fails the identity check: its content record is not a JSON object")
    return RunState(
        path,
        acc,
        identity,
        done,
        total,
        sel,
        covered,
        float(extra.get("wall_time_s", 0.0)),
        missing_shards,
        merge_of,
        digest,
        content,
    )
