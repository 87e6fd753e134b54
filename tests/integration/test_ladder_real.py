"""The built ladder on the four shared real datasets (issue 20), in 1, 2 and 4 domains: every scale between the base
and the full bank as a distinct nested rung, rungs equal to the one below not built (and said why), every kept
query's hard negatives in its base pool with the default settings, and membership independent of import order.

Banks are imported once per module; ladders use small bases (8K-16K) so the suite stays fast.
"""
from __future__ import annotations

import json
import math
import random
from pathlib import Path

import numpy as np
import pytest

from emb_s_core import bank, ladder, tokens
from emb_s_core.cli import main
from emb_s_core.store import Workspace
from tests.conftest import SHARED_DATA, write_jsonl

DATASETS = {"hotpotqa": "hotpotqa-dev-distractor-500", "musique": "musique-ans-200",
            "2wiki": "2wikimultihopqa-200", "locomo": "locomo10"}
#: the four datasets in one bank, as 1, 2 and 4 domains
GROUPINGS = {1: {n: "general" for n in DATASETS}, 2: {"hotpotqa": "wiki", "2wiki": "wiki", "musique": "mixed",
                                                      "locomo": "mixed"},
             4: {n: n for n in DATASETS}}


@pytest.fixture(scope="module")
def banks(tmp_path_factory) -> dict[str, Path]:
    """One workspace per dataset (one domain) and the four together in 1, 2 and 4 domains."""
    if not SHARED_DATA.is_dir():
        pytest.skip(f"shared datasets not found at {SHARED_DATA}")
    root = tmp_path_factory.mktemp("real-ladders")
    out = {}
    for name, folder in DATASETS.items():
        out[name] = root / name
        bank.import_path(out[name], name, SHARED_DATA / folder, domain=name)
    for n, grouping in GROUPINGS.items():
        out[f"all-{n}"] = root / f"all-{n}"
        for name, folder in DATASETS.items():
            bank.import_path(out[f"all-{n}"], name, SHARED_DATA / folder, domain=grouping[name])
    return out


def _chains(lad: ladder.Ladder) -> list[list[ladder.Rung]]:
    """Each domain's rungs followed by the shared, global and full rungs: the nested sequences a query sees."""
    shared = [r for r in lad.rungs if r.kind in ("shared", "global", "full")]
    domains = sorted({r.domain for r in lad.rungs if r.domain})
    return [[r for r in lad.rungs if r.domain == d] + shared for d in domains]


@pytest.mark.parametrize("name, base", [("hotpotqa", "8K"), ("musique", "8K"), ("2wiki", "8K"), ("locomo", "8K"),
                                        ("all-1", "16K"), ("all-2", "16K"), ("all-4", "16K")])
def test_every_scale_between_base_and_full_is_a_distinct_nested_rung(banks, name, base):
    lad = ladder.build(Workspace(banks[name]), ladder.LadderOptions(base=base))
    full = lad.rung("full")
    distinct = {r.membership_hash for r in lad.rungs}
    assert len(distinct) >= math.floor(math.log2(full.n_tokens / tokens.parse_size(base))) + 1, lad.table()
    for chain in _chains(lad):
        unique = list({r.membership_hash: r for r in chain}.values())
        for small, big in zip(unique, unique[1:]):
            assert set(small.doc_ids) < set(big.doc_ids), (small.name, big.name)
            assert big.n_tokens > small.n_tokens
    n_domains = len({r.domain for r in lad.rungs if r.domain})
    shared = next((r for r in lad.rungs if r.kind == "shared"), None)
    if n_domains == 1:  # the union of one base pool is that pool: no second, identical rung (absent, saying why)
        base_rung = next(r for r in lad.rungs if r.kind == "domain")
        assert shared is None and {a["rung"]: a["reason"] for a in lad.absent}["shared"] == \
            f"not built: same documents and queries as {base_rung.name}"
        shared = base_rung
    assert len(distinct) == len(lad.rungs), lad.table()  # no rung holds the same documents and queries as another
    for r in lad.rungs:  # a mixed rung that would hold every other pool is the shared rung: not built
        if r.kind == "mixed":
            assert r.membership_hash != shared.membership_hash and len(r.doc_ids) < len(shared.doc_ids)
    # global injection doubles from the first power of two above what the shared rung stands for, up to the bank
    glob = [r.size for r in lad.rungs if r.kind == "global"] + [a for a in lad.absent
                                                                if "/" not in a["rung"] and a["rung"] != "shared"]
    sizes = sorted(r if isinstance(r, int) else tokens.parse_size(r["rung"]) for r in glob)
    floor = max(n_domains * tokens.parse_size(base), shared.n_tokens + 1024)
    assert sizes and sizes[0] == 1 << math.ceil(math.log2(floor + 1))
    assert sizes == [sizes[0] * 2 ** i for i in range(len(sizes))]
    assert sizes[-1] - 1024 < full.n_tokens <= 2 * sizes[-1]
    assert any(m.startswith(f"rungs from {tokens.format_size(2 * sizes[-1])} up are not built") for m in lad.messages)


def test_a_rung_equal_to_the_one_below_is_not_built_and_the_table_says_why(banks):
    """Four domains of 16K: the other three pools fit a 64K mixed rung whole, so 64K/<d> (and 128K/<d>, 256K/<d>)
    would be the shared rung: absent, with a row saying so."""
    w = Workspace(banks["all-4"])
    lad = ladder.build(w, ladder.LadderOptions(base="16K", domain_sizes=("16K", "32K", "64K", "128K")))
    names = set(lad.names)
    for d in DATASETS:
        assert f"32K/{d}" in names and f"64K/{d}" not in names and f"128K/{d}" not in names
    table = ladder.load(w).table(absent=True)
    absent = table[table["kind"] == "absent"].set_index("rung")
    assert set(absent.index) >= {f"64K/{d}" for d in DATASETS}
    assert absent.loc["64K/musique", "note"].startswith("not built: same documents as shared")
    rows = table["rung"].tolist()
    assert rows.index("64K/musique") == rows.index("32K/musique") + 1  # where it would stand
    assert len(ladder.load(w).table()) == len(lad.rungs)  # rung-aligned by default


@pytest.mark.parametrize("name", ["hotpotqa", "musique", "2wiki", "all-2", "all-4"])
def test_base_pools_hold_every_kept_querys_hard_negatives_by_default(banks, name):
    w = Workspace(banks[name])
    lad = ladder.build(w, ladder.LadderOptions(base="16K"))
    qs = bank.queries(w).set_index("qid")
    n_kept = int(lad.kept["kept"].sum())
    assert n_kept > 0
    for r in lad.rungs:
        if r.kind == "domain" and r.domain != "locomo":  # LoCoMo lists no hard negatives
            members = set(r.doc_ids.tolist())
            negs = [d for q in r.qids for d in qs.loc[q, "hard_negative_ids"]]
            assert negs and set(negs) <= members, r.name
            assert r.composition["hard_negative_coverage"]["min"] == 1.0
    assert not any("hard negatives (below 90%)" in m for m in lad.messages)
    # with no room reserved for them (the old behaviour) the gold crowds them out, and the build warns
    gold_only = ladder.build(w, ladder.LadderOptions(base="16K", hn_share=0.0))
    assert int(gold_only.kept["kept"].sum()) > n_kept
    if name in ("hotpotqa", "2wiki"):
        assert any(m.startswith("warning: base rung") and "(below 90%)" in m for m in gold_only.messages)


def test_ladder_build_prints_kept_queries_coverage_and_a_larger_base(banks, capsys):
    """2Wiki at 64K drops queries: the advice is a base larger than 64K, with the real workspace path (issue 25)."""
    ws = str(banks["2wiki"])
    assert main(["ladder", "build", "-w", ws, "--base", "64K"]) == 0
    out = capsys.readouterr().out
    summary = next(line for line in out.splitlines() if line.startswith("2wiki "))
    kept = int(summary.split()[2])
    assert 0 < kept < 164
    assert "base_full_coverage" in out and "hn_coverage" in out and "DIR" not in out
    need = out.split(f"`emb-s ladder build --workspace {ws} --base ")[1].split("`")[0]
    assert tokens.parse_size(need) > tokens.parse_size("64K")
    assert main(["ladder", "build", "-w", ws, "--base", need]) == 0
    assert "are dropped" not in capsys.readouterr().out  # the advised base keeps every query, full coverage
    lad = ladder.load(Workspace(ws))
    assert int(lad.kept["kept"].sum()) == 164
    assert lad.rungs[0].composition["hard_negative_coverage"]["min"] == 1.0
    assert main(["ladder", "show", "-w", ws, "--json"]) == 0
    shown = json.loads(capsys.readouterr().out)
    assert all(r["size"].endswith("K") for r in shown["rungs"]) and "absent" in shown


def _native_rows(w: Workspace) -> tuple[list[dict], list[dict]]:
    docs = bank.documents(w).sort_values("doc_id")
    qs = bank.queries(w)
    drows = [{"doc_id": int(r.doc_id), "title": r.title, "text": r.text, "domain": r.domain}
             for r in docs.itertuples()]
    qrows = [{"qid": r.qid, "text": r.text, "answer": r.answer, "ref_ids": [int(x) for x in r.ref_ids],
              "hard_negative_ids": [int(x) for x in r.hard_negative_ids], "domain": r.domain,
              "task_type": r.task_type} for r in qs.itertuples()]
    return drows, qrows


def test_membership_does_not_depend_on_import_order(banks, tmp_path):
    """MuSiQue as imported, then re-imported natively in reversed, shuffled and split order: identical rungs."""
    w = Workspace(banks["musique"])
    opts = ladder.LadderOptions(base="8K", domain_sizes=("8K",), hn_share=0.5)  # a partial share: fill order counts
    reference = {r.name: r.membership_hash for r in ladder.build(w, opts).rungs}
    docs, qs = _native_rows(w)
    rnd = random.Random(3)
    variants = {"reversed": [(docs[::-1], qs[::-1])],
                "shuffled": [(rnd.sample(docs, len(docs)), rnd.sample(qs, len(qs)))]}
    # split in two imports (two sources) where no query names documents of the other part: each part validates alone
    part_a, named = [], set()
    for q in sorted(qs, key=lambda q: q["qid"], reverse=True):  # grow part A by whole groups of linked queries
        ids = set(q["ref_ids"]) | set(q["hard_negative_ids"])
        if len(part_a) < len(qs) // 2 or ids & named:
            part_a.append(q)
            named |= ids
    while True:  # close it: a query outside A that names one of A's documents joins A
        more = [q for q in qs if q not in part_a and (set(q["ref_ids"]) | set(q["hard_negative_ids"])) & named]
        if not more:
            break
        part_a += more
        named |= {d for q in more for d in q["ref_ids"] + q["hard_negative_ids"]}
    part_b = [q for q in qs if q not in part_a]
    assert part_a and part_b
    variants["split"] = [([d for d in docs if d["doc_id"] not in named], part_b[::-1]),
                         ([d for d in docs if d["doc_id"] in named][::-1], part_a)]
    for label, parts in variants.items():
        target = tmp_path / f"ws-{label}"
        for i, (d, q) in enumerate(parts):
            folder = tmp_path / f"{label}-{i}"
            write_jsonl(folder / "documents.jsonl", d)
            write_jsonl(folder / "queries.jsonl", q)
            bank.import_path(target, "native", folder, source=f"part{i}")
        got = {r.name: r.membership_hash for r in ladder.build(Workspace(target), opts).rungs}
        assert got == reference, label
    assert np.array_equal(ladder.load(Workspace(tmp_path / "ws-split")).rung("8K/musique").doc_ids,
                          ladder.load(w).rung("8K/musique").doc_ids)
