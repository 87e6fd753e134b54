"""Collision testing (paper §3.3 Stage III): the nearest non-reference documents of each query, labeled by an LLM.

For a query ``q`` with RefList ``G``, the candidates are the top-k documents ``d ∉ G`` of the whole bank by dense
similarity ``s(q, d) = max_c ⟨e_q, e_c⟩`` (the retrieval branch's embedder and its cached chunk vectors: nothing is
embedded twice). A model labels each candidate:

- **Conflict** — it supports another answer: the query is ambiguous and is retired;
- **Hard Negative** — same topic, does not support the answer: it joins ``hard_negative_ids``;
- **False Negative** — it supports the answer too: it joins the RefList.

Labels are parsed strictly (a reply without exactly one recognizable label is stored as ``unparseable``, never
guessed). Every verdict is stored with its rank, similarity, rationale and the raw reply in the table
``collisions``, one transaction per batch of queries, so an interrupted run resumes; replies are cached by the LLM
gateway. :func:`apply` writes the verdicts into the bank as one new workspace version; the previous version stays
readable (``Workspace(path, version=N)``) and the ladder becomes stale until rebuilt.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Callable

import numpy as np
import pandas as pd
import pyarrow as pa

from emb_s_core import bank
from emb_s_core.errors import EmbSError
from emb_s_core.schema import COLLISION, OK, QUERY_SCHEMA, UNPARSEABLE, render_document
from emb_s_core.store import Workspace

CONFLICT = "Conflict"
HARD_NEGATIVE = "Hard Negative"
FALSE_NEGATIVE = "False Negative"
LABELS = (CONFLICT, HARD_NEGATIVE, FALSE_NEGATIVE)
TABLE = "collisions"
RETIRED = "retired_queries"
DEFAULT_EMBEDDER = "dense:minilm-l6"
DEFAULT_K = 10
DOC_CHARS = 1500  # characters of each document shown to the model (longer ones are cut, marked "[...]")
PROMPT = "collide"

COLLISIONS_SCHEMA = pa.schema(
    [
        pa.field("qid", pa.string()),
        pa.field("doc_id", pa.int64()),
        pa.field("rank", pa.int32()),
        pa.field("similarity", pa.float32()),
        pa.field("label", pa.string()),
        pa.field("rationale", pa.string()),
        pa.field("reply", pa.string()),
        pa.field("model", pa.string()),
        pa.field("prompt_version", pa.string()),
        pa.field("embedder", pa.string()),
        pa.field("status", pa.string()),
        pa.field("error", pa.string()),
    ]
)
RETIRED_SCHEMA = pa.schema(
    list(QUERY_SCHEMA)
    + [pa.field("reason", pa.string()), pa.field("conflict_ids", pa.list_(pa.int64())),
       pa.field("model", pa.string()), pa.field("prompt_version", pa.string()),
       pa.field("retired_at_version", pa.int64())]
)
KEY = ["qid", "doc_id", "model", "prompt_version"]

Progress = Callable[[str, float], None]


# ------------------------------------------------------------------------------------------------ parsing
_NORMAL = {label.lower(): label for label in LABELS}
_LABEL_LINE = re.compile(r"^\W*(?:final\s+)?label\W*?[:=\-]\s*(.*)$", re.I)
_RATIONALE_LINE = re.compile(r"^\W*(?:rationale|reason|explanation)\W*?[:=\-]\s*(.*)$", re.I)


def _normalize(value: str) -> str | None:
    """``'**Hard-negative.**'`` → ``'Hard Negative'``; anything that is not exactly one label → None."""
    words = re.sub(r"[^a-z]+", " ", value.lower()).split()
    return _NORMAL.get(" ".join(words))


def parse_verdict(reply: str | None) -> tuple[str | None, str]:
    """(label, rationale) from a reply; label None when the reply names no label, or more than one.

    Accepted: a ``Label: <label>`` line (markdown emphasis and case ignored), or, without such a line, a first line
    that is exactly a label. Nothing else is read as a label: a label word inside a sentence is not a verdict.
    """
    lines = [line.strip() for line in (reply or "").strip().splitlines() if line.strip()]
    found: list[str | None] = []
    rationale: list[str] = []
    label_line: int | None = None
    for i, line in enumerate(lines):
        m = _LABEL_LINE.match(line)
        if m:
            found.append(_normalize(m.group(1)))
            label_line = i if label_line is None else label_line
            continue
        r = _RATIONALE_LINE.match(line)
        if r:
            rationale.append(r.group(1).strip())
    if not found and lines and _normalize(lines[0]):
        found, label_line = [_normalize(lines[0])], 0
    labels = set(found)
    if not rationale and label_line is not None:
        rationale = [line for line in lines[label_line + 1:] if not _LABEL_LINE.match(line)]
    text = " ".join(rationale).strip()[:500]
    if len(labels) != 1 or None in labels:
        return None, text
    return labels.pop(), text


# ------------------------------------------------------------------------------------------------ candidates
def dense_retriever(spec: str):
    """The retrieval branch's dense retriever for ``spec`` (its embedder and cached vectors)."""
    from emb_s_core import retrievers
    from emb_s_core.retrievers.base import EMBEDDINGS

    retriever = retrievers.get(spec)
    if not retriever.can(EMBEDDINGS):
        raise EmbSError(f"collision testing needs a dense embedder, got {spec!r}",
                        fix="pass --embedder dense:minilm-l6, dense:minilm-l3, dense:<folder> or dense:litellm/<model>.")
    retriever.check()
    return retriever


def select(ws: Workspace, limit: int | None = None, qids: list[str] | None = None) -> pd.DataFrame:
    """The queries to test: all, the named ``qids``, or the first ``limit`` by qid (the same ones every time)."""
    qs = bank.queries(ws).sort_values("qid", kind="stable")
    if qids is not None:
        missing = sorted(set(qids) - set(qs["qid"]))
        if missing:
            raise EmbSError(f"unknown qid(s) {missing[:5]}", fix="name queries that are in the workspace's bank.")
        qs = qs[qs["qid"].isin(qids)]
    if limit is not None:
        if limit < 1:
            raise EmbSError(f"--limit must be positive, got {limit}", fix="pass --limit N with N ≥ 1, or omit it.")
        qs = qs.head(limit)
    return qs.reset_index(drop=True)


def candidates(ws: Workspace, embedder: str = DEFAULT_EMBEDDER, k: int = DEFAULT_K, limit: int | None = None,
               qids: list[str] | None = None, progress: Progress | None = None,
               batch_size: int = 256) -> pd.DataFrame:
    """Top-``k`` documents outside each query's RefList over the whole bank: (qid, doc_id, rank, similarity).

    Scoring is exact (one matrix product per batch of queries); the RefList is masked to −∞ before the top-k, so
    a query always gets ``min(k, |bank| − |RefList|)`` candidates.
    """
    from emb_s_core.retrievers.base import topk

    if k < 1:
        raise EmbSError(f"k must be at least 1 (got {k})", fix="pass --k 1 or more.")
    qs = select(ws, limit, qids)
    retriever = dense_retriever(embedder)
    all_ids = bank.documents(ws, ["doc_id"])["doc_id"].to_numpy(np.int64)
    retriever.prepare(ws, all_ids, progress)
    ids = retriever.doc_ids
    rows: list[pd.DataFrame] = []
    for start in range(0, len(qs), batch_size):
        part = qs.iloc[start: start + batch_size]
        scores = np.asarray(retriever.score(part["text"].tolist()), dtype=np.float64)
        for i, refs in enumerate(part["ref_ids"]):
            pos = np.searchsorted(ids, np.asarray(refs, np.int64))
            pos = pos[(pos < len(ids)) & (ids[np.minimum(pos, len(ids) - 1)] == np.asarray(refs, np.int64))]
            scores[i, pos] = -np.inf
        ranking = topk(scores, ids, min(k, len(ids)))
        for qid, (row_ids, row_scores) in zip(part["qid"], ranking.rows()):
            keep = np.isfinite(row_scores)
            n = int(keep.sum())
            rows.append(pd.DataFrame({"qid": qid, "doc_id": row_ids[keep], "rank": np.arange(1, n + 1),
                                      "similarity": row_scores[keep].astype(np.float32)}))
        if progress:
            progress("nearest non-reference documents", min(1.0, (start + len(part)) / max(len(qs), 1)))
    if not rows:
        return pd.DataFrame(columns=["qid", "doc_id", "rank", "similarity"])
    return pd.concat(rows, ignore_index=True)


# ------------------------------------------------------------------------------------------------ labeling
def _shown(title: str | None, text: str) -> str:
    body = render_document(title if isinstance(title, str) else None, text)
    return body if len(body) <= DOC_CHARS else body[:DOC_CHARS] + " [...]"


def messages_for(prompt, query: pd.Series, gold: list[tuple[str | None, str]], candidate: tuple[str | None, str]
                 ) -> list[dict[str, str]]:
    gold_text = "\n\n".join(f"[Gold {i + 1}]\n{_shown(t, x)}" for i, (t, x) in enumerate(gold))
    content = prompt.render(question=query["text"], answer=query["answer"] or "", gold=gold_text,
                            candidate=_shown(*candidate))
    return [{"role": "user", "content": content}]


@dataclass
class CollideReport:
    model: str
    prompt_version: str
    embedder: str
    queries: int
    candidates: int
    labeled_now: int
    already_done: int
    counts: dict[str, int] = field(default_factory=dict)  # label or status → verdicts (this model + prompt)


def run(ws: Workspace, gateway, embedder: str = DEFAULT_EMBEDDER, k: int = DEFAULT_K, limit: int | None = None,
        qids: list[str] | None = None, prompt_version: int = 1, progress: Progress | None = None,
        batch_size: int = 8) -> CollideReport:
    """Label every candidate of the selected queries with ``gateway``'s model; resumable, one commit per batch.

    Verdicts already stored for (qid, doc_id, model, prompt) with status ok or unparseable are kept; errors and
    does-not-fit cells are retried on the next run.
    """
    from emb_s_core import protocol

    prompt = protocol.load_prompt(PROMPT, prompt_version)
    gateway.check_credentials()
    cands, todo, batch_of = _plan(ws, gateway, embedder, k, limit, qids, prompt, progress)
    labeled = 0
    todo_qids = list(dict.fromkeys(todo["qid"]))
    for start in range(0, len(todo_qids), batch_size):
        part = todo[todo["qid"].isin(todo_qids[start: start + batch_size])]
        batch = batch_of(part)
        results = gateway.complete_many(batch, salts=[prompt.version] * len(batch))
        out = []
        for row, res in zip(part.itertuples(index=False), results):
            label, rationale = parse_verdict(res.text) if res.status == OK else (None, "")
            status = res.status if res.status != OK else (OK if label else UNPARSEABLE)
            out.append({"qid": row.qid, "doc_id": int(row.doc_id), "rank": int(row.rank),
                        "similarity": float(row.similarity), "label": label, "rationale": rationale,
                        "reply": res.text, "model": gateway.model, "prompt_version": prompt.version,
                        "embedder": embedder, "status": status, "error": res.error})
        with ws.transaction():
            ws.write(TABLE, pa.Table.from_pylist(out, schema=COLLISIONS_SCHEMA), schema=COLLISIONS_SCHEMA)
        labeled += len(out)
        if progress:
            progress(f"labeling candidates ({gateway.model})", min(1.0, (start + batch_size) / len(todo_qids)))
    final = verdicts(ws, model=gateway.model, prompt_version=prompt.version)
    return CollideReport(gateway.model, prompt.version, embedder, int(cands["qid"].nunique()), len(cands), labeled,
                         len(cands) - len(todo), counts(final))


def _plan(ws: Workspace, gateway, embedder: str, k: int, limit: int | None, qids: list[str] | None, prompt,
          progress: Progress | None = None):
    """(candidates, those without a stored verdict, a function building the messages of some of them)."""
    cands = candidates(ws, embedder, k, limit, qids, progress)
    qs = select(ws, limit, qids).set_index("qid", drop=False)
    existing = verdicts(ws, model=gateway.model, prompt_version=prompt.version)
    done = set(map(tuple, existing.loc[existing["status"].isin([OK, UNPARSEABLE]), ["qid", "doc_id"]]
                   .itertuples(index=False, name=None)))
    todo = cands[[(q, int(d)) not in done for q, d in zip(cands["qid"], cands["doc_id"])]]
    docs = bank.documents(ws, ["doc_id", "title", "text"]).set_index("doc_id")

    def batch_of(part: pd.DataFrame) -> list:
        batch = []
        for row in part.itertuples(index=False):
            q = qs.loc[row.qid]
            gold = [(docs.at[i, "title"], docs.at[i, "text"]) for i in q["ref_ids"] if i in docs.index]
            cand = docs.loc[int(row.doc_id)]
            batch.append(messages_for(prompt, q, gold, (cand["title"], cand["text"])))
        return batch

    return cands, todo, batch_of


def estimate(ws: Workspace, gateway, embedder: str = DEFAULT_EMBEDDER, k: int = DEFAULT_K,
             limit: int | None = None, qids: list[str] | None = None, prompt_version: int = 1) -> dict:
    """Calls, tokens and the cost upper bound of a collision test before it starts (the candidates are found by
    the embedder, which embeds the bank once; no model call is made). Stored verdicts count as done."""
    from emb_s_core import protocol

    prompt = protocol.load_prompt(PROMPT, prompt_version)
    cands, todo, batch_of = _plan(ws, gateway, embedder, k, limit, qids, prompt)
    est = gateway.estimate(batch_of(todo), salts=[prompt.version] * len(todo))
    est["already_done"] = len(cands) - len(todo)
    return est


# ------------------------------------------------------------------------------------------------ reading
def verdicts(ws: Workspace, model: str | None = None, prompt_version: str | None = None) -> pd.DataFrame:
    """Stored verdicts, the latest per (qid, doc_id, model, prompt_version), ordered by qid then rank."""
    if not ws.has_table(TABLE):
        return pd.DataFrame(columns=COLLISIONS_SCHEMA.names)
    df = ws.read_pandas(TABLE)
    if model is not None:
        df = df[df["model"] == model]
    if prompt_version is not None:
        df = df[df["prompt_version"] == prompt_version]
    df = df.drop_duplicates(KEY, keep="last")
    return df.sort_values(["model", "prompt_version", "qid", "rank"], kind="stable").reset_index(drop=True)


def counts(df: pd.DataFrame) -> dict[str, int]:
    """Verdicts per label, plus the cells without one per status (unparseable, error, does_not_fit)."""
    out = {label: int((df["label"] == label).sum()) for label in LABELS}
    for status, n in df.loc[df["status"] != OK, "status"].value_counts().items():
        out[str(status)] = int(n)
    return out


def _choose(df: pd.DataFrame, model: str | None, prompt_version: str | None, workspace: str
            ) -> pd.DataFrame:
    if model is not None:
        df = df[df["model"] == model]
    if prompt_version is not None:
        df = df[df["prompt_version"] == prompt_version]
    combos = sorted(set(zip(df["model"], df["prompt_version"])))
    if not combos:
        raise EmbSError("no collision verdicts to apply" + (f" for model {model!r}" if model else ""),
                        fix=f"run `emb-s collide --workspace {workspace} --model MODEL` first.")
    if len(combos) > 1:
        raise EmbSError(f"verdicts from several labelers: {', '.join(f'{m} ({p})' for m, p in combos)}",
                        fix="say which with --model MODEL (and --prompt-version N).")
    return df


# ------------------------------------------------------------------------------------------------ applying
@dataclass
class ApplyReport:
    version_before: int
    version_after: int
    hard_negatives_added: int
    false_negatives_added: int
    retired: list[str]
    changed: bool
    messages: list[str] = field(default_factory=list)


def plan(queries: pd.DataFrame, decided: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame, int, int]:
    """(new queries, retired queries with reason, hard negatives added, false negatives added): pure, no I/O.

    A Conflict retires the query; otherwise False Negatives join ``ref_ids`` (and leave ``hard_negative_ids``) and
    Hard Negatives join ``hard_negative_ids`` unless they are gold.
    """
    decided = decided[(decided["status"] == OK) & decided["qid"].isin(queries["qid"])]
    by_q = {qid: g for qid, g in decided.groupby("qid", sort=False)}
    kept_rows, retired_rows = [], []
    n_hn = n_fn = 0
    for row in queries.to_dict("records"):
        g = by_q.get(row["qid"])
        if g is None:
            kept_rows.append(row)
            continue
        conflicts = g[g["label"] == CONFLICT]
        if len(conflicts):
            first = conflicts.iloc[0]
            row = dict(row, reason=f"Conflict with document {int(first['doc_id'])}: {first['rationale']}",
                       conflict_ids=[int(i) for i in conflicts["doc_id"]])
            retired_rows.append(row)
            continue
        refs = [int(i) for i in row["ref_ids"]]
        negs = [int(i) for i in row["hard_negative_ids"]]
        for d in g.loc[g["label"] == FALSE_NEGATIVE, "doc_id"]:
            if int(d) not in refs:
                refs.append(int(d))
                n_fn += 1
        negs = [d for d in negs if d not in refs]
        for d in g.loc[g["label"] == HARD_NEGATIVE, "doc_id"]:
            if int(d) not in refs and int(d) not in negs:
                negs.append(int(d))
                n_hn += 1
        kept_rows.append(dict(row, ref_ids=refs, hard_negative_ids=negs))
    kept = pd.DataFrame(kept_rows, columns=queries.columns)
    retired = pd.DataFrame(retired_rows, columns=[*queries.columns, "reason", "conflict_ids"])
    return kept, retired, n_hn, n_fn


def apply(ws: Workspace, model: str | None = None, prompt_version: str | None = None) -> ApplyReport:
    """Write the verdicts into the bank as ONE new workspace version (queries rewritten, retired ones kept aside).

    Nothing is committed when the verdicts change nothing (applying twice is a no-op).
    """
    if ws.read_only:
        raise EmbSError(f"the workspace is open read-only at version {ws.version}",
                        fix="apply verdicts to the current workspace (open it without a version).")
    chosen = _choose(verdicts(ws), model, prompt_version, ws.cli)
    model_name, prompt_name = chosen["model"].iloc[0], chosen["prompt_version"].iloc[0]
    before = ws.version
    queries = ws.read_pandas("queries")
    kept, retired, n_hn, n_fn = plan(queries, chosen)
    if not (n_hn or n_fn or len(retired)):
        return ApplyReport(before, before, 0, 0, [], False, ["the verdicts are already in the bank; nothing changed"])
    retired_table = pa.Table.from_pandas(
        retired.assign(model=model_name, prompt_version=prompt_name, retired_at_version=before + 1),
        schema=RETIRED_SCHEMA, preserve_index=False)
    edits = list(ws.settings.get("bank_edits", []))
    edits.append({"kind": "collide", "model": model_name, "prompt_version": prompt_name, "from_version": before,
                  "hard_negatives_added": n_hn, "false_negatives_added": n_fn, "retired": len(retired)})
    before_negs = dict(zip(queries["qid"], queries["hard_negative_ids"].map(lambda x: {int(i) for i in x})))
    added = [(q, int(d)) for q, negs in zip(kept["qid"], kept["hard_negative_ids"]) for d in negs
             if int(d) not in before_negs.get(q, set())]
    with ws.transaction():
        ws.write("queries", pa.Table.from_pandas(kept, schema=QUERY_SCHEMA, preserve_index=False), mode="overwrite",
                 schema=QUERY_SCHEMA)
        if added:
            bank.record_provenance(ws, added, COLLISION)
        if len(retired):
            ws.write(RETIRED, retired_table, schema=RETIRED_SCHEMA)
        ws.set_setting("bank_edits", edits)
    return ApplyReport(before, ws.version, n_hn, n_fn, list(retired["qid"]), True, after_edit(ws, before))


def after_edit(ws: Workspace, before: int) -> list[str]:
    """What to tell the user after a bank edit: where the old bank is, and that the ladder must be rebuilt."""
    from emb_s_core import ladder

    messages = [f"the previous bank stays readable as version {before} (Workspace(path, version={before}))"]
    if ladder.exists(ws):
        messages.append(f"the ladder is now stale: rebuild it with `emb-s ladder build --workspace {ws.cli}`, "
                        "then rerun the evaluations")
    return messages


def retired_queries(ws: Workspace) -> pd.DataFrame:
    return ws.read_pandas(RETIRED) if ws.has_table(RETIRED) else pd.DataFrame(columns=RETIRED_SCHEMA.names)
