"""Every ``emb-s …`` hint the product shows (messages and page texts in pages/, ui/ and emb_s_core/, docstrings
left out) parses with the real CLI parser: the command exists, every option exists and every concrete value is
valid. Placeholders (DIR, SPEC, NAME, ..., an f-string field) stand for any value; a hint may leave out options
the command requires (it names the command, the user fills in the rest)."""
from __future__ import annotations

import argparse
import ast
import copy
import re
import shlex
from pathlib import Path

import pytest

from emb_s_core.cli import build_parser

REPO = Path(__file__).resolve().parents[2]
HINT = re.compile(r"`(emb-s(?: [^`]*)?)`")
PLACEHOLDER = re.compile(r"^(\.\.\.|\{X\}|[A-Z][A-Z0-9_]*(\.[a-z]+)?)$")


def _strings(tree: ast.AST):
    """(line, text) of every string literal that is not a docstring; f-string fields become ``{X}``."""
    skip: set[int] = set()
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if isinstance(node, (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and body:
            first = body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                skip.add(id(first.value))
    for node in ast.walk(tree):
        if isinstance(node, ast.JoinedStr):
            skip.update(id(v) for v in node.values)
            yield node.lineno, "".join(v.value if isinstance(v, ast.Constant) else "{X}" for v in node.values)
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in skip:
            yield node.lineno, node.value


def _command_blocks(tree: ast.AST):
    """(line, command) of every ``widgets.command(head, workspace, tail)`` a page shows: the workspace is ``{X}``."""
    for node in ast.walk(tree):
        func = getattr(node, "func", None)
        name = getattr(func, "attr", None) or getattr(func, "id", None)
        if isinstance(node, ast.Call) and name == "command" and node.args \
                and isinstance(node.args[0], ast.Constant) and str(node.args[0].value).startswith("emb-s"):
            tail = node.args[2].value if len(node.args) > 2 and isinstance(node.args[2], ast.Constant) else ""
            yield node.lineno, f"{node.args[0].value} {{X}} {tail}".strip()


def hints() -> list[tuple[str, str]]:
    files = [*REPO.glob("pages/*.py"), *REPO.glob("ui/*.py"), *REPO.glob("emb_s_core/**/*.py"), REPO / "app.py"]
    out = []
    for f in sorted(files):
        tree = ast.parse(f.read_text(encoding="utf-8"))
        for line, text in _strings(tree):
            out += [(f"{f.relative_to(REPO)}:{line}", h) for h in HINT.findall(text)]
        out += [(f"{f.relative_to(REPO)}:{line}", h) for line, h in _command_blocks(tree)]
    return out


def _parsers(parser: argparse.ArgumentParser):
    yield parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub in action.choices.values():
                yield from _parsers(sub)


class HintError(Exception):
    pass


def check_hint(hint: str) -> None:
    """Raise HintError when ``hint`` names a command, option or value the CLI does not accept."""
    parser = copy.deepcopy(build_parser())
    for p in _parsers(parser):
        p.exit_on_error = False
        p.error = lambda message: (_ for _ in ()).throw(HintError(message))  # type: ignore[method-assign]
        for action in p._actions:
            if action.option_strings:
                action.required = False  # a hint may leave required options for the user to fill in
    tokens = shlex.split(hint)[1:]
    args: list[str] = []
    current = parser
    for tok in tokens:
        if PLACEHOLDER.match(tok):  # any value: the option's first choice when it has choices
            prev = args[-1] if args else ""
            action = next((a for a in current._actions if prev in a.option_strings), None)
            numeric = action is not None and action.type in (int, float)  # `--restore {N}`: a number
            tok = str(next(iter(action.choices))) if action is not None and action.choices else ("1" if numeric else "x")
        else:
            sub = next((a for a in current._actions if isinstance(a, argparse._SubParsersAction)), None)
            if sub is not None and tok in sub.choices:
                current = sub.choices[tok]
        args.append(tok)
    try:
        parser.parse_args(args)
    except (HintError, argparse.ArgumentError) as exc:
        raise HintError(f"{hint!r}: {exc}") from None


def test_the_hints_are_found():
    found = hints()
    assert len(found) > 20
    assert any(h.startswith("emb-s eval --workspace {X} --retriever") for _, h in found)  # the real folder
    assert sum(where.startswith("pages/") and h.startswith("emb-s eval --workspace {X}") for where, h in found) >= 3
    assert not [h for _, h in found if "--workspace DIR" in h]  # hints name the real workspace, never a placeholder


@pytest.mark.parametrize("where,hint", hints())
def test_every_hint_parses(where, hint):
    try:
        check_hint(hint)
    except HintError as exc:
        pytest.fail(f"{where}: {exc}")


@pytest.mark.parametrize("bad", ["emb-s evaluate --workspace DIR bm25", "emb-s eval --workspace DIR --retriver bm25",
                                 "emb-s report --workspace DIR --format excel", "emb-s runs remove NAME",
                                 "emb-s eval --workspace DIR --retriever bm25 --k ten"])
def test_a_wrong_hint_is_caught(bad):
    with pytest.raises(HintError):
        check_hint(bad)
