"""Shared builder for the multi-hop paragraph datasets (HotpotQA, MuSiQue, 2WikiMultihopQA).

Each question ships its own small set of paragraphs: the supporting ones (gold, RefList) and the dataset's own
distractors, retrieved to look relevant (hard negatives). Pooled over questions, the same paragraph recurs, so
documents are deduplicated by (title, text) and get local ids 0..n-1 in order of first appearance.
"""
from __future__ import annotations

from emb_s_core.errors import EmbSError
from emb_s_core.schema import Bank, Document, Query
from emb_s_core.sources import validate
from emb_s_core.sources._io import DocumentKeys, require_field


class PassageBankBuilder:
    """Collects paragraphs and questions into a :class:`Bank` with deduplicated documents."""

    def __init__(self, source: str) -> None:
        self.bank = Bank(source=source, documents=[], queries=[], renumber=True)
        self.keys = DocumentKeys()

    def paragraph(self, title: str | None, text: str, where: str) -> int | None:
        """Local id of the paragraph (title, text), adding it on first sight; None (counted) when text is empty."""
        text = text.strip()
        if not text:
            self.bank.skip("empty paragraph")
            return None
        doc_id, new = self.keys.get((title or None, text))
        if new:
            self.bank.documents.append(Document(doc_id=doc_id, text=text, title=title or None,
                                                source=self.bank.source))
            self.bank.doc_locations[doc_id] = where
        return doc_id

    def question(self, *, qid: str, text: str, answer: str, gold: list[int], others: list[int], where: str,
                 task_type: str | None = None, aliases: list[str] | None = None) -> None:
        """Add one question. Hard negatives = the question's other paragraphs, minus any that equal a gold one."""
        if qid in self.bank.query_locations:
            raise EmbSError(f"duplicate question id {qid!r} (first at {self.bank.query_locations[qid]})",
                            where=where, fix="every question needs a unique id; remove the repeated record.")
        gold = list(dict.fromkeys(gold))
        if not gold:
            self.bank.skip("question without a supporting paragraph")
            return
        negatives = [i for i in dict.fromkeys(others) if i not in set(gold)]
        self.bank.query_locations[qid] = where
        self.bank.queries.append(Query(qid=qid, text=text, answer=answer, ref_ids=gold,
                                       hard_negative_ids=negatives, task_type=task_type,
                                       source=self.bank.source, answer_aliases=list(aliases or [])))


def supporting_titles(obj: dict, where: str, sentences: dict[str, int] | None = None) -> list[str]:
    """Distinct titles of ``supporting_facts`` = [[title, sentence index], ...], in order (HotpotQA, 2Wiki).
    ``sentences`` (title -> number of sentences in ``context``): an index outside a paragraph is an error."""
    titles = []
    for fact in require_field(obj, "supporting_facts", where, list):
        if (not isinstance(fact, list) or len(fact) != 2 or not isinstance(fact[0], str)
                or not isinstance(fact[1], int) or isinstance(fact[1], bool)):
            raise EmbSError(f"supporting_facts entry {fact!r:.60} is not [title, sentence index]", where=where,
                            fix="write each supporting fact as [title, sentence index].")
        if sentences is not None and fact[0] in sentences:
            validate.check_index(fact[1], sentences[fact[0]], where,
                                 f"supporting_facts entry {fact!r:.60}: sentence index",
                                 f"the paragraph {fact[0]!r:.40} in context")
        titles.append(fact[0])
    return list(dict.fromkeys(titles))


def sentence_counts(paragraphs: list[tuple[str, list[str]]]) -> dict[str, int]:
    """title -> sentences of its paragraph in ``context`` (the longest, when a title appears twice)."""
    counts: dict[str, int] = {}
    for title, sentences in paragraphs:
        counts[title] = max(counts.get(title, 0), len(sentences))
    return counts


def titled_paragraphs(obj: dict, where: str) -> list[tuple[str, list[str]]]:
    """``context`` = [[title, [sentence, ...]], ...] checked entry by entry (HotpotQA official, 2Wiki)."""
    out = []
    for entry in require_field(obj, "context", where, list):
        if (not isinstance(entry, list) or len(entry) != 2 or not isinstance(entry[0], str)
                or not isinstance(entry[1], list) or not all(isinstance(s, str) for s in entry[1])):
            raise EmbSError(f"context entry {entry!r:.60} is not [title, [sentences]]", where=where,
                            fix="write each context paragraph as [title, [sentence, ...]].")
        out.append((entry[0], entry[1]))
    return out


def flagged_paragraphs(b: PassageBankBuilder, obj: dict, key: str, where: str) -> tuple[list[int], list[int]]:
    """(gold, others) from ``obj[key]`` = [{title, paragraph_text, is_supporting}] (MuSiQue, IRCoT HotpotQA)."""
    gold, others = [], []
    for i, para in enumerate(require_field(obj, key, where, list)):
        if not isinstance(para, dict):
            raise EmbSError(f"{key}[{i}] is not an object", where=where,
                            fix="each paragraph needs title, paragraph_text and is_supporting.")
        pwhere = f"{where} {key}[{i}]"
        text = require_field(para, "paragraph_text", pwhere, str)
        doc = b.paragraph(validate.text_field(para, "title", pwhere, required=False), text, where)
        if doc is not None:
            (gold if validate.bool_field(para, "is_supporting", pwhere) else others).append(doc)
    return gold, others
