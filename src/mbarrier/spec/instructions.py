"""Every instruction lint judges as ptxas does: the mbarrier family (`spec.forms`) and the companion
instructions of a warp-specialized kernel (`spec.companions`, built from the classes of `spec.forms`).
Both are read from here, so neither of the two modules imports the other's instructions."""

from __future__ import annotations

from typing import Final

from mbarrier.spec.companions import COMPANIONS
from mbarrier.spec.forms import FAMILY, Instr

INSTRUCTIONS: Final[tuple[Instr, ...]] = (*FAMILY, *COMPANIONS)

INSTRUCTIONS_BY_PATH: Final[dict[tuple[str, ...], Instr]] = {i.path: i for i in INSTRUCTIONS}
