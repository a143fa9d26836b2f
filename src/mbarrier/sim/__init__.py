"""The simulator: a launched kernel as an explicit machine of threads, memories and copy engines.

    module = sim.load("k.ptx")
    m = sim.launch(module, "kernel", grid=2, block=128, cluster=2, args={"in": sim.Buffer.of_ints(xs)})
    result = mbarrier.explore.run(m, mbarrier.explore.RandomScheduler(seed=1))
"""

from mbarrier.sim.errors import KernelFault, LaunchError, MemoryFault, SimError, Unsupported
from mbarrier.sim.launch import launch, load, load_text, pick_kernel
from mbarrier.sim.launchfile import from_dict as launch_from_dict
from mbarrier.sim.launchfile import read as read_launch
from mbarrier.sim.launchspec import (
           Field,
           Fields,
           Launch,
           Output,
           Pointer,
           Raw,
           Scalar,
           TensorMapArg,
           TensorMapRef,
)
from mbarrier.sim.machine import Copy, Machine, Thread
from mbarrier.sim.memory import Buffer
from mbarrier.sim.tensormap import TensorMap, TensorMapError

__all__ = ["Buffer", "Copy", "Field", "Fields", "KernelFault", "Launch", "LaunchError", "Machine",
           "MemoryFault", "Output", "Pointer", "Raw", "Scalar", "SimError", "TensorMap", "TensorMapArg",
           "TensorMapError", "TensorMapRef", "Thread", "Unsupported", "launch", "launch_from_dict", "load",
           "load_text", "pick_kernel", "read_launch"]
