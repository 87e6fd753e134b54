"""Domain labeling: zero-shot on the demo bank (true domains known), the LLM path with mock_response, agreement
figures, --apply as a new version (ladder stale, old version intact), and bad inputs."""
from __future__ import annotations

import json

import pandas as pd
import pytest

from emb_s_core import bank, domains, ladder
from emb_s_core.cli import main
from emb_s_core.errors import EmbSError
from emb_s_core.store import Workspace
from tests.conftest import native_bank
from tests.integration.test_collide import DOCS, QUERIES


@pytest.fixture(scope="module")
def demo_ws(tmp_path_factory):
    from emb_s_core.sources import synthetic

    root = tmp_path_factory.mktemp("domains")
    ws = Workspace(root / "ws", create=True)
    bank.add_bank(ws, synthetic.generate(synthetic.MIN_TOKENS, 0), fmt="demo", path="demo:min", sha256="x")
    return root / "ws"


def test_agreement_formulas():
    a = domains.agreement(pd.Series(["a", "a", "b", "b"]), pd.Series(["a", "b", "b", "b"]), ["a", "b"])
    assert a["accuracy"] == 0.75
    # p_e = 0.5·0.25 + 0.5·0.75 = 0.5 → κ = (0.75 − 0.5) / 0.5
    assert a["kappa"] == pytest.approx(0.5)
    assert a["confusion"].loc["a", "b"] == 1 and a["confusion"].loc["b", "b"] == 2
    perfect = domains.agreement(pd.Series(["a", "b"]), pd.Series(["a", "b"]))
    assert perfect["kappa"] == 1.0


def test_zero_shot_on_the_demo_bank_agrees_with_its_true_domains(demo_ws):
    ws = Workspace(demo_ws)
    lab = domains.label(ws)
    a = lab.document_agreement
    assert a["n"] == len(bank.documents(ws, ["doc_id"]))
    assert a["accuracy"] > 0.5 and a["kappa"] > 0.4  # eight classes: chance is about 0.125
    assert lab.query_agreement["n"] == len(bank.queries(ws))
    dist = lab.distribution()
    assert dist["documents"].sum() == a["n"] and dist["queries"].sum() == len(bank.queries(ws))


def test_cli_apply_writes_a_new_version_and_ladder_follows(tmp_path, capsys):
    bank.import_path(tmp_path / "ws", "native", native_bank(tmp_path / "bank", DOCS, QUERIES), domain=None)
    ws = Workspace(tmp_path / "ws")
    ladder.build(ws, ladder.LadderOptions(base="2K", domain_sizes=("2K",), reserve=64))
    before = ws.version
    old_domains = bank.documents(ws, ["doc_id", "domain"]).set_index("doc_id")["domain"]
    assert main(["domains", "label", "-w", str(tmp_path / "ws"), "--domains", "medical,math,law", "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    # no --apply: the bank is as it was (only the embedding cache was written)
    assert bank.documents(Workspace(tmp_path / "ws"), ["doc_id", "domain"]).set_index("doc_id")["domain"].equals(
        old_domains)
    assert ladder.stale_reason(Workspace(tmp_path / "ws")) is None
    assert summary["domains"] == ["medical", "math", "law"]
    assert main(["domains", "label", "-w", str(tmp_path / "ws"), "--domains", "medical,math,law", "--apply"]) == 0
    out = capsys.readouterr().out
    assert "applied as workspace version" in out and "ladder is now stale" in out
    now = Workspace(tmp_path / "ws")
    new = bank.documents(now, ["doc_id", "domain"]).set_index("doc_id")["domain"]
    assert set(new) <= {"medical", "math", "law"}
    assert new[5] == "medical" and new[7] == "math"  # aspirin, Euler
    qs = bank.queries(now).set_index("qid")
    assert qs.at["qc", "domain"] == "medical" and qs.at["qd", "domain"] == "math"
    assert bank.documents(Workspace(tmp_path / "ws", version=before), ["doc_id", "domain"]).set_index(
        "doc_id")["domain"].equals(old_domains)
    with pytest.raises(EmbSError, match="stale"):
        ladder.load(now)
    assert main(["ladder", "build", "-w", str(tmp_path / "ws"), "--base", "2K", "--domain-sizes", "2K",
                 "--reserve", "64"]) == 0
    rebuilt = ladder.load(Workspace(tmp_path / "ws"))
    assert {r.domain for r in rebuilt.rungs if r.kind == "domain"} == set(qs["domain"])


def test_llm_path_with_mock_response(tmp_path):
    from emb_s_core import llm

    bank.import_path(tmp_path / "ws", "native", native_bank(tmp_path / "bank", DOCS, QUERIES))
    ws = Workspace(tmp_path / "ws")
    gw = llm.Gateway.for_workspace(ws, "gpt-4o-mini", max_tokens=8, params={"mock_response": "Domain: **Law**"})
    lab = domains.label(ws, domains.resolve(["law", "math"]), gateway=gw)
    assert (lab.documents["domain"] == "law").all() and lab.method == "llm:gpt-4o-mini"
    bad = llm.Gateway.for_workspace(ws, "gpt-4o-mini", max_tokens=8, params={"mock_response": "law or math"})
    lab = domains.label(ws, domains.resolve(["law", "math"]), gateway=bad)
    assert lab.unlabeled == len(DOCS) and (lab.documents["status"] == "unparseable").all()
    assert (lab.documents["final"] == lab.documents["previous"]).all()  # never guessed: the old domain stays
    assert domains.parse_domain("Domain: Math.", ["law", "math"]) == "math"
    assert domains.parse_domain("I think law", ["law", "math"]) is None


def test_bad_descriptions_and_domains(tmp_path, capsys):
    bank.import_path(tmp_path / "ws", "native", native_bank(tmp_path / "bank"))
    version = Workspace(tmp_path / "ws").version
    (tmp_path / "d.json").write_text('{"a": "x",\n "b": }')
    with pytest.raises(EmbSError, match=r"d.json line 2: not valid JSON"):
        domains.load_descriptions(tmp_path / "d.json")
    (tmp_path / "nine.json").write_text(json.dumps({f"d{i}": "text" for i in range(9)}))
    with pytest.raises(EmbSError, match="9 domains given"):
        domains.load_descriptions(tmp_path / "nine.json")
    (tmp_path / "empty.json").write_text(json.dumps({"a": ""}))
    with pytest.raises(EmbSError, match="non-empty description"):
        domains.load_descriptions(tmp_path / "empty.json")
    with pytest.raises(EmbSError, match="no description for domain"):
        domains.resolve(["cooking"])
    assert main(["domains", "label", "-w", str(tmp_path / "ws"), "--domains", "cooking", "--apply"]) == 2
    assert "no description for domain(s) ['cooking']" in capsys.readouterr().err
    assert Workspace(tmp_path / "ws").version == version
