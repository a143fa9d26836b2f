"""wgmma.mma_async held against a Hopper GPU (PTX ISA 9.7.15): each recorded case (tools/record_wgmma.sh,
`mbarrier.hw.wgmma`) replayed through the simulator's arithmetic and layouts (`mbarrier.sim.mma`): the
accumulator registers bit for bit for integer forms and for inputs whose every partial sum is exact
(the hardware's summation order cannot show), within `cases.bound` otherwise (9.7.15.5.2 leaves the
order and rounding of floating-point accumulation unspecified). The sparse records (`sp_*`,
wgmma.mma_async.sp, 9.7.15.6) hold the metadata layout the ISA draws in figures our text lacks. A few
records also run whole on the machine (the PTX the GPU ran)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import numpy.typing as npt
import pytest

from mbarrier import explore, sim
from mbarrier.hw import wgmma as cases
from mbarrier.ptx.parser import parse
from mbarrier.sim import mma
from mbarrier.spec import wgmma as spec

RECORDS = Path(cases.__file__).parent / "data" / "wgmma" / "h100.json"
ON_MACHINE = ("bf16_ss_mn_64", "e5m2_e4m3", "s8_satfinite", "b1_rs", "sp_f16_identity_sel1",
              "sp_tf32_rs_sel1", "sp_u8_raw_sw32_rs")


def _load() -> dict[str, dict[str, object]]:
    if not RECORDS.exists():
        return {}
    data = json.loads(RECORDS.read_text())
    return {r["case"]["name"]: r for r in data["results"]}


RECORDED = _load()
pytestmark = pytest.mark.skipif(not RECORDED, reason=f"no wgmma records at {RECORDS}: run "
                                "tools/record_wgmma.sh on an H100 and commit its wgmma.json there")


def _simulate(case: cases.Case, inp: cases.Inputs) -> npt.NDArray[np.uint32]:
    """Each thread's accumulator registers as the simulator computes them (sim.mma, warp by warp)."""
    form = mma.parse_form(tuple("." + q for q in case.instruction.split(".")[1:]), case.a_regs)

    def read(at: int) -> bytes:
        return inp.image[at:at + 16]

    def desc(lay: cases.Layout) -> mma.Descriptor:
        return mma.decode(lay.descriptor() | lay.start >> 4)

    b, _ = mma.gather(desc(inp.layout_b), range(case.n), bool(case.trans_b), spec.ELEMENT_BITS[case.b], read,
                      form.b_bytes)
    out = np.zeros((cases.THREADS, case.d_registers), np.uint32)
    for warp in range(4):
        lanes = range(32 * warp, 32 * warp + 32)
        if case.a_regs:
            a = mma.a_from_registers([tuple(int(x) for x in inp.a_regs[t]) for t in lanes])
        else:
            assert inp.layout_a is not None
            a, _ = mma.gather(desc(inp.layout_a), range(16 * warp, 16 * warp + 16), bool(case.trans_a),
                              spec.ELEMENT_BITS[case.atype], read)
        if case.sparse:
            assert inp.meta is not None
            a = mma.unpack_sparse(form, a, [int(inp.meta[t]) for t in lanes], case.selector)
        d = mma.d_to_matrix(form, [tuple(int(x) for x in inp.d[t]) for t in lanes]) if case.scale_d else None
        regs = mma.matrix_to_d(form, mma.multiply(form, a, b, d, case.scale_a, case.scale_b))
        out[32 * warp:32 * warp + 32] = np.array(regs, np.uint32)
    return out


def _recorded(name: str) -> tuple[cases.Case, cases.Inputs, npt.NDArray[np.uint32]]:
    record = RECORDED[name]
    assert "error" not in record, record.get("error")
    case = cases.BY_NAME[name]
    assert cases.Case(**record["case"]) == case, "the case changed since it was recorded: record it again"
    inp = cases.inputs(case)
    assert record["input_sha256"] == cases.digest(inp.blob()), "the inputs changed since they were recorded"
    assert record["deterministic"], "the GPU gave different outputs over its runs"
    gpu = np.frombuffer(cases.unpack(str(record["output"])), "<u4").reshape(cases.THREADS, case.d_registers)
    return case, inp, gpu


@pytest.mark.parametrize("name", sorted(RECORDED) or ["none"])
def test_the_simulator_computes_what_the_h100_computed(name: str) -> None:
    case, inp, gpu = _recorded(name)
    ours = _simulate(case, inp)
    if not case.floating or case.values == "exact":
        assert np.array_equal(ours, gpu), f"{name}: {int((ours != gpu).sum())} registers differ"
        return
    _, scale = cases.reference(case, inp)
    err = np.abs(cases.matrix_of(case, ours) - cases.matrix_of(case, gpu))
    assert np.all(err <= cases.bound(case, scale)), f"{name}: off by up to {err.max()} (bound {scale.max()})"


def test_every_case_was_recorded() -> None:
    assert sorted(RECORDED) == sorted(c.name for c in cases.CASES)


@pytest.mark.parametrize("name", ON_MACHINE)
def test_the_recorded_kernel_on_the_machine_gives_the_h100_registers(name: str) -> None:
    case, inp, gpu = _recorded(name)
    blob = inp.blob()
    m = sim.launch(parse(cases.ptx(case, inp), f"{name}.ptx"), cases.KERNEL, grid=1, block=128,
                   args={"in": sim.Buffer(len(blob), blob), "out": sim.Buffer(cases.out_bytes(case))})
    r = explore.run(m, explore.RandomScheduler(3))
    assert r.outcome == "exited", r.message
    base, size = m.buffers["out"]
    assert np.array_equal(np.frombuffer(m.gmem.read(base, size), "<u4").reshape(gpu.shape), gpu)
