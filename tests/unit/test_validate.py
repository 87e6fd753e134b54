"""The validation layer's helpers: one message shape, int64 range, no string taken for a list, bounded walks."""
from __future__ import annotations

import pickle

import pytest

from emb_s_core.errors import EmbSError
from emb_s_core.sources import validate


def test_field_helpers_name_field_found_and_expected():
    with pytest.raises(EmbSError, match=r"^f line 3: field 'ids': expected a list, found string 'abc' Fix: write 'ids'"):
        validate.int_list({"ids": "abc"}, "ids", "f line 3")
    with pytest.raises(EmbSError, match=r"field 'n': expected an integer in the 64-bit range, found integer"):
        validate.int_field({"n": 2**70}, "n", "f")
    with pytest.raises(EmbSError, match=r"field 'n': expected an integer, found boolean True"):
        validate.int_field({"n": True}, "n", "f")
    with pytest.raises(EmbSError, match=r"field 'id': expected a non-empty string or a 64-bit integer, found string ' '"):
        validate.id_field({"id": " "}, "id", "f")
    with pytest.raises(EmbSError, match="missing field 't'"):
        validate.text_field({}, "t", "f")
    assert validate.text_field({"t": 3}, "t", "f", numbers=True) == "3"
    assert validate.text_list({}, "a", "f") == []
    assert validate.bool_field({"b": None}, "b", "f", default=True) is True
    with pytest.raises(EmbSError, match="expected true or false, found integer 1"):
        validate.bool_field({"b": 1}, "b", "f")


def test_parse_json_bounds():
    assert validate.parse_json('{"a": [1, 2]}', "f") == {"a": [1, 2]}
    with pytest.raises(EmbSError, match="nested deeper than 200 levels"):
        validate.parse_json("[" * 201 + "]" * 201, "f")
    assert validate.parse_json('["[[[[' + "[" * 300 + '"]', "f")  # brackets inside a string do not count
    with pytest.raises(EmbSError, match="outside the 64-bit range"):
        validate.parse_json(str(2**64), "f")
    with pytest.raises(EmbSError, match="NaN is not valid JSON"):
        validate.parse_json('{"a": NaN}', "f")


def test_expansion_of_a_memo_bomb_is_bounded():
    inner = list(range(1000))
    blob = pickle.dumps([inner] * 20_000)  # ~60 KB on disk, 20M elements when walked
    assert len(blob) < 200_000
    loaded = pickle.loads(blob)
    with pytest.raises(EmbSError, match=r"more than 1,000,000 elements \(limit pickle_items.*EMB_S_MAX_PICKLE_ITEMS"):
        validate.check_expansion(loaded, "data.pkl", limit=1_000_000)
    assert validate.check_expansion({"a": [1, 2]}, "x") == 5


def test_limits_from_environment(monkeypatch):
    monkeypatch.setenv("EMB_S_MAX_PICKLE_ITEMS", "1_000")
    assert validate.limits().pickle_items == 1000
    with pytest.raises(EmbSError, match="2,000 exceeds the limit pickle_items = 1,000"):
        validate.check_limit("pickle_items", 2000, "x")
