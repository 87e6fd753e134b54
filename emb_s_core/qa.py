"""Generative QA (paper §4.4, §A.2): GLOBAL (the whole rung as context) and retrieve-then-generate (``rag``: the
top-K documents of a stored run as context).

QA answers are not a retrieval run (they have no ranking), so they live in their own tables: ``qa_runs`` (one row per
QA run: model, setting, context run, K, prompt version) and ``qa_answers`` (one row per rung × query). Like runs,
answers are appended one batch per transaction and a rerun resumes from the finished cells; ``error`` cells are
retried and their new row wins. A GLOBAL cell whose rung does not fit the window is ``does_not_fit``; a ``rag`` cell
whose context run has no ranking for it (it did not fit, or failed) is ``no_context``. Neither is ever a zero.
"""
from __future__ import annotations

import datetime as _dt
import json
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa

from emb_s_core import ladder as ladder_mod
from emb_s_core import llm, protocol, provenance, runs
from emb_s_core.errors import EmbSError
from emb_s_core.llm import structured
from emb_s_core.store import Workspace

GLOBAL = "global"
RAG = "rag"
SETTINGS = (GLOBAL, RAG)
NO_CONTEXT = "no_context"

QA_RUNS_SCHEMA = pa.schema([
    pa.field("qa_run", pa.string(), nullable=False), pa.field("model", pa.string()), pa.field("setting", pa.string()),
    pa.field("context_run", pa.string()), pa.field("k", pa.int32()), pa.field("config", pa.string()),
    pa.field("created_at", pa.string()),
])
QA_ANSWERS_SCHEMA = pa.schema([
    pa.field("qa_run", pa.string(), nullable=False), pa.field("rung", pa.string(), nullable=False),
    pa.field("qid", pa.string(), nullable=False), pa.field("setting", pa.string()),
    pa.field("context_run", pa.string()), pa.field("k", pa.int32()), pa.field("model", pa.string()),
    pa.field("prompt_version", pa.string()), pa.field("context_ids", pa.list_(pa.int64())),
    pa.field("answer", pa.string()), pa.field("prompt_tokens", pa.int64()),
    pa.field("completion_tokens", pa.int64()), pa.field("cost", pa.float64()), pa.field("status", pa.string()),
    pa.field("detail", pa.string()),
])


def default_name(model: str, setting: str, context_run: str | None, k: int) -> str:
    return f"qa:{model}:global" if setting == GLOBAL else f"qa:{model}:rag[{context_run}]@{k}"


def list_qa_runs(ws: Workspace) -> pd.DataFrame:
    if not ws.has_table("qa_runs"):
        return pd.DataFrame(columns=QA_RUNS_SCHEMA.names)
    return ws.read_pandas("qa_runs")


def get_qa_run(ws: Workspace, name: str) -> dict | None:
    df = list_qa_runs(ws)
    hit = df[df["qa_run"] == name]
    return None if hit.empty else dict(hit.iloc[0].to_dict(), config=json.loads(hit.iloc[0]["config"]))


def _register(ws: Workspace, name: str, model: str, setting: str, context_run: str | None, k: int,
              config: dict) -> None:
    """Same name + same config = resume; another config is an error (answers must not mix)."""
    canonical = json.dumps(config, sort_keys=True)
    existing = get_qa_run(ws, name)
    if existing is not None:
        provenance.check_resume("QA", name, existing["config"], config,
                                fix="pass another --name, or keep the original options (and ladder) to resume it.")
        return
    row = pa.table({"qa_run": [name], "model": [model], "setting": [setting], "context_run": [context_run],
                    "k": [k], "config": [canonical],
                    "created_at": [_dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")]},
                   schema=QA_RUNS_SCHEMA)
    with ws.transaction():
        ws.write("qa_runs", row, schema=QA_RUNS_SCHEMA)


def load_answers(ws: Workspace, qa_runs: list[str] | None = None) -> pd.DataFrame:
    """Stored answers (last copy per cell), one row per (qa_run, rung, qid)."""
    if not ws.has_table("qa_answers"):
        return pd.DataFrame(columns=QA_ANSWERS_SCHEMA.names)
    where = None
    if qa_runs is not None:
        if not qa_runs:
            return pd.DataFrame(columns=QA_ANSWERS_SCHEMA.names)
        where = "qa_run IN (" + ", ".join("'" + r.replace("'", "''") + "'" for r in qa_runs) + ")"
    df = ws.read_pandas("qa_answers", where=where)
    return df.drop_duplicates(["qa_run", "rung", "qid"], keep="last").reset_index(drop=True)


def _plan(ws: Workspace, gateway: llm.Gateway, setting: str, context_run: str | None, k: int,
          rungs: list[str] | None, limit: int | None, name: str, prompt: protocol.Prompt) -> list[dict[str, Any]]:
    if setting not in SETTINGS:
        raise EmbSError(f"unknown QA setting {setting!r}", fix=f"use one of: {', '.join(SETTINGS)}.")
    lad = ladder_mod.load(ws)
    protocol.check_limit(limit)
    done_df = load_answers(ws, [name])
    done = set(zip(done_df.loc[done_df["status"] != llm.ERROR, "rung"], done_df.loc[done_df["status"] != llm.ERROR,
                                                                                     "qid"]))
    qs = ws.read_pandas("queries", ["qid", "text"]).set_index("qid")["text"]
    docs = protocol.documents_by_id(ws)
    chosen = protocol.select_rungs(lad, rungs)
    plan: list[dict[str, Any]] = []
    if setting == RAG:
        if not context_run:
            raise EmbSError("retrieve-then-generate QA needs a context run", fix="pass --context-run RUN "
                            "(see `emb-s runs list`), or use --setting global.")
        if runs.get_run(ws, context_run) is None:
            raise EmbSError(f"no run named {context_run!r} to take contexts from",
                            fix="see `emb-s runs list`; evaluate a retriever or localize first.")
        if k <= 0:
            raise EmbSError(f"-k must be positive, got {k}", fix="pass -k N with N ≥ 1.")
        res = runs.load_results(ws, runs=[context_run], rungs=[r.name for r in chosen])
        ranked = {(r, q): (s, ids) for r, q, s, ids in zip(res["rung"], res["qid"], res["status"], res["doc_ids"])}
    for rung in chosen:
        qids = [q for q in protocol.rung_queries(rung, limit) if (rung.name, q) not in done]
        if not qids:
            continue
        if setting == GLOBAL:
            context_ids = rung.doc_ids.tolist()
            context = protocol.context_of(docs, context_ids)
            base = gateway.count_tokens([{"role": "user", "content": context}])
        for qid in qids:
            entry: dict[str, Any] = {"rung": rung.name, "qid": qid}
            if setting == RAG:
                status, ids = ranked.get((rung.name, qid), (None, None))
                if status != runs.OK:
                    entry.update(messages=None, status=NO_CONTEXT, context_ids=[],
                                 reason=f"context run has no ranking here ({status or 'missing'})")
                    plan.append(entry)
                    continue
                # ids that name no document (a localization reply can invent them) fill a slot with nothing
                top = [int(i) for i in list(ids)[:k]]
                context_ids = [i for i in top if i in docs.index]
                entry["missing_ids"] = [i for i in top if i not in docs.index]
                context = protocol.context_of(docs, context_ids)
                base = 0
            entry["context_ids"] = context_ids if setting == RAG else []  # GLOBAL: the whole rung, not repeated
            if not gateway.fits(base):
                entry.update(messages=None, status=llm.DOES_NOT_FIT, prompt_tokens=base,
                             reason=f"context {base} tokens + {gateway.max_tokens} reply > window {gateway.window}")
            else:
                entry["messages"] = [{"role": "user", "content": prompt.render(context=context, question=qs[qid])}]
                entry["prompt_tokens"] = gateway.count_tokens(entry["messages"])
            plan.append(entry)
    return plan


def estimate(ws: Workspace, gateway: llm.Gateway, setting: str = RAG, context_run: str | None = None, k: int = 5,
             rungs: list[str] | None = None, limit: int | None = None, name: str | None = None) -> dict:
    """Calls, tokens and the cost upper bound of a QA run, before it starts."""
    gateway, _ = structured.asking(gateway, structured.QA)  # the calls the run will make (and their cache)
    prompt = protocol.load_prompt("qa")
    name = name or default_name(gateway.model, setting, context_run, k)
    plan = _plan(ws, gateway, setting, context_run, k, rungs, limit, name, prompt)
    send = [p for p in plan if p.get("messages") is not None]
    est = gateway.estimate([p["messages"] for p in send], prompt_tokens=[p["prompt_tokens"] for p in send])
    est["calls"] += len(plan) - len(send)
    est["does_not_fit"] += sum(p.get("status") == llm.DOES_NOT_FIT for p in plan)
    est["no_context"] = sum(p.get("status") == NO_CONTEXT for p in plan)
    return est


def answer(ws: Workspace, gateway: llm.Gateway, setting: str = RAG, context_run: str | None = None, k: int = 5,
           name: str | None = None, rungs: list[str] | None = None, limit: int | None = None, batch_size: int = 8,
           progress: llm.ProgressFn | None = None) -> str:
    """Answer the ladder's queries in ``setting`` and store them as QA run ``name``; resumable."""
    gateway.check_credentials()
    gateway, asked = structured.asking(gateway, structured.QA)  # the final answer in one field where supported
    prompt = protocol.load_prompt("qa")
    name = name or default_name(gateway.model, setting, context_run, k)
    plan = _plan(ws, gateway, setting, context_run, k, rungs, limit, name, prompt)
    k_stored = k if setting == RAG else 0
    config = {"model": gateway.model, "setting": setting, "context_run": context_run if setting == RAG else None,
              "k": k_stored, "prompt_version": prompt.version, "prompt_sha": prompt.digest,
              "window": gateway.window, **({"structured": True} if asked else {}),
              "max_tokens": gateway.max_tokens, "temperature": gateway.temperature,
              provenance.LADDER_KEY: provenance.ladder_hashes(ladder_mod.load(ws))}
    _register(ws, name, gateway.model, setting, config["context_run"], k_stored, config)
    for start in range(0, len(plan), batch_size):
        chunk = plan[start:start + batch_size]
        send = [p for p in chunk if p.get("messages") is not None]
        gateway.usage.does_not_fit += sum(p.get("status") == llm.DOES_NOT_FIT for p in chunk)  # never sent
        results = dict(zip((id(p) for p in send),
                           gateway.complete_many([p["messages"] for p in send],
                                                 prompt_tokens=[p["prompt_tokens"] for p in send])))
        rows = []
        for p in chunk:
            result = results.get(id(p)) or llm.CallResult(p["status"], prompt_tokens=p.get("prompt_tokens", 0),
                                                          error=p.get("reason"))
            rows.append({"qa_run": name, "rung": p["rung"], "qid": p["qid"], "setting": setting,
                         "context_run": config["context_run"], "k": k_stored, "model": gateway.model,
                         "prompt_version": prompt.version, "context_ids": np.asarray(p["context_ids"], np.int64),
                         "answer": structured.unwrap(structured.QA, result.text) if result.status == llm.OK
                         else None,
                         "prompt_tokens": result.prompt_tokens, "completion_tokens": result.completion_tokens,
                         "cost": result.cost, "status": result.status,
                         "detail": json.dumps({"cached": result.cached, "error": result.error,
                                               "missing_ids": p.get("missing_ids", [])})})
        table = pa.Table.from_pandas(pd.DataFrame(rows), schema=QA_ANSWERS_SCHEMA, preserve_index=False)
        with ws.transaction():
            ws.write("qa_answers", table, schema=QA_ANSWERS_SCHEMA)
        if progress:
            progress("qa", min(1.0, (start + len(chunk)) / len(plan)))
    return name
