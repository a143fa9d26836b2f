"""The companion instructions of a warp-specialized kernel, as data for the same validator as the
mbarrier family (`spec.forms`): what ptxas 13.0 accepts and in which words it refuses, measured.
Sources: the PTX ISA sections named in each docstring (not in shared/spec; cited by number from the
manual's contents), ptxas 13.0 for the wording, the gates and what the manual leaves open.
"""

from __future__ import annotations

from typing import Final

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
)
from mbarrier.spec.targets import TARGET_MIN_VERSION

#: The targets with the architecture-specific features (`sm_90a`, `sm_100f`, ...): ptxas says
#: "not supported on .target" of setmaxnreg on every other (measured on every target it knows).
ARCH_SPECIFIC: Final[tuple[str, ...]] = tuple(t for t in TARGET_MIN_VERSION if t[-1] in "af")
#: The targets from sm_90 on (ptxas: fence.proxy.tensormap "not supported on .target" below).
SM90_ON: Final[tuple[str, ...]] = tuple(t for t in TARGET_MIN_VERSION if int(t[3:].rstrip("af")) >= 90)


def _setmaxnreg(op: str) -> Instr:
    """setmaxnreg.{inc,dec}.sync.aligned.u32 imm-reg-count (PTX ISA 9.7.19.8): PTX ISA 8.0, the
    architecture-specific targets from sm_90a on."""
    name = f"setmaxnreg.{op}"
    # (an immediate only, which ptxas numbers argument 1: measured)
    count = Slot("imm-reg-count", "value", ".b32", imm_only=True, arg=1,
                 checks=(ImmCheck("range", 24, 256, view="s32"), ImmCheck("multiple", 8, view="s32")))
    return Instr(
        ("setmaxnreg", f".{op}"), "9.7.19.8", operands=((count,),), types=(".u32",), spaces=(),
        flags=(".sync", ".aligned"), object_rules=False,
        constraints=tuple(Constraint(Cond(lacks=(w,)), "required-modifier", name, mod=w)
                          for w in (".sync", ".aligned")),
        gates=(Gate(_feature(name), ALWAYS, "9.7.19.8", version=(8, 0)),
               Gate(f"Instruction '{name}'", ALWAYS, "9.7.19.8", targets=ARCH_SPECIFIC)),
    )


def _elect() -> Instr:
    """elect.sync d|p, membermask (PTX ISA 9.7.13.12): PTX ISA 8.0, sm_90."""
    return Instr(
        ("elect",), "9.7.13.12",
        operands=((Slot("d|p", "pair", ".b32"), Slot("membermask", "value", ".b32")),),
        types=(), spaces=(), flags=(".sync",), object_rules=False,
        constraints=(Constraint(Cond(lacks=(".sync",)), "required-modifier", "elect", mod=".sync"),),
        gates=(Gate(_feature("elect"), ALWAYS, "9.7.13.12", version=(8, 0), sm=90),),
    )


def _barrier_cluster(op: str) -> Instr:
    """barrier.cluster.arrive{.release,.relaxed}{.aligned} and barrier.cluster.wait{.acquire}{.aligned}
    (PTX ISA 9.7.13.2): PTX ISA 7.8 and sm_90; the .sem 8.0."""
    name = f"barrier.cluster.{op}"
    sems = (".release", ".relaxed") if op == "arrive" else (".acquire",)
    return Instr(
        ("barrier", ".cluster", f".{op}"), "9.7.13.2", operands=((),), types=(), spaces=(), sems=sems,
        flags=(".aligned",), object_rules=False,
        gates=(Gate(_feature(name), ALWAYS, "9.7.13.2", version=(7, 8), sm=90),
               *(Gate(_modifier_on(s, name), Cond(has=(s,)), "9.7.13.2", version=(8, 0)) for s in sems)),
    )


def _bulk_group(op: str) -> Instr:
    """cp.async.bulk.commit_group and cp.async.bulk.wait_group{.read} N (PTX ISA 9.7.9.25.6):
    PTX ISA 8.0, sm_90."""
    name = f"cp.async.bulk.{op}"
    wait = op == "wait_group"
    return Instr(
        ("cp", ".async", ".bulk", f".{op}"), "9.7.9.25.6",
        operands=((Slot("N", "value", ".b32", imm_only=True),),) if wait else ((),), types=(), spaces=(),
        flags=(".read",) if wait else (), object_rules=False,
        gates=(Gate(_feature(name), ALWAYS, "9.7.9.25.6", version=(8, 0), sm=90),
               *((Gate("Modifier '.read'", Cond(has=(".read",)), "9.7.9.25.6", version=(8, 0), sm=90,
                       early=True),)
                 if wait else ())),
    )


def _cluster_address(op: str) -> Instr:
    """mapa{.shared::cluster}.type d, a, b and getctarank{.shared::cluster}.type d, a (PTX ISA 9.7.9.21,
    9.7.9.22): `.type` .u32 or .u64 is the address's; PTX ISA 7.8, sm_90."""
    section = "9.7.9.21" if op == "mapa" else "9.7.9.22"
    a = Slot("a", "value", typed=True, symbol_ok=True)
    lists = ((Slot("d", "dest", typed=True), a, Slot("b", "value", ".b32")),) if op == "mapa" else \
        ((Slot("d", "dest", ".b32"), a),)
    return Instr(
        (op,), section, operands=lists, types=(".u64", ".u32"), spaces=(".shared::cluster",),
        space_expected="::cluster", object_rules=True,
        words=((".v2", "vecdest"), (".v4", "vecdest")) if op == "mapa" else (),
        gates=(Gate(_feature(op), ALWAYS, section, version=(7, 8), sm=90),),
    )


def _griddepcontrol() -> Instr:
    """griddepcontrol.{launch_dependents,wait} (PTX ISA 9.7.13.13): PTX ISA 7.8, sm_90."""
    actions = (".launch_dependents", ".wait")
    return Instr(
        ("griddepcontrol",), "9.7.13.13", operands=((),), types=(), spaces=(), flags=actions,
        object_rules=False,
        constraints=(Constraint(Cond(lacks=actions), "required-modifier", "griddepcontrol",
                                mod="'.launch_dependents' or '.wait'"),
                     Constraint(Cond(has=actions), "combine", "griddepcontrol", mod=actions[0],
                                other=actions[1])),
        gates=(Gate(_feature("griddepcontrol"), ALWAYS, "9.7.13.13", version=(7, 8)),
               Gate("Instruction 'griddepcontrol'", ALWAYS, "9.7.13.13", sm=90),
               *(Gate(f"Modifier '{a}'", Cond(has=(a,)), "9.7.13.13", version=(7, 8), sm=90)
                 for a in actions)),
    )


COMPANIONS: Final[tuple[Instr, ...]] = (
    _setmaxnreg("inc"), _setmaxnreg("dec"), _elect(), _barrier_cluster("arrive"),
    _barrier_cluster("wait"), _bulk_group("commit_group"), _bulk_group("wait_group"),
    _cluster_address("mapa"), _cluster_address("getctarank"), _griddepcontrol(),
)
