"""The streaming reader of a pickled list of texts gives exactly what pickle.load gives, in every protocol, and
refuses every other shape (so the caller loads those whole) without executing anything."""
from __future__ import annotations

import os
import pickle

import pytest
from hypothesis import given, settings, strategies as st

from emb_s_core.errors import EmbSError
from emb_s_core.sources.plain_pickle import NotATextList, iter_text_list, load_plain_pickle

LISTS = {
    "empty": [],
    "one": ["a"],
    "a batch of 1,000 and one more (APPEND, not APPENDS)": [f"text {i}" for i in range(1001)],
    "unicode and long": ["é" * 300, "x" * 70_000, "\U0001F600 emoji", "lone surrogate \ud800 kept"],
    "two batches exactly": [str(i) for i in range(2000)],
}


@pytest.mark.parametrize("protocol", [1, 2, 3, 4, 5])
@pytest.mark.parametrize("name", LISTS)
def test_streams_what_pickle_loads(tmp_path, name, protocol):
    path = tmp_path / "refs.pkl"
    path.write_bytes(pickle.dumps(LISTS[name], protocol=protocol))
    assert list(iter_text_list(path)) == LISTS[name] == load_plain_pickle(path)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.text(max_size=40), max_size=30), st.integers(1, 5))
def test_any_text_list(tmp_path_factory, texts, protocol):
    path = tmp_path_factory.mktemp("p") / "refs.pkl"
    path.write_bytes(pickle.dumps(texts, protocol=protocol))
    try:
        assert list(iter_text_list(path)) == texts
    except NotATextList:  # only when one object is pickled twice (interned short texts): a memo reference
        loaded = load_plain_pickle(path)
        assert loaded == texts and len(set(map(id, loaded))) < len(loaded)


class _Exploit:
    def __reduce__(self):
        return (os.system, ("echo pwned",))


@pytest.mark.parametrize("value", [
    [1, "a"], ("a", "b"), {"a": "b"}, ["same"] * 3, [["nested"]], "a bare string", [b"bytes"], [_Exploit()],
])
def test_other_shapes_are_not_a_text_list(tmp_path, value):
    path = tmp_path / "other.pkl"
    path.write_bytes(pickle.dumps(value))
    with pytest.raises(NotATextList):
        list(iter_text_list(path))


def test_protocol_0_is_loaded_whole(tmp_path):
    path = tmp_path / "p0.pkl"
    path.write_bytes(pickle.dumps(["a", "b"], protocol=0))
    with pytest.raises(NotATextList):
        list(iter_text_list(path))


@pytest.mark.parametrize("cut", [1, 2, 0.5, -1])
def test_truncated_file_is_damaged(tmp_path, cut):
    raw = pickle.dumps([f"text {i} " * 20 for i in range(3000)])
    path = tmp_path / "cut.pkl"
    path.write_bytes(raw[: int(len(raw) * cut) if isinstance(cut, float) else cut if cut > 0 else len(raw) - 1])
    with pytest.raises(EmbSError, match=r"cut.pkl: cannot read pickle .*(cut short|ends before)"):
        list(iter_text_list(path))


def test_lfs_pointer(tmp_path):
    path = tmp_path / "lfs.pkl"
    path.write_bytes(b"version https://git-lfs.github.com/spec/v1\noid sha256:00\nsize 12\n")
    with pytest.raises(EmbSError, match="Git LFS pointer"):
        list(iter_text_list(path))
