"""PTX targets (`.target sm_XX{a,f}`) and the PTX ISA version each one needs, as data.

The minimum versions were measured with ptxas (CUDA 13.0): for each target, the lowest `.version` of
an empty module that ptxas accepts (`tests/ptx/test_targets.py` measures them again on every CI run).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Final

Version = tuple[int, int]

#: target name -> lowest PTX ISA version that supports it (ptxas 13.0: "PTX .version X does not support
#: .target T" below it).
TARGET_MIN_VERSION: Final[dict[str, Version]] = {
    "sm_75": (6, 3),
    "sm_80": (7, 0),
    "sm_86": (7, 1),
    "sm_87": (7, 4),
    "sm_89": (7, 8),
    "sm_90": (7, 8),
    "sm_90a": (8, 0),
    "sm_100": (8, 6),
    "sm_100a": (8, 6),
    "sm_100f": (8, 8),
    "sm_103": (8, 8),
    "sm_103a": (8, 8),
    "sm_103f": (8, 8),
    "sm_110": (9, 0),
    "sm_110a": (9, 0),
    "sm_110f": (9, 0),
    "sm_120": (8, 7),
    "sm_120a": (8, 7),
    "sm_120f": (8, 8),
    "sm_121": (8, 8),
    "sm_121a": (8, 8),
    "sm_121f": (8, 8),
}

#: The targets with the architecture-specific features (`sm_90a`, `sm_100f`, ...): ptxas says
#: "not supported on .target" of setmaxnreg on every other (measured on every target it knows).
ARCH_SPECIFIC: Final[tuple[str, ...]] = tuple(t for t in TARGET_MIN_VERSION if t[-1] in "af")
#: ... of them, those from sm_100 on (`sm_100a` ... `sm_121f`): ldmatrix's and stmatrix's sm_100
#: forms, tensormap.replace's .swizzle_atomicity (measured on every target ptxas knows).
ARCH_SPECIFIC_SM100_ON: Final[tuple[str, ...]] = tuple(t for t in ARCH_SPECIFIC if int(t[3:-1]) >= 100)

#: The highest PTX ISA version the oracle (ptxas 13.0) knows.
LATEST_VERSION: Final[Version] = (9, 0)

_TARGET = re.compile(r"sm_(\d+)([af]?)$")


@dataclass(frozen=True, slots=True)
class Target:
    """`sm_90a` -> Target("sm_90a", 90, "a"). `sm` orders targets for "requires sm_90 or higher"."""

    name: str
    sm: int
    suffix: str

    def at_least(self, sm: int) -> bool:
        return self.sm >= sm


def parse_target(name: str) -> Target | None:
    """The target named `name`, or None when it is not an `sm_XX{a,f}` name we know."""
    m = _TARGET.match(name)
    if m is None or name not in TARGET_MIN_VERSION:
        return None
    return Target(name, int(m.group(1)), m.group(2))


def parse_version(text: str) -> Version | None:
    """"8.6" -> (8, 6); None when malformed."""
    m = re.fullmatch(r"(\d+)\.(\d+)", text.strip())
    return (int(m.group(1)), int(m.group(2))) if m else None


def format_version(v: Version) -> str:
    return f"{v[0]}.{v[1]}"
