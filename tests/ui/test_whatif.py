"""The live "what if": ``analysis.whatif`` against the stored runs (the bank's own text must reproduce every stored
rank), an edited text that moves documents, nothing written to the bank, and the box on the drill-down and Compare
pages (AppTest): typing re-ranks, saving writes a note on the case."""
from __future__ import annotations

import numpy as np
import pytest

from test_dashboard_pages import assert_clean, run_page
from emb_s_core import bank, evaluate, ladder, notes, runs
from emb_s_core.analysis import whatif
from emb_s_core.store import Workspace

pytestmark = pytest.mark.timeout(300)


@pytest.fixture(scope="module")
def live_ws(dash_ws, tmp_path_factory):
    from testkit.whatif_bank import build

    return build(dash_ws, tmp_path_factory.mktemp("whatif") / "live")


@pytest.fixture
def live_env(live_ws, monkeypatch, tmp_path):
    monkeypatch.setenv("EMB_S_DATA", str(tmp_path))
    (tmp_path / "live").symlink_to(live_ws)
    return tmp_path / "live"


def _query(ws: Workspace) -> dict:
    """A query with a hard negative whose stored BM25 list holds its gold."""
    qs = bank.queries(ws)
    return qs[qs["hard_negative_ids"].map(lambda h: h is not None and len(h) > 0)].iloc[0].to_dict()


def _run(ws: Workspace, q: dict, text: str) -> whatif.WhatIf:
    lad = ladder.load(ws)
    pools = {r.name: r.doc_ids for r in lad.rungs if q["qid"] in set(r.qids)}
    res = runs.load_results(ws)
    return whatif.what_if(lambda s: evaluate.prepared(ws, s), text, list(q["ref_ids"]),
                          list(q["hard_negative_ids"]), pools, whatif.specs_of(runs.list_runs(ws)),
                          res[res["qid"] == q["qid"]])


def test_bank_text_reproduces_stored_ranks(live_ws):
    ws = Workspace(live_ws)
    q = _query(ws)
    out = _run(ws, q, q["text"])
    f = out.frame
    assert set(f["retriever"]) == {"bm25", "dense:minilm-l3"}
    assert "word-overlap" in " ".join(out.skipped)  # the fixture's scorer runs are no live retriever
    stored = f[f["rank_stored"] > 0]
    assert len(stored) > 0 and (stored["rank_now"] == stored["rank_stored"]).all()
    # the dense retriever ranks the whole rung exactly: a stored "not in list" is now a rank below the list's K
    dense = f[(f["retriever"] == "dense:minilm-l3") & (f["rank_stored"] == 0)]
    assert (dense["rank_now"] > 10).all()
    table = whatif.table(out)
    assert (table["moved"] == 0).all() and len(table) == len(f) // (len(q["ref_ids"]) + len(q["hard_negative_ids"]))


def test_edited_text_moves_ranks_and_writes_nothing(live_ws):
    ws = Workspace(live_ws)
    q = _query(ws)
    before = ws.table_versions()
    out = _run(ws, q, "completely unrelated words zebra quartz")
    moved = out.frame[(out.frame["rank_stored"] > 0) & (out.frame["rank_now"] != out.frame["rank_stored"])]
    assert len(moved) > 0
    assert Workspace(live_ws).table_versions() == before
    with pytest.raises(Exception, match="empty"):
        _run(ws, q, "   ")


def test_doc_ranks_dense_matches_a_full_ranking(live_ws):
    ws = Workspace(live_ws)
    r = evaluate.prepared(ws, "dense:minilm-l3")
    lad = ladder.load(ws)
    rung = lad.rungs[-1]
    text = "sci12 w40 w7"
    full = r.rank([text], {rung.name: rung.doc_ids}, len(rung.doc_ids))[rung.name].ids[0]
    wanted = [int(full[0]), int(full[17]), int(full[-1])]
    got = whatif.doc_ranks(r, text, {rung.name: rung.doc_ids}, wanted, 10)[rung.name]
    assert got.tolist() == [1, 18, len(full)]


def test_drilldown_box_reranks_and_saves_a_note(live_env):
    ws = Workspace(live_env)
    q = _query(ws)
    at = run_page("3_Query_drilldown.py", {"ws": str(live_env), "by": "search", "find": q["qid"], "q": q["qid"]})
    assert_clean(at)
    box = at.text_input(key=f"whatif_drill_{q['qid']}")
    assert box.value == q["text"]

    def table():
        hit = [d.value for d in at.dataframe if "moved" in d.value.columns]
        assert len(hit) == 1
        return hit[0]

    # nothing is re-ranked (nor any index loaded) before the first edit
    assert not [d for d in at.dataframe if "moved" in d.value.columns]
    box.set_value(q["text"] + " again").run()
    assert_clean(at)
    first = table()
    assert set(first["retriever"]) == {"bm25", "dense:minilm-l3"} and "hard negative" in " ".join(first.columns)
    box.set_value("zebra quartz nothing matches").run()
    assert_clean(at)
    after = table()
    assert after["moved"].sum() > 0 and any(" · was " in str(c) for c in after.to_numpy().ravel())
    queries_version = ws.table_versions()["queries"]
    at.button(key=f"whatif_save_drill_{q['qid']}").click().run()
    assert_clean(at)
    saved = notes.get(Workspace(live_env), q["qid"])
    assert saved is not None and whatif_text(saved["text"]) == "zebra quartz nothing matches"
    assert Workspace(live_env).table_versions()["queries"] == queries_version  # the bank keeps its text
    notes.delete(Workspace(live_env), q["qid"])


def whatif_text(note: str) -> str:
    from ui.whatif import NOTE_PREFIX

    return note.split(NOTE_PREFIX, 1)[1]


def test_compare_page_has_the_box(live_env):
    ws = Workspace(live_env)
    q = _query(ws)
    at = run_page("4_Compare.py", {"ws": str(live_env), "q": q["qid"]})
    assert_clean(at)
    at.text_input(key=f"whatif_compare_{q['qid']}").set_value("zebra quartz").run()
    assert_clean(at)
    frames = [d.value for d in at.dataframe if "moved" in d.value.columns]
    assert len(frames) == 1 and np.asarray(frames[0]["moved"]).sum() > 0


def test_one_embedding_per_model_and_text(live_ws, monkeypatch):
    """A dense retriever and a fusion containing it embed the typed text once between them."""
    from emb_s_core.retrievers import embedders

    calls: list[list[str]] = []
    encode = embedders.OnnxMiniLMEmbedder.encode
    monkeypatch.setattr(embedders.OnnxMiniLMEmbedder, "encode",
                        lambda self, texts: calls.append(list(texts)) or encode(self, texts))
    ws = Workspace(live_ws)
    q = _query(ws)
    lad = ladder.load(ws)
    pools = {r.name: r.doc_ids for r in lad.rungs if q["qid"] in set(r.qids)}
    text = "a phrasing nobody typed before 8131"
    out = whatif.what_if(lambda s: evaluate.prepared(ws, s), text, list(q["ref_ids"]), list(q["hard_negative_ids"]),
                         pools, {"dense:minilm-l3": [], "hybrid:bm25+dense:minilm-l3": []}, runs.load_results(ws))
    assert set(out.frame["retriever"]) == {"dense:minilm-l3", "hybrid:bm25+dense:minilm-l3"}
    assert calls.count([text]) == 1


def test_a_live_fusion_shares_its_parts_and_scores_the_text_once(live_ws, monkeypatch):
    """The live hybrid's parts are the live retrievers of their own specs (one BM25 index, one set of resident
    vectors), so a what-if asking the dense retriever and the fusion multiplies the typed text by the vectors once;
    the shared fusion ranks as one prepared on its own."""
    from emb_s_core import retrievers
    from emb_s_core.retrievers.blocks import BlockScorer

    ws = Workspace(live_ws)
    hybrid = evaluate.prepared(ws, "hybrid:bm25+dense:minilm-l3")
    dense = evaluate.prepared(ws, "dense:minilm-l3")
    assert hybrid.parts[0] is evaluate.prepared(ws, "bm25") and hybrid.parts[1] is dense
    folds: list[int] = []
    fold = BlockScorer._fold
    monkeypatch.setattr(BlockScorer, "_fold", staticmethod(lambda *a: folds.append(1) or fold(*a)))
    q = _query(ws)
    lad = ladder.load(ws)
    pools = {r.name: r.doc_ids for r in lad.rungs if q["qid"] in set(r.qids)}
    text = "another phrasing nobody typed 5521"
    whatif.what_if(lambda s: evaluate.prepared(ws, s), text, list(q["ref_ids"]), list(q["hard_negative_ids"]),
                   pools, {"dense:minilm-l3": [], "hybrid:bm25+dense:minilm-l3": []}, runs.load_results(ws))
    assert len(folds) == len(dense.scorer.resident)  # one pass over the resident blocks, not one per retriever
    scores = dense.score([text])
    scores[:] = 0  # the remembered scores are the scorer's own: a caller's edit does not reach them
    fresh = dense.scorer.score_all(np.repeat(dense.embedder.encode([text]), 2, axis=0))[0]  # two rows: not remembered
    again = dense.score([text])[0]
    assert again.any() and np.allclose(again, fresh, atol=1e-6)
    alone = retrievers.get("hybrid:bm25+dense:minilm-l3")
    alone.prepare(ws, None)
    for name, ranking in hybrid.rank([text], pools, 50).items():
        other = alone.rank([text], pools, 50)[name]
        assert np.array_equal(ranking.ids, other.ids) and np.array_equal(ranking.scores, other.scores)
