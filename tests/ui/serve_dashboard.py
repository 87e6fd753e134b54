"""``python tests/ui/serve_dashboard.py [streamlit run options]``: ``streamlit run app.py`` from any working folder
(the browser test starts it with its own data folder)."""
from __future__ import annotations

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[1]))

if __name__ == "__main__":
    from streamlit.web import cli as stcli

    sys.argv = ["streamlit", "run", str(HERE.parents[1] / "app.py"), *sys.argv[1:]]
    sys.exit(stcli.main())
