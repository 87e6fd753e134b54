"""Background jobs of the dashboard's server process (the demo build): they outlive the page run, the browser tab
and reruns, and report their stage and fraction to whoever looks.

Why: a build that runs in a page's script thread stops when the tab closes and freezes the page meanwhile. A job
here is a daemon thread of the Streamlit server process with a small shared record; pages only start jobs and read
the record (``stage``, ``fraction``, ``error``, and ``meter``: the current step's done/total, rate, ETA and elapsed
time, ``emb_s_core.progress.Meter``), and the work itself stays resumable in emb_s_core.
"""
from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from typing import Callable

from emb_s_core.errors import EmbSError
from emb_s_core.progress import Meter

Work = Callable[[Callable[[str, float], None]], object]


@dataclass
class Job:
    key: str
    stage: str = "starting"
    fraction: float = 0.0
    started: float = field(default_factory=time.time)
    finished: float | None = None
    error: str | None = None
    meter: Meter = field(default_factory=Meter)
    _thread: threading.Thread | None = None

    @property
    def running(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    @property
    def elapsed(self) -> float:
        return (self.finished or time.time()) - self.started

    def report(self, stage: str, fraction: float) -> None:
        """The progress callback handed to the work (called from the job's thread)."""
        self.meter.update(stage, fraction)
        self.stage, self.fraction = stage, self.meter.fraction


_JOBS: dict[str, Job] = {}
_LOCK = threading.Lock()


def get(key: str) -> Job | None:
    with _LOCK:
        return _JOBS.get(key)


def running() -> list[Job]:
    """The jobs still running (the server stops them at exit: see ui.serve)."""
    with _LOCK:
        return [job for job in _JOBS.values() if job.running]


def start(key: str, work: Work) -> Job:
    """Run ``work(progress)`` in a daemon thread, once per ``key`` at a time: while a job with this key runs, that
    job is returned and nothing new starts. A user-caused failure (EmbSError) is kept as the job's error text; any
    other failure too, with its type, so the page can show it."""
    with _LOCK:
        job = _JOBS.get(key)
        if job is not None and job.running:
            return job
        job = _JOBS[key] = Job(key)

        def run() -> None:
            try:
                work(job.report)
            except EmbSError as exc:
                job.error = str(exc)
            except Exception as exc:  # noqa: BLE001 - shown on the page instead of dying silently in a thread
                job.error = f"{type(exc).__name__}: {exc}"
            finally:
                job.finished = time.time()

        job._thread = threading.Thread(target=run, name=f"emb-s job {key}", daemon=True)
        job._thread.start()
        return job


def wait(key: str, timeout: float) -> Job | None:
    """Block until the job ``key`` ends or ``timeout`` seconds pass (tests, scripts); the job either way."""
    job = get(key)
    if job is not None and job._thread is not None:
        job._thread.join(timeout)
    return job
