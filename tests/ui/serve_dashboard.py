"""``python tests/ui/serve_dashboard.py [streamlit run options]``: start the dashboard for the browser test and the
bench, with the metrics contract installed when the metrics part is absent (same rule as conftest.py)."""
from __future__ import annotations

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parents[1]))

from conftest import ensure_metrics  # noqa: E402

ensure_metrics()

if __name__ == "__main__":
    from streamlit.web import cli as stcli

    sys.argv = ["streamlit", "run", str(HERE.parents[1] / "app.py"), *sys.argv[1:]]
    sys.exit(stcli.main())
