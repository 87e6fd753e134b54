"""External run files (TREC, JSONL): per-rung and whole-bank rankings, and bad files that write nothing."""
from __future__ import annotations

import json

import numpy as np
import pytest

from emb_s_core import bank, ladder, runs
from emb_s_core.cli import main
from emb_s_core.errors import EmbSError
from emb_s_core.external import import_run
from testkit.retrieval_bank import copy_workspace, template


@pytest.fixture
def ws(tmp_path_factory, tmp_path):
    return copy_workspace(template(tmp_path_factory), tmp_path / "ws")


def _trec(path, rankings):
    lines = [f"{qid} Q0 {d} {i + 1} {100 - i:.2f} mysys" for qid, ids in rankings.items() for i, d in enumerate(ids)]
    path.write_text("\n".join(lines) + "\n")
    return path


def test_trec_over_the_bank_is_filtered_per_rung(ws, tmp_path):
    lad = ladder.load(ws)
    qs = bank.queries(ws)
    ranking = list(range(239, -1, -1))  # every document, reverse id order
    f = _trec(tmp_path / "run.trec", {q: ranking for q in qs["qid"]})
    out = import_run(ws, "ext", f)
    assert out["queries"] == len(qs) and not out["already_imported"]
    res = runs.load_results(ws, runs=["ext"])
    assert len(res) == sum(len(r.qids) for r in lad.rungs)
    for rung in lad.rungs:
        row = res[res["rung"] == rung.name].iloc[0]
        np.testing.assert_array_equal(row["doc_ids"], rung.doc_ids[::-1])  # members only, order kept
        assert row["scores"][0] == pytest.approx(100 - (239 - rung.doc_ids[-1]))
    assert runs.get_run(ws, "ext")["kind"] == "external"
    version = ws.version
    assert import_run(ws, "ext", f)["already_imported"] and ws.version == version


def test_trec_with_rung_and_jsonl(ws, tmp_path):
    lad = ladder.load(ws)
    rung = lad.rungs[0]
    qid = rung.qids[0]
    ids = rung.doc_ids[:5].tolist()
    # lines out of order: sorted by score
    (tmp_path / "r.trec").write_text(f"{qid} Q0 {ids[1]} 2 1.0 t\n{qid} Q0 {ids[0]} 1 2.0 t\n")
    import_run(ws, "one-rung", tmp_path / "r.trec", rung=rung.name)
    res = runs.load_results(ws, runs=["one-rung"])
    assert res["rung"].tolist() == [rung.name] and res.iloc[0]["doc_ids"].tolist() == [ids[0], ids[1]]
    other = rung.qids[1]
    lines = [{"qid": qid, "rung": rung.name, "doc_ids": ids, "scores": [5, 4, 3, 2, 1]},
             {"qid": other, "doc_ids": list(range(240))}]
    (tmp_path / "r.jsonl").write_text("\n".join(json.dumps(x) for x in lines))
    import_run(ws, "js", tmp_path / "r.jsonl")
    res = runs.load_results(ws, runs=["js"])
    assert len(res) == 1 + len(lad.rungs_of_query(other))
    mine = res[res["qid"] == qid].iloc[0]
    assert mine["rung"] == rung.name and mine["doc_ids"].tolist() == ids
    np.testing.assert_allclose(mine["scores"], [5, 4, 3, 2, 1])
    assert set(res[res["qid"] == other]["rung"]) == set(lad.rungs_of_query(other))


def test_repeated_doc_ids_are_dropped_counted_and_not_positions(ws, tmp_path, capsys):
    """A repeated id is kept once at its best place: MRR is then 1/rank in the list of distinct documents, as in
    pytrec_eval and ranx (a repeat above the gold would otherwise push it down one place)."""
    from emb_s_core import metrics

    lad = ladder.load(ws)
    rung = lad.rungs[0]
    qid = rung.qids[0]
    gold = int(bank.queries(ws).set_index("qid").loc[qid, "ref_ids"][0])
    other = [int(d) for d in rung.doc_ids if d != gold][:2]
    # TREC: doc other[0] twice above the gold (the lower-scored repeat is dropped); JSONL: a repeat in the list
    (tmp_path / "r.trec").write_text(f"{qid} Q0 {other[0]} 1 3.0 t\n{qid} Q0 {other[0]} 2 2.5 t\n"
                                     f"{qid} Q0 {gold} 3 2.0 t\n{qid} Q0 {other[1]} 4 1.0 t\n")
    out = import_run(ws, "dup", tmp_path / "r.trec", rung=rung.name)
    assert out["duplicates_dropped"] == 1 and out["rankings_with_duplicates"] == 1
    row = runs.load_results(ws, runs=["dup"]).iloc[0]
    assert row["doc_ids"].tolist() == [other[0], gold, other[1]]
    np.testing.assert_allclose(row["scores"], [3.0, 2.0, 1.0])
    pq = metrics.per_query(runs.load_results(ws, runs=["dup"]), bank.queries(ws))
    assert pq.iloc[0]["MRR"] == pytest.approx(1 / 2)
    line = {"qid": qid, "rung": rung.name, "doc_ids": [other[0], other[0], other[0], gold], "scores": [4, 3, 2, 1]}
    (tmp_path / "r.jsonl").write_text(json.dumps(line) + "\n")
    assert main(["runs", "import", str(tmp_path / "r.jsonl"), "--name", "dupj", "-w", str(ws.path)]) == 0
    assert "dropped 2 repeated doc id(s) in 1 ranking(s)" in capsys.readouterr().out
    from emb_s_core.store import Workspace

    row = runs.load_results(Workspace(ws.path), runs=["dupj"]).iloc[0]  # written by the CLI's own workspace
    assert row["doc_ids"].tolist() == [other[0], gold] and row["scores"].tolist() == [4, 1]


BAD = [
    ("trec", "q00 Q0 5 1 1.0\n", "expected 6 fields", 1),
    ("trec", "q00 Q0 5 1 1.0 t\nq00 Q0 doc7 2 0.5 t\n", "docid 'doc7' is not an integer", 2),
    ("trec", "q00 Q0 5 1 1.0 t\nzz Q0 5 1 1.0 t\n", "unknown query id 'zz'", 2),
    ("trec", "q00 Q0 5 1 1.0 t\nq00 Q0 99999 2 0.5 t\n", "unknown doc id 99999", 1),
    ("jsonl", '{"qid": "q00", "doc_ids": [1]}\n{"qid": "q01", "doc_ids": ["a"]}\n', "integer doc ids", 2),
    ("jsonl", '{"qid": "q00", "doc_ids": [1], "scores": [1, 2]}\n', "one per doc id", 1),
    ("jsonl", '{"qid": "q00", "doc_ids": [1]}\n{"qid": "q00", "doc_ids": [2]}\n', "a second ranking", 2),
    ("jsonl", '{"qid": "q00", "doc_ids": [1]}\n{oops\n', "malformed JSON", 2),
    ("jsonl", '{"qid": "q00", "rung": "2K/law", "doc_ids": [0]}\n', "not evaluated on rung 2K/law", 1),
    ("jsonl", '{"qid": "q00", "rung": "full", "doc_ids": [0]}\n{"qid": "q00", "doc_ids": [0]}\n',
     "two rankings on rung full", 2),
]


@pytest.mark.parametrize("fmt,content,message,line", BAD)
def test_bad_run_files_name_file_and_line_and_write_nothing(ws, tmp_path, fmt, content, message, line):
    f = tmp_path / f"bad.{fmt}"
    f.write_text(content)
    version = ws.version
    with pytest.raises(EmbSError, match=message) as err:
        import_run(ws, "bad", f)
    assert f"bad.{fmt} line {line}" in str(err.value)
    assert ws.version == version and runs.get_run(ws, "bad") is None


def test_rung_member_check_and_cli(ws, tmp_path, capsys):
    lad = ladder.load(ws)
    rung = lad.rungs[0]
    outsider = int(np.setdiff1d(np.arange(240), rung.doc_ids)[0])
    f = tmp_path / "r.trec"
    f.write_text(f"{rung.qids[0]} Q0 {outsider} 1 1.0 t\n")
    assert main(["runs", "import", str(f), "--name", "x", "--rung", rung.name, "-w", str(ws.path)]) == 2
    assert f"not a member of rung {rung.name}" in capsys.readouterr().err
    f.write_text(f"{rung.qids[0]} Q0 {int(rung.doc_ids[0])} 1 1.0 t\n")
    assert main(["runs", "import", str(f), "--name", "x", "--rung", rung.name, "-w", str(ws.path)]) == 0
    assert "imported run 'x': 1 (rung, query) rankings" in capsys.readouterr().out
