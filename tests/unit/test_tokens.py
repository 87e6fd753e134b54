from __future__ import annotations

import pytest

from emb_s_core import tokens
from emb_s_core.errors import EmbSError


def test_counts_offline_with_both_encodings():
    assert tokens.count("hello world") == 2
    assert tokens.count("hello world", "o200k_base") == 2
    assert tokens.count_batch(["a b c", "", "hello world"]) == [3, 0, 2]


def test_unknown_encoding_is_a_clear_error():
    with pytest.raises(EmbSError, match="unknown token encoding 'gpt9'"):
        tokens.encoding("gpt9")


@pytest.mark.parametrize("label,value", [("64K", 65536), ("1M", 1048576), ("512k", 524288), ("5000", 5000)])
def test_sizes_use_binary_units(label, value):
    assert tokens.parse_size(label) == value
    assert tokens.parse_size(tokens.format_size(value)) == value


def test_bad_size_label():
    with pytest.raises(EmbSError, match="cannot read token size 'lots'"):
        tokens.parse_size("lots")


def test_truncate_keeps_budget():
    text = "one two three four five six"
    assert tokens.count(tokens.truncate(text, 3)) == 3


def test_missing_titles_render_as_nothing():
    from emb_s_core.schema import render_document

    assert render_document(float("nan"), "body") == "body"
    assert render_document(None, "body") == "body"
    assert render_document("T", "body") == "T\nbody"


def test_batch_counts_on_threads_equal_one_by_one():
    texts = [f"document {i} " * (i % 17) + "é" * (i % 3) for i in range(500)]
    one_by_one = [tokens.count(t) for t in texts]
    assert tokens.count_batch(texts) == one_by_one
    assert tokens.count_batch(texts, num_threads=3) == one_by_one
    assert tokens.count_batch([]) == []


def test_format_short_fits_a_narrow_box_in_the_units_sizes_are_named_in():
    from emb_s_core.tokens import format_short

    assert format_short(1_309_590) == "1.25M"  # the demo bank: 1,309,590 / 1,048,576
    assert format_short(139_547) == "136K" and format_short(65_536) == "64K" and format_short(900) == "900"
    assert format_short(1_023_500) == "0.976M" and format_short(1_048_575) == "1M"
    assert format_short(326 * 1024 * 1024) == "326M" and format_short(3 * 1024 ** 3) == "3G"
    assert all(len(format_short(n)) <= 6 for n in (1, 999, 1023, 1024, 1_023_500, 1_048_575, 10**6, 10**9, 10**10))
