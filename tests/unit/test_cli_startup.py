"""The CLI builds only the parsers of the command it runs: the command → group table must name every command the
groups register (a command missing from it still works, through the whole parser), and a lone group's parser
parses the command exactly as the whole one does."""
from __future__ import annotations

import argparse
import importlib

import pytest

from emb_s_core import cli


def _registered(group: str) -> set[str]:
    parser = argparse.ArgumentParser()
    sub = parser.add_subparsers(dest="command")
    importlib.import_module(f"emb_s_core.cli.{group}").register(sub)
    return set(sub.choices)


def _choices(parser: argparse.ArgumentParser) -> set[str]:
    action = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return set(action.choices)


def test_owner_table_names_every_command_of_every_group():
    expected = {name: group for group in cli.GROUPS for name in _registered(group)}
    assert cli.OWNER == expected


@pytest.mark.parametrize("argv", [["info", "-w", "W"], ["runs", "list", "-w", "W"],
                                  ["report", "-w", "W", "--n-boot", "0"], ["compare", "-w", "W", "a", "b"]])
def test_one_group_parses_like_the_whole_parser(argv):
    lone = cli.build_parser(argv)
    assert _choices(lone) == _registered(cli.OWNER[argv[0]])
    whole = cli.build_parser()
    try:
        expected = vars(whole.parse_args(argv))
    except SystemExit:  # a command whose arguments differ: both must refuse alike
        with pytest.raises(SystemExit):
            lone.parse_args(argv)
        return
    assert vars(lone.parse_args(argv)) == expected


def test_help_and_unknown_commands_build_everything(capsys):
    assert _choices(cli.build_parser(["--help"])) == set(cli.OWNER)
    assert _choices(cli.build_parser(["no-such-command"])) == set(cli.OWNER)
    with pytest.raises(SystemExit):
        cli.main(["no-such-command"])
    assert "invalid choice" in capsys.readouterr().err
