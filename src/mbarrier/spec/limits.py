"""Numeric limits of the mbarrier object (PTX ISA 9.7.13.15.1, 9.7.13.15.2) and of a launch."""

from typing import Final

#: 9.7.13.15.2: every count is bounded by 2^20 - 1.
COUNT_MAX: Final = (1 << 20) - 1

#: 9.7.13.15.2, "Expected arrival count": [1, 2^20 - 1].
EXPECTED_MIN: Final = 1
EXPECTED_MAX: Final = COUNT_MAX

#: 9.7.13.15.2, "Pending arrival count": [0, 2^20 - 1].
PENDING_MIN: Final = 0
PENDING_MAX: Final = COUNT_MAX

#: 9.7.13.15.2, "tx-count": [-(2^20 - 1), 2^20 - 1].
TX_MIN: Final = -COUNT_MAX
TX_MAX: Final = COUNT_MAX

#: 9.7.13.15.9: the init count operand range.
INIT_COUNT_MIN: Final = 1
INIT_COUNT_MAX: Final = COUNT_MAX

#: 9.7.13.15.13/14: "The value of the operand count must be in the range as specified in Contents".
#: The manual does not say which of the three ranges applies; an arrival count of 0 arrives nowhere,
#: so we take the expected-count range [1, 2^20 - 1] (the hardware's answer is recorded in conformance).
ARRIVE_COUNT_MIN: Final = 1
ARRIVE_COUNT_MAX: Final = COUNT_MAX

#: 9.7.13.15.11/12/13: txCount / expectCount / completeCount are 32-bit unsigned operands.
U32_MAX: Final = (1 << 32) - 1

#: 9.7.13.15.1: type .b64, 8-byte alignment, .shared memory.
OBJECT_SIZE: Final = 8
OBJECT_ALIGN: Final = 8

#: 9.7.13.15.16: "the valid values of phaseParity operand are 0 and 1".
PARITY_VALUES: Final = (0, 1)

#: A CTA has at most 1024 threads (PTX ISA 2.2 "Thread Hierarchy", CUDA Programming Guide "Thread
#: Hierarchy"; sm_90's limit).
MAX_THREADS_PER_CTA: Final = 1024

#: A cluster has at most 16 CTAs on sm_90 (8 portably; 16 with the non-portable cluster size: CUDA
#: Programming Guide, "Thread Block Clusters").
MAX_CLUSTER_CTAS: Final = 16

#: PTX ISA 6.4.1 (Addresses as Operands, which every mbarrier instruction's `addr` refers to, 9.7.13.15.9
#: ff.): "The address size may be either 32-bit or 64-bit ... Addresses are zero-extended to the
#: specified width as needed, and truncated if the register width exceeds the state space address width
#: for the target architecture", and address arithmetic is integer arithmetic: `[reg+imm]` wraps at the
#: register's width (2^32 for a 32-bit register, as nvcc's 32-bit shared pointers rely on), then at the
#: state space's. The shared (::cta and ::cluster), local and param windows are 32-bit; generic and global
#: addresses are 64-bit (.address_size 64).
ADDRESS_BITS: Final = {".shared::cta": 32, ".shared::cluster": 32, ".local": 32, ".param": 32,
                       ".global": 64, "generic": 64}

#: The largest %ntid.x, %ntid.y, %ntid.z: threads of a CTA along each dimension (PTX ISA, Special
#: Registers, %ntid: 1024, 1024, 64 for sm_20 and later); their product is MAX_THREADS_PER_CTA at most.
MAX_NTID: Final = (1024, 1024, 64)

#: The largest %nctaid.x, %nctaid.y, %nctaid.z: CTAs of a grid along each dimension (PTX ISA, Special
#: Registers, %nctaid: 2^31 - 1, 65535, 65535 for sm_30 and later).
MAX_NCTAID: Final = ((1 << 31) - 1, 65535, 65535)

#: Shared memory of one CTA, static and dynamic together: 227 KB on sm_90 (CUDA Programming Guide,
#: "Technical Specifications per Compute Capability", 9.0; the most of any target the tool models).
MAX_SHARED_PER_CTA: Final = 227 * 1024

#: Local memory of one thread: 512 KB (CUDA Programming Guide, "Technical Specifications per Compute
#: Capability").
MAX_LOCAL_PER_THREAD: Final = 512 * 1024
