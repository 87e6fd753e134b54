"""``python -m ui.serve [streamlit run options]``: the dashboard's server (``scripts/run.sh`` runs it).

It is ``streamlit run app.py`` in this process, after starting the demo build on a fresh machine
(:func:`ui.first_start.start_if_fresh`): the build is a thread of the server process from its first second, so
results exist before anyone opens the page, and Home shows that same job's progress (``ui.jobs`` is one module
instance per process).
"""
from __future__ import annotations

import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def main(argv: list[str]) -> int:
    if str(REPO) not in sys.path:
        sys.path.insert(0, str(REPO))
    from streamlit.web import cli as stcli

    from ui import first_start

    job = first_start.start_if_fresh()
    if job is not None:
        print(f"emb-s: no workspace under {first_start.demo_dir().parent}: building the demo workspace in the "
              "background (results appear on Home as they are stored)", file=sys.stderr, flush=True)
    sys.argv = ["streamlit", "run", str(REPO / "app.py"), *argv]
    return int(stcli.main() or 0)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
