"""Run litmus cases on a real GPU and record what it shows (needs cupy, nvcc and an sm_90 GPU).

The parent process builds one cubin for the whole catalogue (nvcc -arch=sm_90) and runs the cases in
child processes that stream one JSON line per case. A trap leaves the CUDA context unusable, so the
child that saw it exits and the parent starts a fresh one for the rest; a case that never finishes is
killed after a timeout and recorded as "hang". Cases marked `isolate` always get a child of their own.

    python -m mbarrier.hw.runner --out run.json [--cubin build/litmus.cubin] [--cases ID,ID]
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import queue
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from mbarrier.hw import cudagen
from mbarrier.hw.litmus import SHARED_BUFFER_BYTES, WAIT_OPS, Case, catalogue, layout, pattern_word

SCHEMA = 1
CASE_TIMEOUT_S = 10.0
NVCC_FLAGS = ("-arch=sm_90", "-cubin", "-diag-suppress", "186,550")


class GpuUnavailable(RuntimeError):
    """cupy, nvcc or an sm_90 GPU is missing; the message says which."""


def build_cubin(cases: Sequence[Case], workdir: Path) -> Path:
    """Compile the module for these cases; the .cu beside the cubin is the exact source."""
    nvcc = shutil.which("nvcc")
    if nvcc is None:
        raise GpuUnavailable("nvcc is not on PATH: it compiles the litmus kernels (CUDA 12.0 or newer)")
    cu = workdir / "litmus.cu"
    cu.write_text(cudagen.module_source(list(cases)), encoding="utf-8")
    cubin = workdir / "litmus.cubin"
    proc = subprocess.run([nvcc, *NVCC_FLAGS, "-o", str(cubin), str(cu)], capture_output=True, text=True)
    if proc.returncode != 0:
        raise RuntimeError(f"nvcc failed on the generated litmus module:\n{proc.stderr[-4000:]}")
    return cubin


def check_cubin(cases: Sequence[Case], cubin: Path) -> None:
    cu = cubin.with_suffix(".cu")
    if not cu.is_file() or cu.read_text(encoding="utf-8") != cudagen.module_source(list(cases)):
        raise SystemExit(
            f"{cubin}: its {cu.name} is missing or not built from the current catalogue; rebuild it"
        )


# -- the child: one CUDA context, cases in order ----------------------------------------------------


def _emit(obj: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


def gpu_facts() -> dict[str, Any]:
    import cupy  # type: ignore[import-not-found, unused-ignore]  # noqa: PLC0415 - the gpu extra, needed only here

    rt = cupy.cuda.runtime
    props = rt.getDeviceProperties(0)
    name = props["name"]
    facts: dict[str, Any] = {
        "name": name.decode() if isinstance(name, bytes) else str(name),
        "compute_capability": f"{props['major']}.{props['minor']}",
        "multiprocessors": props["multiProcessorCount"],
        "cuda_driver_api": rt.driverGetVersion(),
        "cuda_runtime": rt.runtimeGetVersion(),
        "cupy": cupy.__version__,
    }
    smi = shutil.which("nvidia-smi")
    if smi:
        out = subprocess.run(
            [smi, "--query-gpu=driver_version", "--format=csv,noheader"], capture_output=True, text=True
        )
        facts["driver"] = out.stdout.strip().splitlines()[0] if out.returncode == 0 and out.stdout else None
    nvcc = shutil.which("nvcc")
    if nvcc:
        out = subprocess.run([nvcc, "--version"], capture_output=True, text=True)
        facts["nvcc"] = out.stdout.strip().splitlines()[-1] if out.returncode == 0 else None
    return facts


def _observe(case: Case, raw: list[int]) -> tuple[dict[str, Any], bool]:
    lay = layout(case)
    obs: dict[str, Any] = {}
    for i, slot in lay.slots.items():
        op = case.ops[i]
        values: list[Any] = []
        ns: list[int] = []
        cycles: list[int] = []
        for k in range(op.nthreads):
            v = raw[slot.base + k * slot.width]
            if v == cudagen.POISON:
                values.append(None)
            elif op.op in WAIT_OPS:
                values.append(bool(v))
            elif op.op == "pending_count":
                values.append(v)
            else:
                values.append(f"{v:#018x}")
            if op.timed:
                ns.append(raw[slot.base + k * slot.width + 1])
                cycles.append(raw[slot.base + k * slot.width + 2])
        if all(v is None for v in values):
            continue
        entry: dict[str, Any] = {"values": values}
        if op.timed:
            entry["ns"], entry["cycles"] = ns, cycles
        obs[str(i)] = entry
    return obs, raw[lay.done_slot] == cudagen.DONE


def child(cubin: Path, indices: list[int], facts: bool) -> int:
    import cupy  # type: ignore[import-not-found, unused-ignore]  # noqa: PLC0415

    cases = catalogue()
    if facts:
        _emit({"gpu": gpu_facts()})
    mod = cupy.RawModule(path=str(cubin))
    size = max(layout(cases[i]).size for i in indices)
    src = cupy.asarray([pattern_word(i) for i in range(SHARED_BUFFER_BYTES // 4)], dtype=cupy.uint32)
    out = cupy.empty(size, dtype=cupy.uint64)
    for i in indices:
        case = cases[i]
        _emit({"start": case.id})
        t0 = time.perf_counter()
        try:
            out.fill(cudagen.POISON)
            fn = mod.get_function(cudagen.kernel_name(i))
            fn((case.ctas,), (case.threads,), (out, src))
            cupy.cuda.runtime.deviceSynchronize()
            raw = [int(x) for x in out.get()]
        except Exception as e:  # a trap: the context is gone, report and let the parent restart
            _emit(
                {
                    "id": case.id,
                    "outcome": "trap",
                    "error": f"{type(e).__name__}: {e}",
                    "ms": round((time.perf_counter() - t0) * 1e3, 3),
                }
            )
            return 3
        obs, done = _observe(case, raw)
        _emit(
            {
                "id": case.id,
                "outcome": "ok" if done else "incomplete",
                "error": None,
                "obs": obs,
                "ms": round((time.perf_counter() - t0) * 1e3, 3),
            }
        )
    return 0


# -- the parent ------------------------------------------------------------------------------------


def _batches(cases: Sequence[Case], wanted: set[str] | None) -> list[list[int]]:
    groups: dict[str, list[int]] = {}
    alone: list[list[int]] = []
    for i, c in enumerate(cases):
        if wanted is not None and c.id not in wanted:
            continue
        if c.isolate:
            alone.append([i])
        else:
            groups.setdefault(c.group, []).append(i)
    return list(groups.values()) + alone


def _reader(stream: Any, q: queue.Queue[str | None]) -> None:
    for line in stream:
        q.put(line)
    q.put(None)


def run_batch(
    cubin: Path, indices: list[int], cases: Sequence[Case], log: Any, want_facts: bool
) -> tuple[list[dict[str, Any]], dict[str, Any] | None]:
    """Run the cases, restarting a child after a trap or hang; one result per case."""
    results: list[dict[str, Any]] = []
    facts: dict[str, Any] | None = None
    todo = list(indices)
    while todo:
        cmd = [
            sys.executable,
            "-m",
            "mbarrier.hw.runner",
            "--child",
            "--cubin",
            str(cubin),
            "--indices",
            ",".join(map(str, todo)),
        ]
        if facts is None and want_facts:
            cmd.append("--facts")
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        q: queue.Queue[str | None] = queue.Queue()
        threading.Thread(target=_reader, args=(proc.stdout, q), daemon=True).start()
        current: str | None = None
        finished: set[str] = set()
        hung = False
        while True:
            try:
                line = q.get(timeout=CASE_TIMEOUT_S)
            except queue.Empty:
                hung = True
                proc.kill()
                break
            if line is None:
                break
            msg = json.loads(line)
            if "gpu" in msg:
                facts = msg["gpu"]
            elif "start" in msg:
                current = msg["start"]
            else:
                results.append(msg)
                finished.add(msg["id"])
                log.write(f"{msg['id']:40} {msg['outcome']}\n")
                log.flush()
        proc.wait()
        err = proc.stderr.read() if proc.stderr else ""
        if current is not None and current not in finished:
            outcome = "hang" if hung else "crash"
            results.append(
                {
                    "id": current,
                    "outcome": outcome,
                    "error": f"no result after {CASE_TIMEOUT_S:.0f} s" if hung else err[-2000:],
                }
            )
            finished.add(current)
            log.write(f"{current:40} {outcome}\n")
        elif not finished and proc.returncode != 0:
            raise RuntimeError(f"the runner child failed before its first case:\n{err[-4000:]}")
        todo = [i for i in todo if cases[i].id not in finished]
    return results, facts


def _check_gpu() -> None:
    import cupy  # type: ignore[import-not-found, unused-ignore]  # noqa: PLC0415

    try:
        count = cupy.cuda.runtime.getDeviceCount()
    except Exception as e:  # cupy raises its own CUDA error types when there is no driver or device
        raise GpuUnavailable(f"no usable CUDA GPU ({type(e).__name__}: {e})") from e
    if count == 0:
        raise GpuUnavailable("no CUDA GPU is visible")
    props = cupy.cuda.runtime.getDeviceProperties(0)
    if props["major"] != 9:
        raise GpuUnavailable(
            f"the litmus kernels are built for sm_90 (Hopper); GPU 0 is sm_{props['major']}{props['minor']}"
        )


def run(
    cubin: Path | None, wanted: set[str] | None = None, log: Any = sys.stderr, out: Path | None = None
) -> dict[str, Any]:
    """Run the catalogue (or the wanted ids) on the GPU; returns the whole record.

    With `out`, the record so far is rewritten after every batch, so a run cut short keeps its results.
    """
    try:
        import cupy  # type: ignore[import-not-found, unused-ignore]  # noqa: F401, PLC0415
    except ImportError as e:
        raise GpuUnavailable(
            "cupy is not installed: install the gpu extra (pip install 'mbarrier[gpu]')"
        ) from e
    _check_gpu()
    cases = catalogue()
    unknown = (wanted or set()) - {c.id for c in cases}
    if unknown:
        raise ValueError(f"unknown case id(s): {', '.join(sorted(unknown))}")
    record: dict[str, Any] = {
        "schema": SCHEMA,
        "tool": "mbarrier.hw.runner",
        "date": datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "gpu": None,
        "results": [],
    }
    by_id: dict[str, dict[str, Any]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        if cubin is None:
            cubin = build_cubin(cases, Path(tmp))
        else:
            check_cubin(cases, cubin)
        for batch in _batches(cases, wanted):
            results, facts = run_batch(cubin, batch, cases, log, want_facts=record["gpu"] is None)
            record["gpu"] = record["gpu"] or facts
            for r in results:
                by_id[r["id"]] = r
            record["results"] = [dict(by_id[c.id], case=c.to_dict()) for c in cases if c.id in by_id]
            if out is not None:
                out.write_text(json.dumps(record, indent=1) + "\n", encoding="utf-8")
    return record


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m mbarrier.hw.runner", description=__doc__)
    ap.add_argument("--out", type=Path, help="write the record (JSON) here")
    ap.add_argument(
        "--cubin", type=Path, help="a cubin built from the current catalogue (with its .cu beside)"
    )
    ap.add_argument("--cases", help="comma-separated case ids (default: all)")
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--indices", help=argparse.SUPPRESS)
    ap.add_argument("--facts", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument(
        "--build-only", type=Path, metavar="DIR", help="only write DIR/litmus.cu and DIR/litmus.cubin"
    )
    args = ap.parse_args(argv)
    if args.child:
        return child(args.cubin, [int(x) for x in args.indices.split(",")], args.facts)
    if args.build_only:
        args.build_only.mkdir(parents=True, exist_ok=True)
        print(build_cubin(catalogue(), args.build_only))
        return 0
    wanted = set(args.cases.split(",")) if args.cases else None
    record = run(args.cubin, wanted, out=args.out)
    if not args.out:
        sys.stdout.write(json.dumps(record, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    sys.exit(main())
