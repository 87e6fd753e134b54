#!/usr/bin/env bash
# The README's test command: install what the project needs (into .venv), lint (ruff, configured in pyproject.toml),
# then run the whole suite offline with the project's own Python.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install.sh
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 LITELLM_LOCAL_MODEL_COST_MAP=True
.venv/bin/python -m ruff check --no-cache .
exec .venv/bin/python -m pytest -q "$@"
