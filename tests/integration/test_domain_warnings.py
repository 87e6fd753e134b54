"""Arbitrary domain labels are flagged before they reach a ladder (issue 16): `domains label` prints the confidence
distribution and warns when many documents sit close to their second domain; `ladder build` warns about domain
rungs with very few queries."""
from __future__ import annotations

import json

import pandas as pd
import pytest

from emb_s_core import bank, domains, ladder
from emb_s_core.cli import main
from emb_s_core.store import Workspace
from tests.conftest import native_bank

DOCS = [
    {"doc_id": 1, "title": "Meet Corliss Archer", "text": "Meet Corliss Archer was a radio comedy from 1943 to 1956."},
    {"doc_id": 2, "title": "Shirley Temple", "text": "Shirley Temple was an actress and later a diplomat."},
    {"doc_id": 3, "title": "Kiss and Tell", "text": "Kiss and Tell is a 1945 film starring Shirley Temple."},
    {"doc_id": 4, "title": "Janet Waldo", "text": "Janet Waldo was an American radio and voice actress."},
]
QUERIES = [{"qid": "q1", "text": "Who starred in Kiss and Tell?", "answer": "Shirley Temple", "ref_ids": [3]},
           {"qid": "q2", "text": "Who voiced Judy Jetson?", "answer": "Janet Waldo", "ref_ids": [4]}]


@pytest.fixture
def ws(tmp_path):
    bank.import_path(tmp_path / "ws", "native", native_bank(tmp_path / "bank", DOCS, QUERIES))
    return Workspace(tmp_path / "ws")


def test_confidence_quantiles_and_close_share():
    docs = pd.DataFrame({"doc_id": [1, 2, 3, 4], "margin": [0.001, 0.01, 0.05, 0.30]})
    conf = domains.confidence(docs)
    assert conf["n"] == 4 and conf["share_close"] == 0.5 and conf["close_margin"] == domains.CLOSE_MARGIN
    assert conf["p10"] < conf["median"] < conf["p90"]
    assert domains.confidence(pd.DataFrame({"doc_id": [1], "reply": ["x"]})) is None  # LLM labels: no margin


def test_label_warns_before_apply_when_labels_are_close_to_arbitrary(ws, tmp_path, capsys):
    """Two near-identical descriptions: every document sits between them, so the labels mean nothing."""
    (tmp_path / "d.json").write_text(json.dumps({"alpha": "General things about the world.",
                                                 "beta": "General things about the world!"}))
    before = bank.documents(ws, ["doc_id", "domain"])
    assert main(["domains", "label", "-w", str(ws.path), "--descriptions", str(tmp_path / "d.json")]) == 0
    captured = capsys.readouterr()
    assert "label confidence (best minus second domain similarity, 4 documents)" in captured.out
    assert "100.0% within 0.02 of their second domain" in captured.out
    assert "warning: 100% of documents are within 0.02" in captured.err
    assert bank.documents(Workspace(ws.path), ["doc_id", "domain"]).equals(before)  # no --apply: bank unchanged
    assert main(["domains", "label", "-w", str(ws.path), "--descriptions", str(tmp_path / "d.json"), "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["confidence"]["share_close"] == 1.0


def test_label_with_fitting_domains_does_not_warn(tmp_path, capsys):
    from tests.integration.test_collide import DOCS as CLEAR, QUERIES as CLEAR_QUERIES

    bank.import_path(tmp_path / "ws", "native", native_bank(tmp_path / "bank", CLEAR, CLEAR_QUERIES))
    assert main(["domains", "label", "-w", str(tmp_path / "ws"), "--domains", "history,medical,math"]) == 0
    captured = capsys.readouterr()
    assert "label confidence (best minus second domain similarity, 8 documents)" in captured.out
    assert "warning:" not in captured.err


def test_ladder_build_warns_about_domain_rungs_with_few_queries(ws, capsys):
    assert main(["ladder", "build", "-w", str(ws.path), "--base", "2K", "--domain-sizes", "2K",
                 "--reserve", "64"]) == 0
    out = capsys.readouterr().out
    assert "warning: 1 domain rung(s) hold fewer than 10 queries: 2K/general (2)" in out or \
        ("domain rung(s) hold fewer than 10 queries" in out and "(2)" in out)
    lad = ladder.load(Workspace(ws.path))
    assert ladder.few_queries_warnings(lad.rungs) and not ladder.few_queries_warnings(
        [r for r in lad.rungs if r.domain is None])
