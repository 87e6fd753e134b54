"""`emb-s demo`: bank, ladder and runs in one resumable command."""
from __future__ import annotations

from emb_s_core import demo, ladder, runs
from emb_s_core.cli import main
from emb_s_core.store import Workspace


def test_demo_builds_bank_ladder_and_runs_then_resumes_as_no_op(tmp_path, capsys):
    ws_dir = tmp_path / "demo"
    assert main(["demo", "--workspace", str(ws_dir), "--tokens", "64K", "--retrievers", "bm25"]) == 0
    assert "demo workspace ready" in capsys.readouterr().out
    ws = Workspace(ws_dir)
    lad = ladder.load(ws)
    # the eight 64K pools already hold the whole 64K bank: `full` would repeat the shared rung and is not built twice
    assert lad.names[0].startswith("64K/") and lad.names[-1] == "512K"
    results = runs.load_results(ws, ["bm25"])
    smallest = min(r.n_documents for r in lad.rungs)
    assert smallest < 100 and results["doc_ids"].map(len).max() == smallest  # k capped by the smallest rung
    twin = ladder.load(ws, kind="benign")
    assert twin.names == [f"benign:{n}" for n in lad.names]
    pairs = {(r.name, q) for r in lad.rungs + twin.rungs for q in r.qids}  # smaller twin rungs ranked whole
    assert set(zip(results["rung"], results["qid"])) == pairs
    assert demo.is_complete(ws, ("bm25",))
    version = ws.version
    stages: list[str] = []
    demo.build(ws_dir, tokens=64 * 1024, retrievers=("bm25",), progress=lambda s, f: stages.append(s))
    assert Workspace(ws_dir).version == version  # nothing regenerated, rebuilt or re-ranked
    assert any(s.startswith("evaluating bm25") for s in stages)
