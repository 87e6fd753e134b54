"""End to end with the offline model: `emb-s collide` on a few queries, then --apply (well under 2 minutes)."""
from __future__ import annotations


from emb_s_core import bank, collide, ladder
from emb_s_core.cli import main
from emb_s_core.store import Workspace
from tests.conftest import native_bank
from tests.integration.test_collide import DOCS, QUERIES


def test_collide_cli_with_the_local_model(tmp_path, capsys):
    bank.import_path(tmp_path / "ws", "native", native_bank(tmp_path / "bank", DOCS, QUERIES))
    ladder.build(Workspace(tmp_path / "ws"), ladder.LadderOptions(base="2K", domain_sizes=("2K",), reserve=64))
    args = ["collide", "-w", str(tmp_path / "ws"), "--model", "local/smollm2-135m", "--k", "2", "--limit", "1",
            "--max-tokens", "24"]
    assert main(args) == 0
    out = capsys.readouterr().out
    assert "collision test: 1 queries, 2 candidates" in out and "labeled now 2" in out
    v = collide.verdicts(Workspace(tmp_path / "ws"))
    assert len(v) == 2 and set(v["qid"]) == {"qa"}
    assert set(v["status"]) <= {collide.OK, collide.UNPARSEABLE}
    assert v["reply"].notna().all() and (v["model"] == "local/smollm2-135m").all()
    # every stored label is what strict parsing reads from the stored reply: nothing guessed
    for reply, label in zip(v["reply"], v["label"]):
        parsed = collide.parse_verdict(reply)[0]
        assert (parsed is None and not isinstance(label, str)) or parsed == label

    before = Workspace(tmp_path / "ws").version
    assert main(args + ["--apply"]) == 0
    out = capsys.readouterr().out
    assert "labeled now 0, already stored 2" in out  # resumed from the stored verdicts (and the reply cache)
    labeled = v["label"].isin(collide.LABELS).any()
    after = Workspace(tmp_path / "ws")
    if labeled:
        assert after.version == before + 1 and "ladder is now stale" in out
        assert ladder.stale_reason(after)
    else:
        assert after.version == before and "nothing changed" in out
    assert len(bank.queries(Workspace(tmp_path / "ws", version=before))) == len(QUERIES)
