#!/usr/bin/env bash
# The README's run command: install (into .venv), then serve the dashboard with the project's own Python
# (ui.serve: on a fresh machine the demo workspace starts building with the server, before any browser visit).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install.sh
# HF_HUB_OFFLINE stays as the user set it: a hub model named in a spec (dense:BAAI/bge-small-en-v1.5) downloads into
# the Hugging Face cache when the machine is online; the demo's models ship in packages and never ask the hub.
export LITELLM_LOCAL_MODEL_COST_MAP=True
exec .venv/bin/python -m ui.serve "$@"
