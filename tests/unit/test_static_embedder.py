"""dense:minilm-static: a static model distilled locally from the shipped MiniLM-L6 (the demo's fast embedder).

The tests distill only the first ids of the vocabulary (``Recipe.limit``: seconds, not the minute or more of the
whole vocabulary) into a temporary model cache; the rest of the recipe is the one the demo uses."""
from __future__ import annotations

import numpy as np
import pytest

from emb_s_core import evaluate, retrievers, runs
from emb_s_core.retrievers import static
from testkit.retrieval_bank import copy_workspace, template

SMALL = static.Recipe(limit=2600)  # [PAD] ... punctuation, single characters, then the ~600 most frequent words


@pytest.fixture(scope="module")
def cache(tmp_path_factory):
    folder = tmp_path_factory.mktemp("model-cache")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("EMB_S_MODEL_CACHE", str(folder))
        mp.setattr(static, "DEFAULT", SMALL)
        mp.setattr(static, "_TABLES", {})
        events: list[tuple[str, float]] = []
        table = static.load_table(recipe=SMALL, progress=lambda s, f: events.append((s, f)))
        yield folder, table, events


def test_distilled_once_into_the_cache_and_read_back(cache, monkeypatch):
    folder, table, events = cache
    files = list(folder.iterdir())
    assert len(files) == 1 and files[0].suffix == ".npy"  # written atomically: no temporary file left behind
    assert events[0] == ("distilling 2,600 tokens (a static model from all-MiniLM-L6-v2)", 0.0)
    assert events[-1][1] == 1.0 and len(events) > 2
    monkeypatch.setattr(static, "distill", lambda *a, **k: pytest.fail("distilled again"))
    assert np.array_equal(static.load_table(recipe=SMALL), table)
    assert static.table_path(static.minilm_l6_path(), SMALL) != static.table_path(static.minilm_l6_path())


def test_table_weights_frequent_and_special_tokens_down(cache):
    _, table, _ = cache
    vocab = static.minilm_l6_path() / "tokenizer.json"
    from tokenizers import Tokenizer

    tok = Tokenizer.from_file(str(vocab))
    norms = np.linalg.norm(table, axis=1)
    assert table.shape == (tok.get_vocab_size(), 384) and table.dtype == np.float32
    assert not norms[SMALL.limit:].any()  # beyond the limit: nothing distilled
    the, city = tok.token_to_id("the"), tok.token_to_id("city")
    assert norms[:the].max() < 0.05 * norms[city]  # [unused], punctuation, single characters weigh ~nothing
    assert norms[the] < norms[city]  # "the" is more frequent than "city"


def test_texts_that_share_meaning_are_closer(cache, monkeypatch):
    monkeypatch.setattr(static, "_TABLES", {})
    monkeypatch.setenv("EMB_S_MODEL_CACHE", str(cache[0]))
    emb = static.StaticEmbedder(SMALL)
    v = emb.encode(["the city was at war with the north", "a war in the north of the city", "she wrote music and songs",
                    ""])
    assert np.allclose(np.linalg.norm(v[:3], axis=1), 1.0, atol=1e-5) and not v[3].any()
    assert v[0] @ v[1] > 0.8 and v[0] @ v[2] < v[0] @ v[1] - 0.3
    assert emb.key.startswith("static:all-MiniLM-L6-v2:") and emb.key.endswith(static.identity(emb.model_dir, SMALL))


def test_the_spec_evaluates_and_reports_the_distillation(cache, monkeypatch, tmp_path_factory, tmp_path):
    monkeypatch.setattr(static, "DEFAULT", SMALL)
    monkeypatch.setattr(static, "_TABLES", {})
    monkeypatch.setenv("EMB_S_MODEL_CACHE", str(tmp_path / "empty-cache"))  # a fresh machine: distilled on first use
    ws = copy_workspace(template(tmp_path_factory), tmp_path / "ws")
    events: list[tuple[str, float]] = []
    name = evaluate.evaluate(ws, "dense:minilm-static", k=5, progress=lambda s, f: events.append((s, f)))
    stages = list(dict.fromkeys(s for s, _ in events))
    assert "distilling 2,600 tokens (a static model from all-MiniLM-L6-v2)" in stages
    assert stages.index("distilling 2,600 tokens (a static model from all-MiniLM-L6-v2)") < \
        next(i for i, s in enumerate(stages) if s.startswith("embedding "))  # reported before the embedding step
    res = runs.load_results(ws, runs=[name])
    assert len(res) > 0 and (res["doc_ids"].map(len) == 5).all()
    assert runs.get_run(ws, name)["config"]["retriever"]["recipe"] == str(SMALL)
    r = retrievers.get("dense:minilm-static")
    r.check()
    assert r.uncached(ws) == 0  # the embedding cache is keyed by the table: a second run embeds nothing
