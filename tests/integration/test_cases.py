"""Shareable case lists on a real small workspace: export a cell's failures (CSV / JSONL) with ranks, tags, notes
and drill-down links; import the list as a tag into a copy of the workspace (round trip); bad lists refused."""
from __future__ import annotations

import io
import json
import shutil
from urllib.parse import parse_qs, urlparse

import pandas as pd
import pytest

from emb_s_core import notes
from emb_s_core.analysis import cases, drilldown, views
from emb_s_core.cli import main
from emb_s_core.errors import EmbSError
from emb_s_core.store import Workspace
from testkit.dashboard_factory import build_workspace


@pytest.fixture(scope="module")
def ws_dir(tmp_path_factory):
    d = build_workspace(tmp_path_factory.mktemp("cases"), n_queries=18, n_docs=150)
    first = failures(d)["qid"].iloc[0]
    notes.save(Workspace(d), first, ["seen before"], "gold ranked below its twin", run="overlap")
    notes.save(Workspace(d), first, ["other run"], "not this case", run="overlap-idf")
    return d


def failures(ws_dir):
    return drilldown.failures(views.per_query(Workspace(ws_dir)), "overlap", "full", "R@1")


def test_export_failures_with_ranks_tags_notes_and_links(ws_dir, tmp_path, capsys):
    out = tmp_path / "fails.jsonl"
    assert main(["cases", "export", "-w", str(ws_dir), "--run", "overlap", "--rung", "full", "--metric", "R@1",
                 "--out", str(out), "--base-url", "http://lab:9000/"]) == 0
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    expected = failures(ws_dir)
    assert [r["qid"] for r in rows] == expected["qid"].tolist() and len(rows) > 0
    assert {r["run"] for r in rows} == {"overlap"} and {r["rung"] for r in rows} == {"full"}
    for r, (_, e) in zip(rows, expected.iterrows()):
        assert r["gold_ranks"] == list(e["gold_ranks"]) and r["hn_ranks"] == list(e["hn_ranks"])
        assert len(r["gold_ids"]) == len(r["gold_ranks"]) and r["gold_ranks"][0] != 1
        link = urlparse(r["url"])
        assert link.netloc == "lab:9000" and link.path == "/query_drilldown"
        assert parse_qs(link.query) == {"ws": [str(ws_dir)], "by": ["search"], "q": [r["qid"]], "run": ["overlap"],
                                        "rung": ["full"]}
    noted = rows[0]  # the fixture's note on (first failure, overlap); the note on another run does not cover it
    assert noted["tags"] == ["seen before"] and noted["notes"] == "gold ranked below its twin"
    assert all(r["tags"] == [] for r in rows[1:])
    csv_out = tmp_path / "fails.csv"
    assert main(["cases", "export", "-w", str(ws_dir), "--run", "overlap", "--rung", "full", "--metric", "R@1",
                 "--out", str(csv_out)]) == 0
    df = pd.read_csv(csv_out)
    assert list(df.columns) == cases.COLUMNS and df["qid"].tolist() == expected["qid"].tolist()
    assert json.loads(df["gold_ranks"].iloc[0]) == list(expected["gold_ranks"].iloc[0])


def test_round_trip_into_a_copy_as_a_tag(ws_dir, tmp_path, capsys):
    listed = tmp_path / "list.csv"
    main(["cases", "export", "-w", str(ws_dir), "--run", "overlap", "--rung", "full", "--metric", "R@1",
          "--out", str(listed)])
    copy = tmp_path / "copy"
    shutil.copytree(ws_dir, copy)
    capsys.readouterr()
    assert main(["cases", "import", str(listed), "--tag", "from colleague", "-w", str(copy)]) == 0
    n = len(pd.read_csv(listed))
    assert f"tagged {n} of {n} cases" in capsys.readouterr().out
    tagged = notes.load(Workspace(copy))
    mine = tagged[tagged["tags"].map(lambda t: "from colleague" in t)]
    assert sorted(mine["qid"]) == sorted(failures(ws_dir)["qid"])
    assert set(mine["run"]) == {"overlap"} and set(mine["rung"]) == {"full"}
    assert not notes.load(Workspace(ws_dir))["tags"].map(lambda t: "from colleague" in t).any()  # original untouched
    again = tmp_path / "again.jsonl"
    main(["cases", "export", "-w", str(copy), "--tag", "from colleague", "--run", "overlap", "--out", str(again)])
    back = [json.loads(line) for line in again.read_text().splitlines()]
    full = [r for r in back if r["rung"] == "full"]
    assert sorted(r["qid"] for r in full) == sorted(mine["qid"]) and all("from colleague" in r["tags"] for r in full)
    assert main(["cases", "import", str(listed), "--tag", "from colleague", "-w", str(copy)]) == 0
    assert "tagged 0 of" in capsys.readouterr().out  # importing twice changes nothing


def test_unknown_queries_are_skipped_and_unknown_runs_dropped(ws_dir, tmp_path):
    copy = tmp_path / "c2"
    shutil.copytree(ws_dir, copy)
    data = "\n".join(json.dumps(r) for r in [{"qid": "q0001", "run": "overlap", "rung": "full"},
                                             {"qid": "elsewhere", "run": "overlap", "rung": "full"},
                                             {"qid": "q0002", "run": "their-run", "rung": "full"}]).encode()
    r = cases.import_as_tag(Workspace(copy), data, "mixed", fmt="jsonl")
    assert r == {"cases": 3, "tagged": 2, "unknown_queries": 1, "runs_dropped": 1}
    assert notes.get(Workspace(copy), "q0002")["tags"] == ["mixed"]  # on the query, since the run is not here


@pytest.mark.parametrize("name, data, message", [
    ("a.jsonl", b'{"qid": "q1"}\nnot json\n', "a.jsonl line 2: malformed JSON"),
    ("a.jsonl", b'["q1"]\n', "a.jsonl line 1: a case must be a JSON object"),
    ("a.jsonl", b'{"qid": 7}\n', "field 'qid': expected a string, found integer 7"),
    ("a.jsonl", b'{"qid": "q1", "run": ["x"]}\n', "field 'run': expected a string"),
    ("a.csv", b"id,run\nq1,x\n", "the CSV has no qid column"),
    ("a.csv", b"qid,run\n,x\n", "a.csv line 2: missing field 'qid'"),
    ("a.csv", b"qid\n", "has no cases"),
    ("a.csv", b"\xff\xfe\x00", "not UTF-8"),
    ("a.txt", b"qid\nq1\n", "cannot tell the case-list format"),
])
def test_bad_lists_are_refused_and_change_nothing(ws_dir, tmp_path, capsys, name, data, message):
    path = tmp_path / name
    path.write_bytes(data)
    before = Workspace(ws_dir).version
    assert main(["cases", "import", str(path), "--tag", "t", "-w", str(ws_dir)]) == 2
    err = capsys.readouterr().err
    assert message in err and len(err.strip().splitlines()) == 1
    assert Workspace(ws_dir).version == before


def test_export_needs_a_view_and_known_names(ws_dir, tmp_path):
    with pytest.raises(EmbSError, match="say which cases"):
        cases.for_workspace(Workspace(ws_dir))
    with pytest.raises(EmbSError, match="no results for run 'nobody'"):
        cases.for_workspace(Workspace(ws_dir), run="nobody", rung="full")
    with pytest.raises(EmbSError, match="no results at rung or scale '3M'"):
        cases.for_workspace(Workspace(ws_dir), run="overlap", rung="3M")
    pooled = cases.for_workspace(Workspace(ws_dir), run="overlap", rung="1K", metric="R@1")
    assert set(pooled["rung"]) <= {"1K/history", "1K/science", "1K/sports"}  # a scale: the real rung per case
    text = cases.to_text(pooled, "csv")
    assert pd.read_csv(io.StringIO(text)).shape[0] == len(pooled)


def test_export_of_a_metric_no_query_defines_says_why(tmp_path, capsys):
    """R@1 on a bank of multi-source questions (HotpotQA): 0 cases, and the command says why."""
    from emb_s_core import bank, runs
    from tests.conftest import write_jsonl

    write_jsonl(tmp_path / "bank" / "documents.jsonl", [{"doc_id": d, "text": f"doc {d}"} for d in range(1, 5)])
    write_jsonl(tmp_path / "bank" / "queries.jsonl", [{"qid": q, "text": q, "answer": "x", "ref_ids": [1, 2]}
                                                      for q in ("q1", "q2")])
    bank.import_path(tmp_path / "ws", "native", tmp_path / "bank")
    ws = Workspace(tmp_path / "ws")
    runs.create_run(ws, "hand", "retriever", "hand", {"k": 2})
    runs.save_results(ws, "hand", [{"rung": "full", "qid": "q1", "doc_ids": [1, 2]},
                                   {"rung": "full", "qid": "q2", "doc_ids": [3, 4]}])
    out = tmp_path / "r1.csv"
    capsys.readouterr()
    assert main(["cases", "export", "-w", str(ws.path), "--run", "hand", "--rung", "full", "--metric", "R@1",
                 "--out", str(out)]) == 0
    err = capsys.readouterr().err
    assert "wrote 0 cases" in err and "R@1 counts single-source queries only" in err and "2 queries" in err
    assert main(["cases", "export", "-w", str(ws.path), "--run", "hand", "--rung", "full", "--metric", "SR@10",
                 "--out", str(out)]) == 0
    assert "wrote 1 cases" in capsys.readouterr().err and pd.read_csv(out)["qid"].tolist() == ["q2"]
    assert main(["cases", "export", "-w", str(ws.path), "--run", "hand", "--rung", "full", "--metric", "FR@1",
                 "--out", str(out)]) == 0  # q1 has both gold in its top-2, but not in its top-1: both fail FR@1
    assert "wrote 2 cases" in capsys.readouterr().err
    assert main(["report", "-w", str(ws.path), "--metrics", "SR@10,R@1", "--n-boot", "50"]) == 0  # no rows of nan
    out, err = capsys.readouterr()
    assert " SR@10 " in out and " R@1 " not in out and "nan" not in out
    assert "note: R@1 left out: it counts single-source queries only" in err
    assert main(["report", "-w", str(ws.path), "--metrics", "SR@10,R@1", "--n-boot", "50", "--keep-undefined"]) == 0
    out, err = capsys.readouterr()
    assert " R@1 " in out and "left out" not in err


def test_exported_links_name_a_workspace_under_the_data_folder_relative_to_it(ws_dir, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("EMB_S_DATA", str(ws_dir.parent))  # the dashboard serves this folder: ?ws=<name> opens it
    out = tmp_path / "fails.jsonl"
    assert main(["cases", "export", "-w", str(ws_dir), "--run", "overlap", "--rung", "full", "--metric", "R@1",
                 "--out", str(out)]) == 0
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert rows and all(parse_qs(urlparse(r["url"]).query)["ws"] == [ws_dir.name] for r in rows)
