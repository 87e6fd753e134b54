"""A real workspace whose every text field (qid, query text, answer, aliases, title, document text, domain, source,
task type, run names and systems) carries Markdown and HTML payloads, for the text-only rendering tests.

The payload's image and links point at ``http://127.0.0.1:PORT/``: the browser test serves that port and asserts
that no request ever reaches it, and that no <img>, link or markup from the data exists in any page.
"""
from __future__ import annotations

import json
from pathlib import Path

from emb_s_core import bank, ladder, runs
from emb_s_core.store import Workspace
from testkit.dashboard_factory import make_bank, overlap_runs


def payload(port: int, tag: str = "p") -> str:
    base = f"http://127.0.0.1:{port}"
    return (f"`{tag}` ![q]({base}/{tag}-img) [a link]({base}/{tag}-link) <img src=\"{base}/{tag}-tag\"> "
            f"<script>window.pwned=1</script> **bold{tag}** :red[{tag}] $x^{tag}$ {base}/{tag}-auto <b>b</b> "
            f"<a href=\"{base}/{tag}-html\">h</a> www.example.com/{tag} user@example.com")


def build_payload_workspace(folder: Path, port: int) -> Path:
    """Bank (30 queries, 300 documents, 3 domains), ladder and runs, with payloads in every text field."""
    src = make_bank(folder / "bank", n_queries=30, n_docs=300)
    p = payload(port)
    docs = [json.loads(line) for line in (src / "documents.jsonl").read_text().splitlines()]
    qs = [json.loads(line) for line in (src / "queries.jsonl").read_text().splitlines()]
    for d in docs:
        d["title"] = f"{d['title']} {payload(port, 't')}"
        d["text"] = f"{d['text']}\n\n{payload(port, 'x')}\n\n# heading\n- item"
        d["domain"] = f"{d['domain']} {payload(port, 'd')}"
        d["source"] = f"{d['source']} {payload(port, 's')}"
    for q in qs:
        q["qid"] = f"{q['qid']}_{payload(port, 'q')}".replace(" ", "_")  # an id holds no whitespace (README)
        q["text"] = f"{q['text']} {p}"
        q["answer"] = f"{q['answer']} {payload(port, 'a')}"
        q["answer_aliases"] = [payload(port, "alias")]
        q["domain"] = f"{q['domain']} {payload(port, 'd')}"
        q["task_type"] = f"{q['task_type']} {payload(port, 'k')}"
    for name, rows in (("documents.jsonl", docs), ("queries.jsonl", qs)):
        (src / name).write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    ws_dir = folder / "ws"
    bank.import_path(ws_dir, "native", src, source=f"synthetic {payload(port, 'src')}")
    ws = Workspace(ws_dir)
    ladder.build(ws, ladder.LadderOptions(base="1K", domain_sizes=("1K", "2K", "4K"), reserve=64))
    overlap_runs(ws, n_runs=2)
    evil = f"run {payload(port, 'r')}"
    runs.create_run(ws, evil, "retriever", f"system {payload(port, 'sys')}", {"copy_of": "overlap"})
    base = runs.load_results(ws, runs=["overlap"])
    runs.save_results(ws, evil, base[["rung", "qid", "doc_ids", "scores"]])
    _llm_results(ws, port)
    return ws_dir


def _llm_results(ws: Workspace, port: int) -> None:
    """Collision verdicts and a judged QA run whose replies (rationale, answer) and model names carry payloads, so
    Bank audit and Access vs use have data to show (litellm's mock_response: no network)."""
    from emb_s_core import collide, judge, llm, qa

    first = sorted(bank.queries(ws)["qid"])[:2]
    verdict = llm.Gateway.for_workspace(ws, "gpt-4o-mini", max_tokens=64, params={
        "mock_response": f"Label: Hard Negative\nRationale: {payload(port, 'why')}"})
    collide.run(ws, verdict, embedder="dense:minilm-l3", k=2, qids=first)  # the smallest offline embedder
    reader = llm.Gateway.for_workspace(ws, "gpt-4o-mini", max_tokens=64,
                                       params={"mock_response": payload(port, "ans")})
    rung = ladder.load(ws).names[-1]
    name = qa.answer(ws, reader, setting=qa.RAG, context_run="overlap", k=2, rungs=[rung], limit=4,
                     name=f"qa {payload(port, 'qa')}")
    judge.judge(ws, name)
