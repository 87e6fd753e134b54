"""The benign twin's invariants (tests/twin_invariants.py) on a generated demo bank and on each shared real dataset:
for every kept query and twin rung, none of its own hard negatives or bm25 top-20 neighbours in its pool, its gold
in, the built rung's tokens within 3% (never over the budget), and its pools nest."""
from __future__ import annotations

import hashlib

import pytest

from emb_s_core import bank, ladder, twin
from emb_s_core.sources import synthetic
from emb_s_core.store import Workspace
from tests.twin_invariants import assert_invariants

pytestmark = pytest.mark.timeout(300)

DATASETS = [("hotpotqa", "hotpotqa-dev-distractor-500"), ("musique", "musique-ans-200"),
            ("2wiki", "2wikimultihopqa-200"), ("locomo", "locomo10")]


def test_demo_bank(tmp_path):
    """A 384K-token demo bank (8 domains) on a ladder scaled down to it (16K base): every rung of every query."""
    ws = Workspace(tmp_path / "ws", create=True)
    bank.add_bank(ws, synthetic.generate(384 * 1024, 0), fmt="demo", path="demo:test",
                  sha256=hashlib.sha256(b"demo:test").hexdigest())
    ladder.build(ws, ladder.LadderOptions(base="16K", domain_sizes=("16K", "32K"), reserve=256))
    lad = twin.build(ws)
    assert lad.options["pools"] == "per-query"  # the demo's gold is other queries' near misses: no clean shared twin
    counts = assert_invariants(ws, twin.DEFAULT_TOP_N)
    assert counts["queries_with_removals"] > 0.9 * counts["pairs"]
    assert {r.kind for r in lad.rungs} >= {"domain", "mixed", "shared", "global", "full"}


@pytest.mark.parametrize("fmt,folder", DATASETS, ids=[d[0] for d in DATASETS])
def test_shared_dataset(shared_data, tmp_path, fmt, folder):
    """The default ladder on each shared dataset. Its ``full`` rung is the whole bank: a query's pool there cannot
    be refilled, so on these small banks (1-5K documents) it may be short by the query's near misses, said in its
    row; every other rung holds the built rung's tokens within 3%."""
    bank.import_path(tmp_path / "ws", fmt, shared_data / folder,
                     **({"domain": "dialogue"} if fmt == "locomo" else {}))
    ws = Workspace(tmp_path / "ws")
    ladder.build(ws)
    twin.build(ws)
    counts = assert_invariants(ws, twin.DEFAULT_TOP_N, strict_full=False)
    assert counts["pairs"] and counts["queries_with_removals"]
