"""A stand-in for cupy on a machine without a GPU, for testing mbarrier.hw.runner's process handling.

Kernel `litmus_<i>` marks case i as run to its end, unless FAKE_CUPY_TRAP=i (raise, as a trap does)
or FAKE_CUPY_HANG=i (never return).
"""

import os
import time

from mbarrier.hw import cudagen, litmus

__version__ = "fake"
uint32 = "uint32"
uint64 = "uint64"


class _Runtime:
    @staticmethod
    def getDeviceCount():
        return 1

    @staticmethod
    def getDeviceProperties(index):
        return {"name": b"Fake GPU", "major": 9, "minor": 0, "multiProcessorCount": 1}

    @staticmethod
    def driverGetVersion():
        return 13000

    @staticmethod
    def runtimeGetVersion():
        return 13000

    @staticmethod
    def deviceSynchronize():
        pass


class cuda:  # noqa: N801 - cupy's name
    runtime = _Runtime


class _Array(list):
    def fill(self, value):
        self[:] = [value] * len(self)

    def get(self):
        return list(self)


def asarray(values, dtype):
    return _Array(values)


def empty(n, dtype):
    return _Array([0] * n)


class RawModule:
    def __init__(self, path):
        self.path = path

    def get_function(self, name):
        index = name.rsplit("_", 1)[1]

        def launch(grid, block, args):
            if os.environ.get("FAKE_CUPY_TRAP") == index:
                raise RuntimeError("cudaErrorLaunchFailure: unspecified launch failure")
            if os.environ.get("FAKE_CUPY_HANG") == index:
                time.sleep(60)
            args[0][litmus.layout(litmus.catalogue()[int(index)]).done_slot] = cudagen.DONE

        return launch
