"""Notes and tags on cases in a real workspace: add, edit, filter by tag, survive a ladder rebuild, a new run and a
new import; hidden (not lost) when a bank edit drops the query; bad input refused with the workspace unchanged."""
from __future__ import annotations

import pyarrow as pa
import pytest

from emb_s_core import bank, ladder, notes, runs
from emb_s_core.errors import EmbSError
from emb_s_core.schema import QUERY_SCHEMA
from emb_s_core.store import Workspace
from tests.conftest import native_bank
from tests.unit.test_ladder import make_bank

OPTS = ladder.LadderOptions(base="8K", domain_sizes=("8K",), shared_size="32K")


@pytest.fixture
def ws(tmp_path):
    bank.import_path(tmp_path / "ws", "native", make_bank(tmp_path / "bank", n_docs=60, n_queries=9))
    w = Workspace(tmp_path / "ws")
    ladder.build(w, OPTS)
    runs.create_run(w, "r1", "external", "run file", {})
    return w


def test_add_edit_merge_and_list(ws):
    row = notes.save(ws, "q1", ["date confusion", "  hard   negative "], "gold says 1870, HN says 987")
    assert row["tags"] == ["date confusion", "hard negative"]
    assert notes.get(ws, "q1")["text"] == "gold says 1870, HN says 987"
    created = notes.get(ws, "q1")["created_at"]
    notes.save(ws, "q1", ["hard negative"], "edited")  # the editor replaces tags and text
    got = notes.get(ws, "q1")
    assert got["tags"] == ["hard negative"] and got["text"] == "edited" and got["created_at"] == created
    notes.save(ws, "q1", ["lexical"], None, merge=True)  # `notes add`: tags added, text kept
    assert notes.get(ws, "q1")["tags"] == ["hard negative", "lexical"] and notes.get(ws, "q1")["text"] == "edited"
    notes.save(ws, "q2", ["lexical"], "only for r1 at 8K", run="r1", rung="8K/law")
    notes.save(ws, "q3", ["lexical"], "a pooled scale", rung="8K")
    df = notes.load(ws)
    assert len(df) == 3 and notes.get(ws, "q2") is None and notes.get(ws, "q2", "r1", "8K/law")["text"]
    tags = notes.all_tags(ws).set_index("tag")
    assert tags.loc["lexical", "cases"] == 3 and tags.loc["hard negative", "queries"] == 1
    notes.delete(ws, "q3", rung="8K")
    assert len(notes.load(ws)) == 2
    with pytest.raises(EmbSError, match="no note on case"):
        notes.delete(ws, "q3", rung="8K")


def test_filter_and_breakdown_by_tag(ws):
    notes.save(ws, "q1", ["a", "b"], "")
    notes.save(ws, "q2", ["b"], "", run="r1")
    rows = bank.queries(ws)[["qid", "domain"]]
    n = notes.load(ws)
    assert set(notes.filter_by_tags(rows, n, ["b"])["qid"]) == {"q1", "q2"}
    assert set(notes.filter_by_tags(rows, n, ["a"])["qid"]) == {"q1"}
    assert len(notes.filter_by_tags(rows, n, [])) == len(rows)
    assert notes.filter_by_tags(rows, n, ["nobody"]).empty
    split = notes.by_tag(rows, n)
    assert sorted(split.loc[split["qid"] == "q1", "tag"]) == ["a", "b"]  # two tags: counted in both groups
    assert (split.loc[split["qid"] == "q0", "tag"] == "(untagged)").all()


def test_notes_survive_ladder_rebuild_new_run_and_new_import(ws, tmp_path):
    shared = next(r.name for r in ladder.load(ws).rungs if r.kind == "shared")
    notes.save(ws, "q4", ["keep me"], "still here", run="r1", rung=shared)
    ladder.build(ws, ladder.LadderOptions(base="8K", domain_sizes=("8K",), shared_size="32K", seed=3))
    runs.create_run(ws, "r2", "external", "run file", {"x": 1})
    runs.save_results(ws, "r2", [{"rung": shared, "qid": "q4", "doc_ids": [1, 2]}])
    new_source = native_bank(tmp_path / "more", docs=[{"doc_id": 1000, "text": "a new document", "domain": "law"}],
                             queries=[{"qid": "new1", "text": "new?", "answer": "a", "ref_ids": [1000]}])
    bank.import_path(ws, "native", new_source, source="more")  # a new import: the workspace's next bank version
    fresh = Workspace(ws.path)
    got = notes.get(fresh, "q4", "r1", shared)
    assert got is not None and got["tags"] == ["keep me"] and got["text"] == "still here"
    assert len(notes.load(fresh)) == 1


def test_a_dropped_query_hides_its_note_until_it_returns(ws):
    notes.save(ws, "q5", ["gone later"], "x")
    qs = ws.read("queries")
    keep = pa.compute.not_equal(qs["qid"], "q5")
    with ws.transaction():  # a bank edit (collide / domains rewrite the queries table the same way)
        ws.write("queries", qs.filter(keep), mode="overwrite", schema=QUERY_SCHEMA)
    assert notes.load(ws).empty
    orphans = notes.load(ws, include_orphans=True)
    assert orphans["orphan"].tolist() == [True]
    with ws.transaction():
        ws.write("queries", qs, mode="overwrite", schema=QUERY_SCHEMA)
    assert notes.load(ws)["qid"].tolist() == ["q5"]


@pytest.mark.parametrize("kwargs, message", [
    ({"qid": "nope", "tags": ["t"]}, "no query 'nope'"),
    ({"qid": "q1", "tags": "one,two"}, "tags must be a list of strings"),
    ({"qid": "q1", "tags": ["a,b"]}, "has a comma"),
    ({"qid": "q1", "tags": ["x" * 65]}, "longer than 64"),
    ({"qid": "q1", "tags": [""]}, "a tag is empty"),
    ({"qid": "q1", "tags": [3]}, "a tag must be a string"),
    ({"qid": "q1", "tags": [], "text": "x" * 20_001}, "at most 20,000"),
    ({"qid": "q1", "tags": [], "run": "nobody"}, "no run named 'nobody'"),
    ({"qid": "q1", "tags": [], "rung": "3M"}, "no rung or scale named '3M'"),
])
def test_bad_input_is_refused_and_the_workspace_unchanged(ws, kwargs, message):
    before = ws.version
    with pytest.raises(EmbSError, match=message):
        notes.save(ws, **kwargs)
    assert Workspace(ws.path).version == before and notes.load(ws).empty


def test_markup_is_stored_verbatim(ws):
    text = "<script>alert(1)</script> **bold** [link](http://x)"
    notes.save(ws, "q1", ["<b>tag</b>"], text)
    got = notes.get(ws, "q1")
    assert got["text"] == text and got["tags"] == ["<b>tag</b>"]
