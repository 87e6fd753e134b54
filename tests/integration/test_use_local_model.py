"""End to end with the real offline model (SmolLM2-135M through the litellm custom provider), via the CLI:
localization → retrieve-then-generate QA on its top-K → reference-match judging → access-vs-use quadrants."""
from __future__ import annotations

import json

import pytest

from emb_s_core import diagnose, judge, ladder, llm, qa, runs
from emb_s_core.cli import main
from testkit.use_bank import make_workspace

pytestmark = pytest.mark.slow


@pytest.fixture(scope="session")
def local_model():
    """Converted once per machine (about 30 s) into the model cache folder, then loads in about a second."""
    return llm.ensure_local_model()


def test_local_model_end_to_end(local_model, tmp_path, capsys):
    ws = make_workspace(tmp_path)
    w = str(ws.path)
    # 2K/geography fits the 8K window; the 8K rung (7.9K tokens of context) does not
    assert main(["localize", "-w", w, "--rungs", "2K/geography,8K", "--limit", "2", "-k", "3",
                 "--max-tokens", "24"]) == 0
    out = capsys.readouterr()
    assert "estimate: 4 cells, 0 cached, 2 do not fit, 2 calls to send" in out.out
    assert "offline plumbing check" in out.err and "2 did not fit" in out.out  # the label says what it is for
    run = "localize:local/smollm2-135m@3"
    ws.refresh()  # the CLI wrote through its own Workspace object
    res = runs.load_results(ws, runs=[run]).set_index(["rung", "qid"])
    assert len(res) == 4
    assert (res.loc["8K", "status"] == runs.DOES_NOT_FIT).all()
    ok = res.loc["2K/geography"]
    assert (ok["status"] == runs.OK).all()
    for ids, detail in zip(ok["doc_ids"], ok["detail"]):
        d = json.loads(detail)
        assert len(ids) <= 3 and d["audit"]["n_ids"] == len(ids) and d["prompt_tokens"] > 1500
        assert d["cost"] == 0.0 and d["reply"] is not None
    assert runs.get_run(ws, run)["config"]["window"] == llm.LOCAL_WINDOW

    # retrieve-then-generate on the localization's top-3
    assert main(["qa", "-w", w, "--context-run", run, "-k", "3", "--rungs", "2K/geography", "--limit", "2",
                 "--max-tokens", "12"]) == 0
    qa_run = f"qa:local/smollm2-135m:rag[{run}]@3"
    ws.refresh()
    answers = qa.load_answers(ws, [qa_run])
    assert len(answers) == 2 and (answers["status"] == "ok").all()
    assert all(isinstance(a, str) and a for a in answers["answer"])
    assert answers["completion_tokens"].between(1, 12).all()

    assert main(["judge", "-w", w, "--qa-run", qa_run]) == 0
    ws.refresh()
    scores = judge.scores(ws, qa_run, "reference")
    assert len(scores) == 2 and scores["score"].between(0, 5).all()

    capsys.readouterr()
    assert main(["diagnose", "-w", w, "--access-run", run, "--qa-run", qa_run, "-k", "3", "--json"]) == 0
    out = capsys.readouterr()
    rows = json.loads(out.out)
    # the quadrants of the plumbing-check model measure nothing: the command says so (the page too, below)
    assert f"access run {run} and QA run {qa_run}: {llm.LOCAL_MODEL} is the offline plumbing check" in out.err
    assert sum(r["n"] for r in rows) == 2 and {r["rung"] for r in rows} == {"2K/geography"}
    quads = diagnose.quadrants(ws, run, qa_run, "reference", k=3)
    assert quads["quadrant"].isin(diagnose.QUADRANTS).all()
    # the rerun is free: every cell is finished, nothing is sent and nothing is written
    ws.refresh()
    version = ws.version
    assert main(["localize", "-w", w, "--rungs", "2K/geography,8K", "--limit", "2", "-k", "3",
                 "--max-tokens", "24"]) == 0
    assert "estimate: 0 cells" in capsys.readouterr().out
    ws.refresh()
    assert ws.version == version
    assert ladder.load(ws).rung("8K").n_tokens > llm.LOCAL_WINDOW - 500


def test_access_vs_use_page_says_the_plumbing_check_model_measures_nothing(local_model, tmp_path, monkeypatch):
    """The page shows the quadrants of the offline model with the same words the CLI prints, as a visible warning."""
    from streamlit.testing.v1 import AppTest

    from tests.conftest import REPO

    ws = make_workspace(tmp_path)
    w = str(ws.path)
    assert main(["localize", "-w", w, "--rungs", "2K/geography", "--limit", "1", "-k", "3", "--max-tokens", "16"]) == 0
    run = "localize:local/smollm2-135m@3"
    assert main(["qa", "-w", w, "--context-run", run, "-k", "3", "--rungs", "2K/geography", "--limit", "1",
                 "--max-tokens", "8"]) == 0
    qa_run = f"qa:local/smollm2-135m:rag[{run}]@3"
    assert main(["judge", "-w", w, "--qa-run", qa_run]) == 0
    monkeypatch.setenv("EMB_S_DATA", str(tmp_path))
    at = AppTest.from_file(str(REPO / "app.py"), default_timeout=120)
    for k, v in {"ws": w, "run": run, "qa": qa_run}.items():
        at.query_params[k] = v
    at.switch_page("pages/6_Access_vs_Use.py")
    at.run()
    assert not at.exception, [e.message for e in at.exception]
    said = " ".join(x.value for x in at.warning).replace("\\", "")
    assert "offline plumbing check" in said and "they say nothing about evidence use" in said
    assert f"QA run {qa_run}" in said and f"access run {run}" in said
