"""Each hard negative records where it came from: the demo generator writes `synthetic` ones, dataset importers
`dataset` ones (collision-verified ones: see test_collide), and a workspace from before provenance reads as dataset."""
from __future__ import annotations

from emb_s_core import bank
from emb_s_core.sources import synthetic
from emb_s_core.store import Workspace
from tests.conftest import native_bank


def test_demo_hard_negatives_are_synthetic_and_dataset_ones_are_dataset(tmp_path):
    ws = Workspace(tmp_path / "demo", create=True)
    generated = synthetic.generate(64 * 1024, 0)
    bank.add_bank(ws, generated, fmt="demo", path="demo", sha256="x")
    hn = bank.hard_negatives(ws)
    assert len(hn) == sum(len(q.hard_negative_ids) for q in generated.queries) > 0
    assert set(hn["provenance"]) == {"synthetic"}
    # in one of the demo's 8 domains: a ninth ('general', the default) is refused
    docs = [{"doc_id": 90_001, "text": "Tides follow the moon.", "domain": "history"},
            {"doc_id": 90_002, "text": "Tides follow winds.", "domain": "history"}]
    qs = [{"qid": "t1", "text": "What do tides follow?", "answer": "the moon", "ref_ids": [90_001],
           "hard_negative_ids": [90_002]}]
    bank.import_path(ws, "native", native_bank(tmp_path / "native", docs, qs), source="native")
    hn = bank.hard_negatives(ws).set_index("qid")
    assert hn.loc["t1", "provenance"] == "dataset"


def test_unrecorded_hard_negatives_read_as_dataset(tmp_path):
    bank.import_path(tmp_path / "ws", "native", native_bank(tmp_path / "native"))
    ws = Workspace(tmp_path / "ws")
    with ws.transaction():
        ws.delete_rows(bank.HN_PROVENANCE_TABLE, "true")
    hn = bank.hard_negatives(ws)
    assert hn[["qid", "doc_id", "provenance"]].values.tolist() == [["q1", 2, "dataset"]]
