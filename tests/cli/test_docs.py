"""docs/cli.md is the command line's contract: it names every option of every command, and each JSON
example there has exactly the keys the command prints (values may differ; lists are compared by their
first element)."""

from __future__ import annotations

import argparse
import json
import re
import shlex
from pathlib import Path

import jsonschema
import pytest

from mbarrier.cli import COMMANDS, build_parser, main
from mbarrier.examples import HERE
from mbarrier.examples.races import HERE as RACES
from mbarrier.report.schema import schema

DOC = Path(__file__).resolve().parents[2] / "docs" / "cli.md"
TEXT = DOC.read_text(encoding="utf-8")


def _subparsers() -> dict[str, argparse.ArgumentParser]:
    for action in build_parser()._actions:
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    raise AssertionError("no subcommands")


@pytest.mark.parametrize("command", COMMANDS)
def test_every_command_and_option_is_documented(command: str) -> None:
    assert re.search(rf"^## `mbarrier {command}\b", TEXT, flags=re.M), f"no section for `mbarrier {command}`"
    missing = [opt for action in _subparsers()[command]._actions for opt in action.option_strings
               if opt not in ("-h", "--help") and not re.search(rf"`{re.escape(opt)}(?=[`\s=\[])", TEXT)]
    assert not missing, f"docs/cli.md does not name {missing} of `mbarrier {command}`"


def _shape(value: object) -> object:
    if isinstance(value, dict):
        return {k: _shape(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_shape(value[0])] if value else []
    return None


def _examples() -> list[tuple[str, str]]:
    """(command, documented JSON) for each ```json block: the command is the last `mbarrier ... --json`
    named before the block."""
    found = []
    for m in re.finditer(r"```json\n(.*?)```", TEXT, flags=re.S):
        commands = re.findall(r"`(mbarrier [^`]*--json[^`]*)`", TEXT[:m.start()].replace("\n", " "))
        found.append((commands[-1], m.group(1)))
    return found


@pytest.mark.parametrize(("command", "documented"), _examples(), ids=[c for c, _ in _examples()])
def test_json_examples_have_the_keys_the_command_prints(command: str, documented: str,
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    argv = shlex.split(command.replace("$E", str(HERE)).replace("$C", str(HERE / "corpus"))
                       .replace("$R", str(RACES)))[1:]
    main(argv)
    printed = json.loads(capsys.readouterr().out)
    assert _shape(printed) == _shape(json.loads(documented)), command
    if argv[0] != "conform":  # the documented example is a valid document of the schema too
        jsonschema.Draft202012Validator(schema()).validate(json.loads(documented))


def test_there_are_json_examples() -> None:
    assert {c.split()[1] for c, _ in _examples()} == {"lint", "run", "check", "conform"}
