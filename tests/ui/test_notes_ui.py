"""AppTest of notes and tags in the dashboard on a copy of the real small workspace: add and edit on the drill-down,
the note survives a new import and a ladder rebuild, tags filter Overview / Compare / Leaderboard, case lists
download from the failures walk, and everything typed is stored and shown verbatim (never as Markdown)."""
from __future__ import annotations

import io
import json
import shutil

import pandas as pd
import pytest

from emb_s_core import bank, ladder, notes
from emb_s_core.store import Workspace
from test_dashboard_pages import assert_clean, plotly_specs, run_page, use_ws  # noqa: F401 (fixture)

pytestmark = pytest.mark.timeout(240)
DRILL = "3_Query_drilldown.py"
MARKUP = "**bold?** <b>html?</b> [link](http://x)"


@pytest.fixture
def copy(app_env, tmp_path):
    dst = tmp_path / "copy"
    shutil.copytree(app_env, dst)
    return dst


def tag_box(at):
    return next(m for m in at.multiselect if m.label == "Tags")


def note_box(at):
    return next(t for t in at.text_area if t.label == "Note")


def open_case(ws, **extra):
    return run_page(DRILL, {"ws": str(ws), "by": "failures", "run": "overlap", "rung": "full", "metric": "R@1",
                            **extra})


def test_add_edit_and_delete_on_the_drilldown(copy):
    at = open_case(copy)
    assert_clean(at)
    assert at.selectbox(key="note_scope").options == ["this query (any run, any rung)",
                                                      "this query for overlap at full"]
    qid = at.selectbox(key="fail_pick").value
    tag_box(at).set_value(["date confusion", "<i>odd</i>"])
    note_box(at).input(MARKUP)
    at.button(key="note_save").click().run()
    assert_clean(at)
    assert at.success and at.success[0].value == "Note saved."
    got = notes.get(Workspace(copy), qid, "overlap", "full")
    assert got["tags"] == ["date confusion", "<i>odd</i>"] and got["text"] == MARKUP
    assert tag_box(at).value == ["date confusion", "<i>odd</i>"] and note_box(at).value == MARKUP
    assert not any(MARKUP in m.value or "<i>odd</i>" in m.value for m in at.markdown)  # text, never Markdown
    # edit: the workspace's tags are offered, one is dropped, the note rewritten
    assert "date confusion" in tag_box(at).options
    tag_box(at).set_value(["date confusion"])
    note_box(at).input("second look: the hard negative copies the title")
    at.button(key="note_save").click().run()
    got = notes.get(Workspace(copy), qid, "overlap", "full")
    assert got["tags"] == ["date confusion"] and got["text"].startswith("second look")
    # a query-wide note is a second case of the same query
    at.selectbox(key="note_scope").set_value(0).run()
    assert tag_box(at).value == [] and "date confusion" in tag_box(at).options
    tag_box(at).set_value(["whole query"])
    at.button(key="note_save").click().run()
    assert [n["run"] for n in notes.load(Workspace(copy)).to_dict("records")] == ["overlap", None]
    at.button(key="note_delete").click().run()
    assert_clean(at)
    assert len(notes.load(Workspace(copy))) == 1


def test_a_bad_tag_is_a_message_and_nothing_is_written(copy):
    at = open_case(copy)
    tag_box(at).set_value(["a,b"])
    at.button(key="note_save").click().run()
    assert not at.exception and at.error and "has a comma" in at.error[0].value
    assert notes.load(Workspace(copy)).empty


def test_the_note_survives_a_new_import_and_a_ladder_rebuild(copy, tmp_path):
    at = open_case(copy)
    qid = at.selectbox(key="fail_pick").value
    tag_box(at).set_value(["keep"])
    note_box(at).input("still here after the rebuild")
    at.button(key="note_save").click().run()
    more = tmp_path / "more"
    more.mkdir()
    (more / "documents.jsonl").write_text(json.dumps({"doc_id": 90000, "text": "new words", "domain": "history"})
                                          + "\n")
    (more / "queries.jsonl").write_text(json.dumps({"qid": "new-q", "text": "new?", "answer": "a",
                                                    "ref_ids": [90000], "domain": "history"}) + "\n")
    bank.import_path(copy, "native", more, source="more")
    ws = Workspace(copy)
    assert ladder.stale_reason(ws)  # the new import made the ladder stale: rebuild it, as a user would
    ladder.build(ws, ladder.LadderOptions(base="1K", domain_sizes=("1K", "2K", "4K"), reserve=64))
    assert ladder.stale_reason(Workspace(copy)) is None
    again = open_case(copy, by="search", q=qid)
    assert_clean(again)
    assert tag_box(again).value == ["keep"] and note_box(again).value == "still here after the rebuild"


def test_tags_filter_overview_and_compare(copy):
    ws = Workspace(copy)
    notes.save(ws, "q0001", ["pair"], "")
    notes.save(ws, "q0007", ["pair"], "", run="overlap-idf")
    at = run_page("2_Overview.py", {"ws": str(copy), "x": "rung", "tag": "pair"})
    assert_clean(at)
    assert at.multiselect(key="url_tag").value == ["pair"]
    table = at.dataframe[0].value
    assert int(table[(table["run"] == "overlap") & (table["rung"] == "full")]["n"].iloc[0]) == 2
    assert "n = 2 queries" in json.dumps(plotly_specs(at)[0]["layout"])
    cmp = run_page("4_Compare.py", {"ws": str(copy), "a": "overlap", "b": "overlap-idf", "tag": "pair"})
    assert_clean(cmp)
    paired = next(d.value for d in cmp.dataframe if "p_value" in d.value.columns)
    assert paired["n"].max() == 2
    every = run_page("4_Compare.py", {"ws": str(copy), "a": "overlap", "b": "overlap-idf"})
    assert next(d.value for d in every.dataframe if "p_value" in d.value.columns)["n"].max() > 2


def test_failure_case_list_download(copy, downloads):
    at = open_case(copy)
    assert_clean(at)
    csv_name = next(n for n in downloads if n.startswith("failures_R_1_overlap_full") and n.endswith(".csv"))
    df = pd.read_csv(io.StringIO(downloads[csv_name]().decode()))
    assert df["run"].eq("overlap").all() and df["rung"].eq("full").all() and len(df) > 0
    assert df["url"].str.contains("/query_drilldown?").all() and at.selectbox(key="fail_pick").value in set(df["qid"])
    assert df["url"].str.contains("?ws=copy&", regex=False).all()  # named relative to the data folder, shareable
    jsonl = next(n for n in downloads if n.startswith("failures_R_1_overlap_full") and n.endswith(".jsonl"))
    first = json.loads(downloads[jsonl]().decode().splitlines()[0])
    assert isinstance(first["gold_ranks"], list) and first["gold_ranks"][0] != 1


def test_tags_filter_access_vs_use(use_ws, monkeypatch, tmp_path):
    monkeypatch.setenv("EMB_S_DATA", str(tmp_path))  # the URL opens workspaces under it
    dst = tmp_path / "use"
    shutil.copytree(use_ws, dst)
    notes.save(Workspace(dst), "g01", ["misread"], "the reader was told to get it wrong")
    notes.save(Workspace(dst), "p00", ["fine"], "")
    params = {"ws": str(dst), "run": "oracle", "qa": "qa1"}
    at = run_page("6_Access_vs_Use.py", {**params, "tag": "misread"})
    assert_clean(at)
    assert at.dataframe[1].value["qid"].tolist() == ["g01"] and int(at.dataframe[0].value["n"].sum()) == 1
    at = run_page("6_Access_vs_Use.py", {**params, "tag": "fine"})
    assert_clean(at)
    assert "0 (rung, query) cells" in at.caption[-1].value  # p00 is answered well: no use failure among "fine"


def test_a_save_while_another_process_writes_says_who_and_keeps_the_text(copy):
    """An `emb-s eval` holds the writer lock for its whole run: Save does not hang behind it but names the writer,
    writes nothing, keeps what was typed, and works once the writer is gone."""
    import os
    import subprocess
    import sys
    import time
    from pathlib import Path

    repo = Path(__file__).resolve().parents[2]
    hold = ("import sys, time\nfrom emb_s_core.store import Workspace\nws = Workspace(sys.argv[1])\n"
            "with ws.writer():\n    print('held', flush=True)\n    time.sleep(120)\n")
    holder = subprocess.Popen([sys.executable, "-c", hold, str(copy)], cwd=repo, stdout=subprocess.PIPE, text=True,
                              env={**os.environ, "PYTHONPATH": str(repo)})
    try:
        assert holder.stdout.readline().strip() == "held"
        at = open_case(copy)
        note_box(at).input("typed while an eval runs")
        start = time.monotonic()
        at.button(key="note_save").click().run()
        assert time.monotonic() - start < 30 and not at.exception and not at.success
        warning = at.warning[0].value if at.warning else ""
        assert warning.startswith("Not saved: another command is writing this workspace right now")
        # a visitor sees no server path, pid or command line (issue 33 §5)
        assert str(holder.pid) not in warning and str(copy) not in warning and "python" not in warning
        assert note_box(at).value == "typed while an eval runs" and notes.load(Workspace(copy)).empty
    finally:
        holder.kill()
        holder.wait()
    at.button(key="note_save").click().run()
    assert at.success and notes.load(Workspace(copy))["text"].tolist() == ["typed while an eval runs"]


def test_a_save_while_a_real_eval_waits_on_its_endpoint_is_busy_then_saves(copy):
    """A real `emb-s eval` (dense:litellm against a loopback endpoint that hangs) holds the writer lock from before
    its first write: while it waits, Save answers "busy" naming the eval's pid, writes nothing and keeps the text;
    once the eval has given up (one error line, exit 2), the same Save goes through."""
    import os
    import subprocess
    import sys
    import time
    from pathlib import Path

    from emb_s_core.store import lock_holder
    from testkit.http import MisbehavingEndpoint

    repo = Path(__file__).resolve().parents[2]
    version = Workspace(copy).version
    with MisbehavingEndpoint(hang_s=90, lifetime_s=200) as ep:
        cmd = [sys.executable, "-m", "emb_s_core.cli", "eval", "-w", str(copy), "-r", "dense:litellm/openai/fake",
               "--api-base", ep.base("hang"), "--timeout", "60", "--retries", "0", "--k", "5"]
        evaluation = subprocess.Popen(cmd, cwd=repo, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                      env={**os.environ, "PYTHONPATH": str(repo)})
        try:
            deadline = time.monotonic() + 90
            while not ep.sent("hang") and time.monotonic() < deadline and evaluation.poll() is None:
                time.sleep(0.2)  # until the eval's first request is in flight
            assert ep.sent("hang"), evaluation.stderr.read() if evaluation.poll() is not None else "no request"
            holder = lock_holder(copy)
            assert holder["pid"] == evaluation.pid and "eval" in holder.get("command", "")
            assert Workspace(copy).version <= version + 1  # at most the run's registration, under this lock
            at = open_case(copy)
            note_box(at).input("typed while a real eval runs")
            at.button(key="note_save").click().run()
            assert not at.exception and not at.success
            assert at.warning and "another command is writing this workspace" in at.warning[0].value
            assert str(evaluation.pid) not in at.warning[0].value and str(copy) not in at.warning[0].value
            assert note_box(at).value == "typed while a real eval runs" and notes.load(Workspace(copy)).empty
        finally:
            ep.close()  # the hanging request ends: the eval gives up (no retries) and exits
            try:
                _, err = evaluation.communicate(timeout=60)
            finally:
                evaluation.kill()
        assert evaluation.returncode == 2 and "Traceback" not in err
        assert err.strip().splitlines()[-1].startswith("emb-s: error: ")
    at.button(key="note_save").click().run()
    assert at.success and notes.load(Workspace(copy))["text"].tolist() == ["typed while a real eval runs"]


def test_quadrant_cases_download_as_a_case_list(use_ws, downloads, monkeypatch, tmp_path):
    """Access vs Use: a quadrant's cells are a case list too (the access run at each rung, with drill-down links),
    so a reviewer can tag a colleague's use failures."""
    monkeypatch.setenv("EMB_S_DATA", str(tmp_path))
    dst = tmp_path / "use"
    shutil.copytree(use_ws, dst)
    at = run_page("6_Access_vs_Use.py", {"ws": str(dst), "run": "oracle", "qa": "qa1"})
    assert_clean(at)
    shown = next(d.value for d in at.dataframe if "answer" in d.value.columns)
    name = next(n for n in downloads if n.startswith("use_failure_oracle_qa1") and n.endswith(".csv"))
    df = pd.read_csv(io.StringIO(downloads[name]().decode()))
    assert sorted(zip(df["qid"], df["rung"])) == sorted(zip(shown["qid"], shown["rung"])) and len(df)
    assert df["run"].eq("oracle").all() and df["url"].str.contains("/query_drilldown?").all()
