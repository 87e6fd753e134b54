"""Domain labeling: give every document one of at most 8 broad domains, so a bank without domains gets a real
domain-isolated ladder (paper §3.4 builds 64K/<d> rungs per domain).

Zero-shot by default: with an offline embedder ``e`` (the retrieval branch's dense retrievers and their cached
chunk vectors), a document ``d`` goes to ``argmax_k s(d, k)`` where ``s(d, k) = max_c ⟨e_c, e(description_k)⟩`` over
the document's chunks; the margin between the best and second-best domain is kept as a confidence. With ``--model``
an LLM picks the domain through the gateway (cached, strict parsing; a reply that names no domain leaves the
document's domain as it was, and is counted). A query's domain is the majority of its gold documents' domains.

Agreement with labels the bank already carries (documents whose current domain is one of the target names):
accuracy, Cohen's ``κ = (p_o − p_e) / (1 − p_e)`` with ``p_e = Σ_k p_true(k)·p_pred(k)``, and the confusion matrix.
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import numpy as np
import pandas as pd
import pyarrow as pa

from emb_s_core import bank
from emb_s_core.errors import EmbSError
from emb_s_core.schema import DOCUMENT_SCHEMA, OK, QUERY_SCHEMA, UNPARSEABLE, render_document
from emb_s_core.store import Workspace

MAX_DOMAINS = 8
DEFAULT_EMBEDDER = "dense:minilm-l6"
DOC_CHARS = 1500
PROMPT = "domains"

#: the paper's eight domains, one sentence each (what the zero-shot embedder compares documents with)
DEFAULT_DOMAINS: dict[str, str] = {
    "medical": "Medicine and health: diseases, symptoms, drugs, clinical trials, hospitals, doctors and treatment.",
    "history": "History: past events, wars, battles, kings, empires, dynasties, revolutions and historical eras.",
    "education": "Education: schools, universities, colleges, teachers, students, courses, exams and degrees.",
    "math": "Mathematics: numbers, equations, theorems, proofs, geometry, algebra, probability and statistics.",
    "literature": "Literature: novels, poems, plays, authors, writers, books, characters and literary works.",
    "law": "Law: courts, judges, legislation, statutes, lawsuits, rights, crimes, trials and legal cases.",
    "technology": "Technology: computers, software, engineering, electronics, devices, the internet and inventions.",
    "finance": "Finance and economics: money, banks, markets, stocks, companies, investment, trade and prices.",
}

Progress = Callable[[str, float], None]


# ------------------------------------------------------------------------------------------------ domain sets
def load_descriptions(path: str | Path) -> dict[str, str]:
    """A JSON object ``{"domain": "one-sentence description", ...}`` with 1 to 8 entries."""
    path = Path(path)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise EmbSError("no such file", where=str(path), fix="pass the path of a JSON file of domain descriptions.") \
            from None
    except json.JSONDecodeError as exc:
        raise EmbSError(f"not valid JSON ({exc.msg})", where=f"{path} line {exc.lineno}",
                        fix='write one object: {"medical": "Medicine and health: ...", ...}.') from None
    if not isinstance(data, dict) or not data:
        raise EmbSError("expected a non-empty JSON object of domain → description", where=str(path),
                        fix='write one object: {"medical": "Medicine and health: ...", ...}.')
    for name, text in data.items():
        if not isinstance(text, str) or not text.strip() or not name.strip():
            raise EmbSError(f"domain {name!r} needs a non-empty description string", where=f"{path} key {name!r}",
                            fix="give every domain one sentence describing what belongs to it.")
    return check({str(k).strip(): v.strip() for k, v in data.items()}, where=str(path))


def check(descriptions: dict[str, str], where: str | None = None) -> dict[str, str]:
    if not 1 <= len(descriptions) <= MAX_DOMAINS:
        raise EmbSError(f"{len(descriptions)} domains given; the ladder allows 1 to {MAX_DOMAINS}", where=where,
                        fix="merge or drop domains.")
    return descriptions


def resolve(domains: list[str] | None = None, descriptions: dict[str, str] | None = None) -> dict[str, str]:
    """The domain set: ``descriptions`` (default: the paper's eight), restricted to ``domains`` when given."""
    base = dict(descriptions or DEFAULT_DOMAINS)
    if domains:
        unknown = [d for d in domains if d not in base]
        if unknown:
            raise EmbSError(f"no description for domain(s) {unknown}",
                            fix=f"choose among {', '.join(base)}, or pass --descriptions FILE with your own.")
        base = {d: base[d] for d in domains}
    return check(base)


# ------------------------------------------------------------------------------------------------ labeling
def by_embedder(ws: Workspace, descriptions: dict[str, str], spec: str = DEFAULT_EMBEDDER,
                progress: Progress | None = None) -> pd.DataFrame:
    """(doc_id, domain, score, margin) by cosine similarity to the descriptions; uses the cached vectors."""
    from emb_s_core.collide import dense_retriever

    retriever = dense_retriever(spec)
    ids = bank.documents(ws, ["doc_id"])["doc_id"].to_numpy(np.int64)
    retriever.prepare(ws, ids, progress)
    names = list(descriptions)
    scores = np.asarray(retriever.score([descriptions[n] for n in names]), dtype=np.float64)  # (domains, docs)
    best = scores.argmax(axis=0)
    top = scores[best, np.arange(scores.shape[1])]
    second = np.sort(scores, axis=0)[-2] if len(names) > 1 else np.full(scores.shape[1], np.nan)
    return pd.DataFrame({"doc_id": retriever.doc_ids, "domain": np.asarray(names, dtype=object)[best],
                         "score": top, "margin": top - second})


def parse_domain(reply: str | None, names: list[str]) -> str | None:
    """The one domain a reply names on a ``Domain: x`` line (or as its whole first line); else None."""
    lookup = {n.lower(): n for n in names}
    lines = [line.strip() for line in (reply or "").strip().splitlines() if line.strip()]
    found = set()
    for line in lines:
        m = re.match(r"^\W*domain\W*?[:=\-]\s*(.*)$", line, re.I)
        if m:
            found.add(lookup.get(re.sub(r"[^\w ]+", "", m.group(1)).strip().lower()))
    if not found and lines:
        found.add(lookup.get(re.sub(r"[^\w ]+", "", lines[0]).strip().lower()))
    return found.pop() if len(found) == 1 and None not in found else None


def by_llm(ws: Workspace, gateway, descriptions: dict[str, str], prompt_version: int = 1,
           progress: Progress | None = None, batch_size: int = 64) -> pd.DataFrame:
    """(doc_id, domain, reply, status) from the gateway's model; domain None when the reply names none."""
    from emb_s_core import protocol

    gateway.check_credentials()
    prompt = protocol.load_prompt(PROMPT, prompt_version)
    names = list(descriptions)
    docs = bank.documents(ws, ["doc_id", "title", "text"]).sort_values("doc_id")
    rows = []
    for start in range(0, len(docs), batch_size):
        part = docs.iloc[start: start + batch_size]
        batch = _messages(part, descriptions, prompt)
        for doc_id, res in zip(part["doc_id"], gateway.complete_many(batch, salts=[prompt.version] * len(batch))):
            label = parse_domain(res.text, names) if res.status == OK else None
            rows.append({"doc_id": int(doc_id), "domain": label, "reply": res.text,
                         "status": res.status if res.status != OK else (OK if label else UNPARSEABLE)})
        if progress:
            progress(f"labeling documents ({gateway.model})", min(1.0, (start + len(part)) / len(docs)))
    return pd.DataFrame(rows, columns=["doc_id", "domain", "reply", "status"])


def _messages(docs: pd.DataFrame, descriptions: dict[str, str], prompt) -> list:
    """One labeling prompt per document (title + text, cut at DOC_CHARS)."""
    listing = "\n".join(f"- {n}: {d}" for n, d in descriptions.items())
    batch = []
    for t, x in zip(docs["title"], docs["text"]):
        body = render_document(t if isinstance(t, str) else None, x)
        body = body if len(body) <= DOC_CHARS else body[:DOC_CHARS] + " [...]"
        batch.append([{"role": "user", "content": prompt.render(domains=listing, document=body,
                                                                 names=", ".join(descriptions))}])
    return batch


def estimate(ws: Workspace, gateway, descriptions: dict[str, str], prompt_version: int = 1) -> dict:
    """Calls, tokens and the cost upper bound of labeling every document with ``gateway``'s model (no call made;
    cached replies count as cached)."""
    from emb_s_core import protocol

    prompt = protocol.load_prompt(PROMPT, prompt_version)
    docs = bank.documents(ws, ["doc_id", "title", "text"]).sort_values("doc_id")
    batch = _messages(docs, descriptions, prompt)
    return gateway.estimate(batch, salts=[prompt.version] * len(batch))


def query_domains(queries: pd.DataFrame, doc_domain: pd.Series) -> pd.Series:
    """Each query's domain: the majority of its gold documents' domains (ties: alphabetical first)."""
    return pd.Series([bank.majority_domain([doc_domain[int(i)] for i in refs]) for refs in queries["ref_ids"]],
                     index=queries.index, name="domain")


# ------------------------------------------------------------------------------------------------ agreement
def agreement(truth: pd.Series, predicted: pd.Series, labels: list[str] | None = None) -> dict:
    """Accuracy, Cohen's κ and the confusion matrix (rows: existing label, columns: new label)."""
    truth, predicted = pd.Series(truth).reset_index(drop=True), pd.Series(predicted).reset_index(drop=True)
    labels = labels or sorted(set(truth) | set(predicted))
    confusion = pd.crosstab(pd.Categorical(truth, labels), pd.Categorical(predicted, labels), dropna=False)
    confusion.index.name, confusion.columns.name = "existing", "labeled"
    n = int(len(truth))
    if n == 0:
        return {"n": 0, "accuracy": float("nan"), "kappa": float("nan"), "confusion": confusion}
    p_o = float((truth == predicted).mean())
    p_e = float(sum(truth.eq(k).mean() * predicted.eq(k).mean() for k in labels))
    kappa = (p_o - p_e) / (1 - p_e) if p_e < 1 else float("nan")
    return {"n": n, "accuracy": p_o, "kappa": kappa, "confusion": confusion}


# ------------------------------------------------------------------------------------------------ one labeling
CLOSE_MARGIN = 0.02  # best minus second domain similarity below this: the document sits between two domains
WARN_SHARE = 0.25  # warn when at least this share of documents sits that close


def confidence(documents: pd.DataFrame) -> dict | None:
    """Zero-shot labels only: quantiles of each document's margin (best minus second domain similarity) and the
    share within :data:`CLOSE_MARGIN` of its second domain; None for LLM labels (they have no margin)."""
    if "margin" not in documents.columns:
        return None
    m = documents["margin"].dropna().to_numpy(np.float64)
    if not len(m):
        return None
    q = np.quantile(m, [0.1, 0.25, 0.5, 0.75, 0.9])
    return {"n": int(len(m)), "p10": float(q[0]), "p25": float(q[1]), "median": float(q[2]), "p75": float(q[3]),
            "p90": float(q[4]), "close_margin": CLOSE_MARGIN, "share_close": float(np.mean(m < CLOSE_MARGIN))}


@dataclass
class Labeling:
    method: str  # "embedder:<spec>" or "llm:<model>"
    domains: dict[str, str]
    documents: pd.DataFrame  # doc_id, previous, domain (None = left as it was), + score/margin or reply/status
    queries: pd.DataFrame  # qid, previous, domain
    document_agreement: dict | None
    query_agreement: dict | None
    unlabeled: int = 0
    messages: list[str] = field(default_factory=list)

    def confidence(self) -> dict | None:
        return confidence(self.documents)

    def distribution(self) -> pd.DataFrame:
        """Documents, tokens and queries per new domain (what the ladder will be built from)."""
        docs = self.documents.assign(domain=self.documents["final"])
        d = docs.groupby("domain").agg(documents=("doc_id", "size"), tokens=("n_tokens", "sum"))
        q = self.queries.groupby("domain").size().rename("queries")
        return d.join(q, how="outer").fillna(0).astype(int).reset_index()


def label(ws: Workspace, descriptions: dict[str, str] | None = None, embedder: str = DEFAULT_EMBEDDER,
          gateway=None, progress: Progress | None = None) -> Labeling:
    """Label every document (embedder, or the gateway's model when given) and derive the query domains."""
    descriptions = check(dict(descriptions or DEFAULT_DOMAINS))
    if gateway is not None:
        new = by_llm(ws, gateway, descriptions, progress=progress)
        method = f"llm:{gateway.model}"
    else:
        new = by_embedder(ws, descriptions, embedder, progress)
        method = f"embedder:{embedder}"
    docs = bank.documents(ws, ["doc_id", "domain", "n_tokens"]).rename(columns={"domain": "previous"})
    docs = docs.merge(new, on="doc_id", how="left")
    docs["final"] = docs["domain"].where(docs["domain"].notna(), docs["previous"])
    unlabeled = int(docs["domain"].isna().sum())
    qs = bank.queries(ws)
    doc_final = pd.Series(docs["final"].to_numpy(), index=docs["doc_id"].to_numpy())
    queries = pd.DataFrame({"qid": qs["qid"], "previous": qs["domain"],
                            "domain": query_domains(qs, doc_final).to_numpy()})
    names = list(descriptions)
    labeled = docs[docs["previous"].isin(names) & docs["domain"].notna()]
    doc_agree = agreement(labeled["previous"], labeled["domain"], names) if len(labeled) else None
    q_labeled = queries[queries["previous"].isin(names)]
    q_agree = agreement(q_labeled["previous"], q_labeled["domain"], names) if len(q_labeled) else None
    messages = []
    if unlabeled:
        messages.append(f"{unlabeled:,} documents got no domain from the model (unparseable or failed replies); "
                        "they keep their previous domain")
    if doc_agree is None:
        messages.append("no document carries one of these domains already, so there is no agreement to report")
    conf = confidence(docs)
    if conf is not None and conf["share_close"] >= WARN_SHARE:
        messages.append(f"warning: {conf['share_close']:.0%} of documents are within {CLOSE_MARGIN} of their "
                        "second domain (best minus second similarity): these labels are close to arbitrary, so "
                        "domain rungs built from them would not isolate anything; check the distribution before "
                        "--apply, or pass domains that fit the bank (--domains / --descriptions)")
    final_domains = set(docs["final"]) | set(queries["domain"])
    if len(final_domains) > MAX_DOMAINS:
        messages.append(f"the bank would span {len(final_domains)} domains (more than {MAX_DOMAINS}); the ladder "
                        "will refuse it")
    return Labeling(method, descriptions, docs, queries, doc_agree, q_agree, unlabeled, messages)


@dataclass
class ApplyReport:
    version_before: int
    version_after: int
    documents_changed: int
    queries_changed: int
    messages: list[str] = field(default_factory=list)


def apply(ws: Workspace, labeling: Labeling) -> ApplyReport:
    """Write the new domains (documents and queries) as ONE new workspace version; the previous one stays readable."""
    from emb_s_core.collide import after_edit

    if ws.read_only:
        raise EmbSError(f"the workspace is open read-only at version {ws.version}",
                        fix="label the current workspace (open it without a version).")
    before = ws.version
    docs = ws.read_pandas("documents")
    final = pd.Series(labeling.documents["final"].to_numpy(), index=labeling.documents["doc_id"].to_numpy())
    if not docs["doc_id"].isin(final.index).all():
        raise EmbSError("the bank changed since this labeling was computed", fix="label it again.")
    new_doc_domain = docs["doc_id"].map(final)
    n_docs = int((new_doc_domain != docs["domain"]).sum())
    qs = ws.read_pandas("queries")
    new_q = qs["qid"].map(pd.Series(labeling.queries["domain"].to_numpy(), index=labeling.queries["qid"].to_numpy()))
    n_q = int((new_q != qs["domain"]).sum())
    if not n_docs and not n_q:
        return ApplyReport(before, before, 0, 0, ["the bank already has these domains; nothing changed"])
    edits = list(ws.settings.get("bank_edits", []))
    edits.append({"kind": "domains", "method": labeling.method, "domains": list(labeling.domains),
                  "from_version": before, "documents_changed": n_docs, "queries_changed": n_q})
    with ws.transaction():
        ws.write("documents", pa.Table.from_pandas(docs.assign(domain=new_doc_domain), schema=DOCUMENT_SCHEMA,
                                                   preserve_index=False), mode="overwrite", schema=DOCUMENT_SCHEMA)
        ws.write("queries", pa.Table.from_pandas(qs.assign(domain=new_q), schema=QUERY_SCHEMA,
                                                 preserve_index=False), mode="overwrite", schema=QUERY_SCHEMA)
        ws.set_setting("bank_edits", edits)
    return ApplyReport(before, ws.version, n_docs, n_q, after_edit(ws, before))
