"""A tiny fact bank for the evidence-use tests: two domains, base rung 2K tokens, so whole rungs fit the local
model's 8K window while the full bank does not."""
from __future__ import annotations

import random
import shutil
from pathlib import Path

import pytest

from emb_s_core import bank, ladder
from emb_s_core.store import Workspace
from testkit import write_jsonl

_SYL = ["zor", "mi", "kel", "os", "pel", "dru", "vas", "tor", "ul", "bri", "ash", "cor", "el", "fy", "gar", "hes"]
LANDS = [f"{a.capitalize()}{b}land" for a in _SYL for b in ("a", "o", "u", "e", "i", "y")][:96]
CITIES = [f"{b.capitalize()}{a}ton" for a in _SYL for b in ("qui", "pex", "mor", "sab", "lum", "bri")][:96]
PEOPLE = [f"{first} {last}" for last in ("Wren", "Lark", "Moss", "Fern", "Pike", "Reed", "Hale", "Rook")
          for first in ("Ada", "Bo", "Cy", "Di", "Ed", "Flo", "Gus", "Hal", "Ivy", "Jon", "Kit", "Lou")][:96]
YEARS = [1700 + 3 * i for i in range(96)]
FILLER = ("Travellers describe its markets, its old stone bridges and the long festival held every autumn. "
          "Local records list several guilds, a river port and a small observatory on the northern hill.")
N_QUERIES = 12  # per domain; the other documents are distractors


def write_bank(folder: Path, n: int = 96) -> Path:
    """``n`` documents per domain (about 52 tokens each); queries ask about the first 12 entities of each."""
    docs, queries = [], []
    for i in range(n):
        docs.append({"doc_id": 2 * i, "title": LANDS[i], "domain": "geography",
                     "text": f"The capital of {LANDS[i]} is {CITIES[i]}. {FILLER}"})
        docs.append({"doc_id": 2 * i + 1, "title": PEOPLE[i], "domain": "people",
                     "text": f"{PEOPLE[i]} was born in {YEARS[i]} in {CITIES[(i + 3) % n]}. {FILLER}"})
    for i in range(N_QUERIES):
        queries.append({"qid": f"g{i:02d}", "text": f"What is the capital of {LANDS[i]}?", "answer": CITIES[i],
                        "ref_ids": [2 * i], "hard_negative_ids": [2 * (i + N_QUERIES)], "domain": "geography",
                        "task_type": "fact"})
        queries.append({"qid": f"p{i:02d}", "text": f"In which year was {PEOPLE[i]} born?",
                        "answer": str(YEARS[i]), "answer_aliases": [f"in {YEARS[i]}"],
                        "ref_ids": [2 * i + 1], "domain": "people",
                        "task_type": "fact" if i % 3 else "comparison"})
    random.Random(0).shuffle(queries)
    write_jsonl(folder / "documents.jsonl", docs)
    write_jsonl(folder / "queries.jsonl", queries)
    return folder


def make_workspace(root: Path) -> Workspace:
    """Import the bank and build a small ladder: 2K/<d>, 4K/<d>, shared 4K, global 8K, full (about 10K tokens)."""
    bank.import_path(root / "ws", "native", write_bank(root / "bank"))
    ws = Workspace(root / "ws")
    ladder.build(ws, ladder.LadderOptions(base="2K", domain_sizes=("2K", "4K"), shared_size="4K", reserve=256))
    return ws


@pytest.fixture(scope="session")
def use_base_ws(tmp_path_factory) -> Workspace:
    """One tiny workspace per test session; tests take private copies through ``ws``."""
    return make_workspace(tmp_path_factory.mktemp("use"))


@pytest.fixture
def ws(use_base_ws, tmp_path) -> Workspace:
    """A private copy of the session's workspace (cheap: the bank is tiny), free to write to."""
    shutil.copytree(use_base_ws.path, tmp_path / "ws")
    return Workspace(tmp_path / "ws")


def scripted(monkeypatch, responder) -> dict:
    """Route every litellm.completion through ``responder(messages) -> mock_response`` (a reply string or an
    exception); litellm still builds the response, usage and cost. Returns a dict counting calls."""
    from emb_s_core import llm

    litellm = llm.load_litellm()
    real = getattr(litellm.completion, "unscripted", litellm.completion)  # re-scripting replaces, never chains
    state = {"n": 0}

    def fake(*args, **kwargs):
        state["n"] += 1
        kwargs["mock_response"] = responder(kwargs["messages"])
        return real(*args, **kwargs)

    fake.unscripted = real
    monkeypatch.setattr(litellm, "completion", fake)
    return state


def question_of(messages) -> str:
    """The question line of a QA or judge prompt."""
    for line in messages[-1]["content"].splitlines():
        if line.startswith("Question: "):
            return line[len("Question: "):]
    return ""
