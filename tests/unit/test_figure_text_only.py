"""Figures show names from the data literally: plotly reads <a href>, <b>, <br> and entities in every label."""
from __future__ import annotations

import pandas as pd

from emb_s_core.figures import compare, style

EVIL = '<a href="http://127.0.0.1:1/x">r</a> <b>b</b> &amp;'


def test_apply_escapes_every_data_string():
    tests = pd.DataFrame({"rung": [EVIL, "1K"], "delta": [0.1, -0.2], "ci_low": [0.0, -0.3], "ci_high": [0.2, -0.1],
                          "p_value": [0.5, 0.01], "n": [10, 10], "wins": [3, 1], "losses": [1, 3], "ties": [6, 6]})
    for fig in (compare.deltas(tests, EVIL, "base", "SR@10", caption=f"bank: {EVIL}"),
                compare.win_loss(tests, EVIL, "base", caption="c")):
        spec = fig.to_json()
        assert "<a href" not in spec and "<b>b" not in spec, spec[:400]
        assert "&lt;a href=" in spec  # shown literally: plotly decodes the entity back to "<"
    assert style.text("a < b & c") == "a &lt; b &amp; c"
