"""End to end with the replies real models write (issue 22): a scripted endpoint (litellm ``mock_response``) answers
localization with numbered lists, counts and DocID prose, and QA with verbose, hedged, corrected and refused
answers; ``emb-s localize / qa / judge / diagnose`` must give the true quadrants on every rung."""
from __future__ import annotations

import json
import re
import zlib

import pandas as pd

from emb_s_core import bank, diagnose, ladder, protocol
from emb_s_core.cli import main as cli
from testkit.use_bank import question_of, scripted, use_base_ws, ws  # noqa: F401 (fixtures)

K = 2
LIMIT = 6
LOCALIZE = [  # written the way models answer
    "1. DocID {a}\n2. DocID {b}", "Top 2: {a}, {b}", "The relevant documents are [DocID={a}] and [DocID={b}].",
    "[{a}, {b}]", "1. {a}\n2. {b}",
]
RIGHT = ["Based on the documents, the answer is {x}.", "{x}", "It's {x}, I believe.", "Hmm, {y}? No — it is {x}.",
         "From the passage: {x}.", "**{x}** — though the passages are thin on detail."]
WRONG = ["{x} or {y}", "{x}? No — the documents say {y}.", "I don't know.", "It is not {x}; it is {y}.",
         "Either {y} or {x}.", "Older lists give {x}, but that is outdated; it is now {y}."]


def truth(qid: str) -> tuple[bool, bool]:
    """(accessed, answered well) the scripted endpoint is told to produce for a query, fixed per query."""
    h = zlib.crc32(qid.encode())
    return bool(h & 1), bool(h & 2)


def responder(ws):
    qs = bank.queries(ws).set_index("text")

    def respond(messages) -> str:
        content = messages[-1]["content"]
        q = qs.loc[question_of(messages)]
        accessed, good = truth(q["qid"])
        style = zlib.crc32(q["qid"].encode()) >> 3
        gold = int(q["ref_ids"][0])
        shown = [int(i) for i in re.findall(r"\[DocID=(\d+)\]", content)]
        if "Which documents contain" in content:  # localization
            others = [i for i in shown if i != gold]
            a, b = (others[0], gold) if accessed else (others[0], others[1])  # the gold second, as often
            return LOCALIZE[style % len(LOCALIZE)].format(a=a, b=b)
        answer = q["answer"]
        other = str(int(answer) + 4) if answer.isdigit() else "Pexaton"
        templates = RIGHT if good else WRONG
        return templates[style % len(templates)].format(x=answer, y=other)

    return respond


def test_diagnose_gives_the_true_quadrants_on_every_rung(ws, monkeypatch, capsys):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-a-real-key")
    scripted(monkeypatch, responder(ws))
    common = ["-w", str(ws.path), "--model", "gpt-4o-mini", "--context-window", "100000", "--concurrency", "1"]
    scope = ["--limit", str(LIMIT)]  # per rung: every rung is there
    assert cli(["localize", *common, *scope, "-k", str(K), "--name", "loc"]) == 0
    assert cli(["qa", *common, *scope, "--setting", "rag", "--context-run", "loc", "-k", str(K), "--name", "qa"]) == 0
    assert cli(["judge", "-w", str(ws.path), "--qa-run", "qa"]) == 0
    capsys.readouterr()
    assert cli(["diagnose", "-w", str(ws.path), "--access-run", "loc", "--qa-run", "qa", "-k", str(K),
                "--json"]) == 0
    out, err = capsys.readouterr()
    got = pd.DataFrame(json.loads(out))
    ws.refresh()
    df = diagnose.quadrants(ws, "loc", "qa", k=K)
    assert df["quadrant"].notna().all()
    lad = ladder.load(ws)
    expected = []
    for rung in lad.rungs:
        for qid in protocol.rung_queries(rung, LIMIT):
            accessed, good = truth(qid)
            quadrant = {(True, True): diagnose.ACCESSED_GOOD, (True, False): diagnose.USE_FAILURE,
                        (False, True): diagnose.UNACCESSED_GOOD, (False, False): diagnose.ACCESS_FAILURE}
            expected.append({"rung": rung.name, "qid": qid, "want": quadrant[accessed, good]})
    expected = pd.DataFrame(expected)
    merged = expected.merge(df[["rung", "qid", "quadrant"]], on=["rung", "qid"], how="outer")
    wrong = merged[merged["want"] != merged["quadrant"]]
    assert wrong.empty, wrong.head(10).to_string()
    assert set(expected["want"]) == set(diagnose.QUADRANTS) and expected["rung"].nunique() == len(lad.rungs)
    # the printed shares are the true counts on every rung, and the judge's measured agreement is beside them
    counts = expected.groupby(["rung", "want"]).size()
    for row in got.itertuples():
        assert row.n == counts.get((row.rung, row.quadrant), 0)
    assert "agreement: judge reference (reference_v11)" in err and "held-out" in err
    # the replies are ones the paper's raw integer rule misreads: under it, true access would be lost in many cells
    from emb_s_core import localize, runs

    res = runs.load_results(ws, runs=["loc"])
    qs = bank.queries(ws).set_index("qid")
    raw_wrong = 0
    for qid, detail in zip(res["qid"], res["detail"]):
        raw = localize.read_ids(json.loads(detail)["reply"], K, rule=localize.RAW_INTEGERS)[0]
        raw_wrong += (int(qs.loc[qid, "ref_ids"][0]) in raw) != truth(qid)[0]
    assert raw_wrong >= len(res) // 5


def test_usage_line_counts_the_cells_that_did_not_fit(ws, monkeypatch, capsys):
    """Issue 22: with a small window the summary said "0 did not fit" while the table showed every such cell."""
    from emb_s_core import localize, runs

    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-a-real-key")
    scripted(monkeypatch, lambda m: "[0]")
    assert cli(["localize", "-w", str(ws.path), "--model", "gpt-4o-mini", "--context-window", "5000",
                "--concurrency", "1", "--limit", "1", "--name", "small"]) == 0
    out = capsys.readouterr().out
    ws.refresh()
    stored = int((runs.load_results(ws, runs=["small"])["status"] == runs.DOES_NOT_FIT).sum())
    assert stored > 0 and f"{stored} did not fit" in out
    assert int(localize.audit_summary(ws, "small")["does_not_fit"].sum()) == stored
