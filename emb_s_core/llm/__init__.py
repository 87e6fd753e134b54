"""The one place that calls litellm: gateway, response cache, secrets, the offline local model.

``from emb_s_core import llm`` and ``llm.Gateway``, ``llm.OK``, ``llm.redact``, ``llm.LOCAL_MODEL`` … are the names
callers use; each lives in one submodule (:mod:`.gateway`, :mod:`.cache`, :mod:`.secrets`, :mod:`.local`).
Importing this package is cheap: litellm and transformers are imported on first use.
"""
from __future__ import annotations

from emb_s_core.llm.cache import CACHE_FILE, ResponseCache
from emb_s_core.llm.gateway import (DOES_NOT_FIT, ERROR, OK, CallResult, Gateway, Messages, ProgressFn, Usage,
                                    load_litellm, progress_noop)
from emb_s_core.llm.local import (LOCAL_LABEL, LOCAL_MODEL, LOCAL_WINDOW, ensure_local_model, forget_prefix,
                                  local_generate, local_model_dir, local_threads)
from emb_s_core.llm.secrets import load_secrets, redact

__all__ = ["CACHE_FILE", "DOES_NOT_FIT", "ERROR", "LOCAL_LABEL", "LOCAL_MODEL", "LOCAL_WINDOW", "OK", "CallResult",
           "Gateway", "Messages", "ProgressFn", "ResponseCache", "Usage", "ensure_local_model", "forget_prefix",
           "load_litellm", "load_secrets", "local_generate", "local_model_dir", "local_threads", "progress_noop",
           "redact"]
