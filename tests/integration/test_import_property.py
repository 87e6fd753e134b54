"""Property: every importer, fed a record with one typed field replaced by a value it rejects, exits 2 with one
line and no traceback, and leaves the workspace exactly as it was (hypothesis, bounded examples). The values include
lone surrogates, control characters in ids, out-of-range sentence indices, numbers where text is expected and an
id listed twice."""
from __future__ import annotations

import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from emb_s_core import bank, store
from emb_s_core.cli import main
from tests.conftest import native_bank
from tests.import_cases import CASES, set_path

JUNK = st.one_of(
    st.none(), st.booleans(), st.integers(min_value=-(2**80), max_value=2**80), st.just(2**70),
    st.floats(allow_nan=True, allow_infinity=True), st.text(max_size=6), st.just("Chief"),
    st.lists(st.integers(-3, 3), max_size=3), st.lists(st.text(max_size=3), max_size=3),
    st.dictionaries(st.text(max_size=3), st.integers(-3, 3), max_size=2),
    st.lists(st.lists(st.integers(0, 2), max_size=2), max_size=2),
    # the shapes that got through before: lone surrogates, control characters in ids, out-of-range indices,
    # numbers where text is expected, an id listed twice
    st.sampled_from(["\ud800", "x\udc80y", "q\x00id", "two\nlines", "tab\tid", "\x7f"]),
    st.sampled_from([7, -1, 12345, 2**31]), st.just([1, 1]),
)


def snapshot(folder: Path) -> dict[str, tuple[int, int]]:
    """Size and mtime of every file of the workspace but the writer lock (a refused import that streams its input
    reads it under the lock, which records its holder; that is no workspace content)."""
    return {str(p.relative_to(folder)): (p.stat().st_size, p.stat().st_mtime_ns)
            for p in sorted(folder.rglob("*")) if p.is_file() and p.name != store.LOCK_FILE}


@pytest.fixture(scope="module")
def workspace(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("property")
    bank.import_path(root / "ws", "native", native_bank(root / "good"))
    return root / "ws"


@pytest.mark.parametrize("name", sorted(CASES))
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture],
          database=None)
@given(data=st.data())
def test_malformed_record_is_one_line_and_changes_nothing(name, data, workspace, capsys):
    case = CASES[name]
    index, path, accepts = data.draw(st.sampled_from(case.fields), label="field")
    value = data.draw(JUNK.filter(lambda v: not accepts(v)), label="value")
    before = snapshot(workspace)
    with tempfile.TemporaryDirectory() as tmp:
        target = case.write(Path(tmp) / "in", lambda recs: set_path(recs, index, path, value))
        capsys.readouterr()
        code = main(["import", str(target), "--format", case.fmt, "--workspace", str(workspace),
                     "--source", "bad"])
        err = capsys.readouterr().err
    assert code == 2, f"{name} {path}={value!r} was accepted"
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("emb-s: error: "), err
    assert "Traceback" not in err
    assert snapshot(workspace) == before


NEW_SHAPES = ["\ud800", "x\udc80y", "q\x00id", "two\nlines", 7, 12345, [1, 1]]


@pytest.mark.parametrize("name", sorted(CASES))
def test_the_new_shapes_are_refused_wherever_a_field_rejects_them(name, workspace, capsys):
    """Each new shape planted (deterministically) into the first field of the case that takes an ordinary value of
    the same type (a string, a small int, a one-id list) but rejects this one: one line, exit 2, nothing written."""
    case = CASES[name]
    planted = 0
    for value in NEW_SHAPES:
        ordinary = {str: "ok", int: 0, list: [1]}[type(value)]
        field = next(((i, p) for i, p, accepts in case.fields if accepts(ordinary) and not accepts(value)), None)
        if field is None:
            continue
        before = snapshot(workspace)
        with tempfile.TemporaryDirectory() as tmp:
            target = case.write(Path(tmp) / "in", lambda recs: set_path(recs, field[0], field[1], value))
            capsys.readouterr()
            code = main(["import", str(target), "--format", case.fmt, "--workspace", str(workspace),
                         "--source", "bad"])
            err = capsys.readouterr().err
        assert code == 2, f"{name} {field[1]}={value!r} was accepted"
        lines = err.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("emb-s: error: ") and "Traceback" not in err, err
        assert snapshot(workspace) == before
        planted += 1
    assert planted >= 2  # every case has text fields (the surrogates); most have ids and indices too
