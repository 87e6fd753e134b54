"""Overview's "Paper table" view: the same cells as `emb-s report --paper-table`, n per cell, LaTeX download."""
from __future__ import annotations

import pytest

from emb_s_core.analysis import paper_table
from emb_s_core.store import Workspace
from test_dashboard_pages import assert_clean, run_page

pytestmark = pytest.mark.timeout(120)


def test_overview_paper_table_view(app_env):
    at = run_page("2_Overview.py", {"ws": str(app_env), "paper": "1", "scales": "1K,shared,full",
                                    "runs": "overlap,overlap-idf"})
    assert_clean(at)
    assert at.toggle(key="url_paper").value is True
    values, counts = at.dataframe[-2].value, at.dataframe[-1].value
    expected = paper_table.flat(paper_table.build(Workspace(app_env), ["1K", "shared", "full"],
                                                  runs=["overlap", "overlap-idf"]))
    assert values["run"].tolist() == ["overlap", "overlap-idf"]
    assert list(values.columns) == ["run", "base", *[f"{s} {m}" for s in ("1K", "shared", "full")
                                                     for m in paper_table.METRICS], paper_table.EFFECTIVE_COLUMN]
    # shown at the paper's one decimal (export.display_frame)
    assert values["1K SR@10"].astype(float).tolist() == pytest.approx(expected["1K SR@10"].tolist(), abs=0.05)
    assert counts["1K SR@10 n"].tolist() == expected["1K SR@10 n"].tolist() and counts["1K SR@10 n"].iloc[0] == 30
    labels = [b.proto.label for b in at.get("download_button")]
    assert "⬇ LaTeX" in labels and "⬇ Markdown" in labels
    at.toggle(key="url_paper").set_value(False).run()
    assert "paper" not in at.query_params and len(at.dataframe) == 2  # score table + effective scale
