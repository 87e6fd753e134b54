"""A small generated bank (≤ 300 documents, 3 domains) with gold and hard-negative documents, and its ladder,
shared by the retrieval tests. Built once per session and copied per module (copying is faster than embedding)."""
from __future__ import annotations

import random
import shutil
from pathlib import Path

from emb_s_core import bank, ladder
from emb_s_core.store import Workspace
from testkit import REPO, write_jsonl  # noqa: F401  (REPO re-exported for subprocess tests)

TOPICS = {
    "medicine": ["fever", "vaccine", "antibiotic", "surgery", "insulin", "virus", "heart", "kidney", "dose", "clinic"],
    "history": ["empire", "treaty", "battle", "dynasty", "revolution", "king", "colony", "war", "siege", "monarch"],
    "law": ["court", "statute", "contract", "appeal", "verdict", "tort", "judge", "plaintiff", "clause", "liability"],
}
FILLER = ("the report describes several events and people over many years with details about places and dates "
          "that matter for later readers and scholars alike").split()
LADDER = ladder.LadderOptions(base="2K", domain_sizes=("2K", "3K"), shared_size="6K", reserve=256)


def make_bank(folder: Path, n_docs: int = 240, n_queries: int = 30, seed: int = 7) -> Path:
    rnd = random.Random(seed)
    domains = list(TOPICS)
    docs, queries = [], []
    for i in range(n_docs):
        d = domains[i % 3]
        words = [rnd.choice(TOPICS[d]) for _ in range(rnd.randint(8, 20))] + rnd.sample(FILLER, 12)
        rnd.shuffle(words)
        docs.append({"doc_id": i, "title": f"{d.title()} record {i}",
                     "text": f"Entity{i} is known for {rnd.choice(TOPICS[d])}. " + " ".join(words) + ".",
                     "domain": d, "source": "gen-a" if i % 2 else "gen-b"})
    for j in range(n_queries):
        d = domains[j % 3]
        gold = [i for i in range(j % 3, n_docs, 3)][j // 3 * 2]
        neg = gold + 3
        # the gold says the fact; the hard negative names the entity but not the fact
        docs[gold]["text"] = f"Entity{gold} founded the order of Q{j}fact in the year {1500 + j}. " + docs[gold]["text"]
        docs[neg]["text"] = f"Entity{gold} was mentioned in a {TOPICS[d][0]} ledger. " + docs[neg]["text"]
        ref = [gold] if j % 4 else [gold, gold + 6]
        queries.append({"qid": f"q{j:02d}", "text": f"When did Entity{gold} found the order of Q{j}fact?",
                        "answer": str(1500 + j), "ref_ids": ref, "hard_negative_ids": [neg], "domain": d})
    write_jsonl(folder / "documents.jsonl", docs)
    write_jsonl(folder / "queries.jsonl", queries)
    return folder


def build_workspace(root: Path) -> Path:
    make_bank(root / "bank")
    bank.import_path(root / "ws", "native", root / "bank")
    ladder.build(Workspace(root / "ws"), LADDER)
    return root / "ws"


def copy_workspace(template: Path, dest: Path) -> Workspace:
    shutil.copytree(template, dest)
    return Workspace(dest)


_TEMPLATES: dict[str, Path] = {}


def template(tmp_path_factory) -> Path:
    """The generated bank + ladder, built once per test session."""
    if "ws" not in _TEMPLATES:
        _TEMPLATES["ws"] = build_workspace(tmp_path_factory.mktemp("retrieval-template"))
    return _TEMPLATES["ws"]


def text_workspace(root: Path, texts: list[str], queries: list[dict] | None = None) -> Workspace:
    """A workspace whose documents are ``texts`` (doc ids 0..n-1), no ladder."""
    docs = [{"doc_id": i, "text": t} for i, t in enumerate(texts)]
    queries = queries or [{"qid": "q0", "text": "x", "answer": "y", "ref_ids": [0]}]
    write_jsonl(root / "bank" / "documents.jsonl", docs)
    write_jsonl(root / "bank" / "queries.jsonl", queries)
    bank.import_path(root / "ws", "native", root / "bank")
    return Workspace(root / "ws")
