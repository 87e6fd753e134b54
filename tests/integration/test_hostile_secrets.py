"""Secrets and spreadsheet formulas (issue 33 §5): a credential inside an endpoint URL, a key-shaped string in an
error or a reply, the writer lock file and the "busy" line never show a secret; CSV exports (cases, notes, tables)
escape cells a spreadsheet would run as formulas, and a case list round-trips through that escaping."""
from __future__ import annotations

import csv
import io
import json
import sqlite3
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from emb_s_core import export, llm, notes, retrievers
from emb_s_core.analysis import cases
from emb_s_core.cli import main
from emb_s_core.errors import EmbSError
from emb_s_core.llm.secrets import redact
from emb_s_core.store import LOCK_FILE, Workspace, WorkspaceBusy, lock_holder
from testkit.dashboard_factory import build_workspace
from testkit.http import MisbehavingEndpoint
from testkit.use_bank import scripted, use_base_ws, ws  # noqa: F401 (fixtures)

pytestmark = pytest.mark.timeout(180)
REPO = Path(__file__).resolve().parents[2]
SECRET = "hunter2-Very-Secret"
KEY = "sk-proj-" + "A1b2C3d4E5f6G7h8I9j0" * 2


@pytest.mark.parametrize("text,hidden", [
    (f"http://user:{SECRET}@host:8000/v1", SECRET),
    (f"https://{SECRET}@host/v1", SECRET),
    (f"the key is {KEY}.", KEY),
    ("Authorization: Bearer abcdef0123456789abcdef", "abcdef0123456789abcdef"),
    (f"GET /v1?api_key={SECRET}&x=1", SECRET),
    (f"emb-s eval --api-key {SECRET} -w ws", SECRET),
    ("hf_" + "x" * 30, "x" * 30),
    ("AKIA" + "ABCDEFGHIJKLMNOP", "ABCDEFGHIJKLMNOP"),
])
def test_every_secret_shaped_string_is_masked(text, hidden):
    masked = redact(text)
    assert hidden not in masked and "***" in masked


@pytest.mark.parametrize("text", ["the token count is 5", "max_tokens=32", "http://127.0.0.1:8000/v1",
                                  "sk-short", "a question about passwords"])
def test_ordinary_text_is_left_alone(text):
    assert redact(text) == text


def test_a_credential_in_the_api_base_is_never_printed(capfd):
    llm.load_litellm()
    with MisbehavingEndpoint(hang_s=30, lifetime_s=120) as ep:
        base = ep.base("500").replace("http://", f"http://user:{SECRET}@")
        r = retrievers.get("dense:litellm/openai/fake", api_base=base, timeout=1, retries=1)
        with pytest.raises(EmbSError) as caught:
            r.embedder.encode(["alpha"])
    shown = str(caught.value) + capfd.readouterr().err
    assert "gave up after 2 attempts" in str(caught.value) and "http://***@127.0.0.1" in str(caught.value)
    assert SECRET not in shown and "Traceback" not in shown


def test_a_reply_echoing_a_key_is_stored_and_returned_masked(tmp_path):
    llm.load_litellm()
    cache = tmp_path / "cache.sqlite"
    with MisbehavingEndpoint(lifetime_s=120) as ep:  # its reply quotes the question: "reply to: <question>"
        gw = llm.Gateway("openai/fake", cache_path=cache, context_window=4096, timeout=5,
                         params={"api_base": ep.base("ok")})
        result = gw.complete([{"role": "user", "content": f"echo {KEY}"}])
    assert result.status == llm.OK and KEY not in result.text and "***" in result.text
    with sqlite3.connect(cache) as db:
        assert not any(KEY in t for (t,) in db.execute("SELECT text FROM responses"))


def test_the_lock_file_and_the_busy_line_hold_no_command_line(tmp_path):
    """A writer started with a key on its command line: the lock file (which outlives a kill -9) keeps only the
    program and its subcommand, and a second writer's "busy" line shows no more."""
    ws = Workspace(tmp_path / "ws", create=True)
    hold = ("import sys, time\nfrom emb_s_core.store import Workspace\nws = Workspace(sys.argv[-1])\n"
            "with ws.writer():\n    print('held', flush=True)\n    time.sleep(60)\n")
    holder = subprocess.Popen([sys.executable, "-c", hold, "eval", "--api-key", SECRET,
                               "--api-base", f"http://u:{SECRET}@h/v1", "-w", str(ws.path)], cwd=REPO, stdout=subprocess.PIPE,
                              text=True, env={"PYTHONPATH": str(REPO), "PATH": "/usr/bin:/bin"})
    try:
        assert holder.stdout.readline().strip() == "held"
        raw = (ws.path / LOCK_FILE).read_text()
        assert SECRET not in raw and json.loads(raw)["command"] == "emb-s eval"
        with pytest.raises(WorkspaceBusy) as caught:
            with ws.writer(wait=False):
                pass
        assert SECRET not in str(caught.value) and f"pid {holder.pid}" in str(caught.value)
    finally:
        holder.kill()
        holder.wait()
    assert SECRET not in (ws.path / LOCK_FILE).read_text()  # after kill -9 too
    assert lock_holder(ws.path) is None or SECRET not in json.dumps(lock_holder(ws.path))


FORMULAS = ["=HYPERLINK(\"http://evil/\",\"click\")", "=cmd|'/c calc'!A1", "+1+2", "-2+3", "@SUM(A1)", "\tTAB"]


def test_csv_cells_a_spreadsheet_would_run_are_escaped():
    df = pd.DataFrame({"text": FORMULAS + ["plain", "-0.5"], "n": list(range(len(FORMULAS))) + [-1, -2]})
    rows = list(csv.reader(io.StringIO(export.table_to(df, "csv"))))
    texts = [r[0] for r in rows[1:]]
    assert texts[:len(FORMULAS)] == ["'" + f for f in FORMULAS]
    assert texts[-2:] == ["plain", "-0.5"] and [r[1] for r in rows[-2:]] == ["-1", "-2"]  # numbers stay numbers
    assert [export.csv_uncell(t) for t in texts] == FORMULAS + ["plain", "-0.5"]
    assert export.csv_cell("\rCR") == "'\rCR" and export.csv_uncell("'\rCR") == "\rCR"


@pytest.fixture(scope="module")
def ws_dir(tmp_path_factory):
    return build_workspace(tmp_path_factory.mktemp("csvinj"), n_queries=12, n_docs=100)


def test_notes_and_cases_exports_escape_formulas_and_round_trip(ws_dir, tmp_path, capsys):
    ws = Workspace(ws_dir)
    qid = ws.read("queries", columns=["qid"]).column("qid").to_pylist()[0]
    notes.save(ws, qid, ["=cmd|'/c calc'!A1"], "=HYPERLINK(\"http://evil\",\"x\")", run="overlap")
    out = tmp_path / "notes.csv"
    assert main(["notes", "export", "-w", str(ws_dir), "--out", str(out)]) == 0
    text = out.read_text()
    assert "'=HYPERLINK" in text and "'=cmd|" in text
    assert not any(cell.startswith(("=", "+", "@")) for row in csv.reader(io.StringIO(text)) for cell in row)
    listed = pd.DataFrame({"qid": [qid], "run": ["=evil()"], "rung": ["full"], "tags": [["@x"]]})
    written = cases.to_text(listed, "csv")
    assert "'=evil()" in written
    assert cases.read(written.encode("utf-8"), "csv")["run"].tolist() == ["=evil()"]  # the escape is undone


def test_a_reply_stored_unmasked_earlier_is_shown_masked(ws, monkeypatch):  # noqa: F811
    """A workspace written before replies were masked: the drill-down's answers (CLI and dashboard read them through
    analysis.drilldown) show the key masked."""
    from emb_s_core import qa
    from emb_s_core.analysis import drilldown
    from emb_s_core.llm import gateway

    monkeypatch.setattr(gateway, "redact", lambda text: str(text))  # as the store was written before
    gw = llm.Gateway.for_workspace(ws, "gpt-4o-mini", params={"mock_response": "x"}, backoff=0.001)
    scripted(monkeypatch, lambda m: f"the answer, and my key {KEY}")
    name = qa.answer(ws, gw, setting="global", rungs=["2K/geography"], limit=1)
    stored = qa.load_answers(ws, [name])
    assert stored["answer"].str.contains(KEY, regex=False).all()  # the old, unmasked store
    shown = drilldown.query_answers(ws, stored["qid"].iloc[0])
    assert not shown["answer"].str.contains(KEY, regex=False).any() and shown["answer"].str.contains("***", regex=False).all()


def test_every_error_line_of_the_cli_is_masked(ws_dir, capsys):
    """The last net: an error naming a secret-shaped string anywhere (here a run name a user pasted a key into) is
    printed masked."""
    assert main(["runs", "delete", f"run-{KEY}", "-w", str(ws_dir)]) == 2
    err = capsys.readouterr().err
    assert KEY not in err and "no run named 'run-***'" in err and err.startswith("emb-s: error: ")
