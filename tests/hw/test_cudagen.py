"""The CUDA generator: the PTX it emits per operation, and nvcc accepts what it writes."""

import subprocess

import pytest

from mbarrier.hw import cudagen
from mbarrier.hw.litmus import OP_FIELDS, case_from_dict, catalogue


def _kernel(ops, **kw):
    return cudagen.kernel_source(case_from_dict({"id": "k", "group": "g", "title": "t", "ops": ops, **kw}), 0)


def test_every_operation_has_generated_code():
    used = {op.op for c in catalogue() for op in c.ops}
    assert used == set(OP_FIELDS)
    module = cudagen.module_source(catalogue())
    assert module.count('extern "C" __global__') == len(catalogue())


def test_counts_travel_in_registers_so_ptxas_cannot_refuse_out_of_range_values():
    src = _kernel([{"op": "init", "count": 0}, {"op": "arrive", "count": 1 << 20, "token": "a"}])
    assert "unsigned n = 0u;" in src and "unsigned n = 1048576u;" in src
    assert "mbarrier.arrive.shared::cta.b64 %0, [%1], %2;" in src


@pytest.mark.parametrize(
    ("op", "ptx"),
    [
        (
            {"op": "arrive", "count": 2, "no_complete": True, "token": "a"},
            "mbarrier.arrive.noComplete.shared::cta",
        ),
        ({"op": "arrive_drop", "expect_tx": 8, "token": "a"}, "mbarrier.arrive_drop.expect_tx.shared::cta"),
        (
            {"op": "try_wait", "parity": 1, "hint": 100},
            "mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2, %3;",
        ),
        ({"op": "expect_tx", "tx": 4}, "mbarrier.expect_tx.relaxed.cta.shared::cta.b64"),
        ({"op": "cp_async_arrive", "noinc": True}, "cp.async.mbarrier.arrive.noinc.shared::cta.b64"),
    ],
)
def test_operations_become_their_ptx(op, ptx):
    ops = [{"op": "init", "count": 4}]
    if op.get("token"):
        ops.append({"op": "arrive", "token": "a"})
    assert ptx in _kernel([*ops, op])


def test_cluster_kernels_use_mapa_and_cluster_barriers():
    src = _kernel([{"op": "init", "count": 2}, {"op": "complete_tx", "cta": 1, "target": 0, "tx": 8}], ctas=2)
    assert "__cluster_dims__(2, 1, 1)" in src
    assert "mbarrier.complete_tx.relaxed.cluster.shared::cluster.b64" in src
    assert "mb_mapa(a, 0)" in src and "fence.mbarrier_init.release.cluster" in src
    assert "barrier.cluster.arrive.release.aligned" in src


@pytest.mark.tool("nvcc")
def test_nvcc_compiles_one_case_of_each_group(tmp_path):
    firsts = {}
    for c in catalogue():
        firsts.setdefault(c.group, c)
    cu = tmp_path / "litmus.cu"
    cu.write_text(cudagen.module_source(list(firsts.values())))
    proc = subprocess.run(
        [
            "nvcc",
            "-arch=sm_90",
            "-cubin",
            "-diag-suppress",
            "186,550",
            "-o",
            str(tmp_path / "litmus.cubin"),
            str(cu),
        ],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, proc.stderr
