"""EMB-S Diagnostics engine: evidence access under semantic interference (EverMemBench-S).

Importing the package is cheap: heavy libraries (torch, sentence-transformers, litellm) are imported lazily by the
modules that need them. The environment defaults set here keep everything offline unless the user configured an
endpoint: litellm reads its bundled cost map, tiktoken reads the BPE files that litellm ships.
"""
from __future__ import annotations

import os

__version__ = "0.1.0"

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

from emb_s_core.errors import EmbSError  # noqa: E402

__all__ = ["EmbSError", "__version__"]
