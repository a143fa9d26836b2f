"""prefetch.tensormap and tensormap.replace as data for the validator (`spec.forms`, read through
`spec.companions.COMPANIONS`): what ptxas 13.0 accepts and in which words it refuses, measured.
The tensor map's own facts (the enumerations, the limits) are `spec.tensormap`'s.
"""

from __future__ import annotations

from typing import Final

from mbarrier.spec import tensormap
from mbarrier.spec.forms import (
    ALWAYS,
    Cond,
    Constraint,
    Gate,
    ImmCheck,
    Instr,
    Slot,
    _feature,
    _modifier_on,
    load_mode_gates,
)
from mbarrier.spec.targets import ARCH_SPECIFIC, ARCH_SPECIFIC_SM100_ON, TARGET_MIN_VERSION

#: prefetch's cache levels and eviction priorities (PTX ISA 9.7.9.15): `.L2::evict_last` and
#: `.L2::evict_normal` are its own, the other words of the class it refuses (measured).
_PREFETCH_EVICT: Final = tuple(f".{lv}::{p}" for lv in ("L1", "L2")
                               for p in ("evict_last", "evict_normal", "evict_first", "evict_unchanged",
                                         "no_allocate"))
_PREFETCH_EVICT_OWN: Final = (".L2::evict_last", ".L2::evict_normal")


def prefetch_tensormap() -> Instr:
    """prefetch{.const,.param}{.level::eviction_priority}.tensormap [a] (PTX ISA 9.7.9.15): brings a
    tensor map into the cache. ptxas reads `.tensormap` as one of `prefetch`'s cache operations
    (`.L1`, `.L2`: "Multiple cache operation modifiers specified"), the last one written judged: ours
    when it is `.tensormap` (a level after it: `UNCHECKED_AFTER`). One eviction priority is "Illegal
    modifier '.tensormap' for instruction 'prefetch' with '.level::eviction_priority'", gated
    ("cache eviction priority", PTX ISA 7.4, sm_80) and judged (only `.L2::evict_last`/`_normal`;
    "requires cache level L2" of `.L1`'s; with a state space but `.global` "State space incorrect for
    feature 'cache eviction priority'"); two are "Multiple cache eviction priority modifiers
    specified" and judged no further. PTX ISA 8.0, sm_90 (measured)."""
    name = "prefetch"
    section = "9.7.9.15"
    a = Slot("a", "addr", spaces=(".const", ".param", ".global"), space_message=False, governed_by=0)
    tmap = ".tensormap"
    # (a state space it does not take: "cannot be applied to ... space", and for .tex, .shared "incorrect"
    # besides, measured)
    others = (".global", ".local", ".tex", ".shared", ".shared::cta", ".shared::cluster")
    evict = Cond(has=("evict",))
    return Instr(
        ("prefetch",), section, operands=((a,),), types=(), spaces=(".const", ".param", *others[:2]),
        marker=tmap, subspace_illegal=True,
        words=(*((w, "cacheop") for w in (".L1", ".L2", tmap)), *((w, "evict") for w in _PREFETCH_EVICT)),
        constraints=(
            *(Constraint(Cond(has=("space:" + sp,)), "space-modifier", name, mod=tmap, other=sp)
              for sp in others),
            Constraint(evict, "illegal-modifier-with", name, mod=tmap, other=".level::eviction_priority"),
            *(Constraint(Cond(has=(w,)), "illegal-modifier", name, mod="." + w.partition("::")[2])
              for w in _PREFETCH_EVICT if w.replace(".L1", ".L2") not in _PREFETCH_EVICT_OWN),
            *(Constraint(Cond(has=(w,)), "evict-level", name, mod="." + w.partition("::")[2])
              for w in _PREFETCH_EVICT if w.startswith(".L1")),
            *(Constraint(Cond(has=("evict", "space:" + sp)), "space-feature", name,
                         mod="cache eviction priority")
              for sp in (".const", ".param", *others[1:]))),
        gates=(Gate(f"Modifier '{tmap}'", ALWAYS, section, version=(8, 0), sm=90),
               Gate(_modifier_on("cache eviction priority", name), evict, section, version=(7, 4), sm=80)),
    )


_REPLACE = "tensormap.replace"
#: tensormap.replace's fields by the instruction type of `new_val` (.field1, .field2 with an
#: ordinal, .field3 an immediate of the enumerations of spec.tensormap).
_REPLACE_B64: Final = (".global_address", ".global_stride")
_REPLACE_ORDINAL: Final = (".box_dim", ".global_dim", ".global_stride", ".element_stride")
_REPLACE_ENUMS: Final[dict[str, int]] = {
    ".elemtype": max(tensormap.REPLACE_ELEMTYPES), ".interleave_layout": max(tensormap.REPLACE_INTERLEAVES),
    ".swizzle_mode": max(tensormap.REPLACE_SWIZZLES),
    ".swizzle_atomicity": max(tensormap.REPLACE_ATOMICITIES), ".fill_mode": max(tensormap.REPLACE_FILLS)}
REPLACE_FIELDS: Final[tuple[str, ...]] = (".global_address", ".rank", *_REPLACE_ORDINAL, *_REPLACE_ENUMS)
_SM100_ON: Final = tuple(t for t in TARGET_MIN_VERSION
                         if int(t[3:].rstrip("af")) >= tensormap.REPLACE_SUBBYTE_SM)
_SUBBYTE = "value:.elemtype>=13"
_SWIZZLE_96B = "value:.swizzle_mode==4"


def _replace_checks(field: str) -> tuple[ImmCheck, ...]:
    """The checks of a .field3's immediate: ptxas's range (measured: it differs by target for the
    element type and the swizzle mode), and the facts of the values gated by version."""
    hi = _REPLACE_ENUMS[field]
    if field == ".elemtype":
        top = max(tensormap.REPLACE_SUBBYTE_ELEMTYPES)
        below = tuple(t for t in TARGET_MIN_VERSION if t not in _SM100_ON)
        return (ImmCheck("field-range", 0, hi, when=field, targets=below),
                ImmCheck("field-range", 0, top, when=field, targets=_SM100_ON),
                ImmCheck("fact", min(tensormap.REPLACE_SUBBYTE_ELEMTYPES), 1 << 64, when=field,
                         fact=_SUBBYTE))
    if field == ".swizzle_mode":
        v = tensormap.REPLACE_SWIZZLE_96B
        others = tuple(t for t in TARGET_MIN_VERSION if t not in tensormap.REPLACE_SWIZZLE_96B_TARGETS)
        return (ImmCheck("field-range", 0, hi, when=field, targets=others),
                ImmCheck("field-range", 0, v, when=field, targets=tensormap.REPLACE_SWIZZLE_96B_TARGETS),
                ImmCheck("fact", v, v, when=field, fact=_SWIZZLE_96B))
    return (ImmCheck("field-range", 0, hi, when=field),)


def tensormap_replace() -> Instr:
    """tensormap.replace.tile.field{.global,.shared::cta}.b1024.type [addr], {ord,} new_val (PTX ISA,
    Data Movement and Conversion Instructions: "tensormap.replace"; not in shared/spec, cited by name
    as tensormap.cp_fenceproxy is): a field of a tensor map in memory replaced; `.type` .b64 for the
    global address and stride, else .b32; `ord` (the dimension) an immediate; the enumerations' new
    value an immediate of spec.tensormap's tables. PTX ISA 8.3 and the architecture-specific
    targets; `.swizzle_atomicity` 8.6, from sm_100a (ptxas names the instruction with the field then);
    the modifiers in any order (measured)."""
    name = section = _REPLACE
    addr = Slot("addr", "addr", spaces=(".global", ".shared"), space_message=False, governed_by=0)
    # (a variable or an address of one "must be register", a special register or a vector "not
    # allowed"; under .b64 an immediate address "must be register", a special register, a vector or
    # an address of a variable a mismatch: measured)
    value = Slot("new_val", "value", typed=True, special_message=True, vector_message=True,
                 wide=Slot("new_val", "value", typed=True, space_message=False))
    lists = ((addr, value),
             *((addr, Slot("ord", "value", ".b32", imm_only=True, flag=f, checks=(
                 ImmCheck("field-range", 0, tensormap.REPLACE_ORDINAL_MAX, when=f),)), value)
               for f in _REPLACE_ORDINAL),
             *((addr, Slot("new_val", "value", typed=True, imm_only=True, flag=f, checks=_replace_checks(f)))
               for f in _REPLACE_ENUMS))
    atomicity = ".swizzle_atomicity"
    plain = Cond(lacks=(atomicity,))
    return Instr(
        ("tensormap", ".replace"), section, operands=lists, types=(".b32", ".b64"),
        spaces=(".global", ".shared::cta"), exact_spaces=True, flags=(".b1024", *REPLACE_FIELDS),
        load_modes=(".tile",), load_mode_name=".tile", any_list=True,
        operands_need=REPLACE_FIELDS,
        constraints=(
            Constraint(Cond(lacks=REPLACE_FIELDS), "required-modifier", name, mod="Tensormap field"),
            Constraint(Cond(lacks=REPLACE_FIELDS, has=(".b64",)), "illegal-modifier-type", name,
                       other=".b64"),
            # (another load mode is "Illegal modifier '.tile'" instead: measured)
            Constraint(Cond(lacks=("load_mode",)), "required-modifier", name, mod=".tile"),
            Constraint(Cond(lacks=(".b1024",)), "required-modifier", name, mod="Tensormap size"),
            *(Constraint(Cond(has=(f, t)), "illegal-modifier-type", name, mod=f, other=t)
              for f in REPLACE_FIELDS for t in ((".b32",) if f in _REPLACE_B64 else (".b64",)))),
        gates=(Gate(_feature(name), plain, section, version=(8, 3)),
               Gate(f"Instruction '{name}'", plain, section, targets=ARCH_SPECIFIC),
               Gate(_feature(name + atomicity), Cond(has=(atomicity,)), section, version=(8, 6)),
               Gate(f"Instruction '{name}{atomicity}'", Cond(has=(atomicity,)), section,
                    targets=ARCH_SPECIFIC_SM100_ON),
               *load_mode_gates(section),
               Gate(f"Instruction '{name}.elemtype with input value >= 13'", Cond(has=(_SUBBYTE,)), section,
                    version=(8, 7)),
               Gate(f"Instruction '{name}.swizzle_mode with input value == 4'", Cond(has=(_SWIZZLE_96B,)),
                    section, version=(8, 8))),
    )
