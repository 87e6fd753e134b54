#!/usr/bin/env bash
# The README's run command: install (into .venv), then open the dashboard with the project's own Python
# (it builds the demo workspace on first start).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install.sh
export HF_HUB_OFFLINE=1 LITELLM_LOCAL_MODEL_COST_MAP=True
exec .venv/bin/python -m streamlit run app.py "$@"
