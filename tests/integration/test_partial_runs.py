"""Issue 31 §1 on a real imported bank: a native bank (HotpotQA paragraphs, three domains, documents carrying their
own source) whose per-query twin pools are uneven and smaller than a fusion's depth. ``eval -r hybrid --ladder
both`` used to end in a traceback there; a run that lost results is marked incomplete on the CLI, with its counts.
"""
from __future__ import annotations

import json
import shutil

import pytest

from emb_s_core import bank, evaluate, ladder, runs, twin
from emb_s_core.cli import main
from emb_s_core.store import Workspace
from tests.integration.test_eval_twin import assert_exact_per_query

pytestmark = pytest.mark.timeout(300)

HYBRID = "hybrid:bm25+dense:minilm-static"
DOMAINS = ("news", "science", "history")


def hotpot_native(shared_data, folder, n_questions: int = 45):
    """A native bank from the first HotpotQA questions: each question's paragraphs (gold and three distractors as
    hard negatives) in one of three domains, every document with a ``source`` of its own."""
    docs, queries, seen = [], [], {}
    with open(shared_data / "hotpotqa-dev-distractor-500" / "dev_subsampled.jsonl", encoding="utf-8") as f:
        for i, line in zip(range(n_questions), f):
            rec = json.loads(line)
            domain = DOMAINS[i % len(DOMAINS)]
            gold, negatives = [], []
            for c in rec["contexts"]:
                key = (c["title"], c["paragraph_text"])
                if key not in seen:
                    seen[key] = 1000 + len(seen)
                    docs.append({"doc_id": seen[key], "title": c["title"], "text": c["paragraph_text"],
                                 "domain": domain, "source": f"hotpot-{'ab'[len(seen) % 2]}"})
                (gold if c["is_supporting"] else negatives).append(seen[key])
            queries.append({"qid": rec["question_id"], "text": rec["question_text"],
                            "answer": rec["answers_objects"][0]["spans"][0], "ref_ids": gold,
                            "hard_negative_ids": negatives[:3], "domain": domain, "task_type": "multi-hop"})
    folder.mkdir(parents=True)
    for name, rows in (("documents", docs), ("queries", queries)):
        (folder / f"{name}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return folder


@pytest.fixture(scope="module")
def built(shared_data_module, tmp_path_factory):
    root = tmp_path_factory.mktemp("partial")
    bank.import_path(root / "ws", "native", hotpot_native(shared_data_module, root / "bank"))
    ws = Workspace(root / "ws")
    ladder.build(ws, ladder.LadderOptions(base="8K", domain_sizes=("8K", "16K"), reserve=256))
    twin.build(ws)
    return root / "ws"


@pytest.fixture(scope="module")
def shared_data_module():
    from tests.conftest import SHARED_DATA

    if not SHARED_DATA.is_dir():
        pytest.skip(f"shared datasets not found at {SHARED_DATA}")
    return SHARED_DATA


@pytest.fixture()
def ws(built, tmp_path):
    shutil.copytree(built, tmp_path / "ws")
    return Workspace(tmp_path / "ws")


def test_hybrid_on_small_uneven_twin_pools(ws, capsys):
    benign = ladder.load(ws, kind="benign")
    deltas = twin.deltas(ws)
    small = [r for r in benign.rungs if r.n_documents < 100]
    sizes = {len(twin.pool(r.doc_ids, deltas.get(r.name, {}).get(q))) for r in small for q in r.qids}
    assert small and len(sizes) > 1  # pools smaller than the fusion's depth of 100, and of different sizes
    assert main(["eval", "--workspace", str(ws.path), "-r", HYBRID, "--ladder", "both"]) == 0
    ws = Workspace(ws.path)  # the version the CLI wrote
    res = runs.load_results(ws, runs=[HYBRID])
    built_lad = ladder.load(ws)
    assert len(res) == sum(len(r.qids) for r in built_lad.rungs + benign.rungs)  # nothing lost
    ks = evaluate.k_per_rung(benign.rungs, 100)  # K clamped to each twin rung's smallest pool
    for r in small:  # each query's list equals its own pool searched alone by the fusion
        assert_exact_per_query(ws, res, ladder.Ladder([r], benign.kept, benign.options), HYBRID, ks[r.name],
                               per_rung=2)


@pytest.fixture(scope="module")
def partial_ws(built, tmp_path_factory):
    """bm25 and the hybrid on both ladders, then the hybrid's results of the news queries deleted (what the issue's
    crash left: one batch lost on both ladders)."""
    root = tmp_path_factory.mktemp("partial_runs") / "ws"
    shutil.copytree(built, root)
    ws = Workspace(root)
    evaluate.evaluate(ws, "bm25", ladder="both")
    evaluate.evaluate(ws, HYBRID, ladder="both")
    news = ladder.load(ws).rung("8K/news").qids[:6]  # kept queries: evaluated on every rung of their domain
    with ws.transaction():
        ws.delete_rows("results", f"run = '{HYBRID}' AND qid IN ({', '.join(repr(q) for q in news)})")
    return root, news


def expected_counts(ws):
    lad = ladder.load_all(ws)
    return sum(len(r.qids) for r in lad.rungs)


def test_runs_list_marks_the_incomplete_run(partial_ws, capsys):
    root, news = partial_ws
    ws = Workspace(root)
    total = expected_counts(ws)
    lost = sum(len(set(r.qids) & set(news)) for r in ladder.load_all(ws).rungs)
    assert main(["runs", "list", "--workspace", str(root)]) == 0
    out = capsys.readouterr().out
    line = next(ln for ln in out.splitlines() if ln.startswith(HYBRID))
    assert f"INCOMPLETE: {total - lost:,} of {total:,} (rung, query) results, {lost:,} missing" in line
    assert "complete" in next(ln for ln in out.splitlines() if ln.startswith("bm25 "))
    assert main(["runs", "list", "--workspace", str(root), "--json"]) == 0
    rows = {r["run"]: r for r in json.loads(capsys.readouterr().out)}
    assert (rows[HYBRID]["results"], rows[HYBRID]["expected"], rows[HYBRID]["missing"]) == (total - lost, total, lost)
    assert rows["bm25"]["state"] == "complete" and rows["bm25"]["missing"] == 0


def test_comparisons_use_the_queries_both_runs_have(partial_ws, capsys):
    root, news = partial_ws
    # the leaderboard: at the base scale the hybrid lacks the news queries, so bm25 is scored without them too
    assert main(["leaderboard", "--workspace", str(root), "--baseline", "bm25", "--detail"]) == 0
    out = capsys.readouterr().out
    note = out[out.index("Compared over the queries every run has"):]
    assert "8K" in note and f"{len(news)} missing from {HYBRID}" in note
    assert f"run '{HYBRID}' is INCOMPLETE" in out
    from emb_s_core.analysis import leaderboard

    board = leaderboard.for_workspace(Workspace(root), baseline="bm25", n_resamples=200, n_boot=50)
    cells = board.cells.set_index(["run", "x" if "x" in board.cells else "scale"])
    n_bm25, n_hybrid = cells.loc[("bm25", "8K"), "n"], cells.loc[(HYBRID, "8K"), "n"]
    assert n_bm25 == n_hybrid == cells.loc[(HYBRID, "8K"), "n_paired"]
    assert board.table()[leaderboard.RESULTS].tolist()[:2] == ["complete", board.incomplete[HYBRID]]
    # compare: the paired test and its note
    assert main(["compare", "--workspace", str(root), "bm25", HYBRID, "--n-resamples", "200"]) == 0
    out = capsys.readouterr().out
    assert f"missing from {HYBRID}" in out and f"run '{HYBRID}' is INCOMPLETE" in out
    # the paper table: the row is marked, the note says which queries were left out
    assert main(["report", "--workspace", str(root), "--paper-table"]) == 0
    out = capsys.readouterr().out
    assert f"{HYBRID} [INCOMPLETE]" in out and f"missing from {HYBRID}" in out
    # the illusion gap and effective scale
    assert main(["report", "--workspace", str(root), "--illusion", "--n-boot", "50"]) == 0
    out = capsys.readouterr().out
    assert f"missing from {HYBRID}" in out and f"run '{HYBRID}' is INCOMPLETE" in out
    # the score table
    assert main(["report", "--workspace", str(root), "--metrics", "SR@10", "--n-boot", "0"]) == 0
    assert f"run '{HYBRID}' is INCOMPLETE" in capsys.readouterr().out


def test_figure_caption_marks_the_incomplete_run(partial_ws):
    from emb_s_core.analysis import views

    root, _ = partial_ws
    fig = views.figure(Workspace(root), "heatmap", "SR@10")
    text = json.dumps(fig.to_plotly_json(), default=str)
    assert "INCOMPLETE" in text and f"common queries only ({HYBRID} lacks 6 in " in text


def test_explain_names_the_incomplete_run(partial_ws, capsys):
    root, _ = partial_ws
    assert main(["explain", "--workspace", str(root), "--run", HYBRID, "--from", "shared", "--to", "full"]) == 0
    assert f"note: run '{HYBRID}' is INCOMPLETE" in capsys.readouterr().out
    assert main(["explain", "--workspace", str(root), "--run", "bm25", "--from", "shared", "--to", "full"]) == 0
    assert "INCOMPLETE" not in capsys.readouterr().out


def test_a_run_on_the_built_ladder_alone_is_complete_beside_a_twin(ws):
    """Expected results are those of the ladders the run was asked for: a built-only run on a workspace that also
    holds a twin is complete; extended to the twin, it stays complete."""
    from emb_s_core.analysis import run_state

    evaluate.evaluate(ws, "bm25", name="b")
    ws = Workspace(ws.path)
    row = run_state.for_workspace(ws).set_index("run").loc["b"]
    assert row["state"] == "complete" and row["expected"] == sum(len(r.qids) for r in ladder.load(ws).rungs)
    evaluate.evaluate(ws, "bm25", name="b", ladder="benign")
    row = run_state.for_workspace(Workspace(ws.path)).set_index("run").loc["b"]
    assert row["state"] == "complete" and row["expected"] == expected_counts(ws)
