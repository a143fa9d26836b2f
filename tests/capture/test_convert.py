"""Raw records to launch files, the parts a GPU run does not exercise: names, a record cut short,
the JSON layout."""

from __future__ import annotations

import json
from pathlib import Path

from mbarrier.capture import convert
from mbarrier.capture.convert import _short, dumps


def test_file_stems_drop_template_arguments() -> None:
    assert _short("_ZN7cutlass13device_kernelINS_4gemm6kernel13GemmUniversalIN4cute5tupleIJiiiiEEE") == \
        "cutlass_device_kernel"
    assert _short("_Z11gemm_deviceIN4cute5tupleIJiiiEEEEvT_") == "gemm_device"
    assert _short("matmul_tma") == "matmul_tma"


def test_a_record_cut_short_is_reported_not_fatal(tmp_path: Path) -> None:
    raw = tmp_path / "raw"
    raw.mkdir()
    (raw / "7-launch-0.json").write_text('{"index": 0, "api": "cuLaunchKernel", "kern')
    (done,) = convert(raw, tmp_path)
    assert done.launch is None and done.kernel == "7-launch-0.json"
    assert done.warnings == ["the record is not whole: the program stopped during this launch"]


def test_dumps_is_json_with_short_lists_on_one_line() -> None:
    doc = {"grid": [2, 1, 1], "params": {"p": {"fields": [{"offset": 0, "pointer": "b0"}]}},
           "capture": {"command": ["./a", "two  spaces"]}}
    text = dumps(doc)
    assert json.loads(text) == doc
    assert '"grid": [2, 1, 1],' in text and '"command": ["./a", "two  spaces"]' in text
