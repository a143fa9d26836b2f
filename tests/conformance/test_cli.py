"""`mbarrier conform` end to end (docs/cli.md: exit 0 clean, 1 findings, 2 usage; JSON shape)."""

import json

import pytest

from mbarrier.cli import main
from mbarrier.hw import records


def test_json_replay_of_the_records(capsys):
    assert main(["conform", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert set(out) == {"cases", "agree", "undefined_flagged", "disagree"}
    assert out["disagree"] == [] and out["cases"] == out["agree"] + out["undefined_flagged"] >= 150


def test_table_replay_of_the_records(capsys):
    assert main(["conform"]) == 0
    out = capsys.readouterr().out
    assert "total" in out and "undefined, flagged" in out


def test_a_disagreeing_record_exits_1_and_is_named(tmp_path, capsys):
    for record in records.default_dir().iterdir():
        (tmp_path / record.name).write_bytes(record.read_bytes())
    text = (tmp_path / "encoding.json").read_text()
    (tmp_path / "encoding.json").write_text(text.replace('"0x7fff0800001fffc0"', '"0x7fff0800001fff00"', 1))
    assert main(["conform", "--json", "--records", str(tmp_path)]) == 1
    assert json.loads(capsys.readouterr().out)["disagree"] == ["enc-arrive1-32"]


def test_missing_records_exit_2(tmp_path, capsys):
    assert main(["conform", "--records", str(tmp_path / "none")]) == 2
    assert "no conformance records" in capsys.readouterr().err


def test_gpu_without_the_extra_exits_2_with_a_clear_message(monkeypatch, capsys):
    pytest.importorskip("mbarrier.hw.runner")
    monkeypatch.setitem(__import__("sys").modules, "cupy", None)
    assert main(["conform", "--gpu"]) == 2
    assert "gpu extra" in capsys.readouterr().err
