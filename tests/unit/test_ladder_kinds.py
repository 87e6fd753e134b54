"""Several ladder kinds on one bank: stored side by side, each replaced on its own, names unique across kinds."""
from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from emb_s_core import bank, ladder
from emb_s_core.errors import EmbSError
from emb_s_core.store import Workspace
from tests.unit.test_ladder import make_bank


@pytest.fixture()
def ws(tmp_path):
    bank.import_path(tmp_path / "ws", "native", make_bank(tmp_path / "bank", n_docs=300, n_queries=30))
    return Workspace(tmp_path / "ws")


def twin_of(built: ladder.Ladder, kind: str, drop: int = 1) -> ladder.Ladder:
    """A stand-in second ladder: the built rungs renamed for ``kind``, each missing its first ``drop`` documents."""
    rungs = [dataclasses.replace(r, name=ladder.qualified(kind, r.name), doc_ids=r.doc_ids[drop:]) for r in built.rungs]
    return ladder.Ladder(rungs, built.kept.copy(), {"stand_in_for": "built"}, [f"{kind} message"])


def test_names_round_trip():
    assert ladder.qualified("built", "64K/law") == "64K/law"
    assert ladder.qualified("benign", "64K/law") == "benign:64K/law"
    for name in ["64K/law", "benign:64K/law", "official:326M", "full"]:
        kind = ladder.kind_of(name)
        assert ladder.qualified(kind, ladder.plain_name(name)) == name
    assert ladder.kind_of("official:1M") == "official" and ladder.kind_of("weird:1M") == "built"
    with pytest.raises(EmbSError, match="unknown ladder kind 'twin'"):
        ladder.qualified("twin", "1M")


def test_kinds_are_stored_side_by_side_and_replaced_on_their_own(ws):
    built = ladder.build(ws)
    assert ladder.kinds(ws) == ["built"]
    ladder.store(ws, twin_of(built, "benign"), ladder.bank_state(ws), kind="benign")
    assert ladder.kinds(ws) == ["built", "benign"]
    again = ladder.load(ws)
    assert again.names == built.names and all(r.ladder == "built" for r in again.rungs)
    for a, b in zip(again.rungs, built.rungs):
        assert np.array_equal(a.doc_ids, b.doc_ids)
    twin = ladder.load(ws, kind="benign")
    assert twin.names == [f"benign:{n}" for n in built.names]
    assert all(len(t.doc_ids) == len(b.doc_ids) - 1 for t, b in zip(twin.rungs, built.rungs))
    assert twin.messages == ["benign message"] and twin.options["stand_in_for"] == "built"
    assert set(twin.kept["ladder"]) == {"benign"}
    both = ladder.load(ws, kind=("built", "benign"))
    assert both.names == built.names + twin.names
    # rebuilding the built ladder leaves the twin's rows alone
    ladder.build(ws, ladder.LadderOptions(seed=3))
    assert ladder.load(ws, kind="benign").names == twin.names
    assert len(ladder.load(ws, kind="benign").kept) == len(built.kept)


def test_missing_kind_names_what_the_workspace_holds(ws):
    ladder.build(ws)
    with pytest.raises(EmbSError, match="no official ladder yet.*it holds: built"):
        ladder.load(ws, kind="official")
    assert not ladder.exists(ws, "official") and ladder.exists(ws)


def test_a_rung_named_for_another_kind_is_refused(ws):
    built = ladder.build(ws)
    with pytest.raises(AssertionError):
        ladder.store(ws, built, kind="benign")


def test_tables_written_before_kinds_read_as_built(ws):
    built = ladder.build(ws)
    with ws.transaction():  # drop the ladder column, as workspaces made before kinds have it
        for table, schema in [("rungs", ladder.RUNGS_SCHEMA), ("ladder_queries", ladder.KEPT_SCHEMA)]:
            old = ws.read(table).drop(["ladder"])
            ws.write(table, old, mode="overwrite", schema=old.schema)
    assert ladder.kinds(ws) == ["built"]
    assert ladder.load(ws).names == built.names
    ladder.store(ws, twin_of(built, "benign"), kind="benign")
    assert ladder.kinds(ws) == ["built", "benign"] and ladder.load(ws).names == built.names
