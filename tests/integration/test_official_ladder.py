"""The official ladder: a release's scales stored as rungs with the published membership, the gold check that drops
(and names) queries, nesting reported, the built ladder beside it, `eval --ladder`, report order and every page."""
from __future__ import annotations

import pickle

import numpy as np
import pytest

from emb_s_core import bank, evaluate, ladder, official, runs, tokens
from emb_s_core.analysis import report
from emb_s_core.cli import main
from emb_s_core.errors import EmbSError
from emb_s_core.store import Workspace
from tests.release_mock import SCALES, write_release


@pytest.fixture
def ws(tmp_path) -> Workspace:
    bank.import_path(tmp_path / "ws", "emb-s-release", write_release(tmp_path / "release"))
    return Workspace(tmp_path / "ws")


def test_scales_become_rungs_as_published(ws):
    lad = official.build(ws)
    assert lad.names == ["official:64K", "official:128K", "official:512K"]
    stored = ladder.load(ws, kind=ladder.OFFICIAL)
    sets = bank.doc_sets(ws)
    for rung in stored.rungs:
        published = np.sort(sets[sets["set"] == ladder.plain_name(rung.name)]["doc_id"].to_numpy())
        np.testing.assert_array_equal(rung.doc_ids, published)
        assert rung.ladder == ladder.OFFICIAL and rung.size == tokens.parse_size(ladder.plain_name(rung.name))
        assert rung.composition["gold_documents"] == 4 and rung.n_tokens > 0
    assert stored.rungs[0].n_documents == len(SCALES["64K"])
    kept = stored.kept.set_index("qid")
    assert not kept.loc["test-5", "kept"] and "not in official rung 64K" in kept.loc["test-5", "reason"]
    assert sorted(stored.rungs[0].qids) == ["q-two", "test-1", "test-3"]
    assert any("dropped 1 of 4 queries" in m for m in stored.messages)
    assert not any("do not nest" in m for m in stored.messages)


def test_rungs_that_do_not_nest_are_reported_not_fixed(tmp_path):
    root = write_release(tmp_path / "release")
    (root / "data" / "128K" / "unique_reference.pkl").write_bytes(pickle.dumps(SCALES["128K"][1:]))
    bank.import_path(tmp_path / "ws", "emb-s-release", root)
    lad = official.build(Workspace(tmp_path / "ws"))
    assert "official rungs do not nest: 128K lacks 1 of 64K's 12 documents (kept as published)" in lad.messages
    assert lad.rungs[1].n_documents == 19
    assert not lad.kept.set_index("qid").loc["test-1", "kept"]  # its gold (doc 0) is not in 128K


def test_built_ladder_beside_official_and_ladder_choice(ws):
    assert evaluate.ladder_kinds(ws) == (ladder.BUILT,)  # nothing built yet: built (its load says what to do)
    official.build(ws)
    assert evaluate.ladder_kinds(ws) == (ladder.OFFICIAL,)
    ladder.build(ws, ladder.LadderOptions(base="1K", domain_sizes=("1K",), shared_size="2K", reserve=0))
    assert evaluate.ladder_kinds(ws) == (ladder.BUILT,)
    assert evaluate.ladder_kinds(ws, "official") == (ladder.OFFICIAL,)
    assert evaluate.ladder_kinds(ws, "both") == (ladder.BUILT, ladder.BENIGN)
    assert ladder.kinds(ws) == [ladder.BUILT, ladder.OFFICIAL]
    assert len(ladder.load(ws, kind=ladder.OFFICIAL).rungs) == 3  # rebuilding the built one kept it


def test_eval_report_on_the_official_ladder(ws, capsys):
    w = str(ws.path)
    assert main(["ladder", "build", "--official", "-w", w]) == 0
    out = capsys.readouterr().out
    assert "dropped test-5: gold document(s) 25 not in official rung 64K" in out and "official:512K" in out
    assert main(["eval", "-w", w, "-r", "bm25", "--k", "100", "--ladder", "official"]) == 0
    out = capsys.readouterr().out
    assert "run 'bm25@official': 9 (rung, query) results" in out
    assert "rung official:64K holds fewer than k=100 documents: ranked whole (k=12)" in out
    ws.refresh()
    res = runs.load_results(ws, runs=["bm25@official"])
    assert set(res["rung"]) == {"official:64K", "official:128K", "official:512K"}
    rows = report.rows(ws, metric_names=["SR@10"], n_boot=0)
    assert rows["rung"].tolist() == ["official:64K", "official:128K", "official:512K"]
    assert (rows["n"] == 3).all()
    # the paper table defaults to every published scale the workspace has (128K was hidden by a fixed default)
    assert main(["report", "--paper-table", "-w", w]) == 0
    header = capsys.readouterr().out.splitlines()[0]
    assert header == "| run | " + " | ".join(f"{s} {m}" for s in ("64K", "128K", "512K")
                                             for m in ("R@1", "SR@10", "FR@10")) + " |"


def test_official_needs_a_release(tmp_path):
    from tests.conftest import native_bank

    bank.import_path(tmp_path / "ws", "native", native_bank(tmp_path / "native"))
    with pytest.raises(EmbSError, match="holds no EMB-S release with published scales"):
        official.build(Workspace(tmp_path / "ws"))
    assert main(["ladder", "build", "--official", "-w", str(tmp_path / "ws"), "--source", "x"]) == 2


def test_pages_on_an_official_only_workspace(ws, monkeypatch, tmp_path):
    from streamlit.testing.v1 import AppTest

    from tests.conftest import REPO

    official.build(ws)
    evaluate.evaluate(ws, "bm25", ladder="official", k=5)
    monkeypatch.setenv("EMB_S_DATA", str(ws.path.parent))  # the URL opens workspaces under the data folder only
    for page in sorted(p.name for p in (REPO / "pages").glob("*.py")):
        at = AppTest.from_file(str(REPO / "app.py"), default_timeout=60)
        at.query_params["ws"] = str(ws.path)
        if page != "1_Home.py":
            at.switch_page(f"pages/{page}")
        at.run()
        assert not at.exception, (page, [e.message for e in at.exception])
        assert not at.error, (page, [e.value for e in at.error])
