"""``python -m ui.serve [streamlit run options]``: the dashboard's server (``scripts/run.sh`` runs it).

It is ``streamlit run app.py`` in this process, after starting the demo build on a fresh machine
(:func:`ui.first_start.start_if_fresh`): the build is a thread of the server process from its first second, so
results exist before anyone opens the page, and Home shows that same job's progress (``ui.jobs`` is one module
instance per process).
"""
from __future__ import annotations

import os
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def main(argv: list[str]) -> int:
    if str(REPO) not in sys.path:
        sys.path.insert(0, str(REPO))
    import logging

    from streamlit.web import cli as stcli

    quiet = [logging.getLogger(f"streamlit.runtime.caching.{m}") for m in ("cache_data_api", "cache_resource_api")]
    levels = [log.level for log in quiet]
    for log in quiet:  # ui.data's cached functions, defined before the runtime exists: a warning each, not a problem
        log.setLevel(logging.ERROR)
    from ui import first_start, jobs

    for log, level in zip(quiet, levels):
        log.setLevel(level)
    job = first_start.start_if_fresh()
    if job is not None:
        print(f"emb-s: no workspace under {first_start.demo_dir().parent}: building the demo workspace in the "
              "background (results appear on Home as they are stored)", file=sys.stderr, flush=True)
    sys.argv = ["streamlit", "run", str(REPO / "app.py"), *argv]
    try:
        stcli.main()
        code = 0
    except SystemExit as exc:  # click ends with sys.exit, also after Ctrl-C or SIGTERM stopped the server
        code = exc.code if isinstance(exc.code, int) else 1
    if jobs.running():
        # the build's worker threads would hold the exit until the build ends; it is resumable (every batch is
        # committed on its own, the next start finishes it), so stop now
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)
    return code


def wait_ready(base: str, seconds: float = 60) -> bool:
    """Whether the server at ``base`` (``http://host:port``) answers its health check within ``seconds`` (the
    scripts and benches that start one wait on this before opening a page)."""
    import time
    import urllib.request

    deadline = time.time() + seconds
    while time.time() < deadline:
        try:
            if urllib.request.urlopen(f"{base}/_stcore/health", timeout=2).read() == b"ok":
                return True
        except OSError:
            time.sleep(0.5)
    return False


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
