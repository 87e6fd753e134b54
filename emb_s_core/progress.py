"""Progress of long steps, in honest units: ``progress(stage, fraction)`` callbacks, where ``stage`` names what is
counted ("embedding 4,858 documents (st:all-MiniLM-L6-v2)", "ranking 3,000 (rung, query) pairs").

Why a module: the engine reports, the CLI draws a bar in those units (done/total, per second, ETA) on a terminal and
:class:`ProgressLines` elsewhere, and the dashboard shows the same :class:`Meter` text for the step in progress; the
stage format is written and read here only. Every step that can take more than a couple of
seconds reports fraction 0.0 before it starts (model loading, the first embedding batch), so a bar appears at once.
"""
from __future__ import annotations

import re
import threading
import time
from typing import Callable

Progress = Callable[[str, float], None]
_COUNTED = re.compile(r"^(?P<verb>\S+) (?P<n>\d[\d,]*) (?P<unit>\(rung, query\) pairs|\S+)")


def counted(verb: str, n: int, unit: str, detail: str | None = None) -> str:
    """``counted("embedding", 4858, "documents", "minilm")`` → ``"embedding 4,858 documents (minilm)"``."""
    return f"{verb} {n:,} {unit}" + (f" ({detail})" if detail else "")


def units(stage: str) -> tuple[int, str] | None:
    """(total, unit) of a stage made by :func:`counted`, also when a caller prefixed it ("evaluating bm25: ranking
    3,000 (rung, query) pairs"); None for a stage without a count ("loading ...")."""
    m = _COUNTED.match(stage.rsplit(": ", 1)[-1])
    return (int(m.group("n").replace(",", "")), m.group("unit")) if m else None


def noop(stage: str, fraction: float) -> None:
    """The default callback: report nothing."""
    return None


def duration(seconds: float) -> str:
    """``duration(77)`` → ``"1 min 17 s"``: whole seconds under a minute, then minutes, then hours."""
    s = max(0, int(round(seconds)))
    if s < 60:
        return f"{s} s"
    if s < 3600:
        return f"{s // 60} min {s % 60} s" if s % 60 else f"{s // 60} min"
    return f"{s // 3600} h {s % 3600 // 60} min"


class Meter:
    """Rate, ETA and elapsed time of the CURRENT stage from its ``progress(stage, fraction)`` reports.

    A stage starts when its text first changes; its rate is measured from its first report with work done to its
    latest one (so loading a model before the first batch does not count as slowness), in the stage's own units
    when :func:`counted` made it. ``clock`` is injectable so tests need not sleep.
    """

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self.clock = clock
        self.stage: str | None = None
        self.fraction = 0.0
        self.started = clock()
        self._first: tuple[float, float] | None = None  # (time, fraction) of the stage's first report with work done
        self._last: tuple[float, float] | None = None

    def update(self, stage: str, fraction: float) -> bool:
        """Record one report; True when it starts a new stage."""
        now = self.clock()
        new = stage != self.stage
        if new:
            self.stage, self.started, self._first, self._last = stage, now, None, None
        self.fraction = min(max(float(fraction), 0.0), 1.0)
        if self.fraction > 0.0:
            if self._first is None:
                self._first = (now, self.fraction)
            self._last = (now, self.fraction)
        return new

    @property
    def elapsed(self) -> float:
        return self.clock() - self.started

    def rate(self) -> float | None:
        """Fraction per second of this stage, or None before two reports with work done."""
        if self._first is None or self._last is None or self._last[0] <= self._first[0]:
            return None
        return (self._last[1] - self._first[1]) / (self._last[0] - self._first[0]) or None

    def eta(self) -> float | None:
        """Seconds left in this stage at the measured rate (None while it is unknown)."""
        rate = self.rate()
        if rate is None or self._last is None:
            return None
        return max(0.0, (1.0 - self.fraction) / rate - (self.clock() - self._last[0]))

    def describe(self) -> str:
        """``"1,200 of 4,659 documents, 45.2 documents/s, about 1 min 17 s left, 27 s in this step"``."""
        if self.stage is None:
            return ""
        count = units(self.stage)
        rate, eta = self.rate(), self.eta()
        if count:
            total, unit = count
            parts = [f"{round(self.fraction * total):,} of {total:,} {unit}"]
            if rate is not None:
                parts.append(f"{rate * total:,.1f} {unit}/s")
        else:
            parts = [f"{self.fraction:.0%}"]
        parts.append("rate not measured yet" if rate is None and self.fraction < 1.0 else
                     "done" if self.fraction >= 1.0 else f"about {duration(eta or 0)} left")
        parts.append(f"{duration(self.elapsed)} in this step")
        return ", ".join(parts)


class ProgressLines:
    """``progress(stage, fraction)`` as plain lines for a log (stderr not a terminal: CI, ``nohup``, ``> log``).

    One line every ``interval`` seconds while work runs (at a report or at :meth:`tick` — the CLI also calls it from
    a timer, so a step that reports nothing for minutes, such as loading a model, still shows life), and one when a
    stage that was shown ends; each names the stage with done/total in its units, rate, ETA and elapsed
    (:class:`Meter`). A command that ends (or fails) within the first interval prints nothing, so an error stays one
    line.
    """

    def __init__(self, write: Callable[[str], None], interval: float = 10.0,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.write = write
        self.interval = interval
        self.meter = Meter(clock)
        self.clock = clock
        self._printed = clock()
        self._shown = False  # a line of the current stage was written
        self._ended = True
        self._lock = threading.Lock()

    def __call__(self, stage: str, fraction: float) -> None:
        with self._lock:
            if self.meter.update(stage, fraction):
                self._shown, self._ended = False, False
            if self.meter.fraction >= 1.0 and not self._ended:
                self._ended = True
                if self._shown:
                    self._line()
                return
            self._tick()

    def tick(self) -> None:
        """Write the current stage's line if ``interval`` seconds passed since the last line."""
        with self._lock:
            self._tick()

    def _tick(self) -> None:
        if not self._ended and self.clock() - self._printed >= self.interval:
            self._line()

    def _line(self) -> None:
        self._printed, self._shown = self.clock(), True
        self.write(f"{self.meter.stage}: {self.meter.describe()}")
