"""Where progress goes: one sink, a callable taking one line, that every long computation writes to.

``progress=`` of the Python API (``attnspec.spectrum``, ``attnspec.jl_check``, ...) and of the
batteries' ``run`` becomes that callable through :func:`progress_sink`: ``True`` is a
:class:`StreamSink` on stderr, ``False`` (or ``None``) is nothing at all, and a callable is
used as it is (the CLI's printer, a notebook's logger). Everything a run reports goes
through it: the batteries' stage messages, and the counted progress of long loops with an
ETA (:class:`Progress`), so ``progress=False`` writes nothing to stderr.

Usage (any check)::

    from attnspec.runtime.progress import Progress

    with Progress("Theorem 2", total=12_000, unit="trials", say=say) as p:
        for chunk in chunks:
            ...
            p.advance(len(chunk))

Behaviour of :class:`Progress`:

* nothing is said until the work has run for ``delay`` seconds (2 s by default): short
  work stays silent;
* a live sink (a terminal: ``say.live`` is true) gets a line at most every 0.2 s, which it
  rewrites in place (:class:`ProgressLine`): ``Theorem 2: 4,000/12,000 trials (33%), 3.1 s,
  ETA 6.2 s``; any other sink (logs, CI, a callable) at most one line per 10 s, so a log is
  not flooded;
* :func:`set_quiet` (a forked worker, whose lines would garble its parent's) or the
  environment variable ``ATTNSPEC_QUIET`` silence the counted lines, not the messages;
* the ETA is the elapsed time scaled by the remaining fraction (work units are assumed to
  cost alike); ``advance`` may be told that the total shrank (``total=``), e.g. when a
  sequential Monte Carlo stops early.

No dependency beyond the standard library: importing it is free.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable
from typing import Any, TextIO

#: A progress sink: receives one line (no newline) at a time.
Say = Callable[[str], None]

#: seconds of work before the first progress output
DELAY_SECONDS = 2.0
#: the process-wide default of ``quiet`` for counted progress (:func:`set_quiet`)
_QUIET = False


def set_quiet(quiet: bool = True) -> None:
    """Make every later :class:`Progress` of this process quiet (or not) unless told otherwise.

    Parameters
    ----------
    quiet : bool
        True: later :class:`Progress` objects made without ``quiet=`` say no counted lines
        (``ATTNSPEC_QUIET`` silences them either way); False: they say them again.
    """
    global _QUIET
    _QUIET = bool(quiet)


class ProgressLine(str):
    """A counted-progress line: a live sink replaces the previous one with it (a terminal
    rewrites its line); to any other sink it is a plain ``str``."""


class StreamSink:
    """The sink of ``progress=True``: each message on its own line of ``stream`` (stderr by
    default); on a terminal, :class:`ProgressLine` s rewrite one line in place.

    Parameters
    ----------
    stream : text stream, optional
        Where the lines are written (default ``sys.stderr``); it is live (lines rewritten in
        place) when its ``isatty()`` is true.
    """

    def __init__(self, stream: TextIO | None = None) -> None:
        self.stream = stream if stream is not None else sys.stderr
        try:
            self.live = bool(self.stream.isatty())
        except (AttributeError, ValueError):
            self.live = False
        self._open_line = False

    def __call__(self, message: str) -> None:
        if self.live and isinstance(message, ProgressLine):
            self.stream.write("\r" + message + "\x1b[K")
            self._open_line = True
        else:
            self.end_line()
            self.stream.write(message + "\n")
        self.stream.flush()

    def end_line(self) -> None:
        """End a line left open by a rewritten progress line (its last state stays visible)."""
        if self._open_line:
            self.stream.write("\n")
            self.stream.flush()
            self._open_line = False


def progress_sink(progress: bool | Say | None, *, name: str = "progress") -> Say | None:
    """``progress=`` → the sink: True → a :class:`StreamSink` on stderr; False or None →
    None (nothing is written); a callable → itself. Anything else is refused in one line.

    Parameters
    ----------
    progress : bool, callable or None
        The ``progress=`` argument as the caller passed it.
    name : str
        The argument's name, as the error message calls it.

    Returns
    -------
    callable or None
        The sink, taking one line at a time; None when nothing is to be said.

    Raises
    ------
    InputError
        ``progress`` is neither a bool, None nor a callable.
    """
    if progress is None:
        return None
    if callable(progress):
        return progress
    from attnspec.errors import InputError, check_bool

    try:
        on = check_bool(name, progress)
    except InputError:
        raise InputError(f"{name} must be True, False or a callable taking one message, got {progress!r}") from None
    return StreamSink() if on else None


def quiet_notebook_bars() -> None:
    """In a Jupyter kernel without ipywidgets, let ``tqdm.auto`` (which transformers, datasets and
    huggingface_hub import for their bars) fall back to its text bar without a ``TqdmWarning:
    IProgress not found``; with ipywidgets (the ``notebook`` extra) it draws widgets as usual.

    tqdm decides, and warns, once: when ``tqdm.autonotebook`` is first imported. Importing it
    here with that one warning silenced settles the choice before any library asks. Outside a
    kernel, or once the choice is made, this does nothing.
    """
    if "tqdm.autonotebook" in sys.modules or "ipykernel.zmqshell" not in sys.modules:
        return
    import warnings

    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="IProgress not found")
        try:
            import tqdm.auto  # noqa: F401 - imported for its choice of bar
        except ImportError:  # no tqdm: no library here draws its bars either
            pass


def _fmt_seconds(s: float) -> str:
    if s < 60:
        return f"{s:.1f} s"
    m, s = divmod(int(round(s)), 60)
    return f"{m} min {s:02d} s"


class Progress:
    """Progress of ``total`` work units with an ETA, said to a sink (see the module docstring).

    Parameters
    ----------
    label : str
        What is being done (start of every line).
    total : float
        Work units in all (> 0).
    unit : str
        Their name (``"trials"``, ``"steps"``).
    say : callable, optional
        The sink (:func:`progress_sink`); None: nothing is said.
    quiet : bool, optional
        Say nothing (default: the process-wide setting of :func:`set_quiet`, or the
        environment variable ``ATTNSPEC_QUIET``).
    delay : float, optional
        Seconds before the first line (default :data:`DELAY_SECONDS`).
    interval, sparse_interval : float
        Seconds between lines to a live sink / to any other.
    clock : callable, optional
        Time source (tests).
    at_most : bool
        ``total`` is an upper bound (sequential Monte Carlo stops once the verdicts are
        settled, often far earlier): the line says "of at most" and "at most … left" instead
        of promising an ETA the run will usually beat.
    done : float
        Units already done before this start (a resumed run): the ETA counts only the
        units done since.
    """

    def __init__(
        self,
        label: str,
        total: float,
        *,
        unit: str = "steps",
        say: Say | None = None,
        quiet: bool | None = None,
        delay: float | None = None,
        interval: float = 0.2,
        sparse_interval: float = 10.0,
        clock: Callable[[], float] = time.monotonic,
        at_most: bool = False,
        done: float = 0.0,
    ) -> None:
        self.label, self.unit, self.at_most = label, unit, at_most
        self.total = max(float(total), 1e-12)
        self.done = self._start_done = float(done)
        self.say = say
        quiet = (_QUIET if quiet is None else quiet) or os.environ.get("ATTNSPEC_QUIET", "") not in ("", "0")
        self.quiet = quiet or say is None
        self.delay = DELAY_SECONDS if delay is None else delay
        self.live = bool(getattr(say, "live", False))
        self.gap = interval if self.live else sparse_interval
        self.clock = clock
        self.start = clock()
        self._last = -1e300
        self._said = False

    # ----------------------------------------------------------------- text
    def line(self) -> ProgressLine:
        """The current progress line (without newline).

        Returns
        -------
        ProgressLine
            ``label: done/total unit (percent), elapsed`` with the ETA once any unit of
            this start is done and the work is not finished (with ``at_most``: "of at
            most" and "at most … left").
        """
        elapsed = self.clock() - self.start
        frac = min(1.0, self.done / self.total)
        # the rate of this start only: units a resumed run had done before cost nothing now
        new = min(1.0, (self.done - self._start_done) / max(self.total - self._start_done, 1e-12))
        left = elapsed * (1 - new) / new if 0 < new < 1 else None
        total = int(round(self.total))
        if self.at_most:
            text = (
                f"{self.label}: {int(round(self.done)):,} of at most {total:,} {self.unit} ({frac:.0%}), "
                f"{_fmt_seconds(elapsed)}"
            )
            if left is not None:
                text += f", at most {_fmt_seconds(left)} left (stops once settled)"
            return ProgressLine(text)
        text = f"{self.label}: {int(round(self.done)):,}/{total:,} {self.unit} ({frac:.0%}), {_fmt_seconds(elapsed)}"
        if left is not None:
            text += f", ETA {_fmt_seconds(left)}"
        return ProgressLine(text)

    # ----------------------------------------------------------------- updates
    def advance(self, units: float = 1.0, *, total: float | None = None) -> None:
        """Count ``units`` more done (and, optionally, a new total); say the line if it is time.

        Parameters
        ----------
        units : float
            Work units done since the last call.
        total : float, optional
            The total from now on (e.g. smaller once a sequential Monte Carlo stops early);
            None keeps it.
        """
        self.done += units
        if total is not None:
            self.total = max(float(total), 1e-12)
        self._maybe_say()

    def _maybe_say(self, force: bool = False) -> None:
        if self.quiet:
            return
        now = self.clock()
        if not force and (now - self.start < self.delay or now - self._last < self.gap):
            return
        self._last = now
        self._said = True
        self.say(self.line())

    def close(self) -> None:
        """The last state, once more, to a live sink that was shown any (it stays visible)."""
        if self.quiet or not self._said or not self.live:
            return
        self.done = min(self.done, self.total)
        self._maybe_say(force=True)
        end = getattr(self.say, "end_line", None)
        if end is not None:
            end()

    def __enter__(self) -> Progress:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()
