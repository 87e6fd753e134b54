#!/usr/bin/env bash
# The README's test command: install what the project needs, then run the whole suite offline.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install.sh
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 LITELLM_LOCAL_MODEL_COST_MAP=True
exec python3 -m pytest -q "$@"
