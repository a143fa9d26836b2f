"""Launch files read into `sim.Launch` and launched: buffers (zeros, random, .npy/.bin), parameters as
values or fields (integers and floats of a width, pointers, tensor maps, raw bytes), the CUtensorMap
bytes the kernel sees decoding to exactly what the file described, and every wrong file refused with
the place in it that is wrong."""

from __future__ import annotations

import json
import struct
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from mbarrier import examples, explore, sim
from mbarrier.sim.tensormap import decode

from .helpers import module, words

REGS = ".reg .pred %p<2>;\n.reg .b32 %r<8>;\n.reg .b64 %rd<16>;\n"
# Copies its 184-byte struct parameter, 8 bytes at a time through the parameter's address, to `out`.
COPY = module(REGS + """
    ld.param.u64 %rd0, [out];
    mov.b64 %rd1, s;
    mov.u32 %r1, 0;
LOOP:
    cvt.u64.u32 %rd2, %r1;
    add.s64 %rd3, %rd1, %rd2;
    ld.param.u64 %rd4, [%rd3];
    add.s64 %rd5, %rd0, %rd2;
    st.global.u64 [%rd5], %rd4;
    add.u32 %r1, %r1, 8;
    setp.lt.u32 %p1, %r1, 256;
    @%p1 bra LOOP;
    ret;
""", params=".param .align 128 .b8 s[256], .param .u64 out")

TM = {"encode": "tiled", "tensorDataType": "FLOAT16", "tensorRank": 2,
      "globalAddress": {"buffer": "g", "offset": 256}, "globalDim": [64, 32], "globalStrides": [128],
      "boxDim": [64, 8], "elementStrides": [1, 1], "swizzle": "128B"}


def _doc(**over: Any) -> dict[str, Any]:
    d: dict[str, Any] = {
        "block": 1,
        "buffers": {"g": {"size": 8192}, "out": {"size": 256}},
        "tensor_maps": {"t": TM},
        "params": {"out": {"pointer": "out"}, "s": {"fields": [
            {"offset": 0, "pointer": {"buffer": "g", "offset": 64}},
            {"offset": 8, "type": "s32", "value": -2},
            {"offset": 12, "type": "f32", "value": 1.5},
            {"offset": 16, "type": "u16", "value": 0xBEEF},
            {"offset": 18, "type": "bf16", "value": 1.0},
            {"offset": 20, "type": "f16", "value": -2.0},
            {"offset": 24, "bytes": "a1b2c3"},
            {"offset": 32, "type": "f64", "value": 0.25},
            {"offset": 128, "tensor_map": "t"},
        ]}},
    }
    d.update(over)
    return d


def _launch(doc: dict[str, Any], mod: Any = COPY) -> sim.Machine:
    return sim.launch(mod, spec=sim.launch_from_dict(doc, "t.json"))


def _out(m: sim.Machine) -> bytes:
    r = explore.run(m, explore.RoundRobin())
    assert r.outcome == "exited", r.message
    base, size = m.buffers["out"]
    return m.gmem.read(base, size)


def test_fields_land_at_their_offsets_with_their_widths() -> None:
    m = _launch(_doc())
    out = _out(m)
    g_base, _ = m.buffers["g"]
    assert int.from_bytes(out[0:8], "little") == g_base + 64
    assert struct.unpack_from("<ifHHe", out, 8) == (-2, 1.5, 0xBEEF, 0x3F80, -2.0)
    assert out[24:28] == b"\xa1\xb2\xc3\x00"
    assert struct.unpack_from("<d", out, 32) == (0.25,)
    assert out[40:128] == bytes(88)  # bytes no field covers are zero


def test_the_tensor_map_the_kernel_reads_decodes_to_the_file() -> None:
    m = _launch(_doc())
    tm = decode(_out(m)[128:256])
    g_base, _ = m.buffers["g"]
    assert (tm.function, tm.tensorDataType, tm.tensorRank) == ("cuTensorMapEncodeTiled",
                                                              "CU_TENSOR_MAP_DATA_TYPE_FLOAT16", 2)
    assert tm.globalAddress == g_base + 256
    assert (tm.globalDim, tm.globalStrides) == ((64, 32), (128,))
    assert (tm.boxDim, tm.elementStrides) == ((64, 8), (1, 1))
    assert (tm.interleave, tm.swizzle, tm.l2Promotion, tm.oobFill) == (
        "CU_TENSOR_MAP_INTERLEAVE_NONE", "CU_TENSOR_MAP_SWIZZLE_128B", "CU_TENSOR_MAP_L2_PROMOTION_NONE",
        "CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE")


def test_buffers_zeros_random_and_files(tmp_path: Path) -> None:
    np.save(tmp_path / "a.npy", np.arange(12, dtype=np.int16).reshape(3, 4))
    (tmp_path / "b.bin").write_bytes(b"\x01\x02\x03")
    doc = {"buffers": {"z": {"size": 16}, "r": {"size": 64, "random": {"seed": 5}},
                       "f": {"size": 64, "random": {"seed": 5, "type": "f32", "low": 2, "high": 3}},
                       "i": {"size": 16, "random": {"seed": 5, "type": "s8", "low": -3, "high": 3}},
                       "a": {"file": "a.npy"}, "b": {"file": "b.bin", "size": 8}}}
    spec = sim.launch_from_dict(doc, "t.json", tmp_path)
    b = spec.buffers
    assert b["z"] == sim.Buffer(16, b"", "z")
    again = sim.launch_from_dict(doc, "t", tmp_path).buffers["r"].data
    assert len(b["r"].data) == 64 and b["r"].data == again
    assert all(2 <= v < 3 for v in struct.unpack("<16f", b["f"].data))
    assert all(-3 <= v <= 3 for v in struct.unpack("<16b", b["i"].data))
    assert b["a"].data == np.arange(12, dtype=np.int16).tobytes() and spec.array_types["a"] == ("<i2", (3, 4))
    assert (b["b"].size, b["b"].data) == (8, b"\x01\x02\x03")


def test_toml_reads_the_same_launch(tmp_path: Path) -> None:
    (tmp_path / "l.toml").write_text('kernel = "k"\ngrid = [2]\nblock = 64\n[buffers.x]\nsize = 16\n'
                                     '[params]\nout = { pointer = "x" }\n')
    spec = sim.read_launch(tmp_path / "l.toml")
    assert (spec.kernel, spec.grid, spec.block) == ("k", (2,), (64,))
    assert spec.params == {"out": sim.Pointer("x")}


def test_arguments_override_the_launch_file() -> None:
    spec = sim.launch_from_dict({"grid": 2, "block": 4, "params": {"out": {"pointer": "o"}},
                                 "buffers": {"o": {"size": 64}}})
    mod = module("ret;")
    m = sim.launch(mod, spec=spec)
    assert (len(m.ctas), len(m.threads)) == (2, 8)
    m = sim.launch(mod, grid=1, args={0: sim.Buffer(8)}, spec=spec)
    assert len(m.ctas) == 1 and m.buffers["out"][1] == 8


def test_the_bundled_struct_parameter_kernel_computes_its_result() -> None:
    spec = sim.read_launch(examples.HERE / "struct_ring.launch.json")
    m = sim.launch(sim.load(examples.path("struct_ring")), spec=spec)
    r = explore.run(m, explore.RandomScheduler(3))
    assert r.outcome == "exited"
    xs = struct.unpack("<128f", spec.buffers["in"].data)
    got = struct.unpack("<128f", m.gmem.read(*m.buffers["out"]))
    assert got == tuple(struct.unpack("<f", struct.pack("<f", x * 2.0 + 0.5))[0] for x in xs)


def test_the_bundled_tensor_map_kernel_loads_its_tile() -> None:
    # Its tensor map is read through cvta.param; the TMA copy loads the 16 x 8 tile at (16, 8).
    spec = sim.read_launch(examples.HERE / "tma_tile.launch.json")
    m = sim.launch(sim.load(examples.path("tma_tile")), spec=spec)
    r = explore.run(m, explore.RandomScheduler(0))
    assert r.outcome == "exited", r.message
    tensor = struct.unpack("<2048f", spec.buffers["tensor"].data[:8192])
    got = struct.unpack("<128f", m.gmem.read(m.buffers["out"][0], 512))
    assert got == tuple(tensor[(8 + i // 16) * 64 + 16 + i % 16] for i in range(128))


BAD_FILES = [
    ({"grid": 0}, "t.json: grid: 0 is out of range (expected at least 1)"),
    ({"block": [1, 2, 3, 4]}, "t.json: block: expected 1 to 3 integers, got 4"),
    ({"gird": 1}, "t.json: unknown key 'gird'"),
    ({"buffers": {"x": {}}}, "buffers.x: missing key 'size'"),
    ({"buffers": {"x": {"size": -1}}}, "buffers.x.size: -1 is out of range"),
    ({"buffers": {"x": {"size": 8, "random": {"seed": 1, "type": "f32", "low": 1, "high": "x"}}}},
     "buffers.x.random.high: expected a number"),
    ({"buffers": {"x": {"size": 6, "random": {"seed": 1, "type": "f32"}}}}, "not a whole number of f32"),
    ({"buffers": {"x": {"file": "missing.bin"}}}, "buffers.x.file: cannot read"),
    ({"params": {"s": {"fields": [{"offset": 0, "type": "u33", "value": 1}]}}},
     "params.s.fields[0].type: unknown type 'u33'"),
    ({"params": {"s": {"fields": [{"offset": 0, "type": "u8", "value": 256}]}}},
     "params.s.fields[0].value: 256 does not fit a u8"),
    ({"params": {"s": {"fields": [{"offset": 0, "value": 1}]}}}, "a value needs its 'type'"),
    ({"params": {"s": {"fields": [{"offset": 0, "pointer": "g", "bytes": "00"}]}}}, "exactly one of"),
    ({"params": {"s": {"fields": [{"pointer": "g"}]}}}, "params.s.fields[0]: missing key 'offset'"),
    ({"params": {"s": {"bytes": "xyz"}}}, "params.s.bytes: expected hexadecimal bytes"),
    ({"tensor_maps": {"t": {**TM, "boxDim": [64, 300]}}},
     "tensor_maps.t: cuTensorMapEncodeTiled would return CUDA_ERROR_INVALID_VALUE: boxDim[1] = 300 is "
     "outside 1..256"),
    ({"tensor_maps": {"t": {**TM, "globalAddress": {"buffer": "g", "offset": 8}}}},
     "globalAddress 0x8 is not 16-byte aligned"),
    ({"tensor_maps": {"t": {**TM, "swizzle": "16B"}}}, "tensor_maps.t.swizzle: swizzle '16B' is not a"),
    ({"tensor_maps": {"t": {**TM, "encode": "tile"}}}, "tensor_maps.t.encode: expected \"tiled\""),
    ({"tensor_maps": {"t": {k: v for k, v in TM.items() if k != "boxDim"}}},
     "tensor_maps.t: missing key 'boxDim'"),
    ({"outputs": {"nope": "x.npy"}}, "outputs.nope: no buffer named 'nope'"),
    ({"capture": {"gpu": "H100"}}, "capture: unknown key 'gpu'"),
    ({"ctas": []}, "ctas: expected a list of CTAs"),
    ({"ctas": [[0, 0, 0, 0]]}, "ctas[0]: expected 1 to 3 integers, got 4"),
    ({"ctas": [[-1]]}, "ctas[0][0]: -1 is out of range"),
    ({"capture": {"after": {"g": "missing.bin"}}}, "capture.after.g: cannot read"),
]


@pytest.mark.parametrize(("over", "words"), BAD_FILES, ids=[w for _, w in BAD_FILES])
def test_a_wrong_file_names_the_place(over: dict[str, Any], words: str) -> None:
    with pytest.raises(sim.LaunchError) as e:
        sim.launch_from_dict(_doc(**over), "t.json")
    assert words in str(e.value)
    assert str(e.value).startswith("t.json: ")


BAD_LAUNCHES = [
    ([{"offset": 250, "type": "u64", "value": 1}],
     "field 0 (u64 at offset 250): its 8 bytes end at byte 258, beyond the 256 bytes of the parameter"),
    ([{"offset": 0, "type": "u64", "value": 1}, {"offset": 4, "type": "u32", "value": 1}],
     "field 1 (u32 at offset 4): overlaps field 0 (bytes 0..7)"),
    ([{"offset": 0, "pointer": "nowhere"}], "field 0 (pointer to 'nowhere' at offset 0): no buffer named"),
    ([{"offset": 0, "pointer": {"buffer": "g", "offset": 9000}}], "offset 9000 is outside buffer 'g'"),
    ([{"offset": 32, "tensor_map": "t"}], "a CUtensorMap must be 64-byte aligned"),
    ([{"offset": 0, "tensor_map": "u"}], "no tensor map named 'u'"),
]


@pytest.mark.parametrize(("fields", "words"), BAD_LAUNCHES, ids=[w for _, w in BAD_LAUNCHES])
def test_a_launch_that_does_not_fit_the_kernel_names_parameter_and_field(fields: list[Any],
                                                                          words: str) -> None:
    with pytest.raises(sim.LaunchError) as e:
        _launch(_doc(params={"out": {"pointer": "out"}, "s": {"fields": fields}}))
    assert "parameter 's'" in str(e.value) and words in str(e.value)


def test_a_tensor_map_param_must_be_128_bytes_and_a_pointer_must_be_pointer_sized() -> None:
    with pytest.raises(sim.LaunchError, match="parameter 's' takes 256 bytes; a tensor map 't' is 128"):
        _launch(_doc(params={"out": {"pointer": "out"}, "s": {"tensor_map": "t"}}))
    with pytest.raises(sim.LaunchError, match="parameter 's' takes 256 bytes; a pointer to 'g' is 8"):
        _launch(_doc(params={"out": {"pointer": "out"}, "s": {"pointer": "g"}}))


def test_ptr_attributes_are_promises_a_launch_must_keep() -> None:
    mod = module("ret;", params=".param .u64 .ptr .global .align 16 p, .param .u64 .ptr .shared q")
    doc = {"buffers": {"g": {"size": 64}}, "params": {"p": {"pointer": {"buffer": "g", "offset": 8}}, "q": 0}}
    with pytest.raises(sim.LaunchError, match=r"`.ptr .align 16` \(PTX ISA 5.1.6.3\), but its pointer"):
        sim.launch(mod, spec=sim.launch_from_dict(doc))
    doc["params"] = {"p": {"pointer": {"buffer": "g", "offset": 16}}, "q": {"pointer": "g"}}
    with pytest.raises(sim.LaunchError, match=r"declared `.ptr .shared`"):
        sim.launch(mod, spec=sim.launch_from_dict(doc))
    doc["params"] = {"p": {"pointer": {"buffer": "g", "offset": 16}}, "q": 0}
    assert words(sim.launch(mod, spec=sim.launch_from_dict(doc)), "g", 1) == [0]


def test_outputs_are_written_as_npy_and_bin(tmp_path: Path) -> None:
    np.save(tmp_path / "a.npy", np.arange(6, dtype=np.float32).reshape(2, 3))
    doc = {"buffers": {"a": {"file": "a.npy"}, "out": {"size": 256}}, "params": {"out": {"pointer": "out"},
           "s": {"bytes": "07" * 256}},
           "outputs": {"a": "a_out.npy", "out": {"file": "o.npy", "dtype": "<u4", "shape": [8, 8]}}}
    spec = sim.launch_from_dict(doc, "t.json", tmp_path)
    m = sim.launch(COPY, spec=spec)
    _out(m)
    from mbarrier.sim.launchfile import write_outputs
    write_outputs(spec.outputs, m.buffers, m.gmem.read, spec.array_types)
    assert np.array_equal(np.load(tmp_path / "a_out.npy"), np.arange(6, dtype=np.float32).reshape(2, 3))
    o = np.load(tmp_path / "o.npy")
    assert o.shape == (8, 8) and (o == 0x07070707).all()
    json.dumps(doc)  # the document is plain JSON


def test_a_captured_launch_keeps_the_gpus_buffers_beside_its_own(tmp_path: Path) -> None:
    (tmp_path / "g.gpu.bin").write_bytes(b"\x07" * 8)
    spec = sim.launch_from_dict(_doc(capture={"command": ["./a"], "device": "NVIDIA H200", "after": {
        "g": "g.gpu.bin"}}), "t.json", tmp_path)
    assert spec.capture_after == {"g": b"\x07" * 8}
    with pytest.raises(sim.LaunchError, match="capture.after.zz: no buffer named 'zz'"):
        sim.launch_from_dict(_doc(capture={"after": {"zz": "g.gpu.bin"}}), "t.json", tmp_path)


def test_ctas_run_the_clusters_that_hold_them_in_the_whole_grid() -> None:
    ptx = module(".reg .b32 %r<4>;\n    mov.u32 %r1, %nctaid.x;\n    ret;\n")
    m = sim.launch(ptx, spec=sim.launch_from_dict({"grid": [4, 2], "block": 32, "cluster": 2,
                                                   "ctas": [[3, 1], 2]}))
    # CTA (3, 1) is in cluster (1, 1), CTA (2, 0) in cluster (1, 0): four CTAs of the grid's eight
    assert sorted(c.ctaid for c in m.ctas) == [(2, 0, 0), (2, 1, 0), (3, 0, 0), (3, 1, 0)]
    assert len(m.clusters) == 2 and len(m.threads) == 4 * 32
    with pytest.raises(sim.LaunchError, match=r"CTA \(4, 0, 0\) is outside the grid \(4, 2, 1\)"):
        sim.launch(ptx, grid=(4, 2), block=32, ctas=[(4,)])


def test_ptx_held_as_text_launches_like_a_file() -> None:
    text = examples.path("struct_ring").read_text()
    for source in (text, text.encode()):
        m = sim.launch(sim.load_text(source, "triton.ptx"), spec=sim.read_launch(
            examples.HERE / "struct_ring.launch.json"))
        assert explore.run(m, explore.RoundRobin()).outcome == "exited"
    from mbarrier.ptx.diagnostics import PtxSyntaxError
    with pytest.raises(PtxSyntaxError, match="k.ptx"):
        sim.load_text(".version 8.6\n.target sm_90\n.entry k( {", "k.ptx")
