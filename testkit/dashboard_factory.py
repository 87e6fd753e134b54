"""Builds small real workspaces for the dashboard tests and bench: a native bank written to JSONL, imported through
``bank.import_path``, a real ``ladder.build``, and runs whose rankings come from a real word-overlap scorer (three
weightings, so runs differ), one long-context-like run that does not fit the large rungs, and one run missing rungs.

Why synthetic: the tests must run anywhere (no ../shared/data) and fast; the text is built so that hard negatives
share most words with their gold document and queries carry noise words, which is what makes rankings fail in interesting ways.
"""
from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import scipy.sparse as sp

from emb_s_core import bank, ladder, runs
from emb_s_core.store import Workspace

DOMAINS = ("history", "science", "sports")
SOURCES = ("wiki", "news", "forum")
TOKEN = re.compile(r"[a-z0-9]+")


def _write(path: Path, rows: list[dict]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", encoding="utf-8") as fh:
        for r in rows:
            fh.write(json.dumps(r) + "\n")


def make_bank(folder: Path, n_queries: int = 30, n_docs: int = 300, seed: int = 0, doc_words: int = 30) -> Path:
    """Documents and queries (about a third multi-source, most with a hard negative) in native JSONL."""
    rng = np.random.default_rng(seed)
    vocab = {d: [f"{d[:3]}{i}" for i in range(150)] for d in DOMAINS}
    common = [f"w{i}" for i in range(200)]
    docs, queries = [], []

    def text(domain: str) -> list[str]:
        words = list(rng.choice(vocab[domain], doc_words // 2)) + list(rng.choice(common, doc_words // 2))
        rng.shuffle(words)
        return words

    next_id = 1
    for qi in range(n_queries):
        domain = DOMAINS[qi % len(DOMAINS)]
        n_gold = 2 if (qi // 3) % 3 == 0 else 1
        gold_ids, gold_words = [], []
        for _ in range(n_gold):
            words = text(domain)
            docs.append({"doc_id": next_id, "title": f"{domain} topic {next_id}", "text": " ".join(words),
                         "domain": domain, "source": SOURCES[int(rng.integers(len(SOURCES)))]})
            gold_ids.append(next_id)
            gold_words.append(words)
            next_id += 1
        negs = []
        if qi % 4 != 3:  # near-miss: the first gold document with a fifth of its words replaced
            words = list(gold_words[0])
            for j in rng.choice(len(words), len(words) // 5, replace=False):
                words[j] = str(rng.choice(vocab[domain]))
            docs.append({"doc_id": next_id, "title": f"{domain} topic {next_id}", "text": " ".join(words),
                         "domain": domain, "source": SOURCES[int(rng.integers(len(SOURCES)))]})
            negs.append(next_id)
            next_id += 1
        q_words = [str(w) for g in gold_words for w in rng.choice(g, 3, replace=False)]
        q_words += [str(w) for w in rng.choice(vocab[domain], 3)] + [str(w) for w in rng.choice(common, 3)]  # words no gold document has: noise
        queries.append({"qid": f"q{qi:04d}", "text": "what about " + " ".join(q_words) + "?",
                        "answer": f"answer {qi}", "ref_ids": gold_ids, "hard_negative_ids": negs,
                        "domain": domain, "task_type": "comparison" if n_gold > 1 else "fact"})
    while len(docs) < n_docs:
        domain = DOMAINS[int(rng.integers(len(DOMAINS)))]
        docs.append({"doc_id": next_id, "title": f"{domain} filler {next_id}", "text": " ".join(text(domain)),
                     "domain": domain, "source": SOURCES[int(rng.integers(len(SOURCES)))]})
        next_id += 1
    _write(folder / "documents.jsonl", docs)
    _write(folder / "queries.jsonl", queries)
    return folder


def _matrix(texts: list[str], index: dict[str, int]) -> sp.csr_matrix:
    rows, cols = [], []
    for i, t in enumerate(texts):
        for w in set(TOKEN.findall(t.lower())):
            j = index.setdefault(w, len(index))
            rows.append(i)
            cols.append(j)
    return sp.csr_matrix((np.ones(len(rows), np.float32), (rows, cols)), shape=(len(texts), 1 << 20))


def overlap_runs(ws: Workspace, n_runs: int = 3, k: int = 100, batch: int = 2000) -> list[str]:
    """Word-overlap rankings on every (rung, query) the ladder evaluates; run i weights words by idf**i (0: plain
    overlap), plus run ``longctx`` (does_not_fit above the smallest rungs) and ``partial`` (only shared rungs)."""
    docs = bank.documents(ws, ["doc_id", "title", "text"])
    qs = bank.queries(ws)
    index: dict[str, int] = {}
    D = _matrix([f"{t or ''} {x}" for t, x in zip(docs["title"], docs["text"])], index)
    Q = _matrix(qs["text"].tolist(), index)
    D, Q = D[:, : len(index)], Q[:, : len(index)]
    df = np.asarray((D > 0).sum(axis=0)).ravel()
    idf = np.log((len(docs) + 1) / (df + 1)) + 1.0
    doc_ids = docs["doc_id"].to_numpy(np.int64)
    qpos = {q: i for i, q in enumerate(qs["qid"])}
    lad = ladder.load(ws)
    names = []
    for variant in range(n_runs):
        name = ["overlap", "overlap-idf", "overlap-idf2", "overlap-idf3", "overlap-idf4"][variant]
        runs.create_run(ws, name, "retriever", f"word-overlap:idf^{variant}", {"idf_power": variant, "k": k})
        scores = (Q @ sp.diags(idf ** variant) @ D.T).toarray()
        scores += np.random.default_rng(variant).uniform(0, 1e-3, scores.shape)  # seeded tie-breaking
        rows = []
        for rung in lad.rungs:
            mask = np.isin(doc_ids, rung.doc_ids)
            cand = np.flatnonzero(mask)
            for q in rung.qids:
                s = scores[qpos[q], cand]
                top = np.argsort(-s, kind="stable")[:k]
                rows.append({"rung": rung.name, "qid": q, "doc_ids": doc_ids[cand[top]].tolist(),
                             "scores": s[top].tolist()})
                if len(rows) >= batch:
                    runs.save_results(ws, name, rows)
                    rows = []
        runs.save_results(ws, name, rows)
        names.append(name)
    # a long-context model whose window only the first three rungs fit; elsewhere "does not fit", never zero
    runs.create_run(ws, "longctx", "localize", "window-limited", {"window": "3 rungs"})
    base = runs.load_results(ws, runs=[names[0]])
    small = set(lad.names[:3])
    base["status"] = [runs.OK if r in small else runs.DOES_NOT_FIT for r in base["rung"]]
    base["doc_ids"] = [list(d)[:10] if r in small else [] for d, r in zip(base["doc_ids"], base["rung"])]
    base["scores"] = None
    runs.save_results(ws, "longctx", base[["rung", "qid", "doc_ids", "scores", "status"]])
    # a run that stopped early: only the shared rungs
    runs.create_run(ws, "partial", "external", "run file", {"rungs": "shared only"})
    part = runs.load_results(ws, runs=[names[-1]])
    shared = [r.name for r in lad.rungs if r.kind != "domain" and r.kind != "mixed"]
    part = part[part["rung"].isin(shared)]
    runs.save_results(ws, "partial", part[["rung", "qid", "doc_ids", "scores"]])
    return names + ["longctx", "partial"]


def build_workspace(folder: Path, n_queries: int = 30, n_docs: int = 300, n_runs: int = 3, seed: int = 0,
                    base: str = "1K", max_size: str | None = None) -> Path:
    """A full workspace under ``folder``/ws: bank, ladder (base 1K: 1K/2K per domain, shared, doublings, full; 4K/<d>
    would be the shared rung, so it is absent). The ladder keeps queries by their gold alone (``hn_share=0``): every
    one of the 30 queries stays on the tiny 1K base, and the Ladder page has a low-coverage warning to show."""
    src = make_bank(folder / "bank", n_queries=n_queries, n_docs=n_docs, seed=seed)
    ws_dir = folder / "ws"
    bank.import_path(ws_dir, "native", src, source="synthetic")
    ws = Workspace(ws_dir)
    from emb_s_core.tokens import format_size, parse_size

    b = parse_size(base)
    ladder.build(ws, ladder.LadderOptions(base=base, domain_sizes=(base, format_size(2 * b), format_size(4 * b)),
                                          reserve=0, max_size=max_size, hn_share=0.0))
    overlap_runs(ws, n_runs=n_runs)
    return ws_dir
