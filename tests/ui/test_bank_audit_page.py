"""AppTest for the Bank audit page on a real workspace whose verdicts came from collide.run (mock_response)."""
from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from emb_s_core import bank, collide, ladder
from emb_s_core.store import Workspace


pytestmark = pytest.mark.timeout(300)
REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def audit_ws(tmp_path_factory) -> Path:
    from emb_s_core import llm
    from tests.conftest import native_bank
    from tests.integration.test_collide import DOCS, QUERIES

    root = tmp_path_factory.mktemp("audit")
    docs = [dict(d) for d in DOCS]
    docs[1]["text"] += " <script>alert('x')</script> **not bold**"  # must be shown as text, not run or rendered
    bank.import_path(root / "ws", "native", native_bank(root / "bank", docs, QUERIES))
    ws = Workspace(root / "ws")
    ladder.build(ws, ladder.LadderOptions(base="2K", domain_sizes=("2K",), reserve=64))
    replies = {"qa": "Label: Hard Negative\nRationale: another year.", "qb": "Label: False Negative\nRationale: same",
               "qc": "Label: Conflict\nRationale: other enzyme.", "qd": "no idea"}
    for qid, reply in replies.items():
        gw = llm.Gateway.for_workspace(ws, "gpt-4o-mini", max_tokens=32, params={"mock_response": reply})
        collide.run(ws, gw, k=2, qids=[qid])
    collide.apply(Workspace(root / "ws"))
    return root / "ws"


def run_page(params: dict) -> AppTest:
    at = AppTest.from_file(str(REPO / "app.py"), default_timeout=120)
    for k, v in params.items():
        at.query_params[k] = v
    at.switch_page("pages/7_Bank_audit.py")
    return at.run()


def test_page_shows_counts_table_and_side_by_side(audit_ws, monkeypatch, tmp_path):
    monkeypatch.setenv("EMB_S_DATA", str(audit_ws.parent))  # the URL opens workspaces under the data folder only
    at = run_page({"ws": str(audit_ws), "qid": "qa"})
    assert not at.exception, [e.message for e in at.exception]
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["Queries tested"] == "4"
    assert metrics["Hard Negative"] == "2" and metrics["Conflict"] == "2" and metrics["unparseable"] == "2"
    assert any("stale" in w.value for w in at.warning)  # the verdicts were applied: the ladder must be rebuilt
    table = at.dataframe[0].value
    assert len(table) == 8 and set(table["qid"]) == {"qa", "qb", "qc", "qd"}
    assert table.loc[table["qid"] == "qc", "retired"].all()
    texts = [t.value for t in at.text]
    assert any("<script>alert('x')</script> **not bold**" in t for t in texts)  # escaped, verbatim
    assert any(t.startswith("Rationale: another year.") for t in texts)
    assert not any("<script>" in m.value for m in at.markdown)
    assert [b.label for b in at.get("download_button")][:2] == ["⬇ CSV", "⬇ LaTeX"]


def test_filters_narrow_the_table(audit_ws, monkeypatch, tmp_path):
    monkeypatch.setenv("EMB_S_DATA", str(audit_ws.parent))
    at = run_page({"ws": str(audit_ws), "verdict": "Conflict"})
    assert not at.exception
    table = at.dataframe[0].value
    assert set(table["verdict"]) == {"Conflict"} and set(table["qid"]) == {"qc"}
    at = run_page({"ws": str(audit_ws), "q": "germany"})
    assert set(at.dataframe[0].value["qid"]) == {"qb"}


def test_page_without_verdicts_explains_what_to_do(monkeypatch, tmp_path):
    from tests.conftest import native_bank

    monkeypatch.setenv("EMB_S_DATA", str(tmp_path))
    bank.import_path(tmp_path / "ws", "native", native_bank(tmp_path / "bank"))
    at = run_page({"ws": str(tmp_path / "ws")})
    assert not at.exception
    assert any("emb-s collide" in i.value or "command below" in i.value for i in at.info)
    # the command names this workspace's real folder, not a placeholder, relative to the data folder: a visitor
    # sees no absolute server path (issue 33 §5)
    assert any(c.value.startswith("emb-s collide --workspace ws") for c in at.code), [c.value for c in at.code]
    assert not any(str(tmp_path) in c.value for c in at.code)
