"""Every instruction lint judges as ptxas does: the mbarrier family (`spec.forms`) and the companion
instructions of a warp-specialized kernel (`spec.companions`, built from the classes of `spec.forms`)
and the tensor copies that take no mbarrier (`spec.tensorcopies`). All are read from here, so none of
these modules imports another's instructions."""

from __future__ import annotations

from typing import Final

from mbarrier.spec.companions import COMPANIONS
from mbarrier.spec.forms import FAMILY, Instr
from mbarrier.spec.tensorcopies import TENSOR_COPIES

#: (The tensor store first: of two forms a line is marked for, the first is judged, and ptxas judges
#: a store with both completion mechanisms as a store, measured.)
INSTRUCTIONS: Final[tuple[Instr, ...]] = (*TENSOR_COPIES, *FAMILY, *COMPANIONS)

INSTRUCTIONS_BY_PATH: Final[dict[tuple[str, ...], Instr]] = {i.path: i for i in INSTRUCTIONS}
