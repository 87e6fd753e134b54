"""The view's state in the URL (``st.query_params``), so a copied link reopens the same view for a colleague.

Keys: ws (workspace), metric, k, runs, run, rung, x (rung or scale), domain, task, sources (single/multi), q (query),
a/b (compared runs). Lists are comma-joined. Widgets read their initial value from the URL and write it back.
"""
from __future__ import annotations

from typing import Iterable, Sequence

import streamlit as st

from ui.safe import md

# what travels with a link to another page (the page itself is the URL path)
CARRIED = ("ws", "metric", "k", "domain", "task", "sources", "x")


def get(key: str, default: str | None = None) -> str | None:
    value = st.query_params.get(key)
    return default if value in (None, "") else value


def get_list(key: str) -> list[str]:
    value = st.query_params.get(key)
    return list(dict.fromkeys(v for v in value.split(",") if v)) if value else []  # a repeated name is one name


def put(**values: object) -> None:
    """Write values into the URL; None / empty removes the key. Lists are comma-joined."""
    for key, value in values.items():
        if value is None or value == "" or (isinstance(value, (list, tuple)) and not value):
            if key in st.query_params:
                del st.query_params[key]
            continue
        text = ",".join(str(v) for v in value) if isinstance(value, (list, tuple)) else str(value)
        if st.query_params.get(key) != text:
            st.query_params[key] = text


def carried(**extra: object) -> dict[str, str]:
    """The current shared keys plus ``extra``: the query_params for a link to another page."""
    out = {k: st.query_params[k] for k in CARRIED if st.query_params.get(k)}
    for k, v in extra.items():
        if v is not None and v != "":
            out[k] = ",".join(map(str, v)) if isinstance(v, (list, tuple)) else str(v)
    return out


def index_of(options: Sequence[str], value: str | None, default: int = 0) -> int:
    """Position of ``value`` among ``options`` (the URL may name something that no longer exists)."""
    try:
        return list(options).index(value) if value is not None else default
    except ValueError:
        return default


def ignored(key: str, value: object, why: str) -> None:
    """One line saying which URL value was not used and why (the view keeps its fallback)."""
    shown = str(value) if len(str(value)) <= 60 else str(value)[:57] + "..."
    st.caption(md(f"Ignored from the link: {key}={shown} ({why}).", one_line=True))


def url_index(key: str, options: Sequence[str], default: str | None = None, fallback: int = 0) -> int:
    """Position of the URL's ``key`` among ``options``; an unknown value is ignored with a notice."""
    options = list(options)
    wanted = get(key)
    if wanted is not None and wanted not in options:
        ignored(key, wanted, f"not one of the {len(options)} choices here")
        wanted = None
    return index_of(options, wanted if wanted is not None else default, fallback)


def number(key: str, default: float, low: float, high: float, *, integer: bool = False) -> float:
    """A number from the URL within [low, high]; anything else is ignored with a notice."""
    raw = get(key)
    if raw is None:
        return default
    try:
        value = int(raw) if integer else float(raw)
        if not low <= value <= high:
            raise ValueError
    except ValueError:
        ignored(key, raw, f"not a number from {low:g} to {high:g}")
        return default
    return value


def selectbox(label: str, options: Sequence[str], key: str, default: str | None = None, **kwargs) -> str | None:
    """A selectbox whose value lives in the URL under ``key``; an unknown URL value falls back with a notice."""
    options = list(options)
    if not options:
        return None
    index = url_index(key, options, default)
    value = st.selectbox(label, options, index=index, key=f"url_{key}", **kwargs)
    put(**{key: value})
    return value


def multiselect(label: str, options: Sequence[str], key: str, default: Iterable[str] = (), **kwargs) -> list[str]:
    """A multiselect whose value lives in the URL under ``key`` (comma-joined); unknown names are dropped, with a
    notice."""
    options = list(options)
    wanted = get_list(key) or list(default)
    unknown = [v for v in wanted if v not in options]
    if unknown and get_list(key):
        ignored(key, ",".join(unknown), "not among the choices here")
    value = st.multiselect(label, options, default=[v for v in wanted if v in options], key=f"url_{key}", **kwargs)
    put(**{key: value})
    return value
