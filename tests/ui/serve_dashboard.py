"""``python tests/ui/serve_dashboard.py [streamlit run options]``: the dashboard's server (``ui.serve``, what
``scripts/run.sh`` runs) from any working folder (the browser tests start it with their own data folder)."""
from __future__ import annotations

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[1]))

if __name__ == "__main__":
    from ui import serve

    sys.exit(serve.main(sys.argv[1:]))
