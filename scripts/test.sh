#!/usr/bin/env bash
# The README's test command: install what the project needs (into .venv), lint (ruff, configured in pyproject.toml),
# then run the whole suite offline with the project's own Python.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install.sh
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 LITELLM_LOCAL_MODEL_COST_MAP=True
.venv/bin/python -m ruff check --no-cache .
# two workers (pytest-xdist), one test file per worker at a time: a file's tests share module fixtures and temp
# folders, files share nothing but read-only models; EMB_S_TEST_WORKERS=0 runs everything in this one process
exec .venv/bin/python -m pytest -q -n "${EMB_S_TEST_WORKERS:-2}" --dist loadfile "$@"
