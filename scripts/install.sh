#!/usr/bin/env bash
# Installs everything EMB-S Diagnostics needs on a fresh Debian machine with Python 3.11, into the project's own
# virtual environment `.venv` (created here), so the machine's other Python packages can neither break this install
# nor be broken by it: the Python stack (torch pinned to the CPU wheel), the model-carrying wheels, the package itself
# (editable), Debian's chromium for plotly's static export and the browser tests, and texlive-latex-base for the tests
# that compile every LaTeX export. Safe to re-run.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
export PIP_ROOT_USER_ACTION=ignore

if [ ! -x .venv/bin/python ]; then
  "$PY" -m venv .venv || { echo "install.sh: could not create .venv with $PY -m venv (on Debian: apt-get install python3-venv)" >&2; exit 1; }
fi
VPY=.venv/bin/python
"$VPY" -m pip install -q --disable-pip-version-check -r requirements.txt
"$VPY" -m pip install -q --disable-pip-version-check --no-deps -r requirements-nodeps.txt
"$VPY" -m pip install -q --disable-pip-version-check --no-deps -e .
# compile the BM25 kernel now, into numba's cache next to its source, so no user process waits for the compile
"$VPY" -c "from emb_s_core.retrievers import bm25_kernel; bm25_kernel.warm()" \
  || echo "install.sh: could not pre-compile the BM25 kernel; the first BM25 query will compile it (~10 s)" >&2

# the demo's dense model (dense:minilm-static) is distilled from the installed MiniLM-L6 once per machine (under a
# minute on 2 quiet cores; cached under ~/.cache/emb-s or $EMB_S_MODEL_CACHE), so the first start does not pay it
HF_HUB_OFFLINE=1 "$VPY" -c "from emb_s_core.retrievers import static; static.load_table()" \
  || echo "install.sh: could not distill the static embedder now; the demo will distill it on first use" >&2

if ! command -v chromium >/dev/null 2>&1; then
  if command -v apt-get >/dev/null 2>&1 && [ "$(id -u)" = 0 ]; then
    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null) \
      || echo "install.sh: could not install chromium; figure export to PNG/SVG/PDF and browser tests will be skipped" >&2
  else
    echo "install.sh: chromium not found and apt-get unavailable (not root?); static figure export needs it" >&2
  fi
fi

if ! command -v pdflatex >/dev/null 2>&1; then  # only the tests use it: they compile every LaTeX export
  if command -v apt-get >/dev/null 2>&1 && [ "$(id -u)" = 0 ]; then
    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq texlive-latex-base >/dev/null) \
      || echo "install.sh: could not install texlive-latex-base; the LaTeX exports are checked for ASCII only" >&2
  else
    echo "install.sh: pdflatex not found and apt-get unavailable (not root?); the LaTeX compile tests will skip" >&2
  fi
fi
