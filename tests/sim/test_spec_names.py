"""The simulator's names are the spec's: every special register it gives a value for is one that PTX
ISA 10 defines and ptxas resolves, and every type it computes in is a PTX ISA 5.2 type
(mbarrier.spec.forms holds the one list of each)."""

from __future__ import annotations

from mbarrier.sim import compile as sim_compile
from mbarrier.sim.types import TYPES as SIMULATED_TYPES
from mbarrier.spec.forms import SPECIAL_REGISTERS, SPECIAL_VECTORS, TYPES


def test_every_simulated_special_register_is_a_spec_one() -> None:
    simulated = set(sim_compile.SPECIAL_CONSTANTS) | set(sim_compile.SPECIAL_DYNAMIC)
    assert simulated - set(SPECIAL_REGISTERS) == set()


def test_whole_vector_names_stand_for_their_x_component() -> None:
    aliases = sim_compile._SPECIAL_ALIASES
    assert set(aliases) <= SPECIAL_VECTORS
    assert all(component == name + ".x" for name, component in aliases.items())


def test_every_simulated_type_is_a_spec_one() -> None:
    assert set(SIMULATED_TYPES) - TYPES == set()
