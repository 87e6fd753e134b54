#!/usr/bin/env bash
# The README's run command: install (into .venv), then serve the dashboard with the project's own Python
# (ui.serve: on a fresh machine the demo workspace starts building with the server, before any browser visit).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install.sh
export HF_HUB_OFFLINE=1 LITELLM_LOCAL_MODEL_COST_MAP=True
exec .venv/bin/python -m ui.serve "$@"
