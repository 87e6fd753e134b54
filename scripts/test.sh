#!/usr/bin/env bash
# The README's test command: install what the project needs, lint (ruff, configured in pyproject.toml), then run the
# whole suite offline.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install.sh
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 LITELLM_LOCAL_MODEL_COST_MAP=True
python3 -m ruff check --no-cache .
exec python3 -m pytest -q "$@"
