"""The findings the checker adds to the object's rules (`spec.rules`) and the memory model's
(`spec.memmodel`), as data: a deadlock, an operation on the shared memory of a CTA that has exited,
shared memory released under copies in flight, the kernel's own faults (the same findings in `run`),
and the simulator's stop at an instruction it does not support (not a finding). `explore.check` reports
them under these ids (`python -m mbarrier.spec.checks` prints the table of docs/checker.md)."""

from __future__ import annotations

from typing import Final

from mbarrier.spec.rules import Rule

DEADLOCK: Final = "deadlock"
LIVELOCK: Final = "livelock"
REMOTE_EXITED: Final = "remote-cta-exited"
EXIT_INFLIGHT: Final = "exit-with-copies-in-flight"
MEMORY_FAULT: Final = "memory-fault"
TRAP: Final = "trap"
KERNEL_FAULT: Final = "kernel-fault"
PARAM_STORE: Final = "param-store"
BRKPT: Final = "brkpt"
ASSERTION: Final = "assertion-failed"
SETMAXNREG: Final = "setmaxnreg"
UNSUPPORTED: Final = "unsupported"
WGMMA_REGISTER_INFLIGHT: Final = "wgmma-register-inflight"
WGMMA_FENCE: Final = "wgmma-fence-missing"
WGMMA_ALIGNED: Final = "wgmma-not-aligned"

CHECKER_RULES: Final[tuple[Rule, ...]] = (
    Rule(DEADLOCK, "9.7.13.15.16", "deadlock",
         "Every live thread waits for something that can no longer happen: a phase no arrival or copy can "
         "complete, a barrier or collective the other threads will not reach, copies that cannot land.",
         "checker"),
    Rule(LIVELOCK, "", "livelock",
         "Some threads never exit although something can always move: whatever the schedule, the kernel "
         "goes round the same states for ever (a loop that changes a register on every try of a flag "
         "nobody sets, threads handing a value back and forth).",
         "checker"),
    Rule(REMOTE_EXITED, "CUDA Programming Guide, Distributed Shared Memory", "remote CTA has exited",
         "An operation on the shared memory of a CTA of the cluster that has already exited (its shared "
         "memory, and any mbarrier object in it, is gone).",
         "sim"),
    Rule(EXIT_INFLIGHT, "9.7.9.25 (cp.async), 9.7.9.25.4 (cp.async.bulk), 9.7.15.7.3 (wgmma.wait_group)",
         "copies in flight at exit",
         "Shared memory is released while asynchronous copies into it are still in flight: a thread exits "
         "with a cp.async that nothing tracks or with a wgmma.mma_async of its warp not complete, or a CTA's "
         "last thread exits before its copies land.",
         "sim"),
    Rule(MEMORY_FAULT, "", "access outside memory",
         "An access outside every memory and window (shared memory of the CTA, the cluster's CTAs, the "
         "thread's local memory, the global buffers), or an asynchronous copy whose addresses or size "
         "are not aligned as the copy requires: an illegal address on the GPU.",
         "sim"),
    Rule(TRAP, "", "trap", "The kernel executed `trap`: the launch aborts.", "sim"),
    Rule(BRKPT, "Miscellaneous Instructions: brkpt", "breakpoint",
         "The kernel executed `brkpt`: without a debugger attached the launch stops there with an "
         "error, as at a trap.", "sim"),
    Rule(ASSERTION, "CUDA Programming Guide, Assertion", "assertion failed",
         "The kernel called `__assertfail` (nvcc's device-side `assert`): the launch aborts; the finding "
         "carries the assertion's text, file, line and function read from the call's arguments.", "sim"),
    Rule(SETMAXNREG, "Miscellaneous Instructions: setmaxnreg", "setmaxnreg misuse",
         "A setmaxnreg the ISA leaves undefined: a count outside 24..256 or not a multiple of 8, lanes of "
         "a warp or warps of a warpgroup executing different setmaxnreg instructions (or a warp of the "
         "warpgroup exiting without it), .dec above or .inc below the warp's current count.", "sim"),
    Rule(PARAM_STORE, "5.1.6.1", "store to a kernel parameter",
         "A store or atomic to a kernel parameter (by its name, through its .param address or its generic "
         "address from cvta.param): kernel parameters are read-only.",
         "sim"),
    Rule(KERNEL_FAULT, "", "undefined outside the object",
         "Any other operation the ISA leaves undefined or the hardware refuses, outside the mbarrier "
         "object's rules: reading an undefined CC.CF, a bar.sync barrier above 15, a lane outside its "
         "collective's membermask, barrier.cluster.arrive twice, an indirect call to no function (the "
         "message says which).",
         "sim"),
    Rule(WGMMA_REGISTER_INFLIGHT, "9.7.15.7.3 (wgmma.wait_group)", "wgmma registers touched in flight",
         "Accessing the accumulator register or the input register containing the fragments of matrix A of a "
         "wgmma.mma_async instruction without first performing a wgmma.wait_group instruction that waits on "
         "a wgmma-group including that wgmma.mma_async instruction is undefined behavior.",
         "sim"),
    Rule(WGMMA_FENCE, "9.7.15.7.1 (wgmma.fence)", "wgmma.fence missing",
         "The wgmma.fence instruction must be issued by all warps of the warpgroup at the following "
         "locations: Before the first wgmma.mma_async operation in a warpgroup. Between a register access by "
         "a thread in the warpgroup and any wgmma.mma_async instruction that accesses the same registers, "
         "either as accumulator or input register containing fragments of matrix A, except when these are "
         "accumulator register accesses across multiple wgmma.mma_async instructions of the same shape. ... "
         "Otherwise, the behavior is undefined.",
         "sim"),
    Rule(WGMMA_ALIGNED, "9.7.15.5.2 (wgmma.mma_async)", "wgmma.mma_async not warpgroup-uniform",
         "The mandatory .aligned qualifier indicates that all threads in the warpgroup must execute the same "
         "wgmma.mma_async instruction. ... The contents of a matrix descriptor must be same across all the "
         "warps in the warpgroup. (The simulator checks each warp's lanes, their descriptors and scale-d, "
         "and that the warpgroup's four warps exist.)",
         "sim"),
    Rule(UNSUPPORTED, "", "the simulator cannot run it",
         "Not a finding: an instruction (or operand form) the simulator does not support, or whose "
         "operands it cannot take apart. run and check stop there with the outcome `unsupported` "
         "(exit 2), naming the instruction and its line; the tool's limit, never a verdict on the kernel.",
         "sim"),
)
CHECKER_RULES_BY_ID: Final[dict[str, Rule]] = {r.id: r for r in CHECKER_RULES}


def checker_rule(rule_id: str) -> Rule:
    """The checker's rule with this id; a KeyError names the unknown id."""
    try:
        return CHECKER_RULES_BY_ID[rule_id]
    except KeyError:
        raise KeyError(f"unknown checker rule id {rule_id!r}") from None


def markdown_table() -> str:
    rows = ["| id | section | what |", "|---|---|---|"]
    rows += [f"| `{r.id}` | {r.section or '-'} | {r.sentence} |" for r in CHECKER_RULES]
    return "\n".join(rows)


if __name__ == "__main__":
    from mbarrier.spec.textout import emit

    emit(markdown_table() + "\n")
