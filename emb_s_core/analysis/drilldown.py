"""Per-query inspection behind the dashboard's drill-down: where each gold and hard-negative document ranked on
every rung, the top-K list with its markings, which document outranked the gold, and what tells the gold apart from the document that outranked it (the reading view).

Why here and not in the page: the same views serve the CLI and tests, and pages stay thin (DESIGN.md §2). Nothing
here computes an aggregate metric; failures are read from ``metrics.per_query`` rows.
"""
from __future__ import annotations

import html
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Mapping

import numpy as np
import pandas as pd

from emb_s_core import metrics
from emb_s_core.retrievers.text import STOPWORDS
from emb_s_core.schema import OK

if TYPE_CHECKING:
    from emb_s_core.store import Workspace

GOLD, HARD_NEGATIVE, OTHER = "gold", "hard negative", "other"
NOT_IN_LIST = "not in list"  # in the rung's pool, but not in the stored top-K
NOT_IN_POOL = "not in pool"  # not a member of this rung, so it could not be retrieved there
RANK_LEGEND = (f"A number is the document's rank in the stored list (1 = first). \"{NOT_IN_LIST}\": in the pool "
               f"the query was searched in, but below the stored list. \"{NOT_IN_POOL}\": not in that pool, so it "
               "could not be retrieved there (on a benign-twin rung, the query's own near misses were taken out of "
               "its pool). Blank: this run has no ranking on this rung (its status says why).")


def find_queries(queries: pd.DataFrame, needle: str, limit: int = 50) -> pd.DataFrame:
    """Queries whose id equals ``needle`` (first), then those whose text or answer contains it (case-insensitive)."""
    needle = (needle or "").strip()
    if not needle:
        return queries.iloc[0:0]
    exact = queries[queries["qid"] == needle]
    low = needle.lower()
    hits = queries[queries["text"].str.lower().str.contains(low, regex=False)
                   | queries["answer"].astype(str).str.lower().str.contains(low, regex=False)
                   | queries["qid"].str.lower().str.contains(low, regex=False)]
    return pd.concat([exact, hits]).drop_duplicates("qid").head(limit)


def failures(per_query: pd.DataFrame, run: str, rung: str, metric: str, x: str = "rung") -> pd.DataFrame:
    """The (run, rung) rows that failed ``metric``: value < 1 (for HN-intrusion: an intrusion, value 1), worst first.

    ``x="scale"`` selects by the pooled scale column (all domain rungs of one size) instead of one rung."""
    m = metrics.metric(metric)
    col = m.column
    d = per_query[(per_query["run"] == run) & (per_query[x] == rung) & (per_query["status"] == OK)]
    if col not in d:
        return d.iloc[0:0]
    d = d.dropna(subset=[col])
    bad = d[is_failure(d[col], m).to_numpy()]
    return bad.sort_values([col, "qid"], ascending=[m.higher_is_better, True])


def is_failure(values: pd.Series, m: metrics.Metric) -> pd.Series:
    """A failure is any value short of the best one: below 1 where higher is better, above 0 where lower is (the
    one rule of the failures list and the finder). NaN (metric undefined) is no failure."""
    return values < 1.0 if m.higher_is_better else values > 0.0


def no_failures_reason(per_query: pd.DataFrame, run: str, rung: str, metric: str, x: str = "rung") -> str:
    """Why :func:`failures` found nothing for a cell, in one sentence: no scored queries there, none that ``metric``
    is defined for (R@1 counts single-source queries only: a HotpotQA bank has none), or all at the best value."""
    m = metrics.metric(metric)
    d = per_query[(per_query["run"] == run) & (per_query[x] == rung) & (per_query["status"] == OK)]
    if d.empty:
        return f"run {run!r} has no scored queries at {rung}"
    n = int(d[m.column].notna().sum()) if m.column in d else 0
    if n == 0:
        return (f"{m.name} counts {m.family.population} only, and none of the {d['qid'].nunique():,} queries "
                f"{run!r} scored at {rung} is one: pick another metric (e.g. SR@10)")
    return f"all {n:,} {m.family.population} {run!r} scored at {rung} have {m.name} = {int(m.higher_is_better)}"


def _role(doc_id: int, gold: set[int], negs: set[int]) -> str:
    return GOLD if doc_id in gold else HARD_NEGATIVE if doc_id in negs else OTHER


def rank_table(results: pd.DataFrame, gold: list[int], negatives: list[int], rung_order: list[str],
               pools: Mapping[str, np.ndarray] | None = None) -> pd.DataFrame:
    """Where every gold and hard-negative document ranked: one row per (run, rung) in ladder order, one text column
    per document ("gold 12", "hard negative 40") holding its rank ("3"), :data:`NOT_IN_LIST`, :data:`NOT_IN_POOL`
    (when ``pools`` gives the rungs' doc ids and the document is not a member) or blank (no ranking on that cell:
    does not fit, error). :data:`RANK_LEGEND` explains the words."""
    docs = [(int(d), GOLD) for d in gold] + [(int(d), HARD_NEGATIVE) for d in negatives]
    labels = [f"{role} {d}" for d, role in docs]
    ids_wanted = np.asarray([d for d, _ in docs], dtype=np.int64)
    members = {name: set(ids_wanted[np.isin(ids_wanted, np.asarray(pool, np.int64))].tolist())
               for name, pool in (pools or {}).items()}
    order = {r: i for i, r in enumerate(rung_order)}
    res = results.assign(_o=results["rung"].map(order).fillna(len(order))).sort_values(["run", "_o"])
    rows = []
    for row in res.itertuples(index=False):
        out = {"run": row.run, "rung": row.rung, "status": row.status}
        if row.status == OK:
            ids = np.asarray(row.doc_ids if row.doc_ids is not None else [], dtype=np.int64)
            pos = {int(d): i + 1 for i, d in enumerate(ids)}
            pool = members.get(row.rung)
            out.update({lab: str(pos[d]) if d in pos else NOT_IN_POOL if pool is not None and d not in pool
                        else NOT_IN_LIST for lab, (d, _) in zip(labels, docs)})
        else:
            out.update({lab: "" for lab in labels})
        rows.append(out)
    return pd.DataFrame(rows, columns=["run", "rung", "status", *labels])


def rank_columns(results: pd.DataFrame, run: str, gold: list[int], negatives: list[int], rung_order: list[str],
                 pools: Mapping[str, np.ndarray] | None = None) -> pd.DataFrame:
    """:func:`rank_table` for one run turned on its side: one row per gold and hard-negative document ("gold 12"),
    one column per rung the run has for this query, in ladder order; the same cells and :data:`RANK_LEGEND`."""
    table = rank_table(results[results["run"] == run], gold, negatives, rung_order, pools)
    docs = [c for c in table.columns if c not in ("run", "rung", "status")]
    out = table.set_index("rung")[docs].T.reset_index().rename(columns={"index": "document"})
    out.columns.name = None
    return out


def query_pools(lad, deltas: Mapping[str, Mapping[str, tuple]], qid: str) -> dict[str, np.ndarray]:
    """The pool ``qid`` was searched in on every rung of ``lad`` (sorted ids): the rung's membership, or on a twin
    rung with per-query pools (``twin.deltas``) that membership minus the query's removed near misses plus what
    refilled them."""
    from emb_s_core import twin

    return {r.name: twin.pool(np.sort(np.asarray(r.doc_ids, np.int64)), deltas.get(r.name, {}).get(qid))
            for r in lad.rungs}


def top_k(doc_ids, scores, gold: list[int], negatives: list[int], documents: pd.DataFrame, k: int = 10,
          highlight: list[int] | tuple[int, ...] = ()) -> pd.DataFrame:
    """The top-``k`` list at one (run, rung): rank, doc_id, mark (gold / hard negative / other), title, source,
    domain, score. ``documents`` is indexed by doc_id with title, source, domain. ``highlight`` (documents that
    displaced the gold, from ``analysis.explain``) adds a ``displaced the gold`` column."""
    ids = [int(d) for d in (doc_ids if doc_ids is not None else [])][:k]
    sc = list(scores[:k]) if scores is not None else [np.nan] * len(ids)
    g, n = set(int(x) for x in gold), set(int(x) for x in negatives)
    meta = documents.reindex(ids)
    out = pd.DataFrame({
        "rank": range(1, len(ids) + 1), "doc_id": ids, "mark": [_role(d, g, n) for d in ids],
        "title": meta["title"].fillna("").to_numpy() if "title" in meta else "",
        "source": meta["source"].to_numpy() if "source" in meta else "",
        "domain": meta["domain"].to_numpy() if "domain" in meta else "",
        "score": [float(s) if s is not None else np.nan for s in sc],
    })
    if highlight:
        marked = {int(d) for d in highlight}
        out.insert(3, "displaced the gold", [d in marked for d in ids])
    return out


def with_documents(ranked: pd.DataFrame, documents: pd.DataFrame,
                   columns: tuple[str, ...] = ("title", "source", "domain")) -> pd.DataFrame:
    """``ranked`` (with a doc_id column) plus the documents' ``columns`` (``documents`` indexed by doc_id); an id
    not in the bank gets blanks."""
    meta = documents.reindex(ranked["doc_id"].to_numpy())
    out = ranked.reset_index(drop=True).copy()
    for col in columns:
        out[col] = meta[col].to_numpy() if col in meta else None
    return out


def outranked_pair(doc_ids, gold: list[int], negatives: list[int]) -> tuple[int, int] | None:
    """(gold doc, the document that outranked it): the best-ranked gold document (or the first gold id when none was
    retrieved) and the top-ranked non-gold document above it, preferring a hard negative. None when gold is first."""
    ids = [int(d) for d in (doc_ids if doc_ids is not None else [])]
    g = [int(x) for x in gold]
    if not ids or not g:
        return None
    pos = {d: i for i, d in enumerate(ids)}
    found = sorted((pos[d], d) for d in g if d in pos)
    best_pos, best_gold = found[0] if found else (len(ids), g[0])
    above = [d for d in ids[:best_pos] if d not in g]
    if not above:
        return None
    negs = set(int(x) for x in negatives)
    intruder = next((d for d in above if d in negs), above[0])
    return best_gold, intruder


#: a word as the reading view counts it: a number with its decimal or thousands separators ("3.5", "1,000"), else
#: a run of word characters with inner apostrophes or hyphens ("don't", "Jean-Paul"); punctuation is never part of
#: a word, so "1995," and "1995" are the same word
TOKEN = re.compile(r"\d+(?:[.,:]\d+)*(?!\w)|\w+(?:['\u2019-]\w+)*")
QUERY, ONLY = "query", "only"  # a word's marks: one of the query's terms / a name or number the other text lacks


@dataclass
class Reading:
    """Two documents read side by side: each as (piece, marks) pieces, where a piece is a word or the text between
    words and marks a subset of {:data:`QUERY`, :data:`ONLY`}; and the lists the marks come from."""

    left: list[tuple[str, frozenset[str]]]
    right: list[tuple[str, frozenset[str]]]
    query_terms: list[str]  # the query's words (stopwords left out), in query order
    query_in_left: list[str]  # of those, the ones each text contains
    query_in_right: list[str]
    only_left: list[str]  # names (capitalized words) and numbers the left text has and the right lacks
    only_right: list[str]


def _words(text: str) -> list[str]:
    return TOKEN.findall(text or "")


def _key(word: str) -> str:
    return word.casefold()


def _salient(text: str) -> list[str]:
    """Numbers, years and names in ``text``, first occurrence order: a word with a digit, or a capitalized word that
    is no stopword, never appears in lower case in the same text and stands somewhere other than at a sentence's
    start (where every word is capitalized)."""
    lower, inside, words = set(), set(), []
    for m in TOKEN.finditer(text or ""):
        w = m.group(0)
        words.append(w)
        if not w[:1].isupper():
            lower.add(w.lower())
            continue
        gap = text[max(0, m.start() - 3):m.start()]
        before = text[:m.start()].rstrip()
        if before and before[-1] not in ".!?:;\"\u201c" and "\n" not in gap:
            inside.add(w)
    out = [w for w in words if any(c.isdigit() for c in w)
           or (w in inside and _key(w) not in STOPWORDS and w.lower() not in lower)]
    return list(dict.fromkeys(out))


def reading(left: str, right: str, query: str) -> Reading:
    """What tells two documents apart for ``query``: the query's terms, marked in both texts, and the names and
    numbers one has and the other lacks (compared without case, punctuation stripped), marked where they are.
    Shared words are left unmarked, however many there are: only the differences that can decide the query show."""
    terms = [w for w in dict.fromkeys(_key(w) for w in _words(query)) if w not in STOPWORDS]
    wl, wr = _words(left), _words(right)
    kl, kr = {_key(w) for w in wl}, {_key(w) for w in wr}
    only_l = [w for w in _salient(left) if _key(w) not in kr]
    only_r = [w for w in _salient(right) if _key(w) not in kl]
    term_set = set(terms)

    def pieces(text: str, only: set[str]) -> list[tuple[str, frozenset[str]]]:
        out, at = [], 0
        for m in TOKEN.finditer(text or ""):
            if m.start() > at:
                out.append((text[at:m.start()], frozenset()))
            w = m.group(0)
            marks = {QUERY} if _key(w) in term_set else set()
            if _key(w) in only:
                marks.add(ONLY)
            out.append((w, frozenset(marks)))
            at = m.end()
        if at < len(text or ""):
            out.append((text[at:], frozenset()))
        return out

    return Reading(pieces(left, {_key(w) for w in only_l}), pieces(right, {_key(w) for w in only_r}), terms,
                   [t for t in terms if t in kl], [t for t in terms if t in kr], only_l, only_r)


def reading_html(pieces: list[tuple[str, frozenset[str]]]) -> str:
    """HTML for one side of a :class:`Reading`: every piece ``html.escape``d first; a query term in <mark>, a name or
    number the other text lacks in <ins> (attribute-free tags, for ``ui.safe.html_fragment``)."""
    out = []
    for text, marks in pieces:
        t = html.escape(text)
        if ONLY in marks:
            t = f"<ins>{t}</ins>"
        if QUERY in marks:
            t = f"<mark>{t}</mark>"
        out.append(t)
    return "".join(out)


def reading_table(r: Reading, left: str = "gold", right: str = "other") -> pd.DataFrame:
    """The reading's lists as a two-row table (text cells): which of the query's terms each document contains,
    which it lacks, and the names and numbers only it has."""
    def row(name: str, have: list[str], only: list[str]) -> dict:
        return {"document": name, "query terms it has": " ".join(have),
                "query terms it lacks": " ".join(t for t in r.query_terms if t not in have),
                "names and numbers only it has": " ".join(only)}
    return pd.DataFrame([row(left, r.query_in_left, r.only_left), row(right, r.query_in_right, r.only_right)])


# --------------------------------------------------------------------------------------------- answers and labels
ANSWER_COLUMNS = ["qa_run", "rung", "answer", "status", "judge", "score", "label", "disagrees"]


def query_answers(ws: Workspace, qid: str, score_threshold: float = 4, rung_order: list[str] | None = None) -> pd.DataFrame:
    """Every stored QA answer to ``qid`` with each judge's score and the researcher's label, one row per (QA run,
    rung, judge) — a row with judge None where the answer was not judged. ``label`` is the last label of that answer
    (True right, False wrong, None unlabelled); ``disagrees`` is True where the judge's credit (score ≥
    ``score_threshold``) contradicts the label, None where there is no label or no score. Why: the drill-down lets
    a researcher label the disagreements they see, and those labels measure the judges (``emb_s_core.labels``)."""
    from emb_s_core import judge as judge_mod
    from emb_s_core import labels, qa

    answers = qa.load_answers(ws)
    answers = answers[answers["qid"] == qid][["qa_run", "rung", "answer", "status"]].copy()
    from emb_s_core.llm.secrets import redact  # a reply stored before replies were masked shows no key either

    answers["answer"] = [redact(a) if isinstance(a, str) else a for a in answers["answer"]]
    if answers.empty:
        return pd.DataFrame(columns=ANSWER_COLUMNS)
    scored = judge_mod.scores(ws)
    scored = scored[scored["qid"] == qid][["qa_run", "rung", "judge", "score"]]
    lab = labels.load_labels(ws)
    lab = lab[lab["qid"] == qid][["qa_run", "rung", "correct"]].rename(columns={"correct": "label"})
    df = answers.merge(scored, on=["qa_run", "rung"], how="left").merge(lab, on=["qa_run", "rung"], how="left")
    df["label"] = pd.Series([None if pd.isna(x) else bool(x) for x in df["label"]], index=df.index, dtype=object)
    df["disagrees"] = pd.Series([None if lb is None or pd.isna(s) else bool((s >= score_threshold) != lb)
                                 for lb, s in zip(df["label"], df["score"])], index=df.index, dtype=object)
    order = {r: i for i, r in enumerate(rung_order or [])}
    df = df.sort_values(["qa_run", "rung", "judge"], kind="stable", na_position="last",
                        key=lambda s: s.map(lambda r: order.get(r, len(order))) if s.name == "rung" else s)
    return df[ANSWER_COLUMNS].reset_index(drop=True)
