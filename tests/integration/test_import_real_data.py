"""The four shared real datasets imported into ONE workspace through the CLI; counts checked against SOURCE.md.

HotpotQA: 500 q, exactly 2 gold each, 4,858 unique (title, text) docs. MuSiQue: 200 q, 3,141 docs, gold 2/3/4 ->
145/32/23. 2Wiki: 164 q (36 rows without context skipped), 1,294 docs, gold 2 -> 121, 4 -> 43. LoCoMo: 272 session
documents; 1,986 QA - 444 without an answer - 4 without usable evidence = 1,538 queries (derived here, see README).
"""
from __future__ import annotations

import json

from emb_s_core import bank
from emb_s_core.cli import main
from emb_s_core.store import Workspace

DATASETS = [("hotpotqa", "hotpotqa-dev-distractor-500"), ("musique", "musique-ans-200"),
            ("2wiki", "2wikimultihopqa-200"), ("locomo", "locomo10")]


def test_all_four_into_one_workspace(shared_data, tmp_path, capsys):
    ws = tmp_path / "ws"
    for fmt, folder in DATASETS:
        extra = ["--domain", "dialogue"] if fmt == "locomo" else []
        assert main(["import", "-f", fmt, str(shared_data / folder), "-w", str(ws), *extra]) == 0
    printed = capsys.readouterr().out
    assert "skipped 36: row without context" in printed
    assert main(["info", "-w", str(ws), "--json"]) == 0
    info = json.loads(capsys.readouterr().out)
    assert info["documents_per_source"] == {"hotpotqa": 4858, "musique": 3141, "2wiki": 1294, "locomo": 272}
    assert info["queries_per_source"] == {"hotpotqa": 500, "musique": 200, "2wiki": 164, "locomo": 1538}
    assert info["documents"] == 9565 and info["queries"] == 2402 and info["version"] == 4
    # 2Wiki pooled corpus = 139,547 tokens and MuSiQue 365,310 (SOURCE.md); HotpotQA 642,045, 4 below SOURCE.md's
    # 642,049 because 4 paragraphs carry stray edge whitespace that the importer strips
    assert info["tokens_per_source"]["2wiki"] == 139547 and info["tokens_per_source"]["musique"] == 365310
    assert info["tokens_per_source"]["hotpotqa"] == 642045
    assert info["queries_per_domain"] == {"general": 864, "dialogue": 1538}
    skipped = {s["source"]: json.loads(s["skipped"]) for s in info["sources"]}
    assert skipped["2wiki"] == {"row without context": 36}
    assert skipped["locomo"] == {"question without an answer (adversarial category 5)": 444,
                                 "question without usable evidence": 4, "evidence id matching no dialog turn": 4}

    qs = bank.queries(Workspace(ws))
    gold = {src: g["n_gold"].value_counts().to_dict() for src, g in qs.groupby("source")}
    assert gold["hotpotqa"] == {2: 500}
    assert gold["musique"] == {2: 145, 3: 32, 4: 23}
    assert gold["2wiki"] == {2: 121, 4: 43}
    assert gold["locomo"] == {1: 1206, 2: 206, 3: 67, 4: 35, 5: 11, 7: 5, 6: 4, 8: 2, 9: 1, 15: 1}
    tasks = {src: g["task_type"].value_counts().to_dict() for src, g in qs.groupby("source")}
    assert tasks["2wiki"] == {"compositional": 57, "comparison": 54, "bridge_comparison": 43, "inference": 10}
    assert tasks["musique"] == {"2hop": 145, "3hop1": 28, "4hop1": 18, "3hop2": 4, "4hop3": 4, "4hop2": 1}
    assert tasks["locomo"] == {"single-hop": 841, "temporal": 321, "multi-hop": 282, "open-domain": 92,
                               "adversarial": 2}
    hotpot = qs[qs["source"] == "hotpotqa"]
    assert hotpot["hard_negative_ids"].map(len).sum() > 0
    assert (qs[qs["source"] == "locomo"]["hard_negative_ids"].map(len) == 0).all()
    # re-importing a dataset is a no-op
    version = Workspace(ws).version
    assert main(["import", "-f", "musique", str(shared_data / "musique-ans-200"), "-w", str(ws)]) == 0
    assert Workspace(ws).version == version
