"""The simulator: a launched kernel as an explicit machine of threads, memories and copy engines.

    module = sim.load("k.ptx")
    m = sim.launch(module, "kernel", grid=2, block=128, cluster=2, args={"in": sim.Buffer.of_ints(xs)})
    result = mbarrier.explore.run(m, mbarrier.explore.RandomScheduler(seed=1))
"""

from mbarrier.sim.errors import KernelFault, LaunchError, MemoryFault, SimError, Unsupported
from mbarrier.sim.launch import launch, load, pick_kernel
from mbarrier.sim.machine import Copy, Machine, Thread
from mbarrier.sim.memory import Buffer

__all__ = ["Buffer", "Copy", "KernelFault", "LaunchError", "Machine", "MemoryFault", "SimError", "Thread",
           "Unsupported", "launch", "load", "pick_kernel"]
