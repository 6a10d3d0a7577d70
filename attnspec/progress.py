"""A small, generic progress reporter with an ETA, on stderr, for work that takes more than 2 s.

Usage (any check)::

    from attnspec.progress import Progress

    with Progress("Theorem 2", total=12_000, unit="trials") as p:
        for chunk in chunks:
            ...
            p.advance(len(chunk))

Behaviour:

* nothing is printed until the work has run for ``delay`` seconds (2 s by default): short
  work stays silent;
* on a terminal, one line is rewritten in place (``\\r``) at most every ``interval`` seconds:
  ``Theorem 2: 4,000/12,000 trials (33%), 3.1 s, ETA 6.2 s``;
* when the stream is not a terminal (logs, CI), sparse whole lines instead: at most one per
  ``sparse_interval`` seconds (10 s by default), so a log is not flooded;
* ``quiet=True`` (the CLI's ``-q``) prints nothing;
* the ETA is the elapsed time scaled by the remaining fraction (work units are assumed to
  cost alike); ``advance`` may be told that the total shrank (``total=``), e.g. when a
  sequential Monte Carlo stops early.

No dependency beyond the standard library: importing it is free.
"""

from __future__ import annotations

import os
import sys
import time
from typing import TextIO

#: seconds of work before the first progress output
DELAY_SECONDS = 2.0
#: the process-wide default of ``quiet`` (the CLI's ``-q`` sets it with :func:`set_quiet`)
_QUIET = False


def set_quiet(quiet: bool = True) -> None:
    """Make every later :class:`Progress` quiet (or not) unless told otherwise."""
    global _QUIET
    _QUIET = bool(quiet)


def _fmt_seconds(s: float) -> str:
    if s < 60:
        return f"{s:.1f} s"
    m, s = divmod(int(round(s)), 60)
    return f"{m} min {s:02d} s"


class Progress:
    """Progress of ``total`` work units with an ETA (see the module docstring).

    Parameters
    ----------
    label : str
        What is being done (start of every line).
    total : float
        Work units in all (> 0).
    unit : str
        Their name (``"trials"``, ``"steps"``).
    stream : text stream, optional
        Default ``sys.stderr``.
    quiet : bool, optional
        Print nothing (default: the process-wide setting of :func:`set_quiet`, or the
        environment variable ``ATTNSPEC_QUIET``).
    delay : float
        Seconds before the first output.
    interval, sparse_interval : float
        Seconds between updates on a terminal / in a non-terminal stream.
    clock : callable, optional
        Time source (tests).
    at_most : bool
        ``total`` is an upper bound (sequential Monte Carlo stops once the verdicts are
        settled, often far earlier): the line says "of at most" and "at most … left" instead
        of promising an ETA the run will usually beat.
    """

    def __init__(self, label: str, total: float, *, unit: str = "steps", stream: TextIO | None = None,
                 quiet: bool | None = None, delay: float = DELAY_SECONDS, interval: float = 0.2,
                 sparse_interval: float = 10.0, clock=time.monotonic,  # noqa: ANN001 - a callable
                 at_most: bool = False) -> None:
        self.label, self.unit, self.at_most = label, unit, at_most
        self.total = max(float(total), 1e-12)
        self.done = 0.0
        self.stream = stream if stream is not None else sys.stderr
        self.quiet = (_QUIET if quiet is None else quiet) or os.environ.get("ATTNSPEC_QUIET", "") not in ("", "0")
        self.delay, self.interval, self.sparse_interval = delay, interval, sparse_interval
        self.clock = clock
        self.start = clock()
        self._last = -1e300
        self._open_line = False
        try:
            self.tty = bool(self.stream.isatty())
        except (AttributeError, ValueError):
            self.tty = False

    # ----------------------------------------------------------------- text
    def line(self) -> str:
        """The current progress line (without newline)."""
        elapsed = self.clock() - self.start
        frac = min(1.0, self.done / self.total)
        total = int(round(self.total))
        if self.at_most:
            text = (f"{self.label}: {int(round(self.done)):,} of at most {total:,} {self.unit} ({frac:.0%}), "
                    f"{_fmt_seconds(elapsed)}")
            if 0 < frac < 1:
                text += f", at most {_fmt_seconds(elapsed * (1 - frac) / frac)} left (stops once settled)"
            return text
        text = f"{self.label}: {int(round(self.done)):,}/{total:,} {self.unit} ({frac:.0%}), {_fmt_seconds(elapsed)}"
        if 0 < frac < 1:
            text += f", ETA {_fmt_seconds(elapsed * (1 - frac) / frac)}"
        return text

    # ----------------------------------------------------------------- updates
    def advance(self, units: float = 1.0, *, total: float | None = None) -> None:
        """Count ``units`` more done (and, optionally, a new total); print if it is time."""
        self.done += units
        if total is not None:
            self.total = max(float(total), 1e-12)
        self._maybe_print()

    def _maybe_print(self, force: bool = False) -> None:
        if self.quiet:
            return
        now = self.clock()
        if now - self.start < self.delay and not force:
            return
        gap = self.interval if self.tty else self.sparse_interval
        if not force and now - self._last < gap:
            return
        self._last = now
        if self.tty:
            self.stream.write("\r" + self.line() + "\x1b[K")
            self._open_line = True
        else:
            self.stream.write(self.line() + "\n")
        self.stream.flush()

    def close(self) -> None:
        """End the line on a terminal (the last state stays visible), if anything was printed."""
        if self.quiet:
            return
        if self._open_line:
            self.done = min(self.done, self.total)
            self.stream.write("\r" + self.line() + "\x1b[K\n")
            self.stream.flush()
            self._open_line = False

    def __enter__(self) -> Progress:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
