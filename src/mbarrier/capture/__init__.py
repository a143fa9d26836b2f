"""Capture: run a real program on a GPU machine and write one launch file (docs/launch.md) per kernel
launch it makes, with the PTX, the parameter bytes, the buffers its pointers point into (before the
launch and, as the GPU left them, after it) and its tensor maps as the encode calls that made them.

    status = capture.run(["./gemm", "256", "256", "256"], Path("cap"))   # on a machine with a GPU
    done = capture.convert(Path("cap/raw"), Path("cap"))   # the launch files, as `mbarrier capture` does

`interposer` builds the LD_PRELOAD library (`interpose.c`, shipped in the package) with the system C
compiler and caches it; `records` reads what it writes; `ptxfind` finds each kernel's PTX; `convert`
makes the launch files; `compare` sets a replay's buffers beside the GPU's. docs/capture.md.
"""

from mbarrier.capture.compare import BufferComparison, compare
from mbarrier.capture.convert import Converted, convert
from mbarrier.capture.interposer import CaptureError, interposer
from mbarrier.capture.runner import run

__all__ = ["BufferComparison", "CaptureError", "Converted", "compare", "convert", "interposer", "run"]
