"""The companion instructions of a warp-specialized kernel, as data for the same validator as the
mbarrier family (`spec.forms`): what ptxas 13.0 accepts and in which words it refuses, measured.
Sources: the PTX ISA sections named in each docstring (not in shared/spec; cited by number from the
manual's contents), ptxas 13.0 for the wording, the gates and what the manual leaves open.
"""

from __future__ import annotations

from typing import Final

from mbarrier.spec import wgmma
from mbarrier.spec.companions_tmap import prefetch_tensormap, tensormap_replace
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
from mbarrier.spec.modifiers import WORD_MESSAGES
from mbarrier.spec.targets import ARCH_SPECIFIC, ARCH_SPECIFIC_SM100_ON, TARGET_MIN_VERSION

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
    # (a vector there whose first register has the type's size: "Vector operand is not allowed")
    a = Slot("a", "value", typed=True, symbol_ok=True, vector_message=True, vector_first_size=True)
    d = Slot("d", "dest", typed=True, vector_message=True, vector_first_size=True)
    lists = ((d, a, Slot("b", "value", ".b32")),) if op == "mapa" else ((Slot("d", "dest", ".b32"), a),)
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
        object_rules=False, words=tuple((a, "action") for a in actions),
        constraints=(Constraint(Cond(lacks=actions), "required-modifier", "griddepcontrol",
                                mod="'.launch_dependents' or '.wait'"),),
        gates=(Gate(_feature("griddepcontrol"), ALWAYS, "9.7.13.13", version=(7, 8)),
               Gate("Instruction 'griddepcontrol'", ALWAYS, "9.7.13.13", sm=90),
               *(Gate(f"Modifier '{a}'", Cond(has=(a,)), "9.7.13.13", version=(7, 8), sm=90)
                 for a in actions)),
    )


_PROXY = "fence.proxy"
_FENCE_SECTION = "9.7.13.4"  # membar/fence (not in shared/spec; number from the PTX ISA 8.x contents)
_SEMS = (".sc", ".acq_rel", ".release", ".acquire", ".relaxed")
#: The proxy kinds' gates, which ptxas checks as it reads the word (measured).
_PROXYKIND_GATES = (
    Gate("Modifier '.alias'", Cond(has=("read:.alias",)), _FENCE_SECTION, version=(7, 5), at_once=True),
    Gate("Modifier '.async'", Cond(has=("read:.async",)), _FENCE_SECTION, version=(8, 0), sm=90,
         at_once=True),
)
#: Gates of fence's words that ptxas checks on fence.proxy too, taken or not (measured).
#: fence's `.sync_restrict` (PTX ISA 8.6), which every proxy fence takes (silently but on
#: fence.proxy.async::generic, measured).
_SYNC_RESTRICT: Final = (".sync_restrict::shared::cta", ".sync_restrict::shared::cluster")
_FENCE_WORD_GATES = (
    Gate(_feature(".cluster scope"), Cond(has=(".cluster",)), _FENCE_SECTION, version=(7, 8), sm=90),
    Gate(_feature(".op_restrict"), Cond(has=(".mbarrier_init",)), _FENCE_SECTION, version=(8, 0), sm=90),
    *(Gate(_feature(".sync_restrict"), Cond(has=(r,)), _FENCE_SECTION, version=(8, 6), sm=90)
      for r in _SYNC_RESTRICT),
)


#: Every state space a proxy fence may be written with.
_ANY_SPACE: Final = (".global", ".shared", ".shared::cta", ".shared::cluster", ".local", ".const", ".param",
                     ".tex")
#: fence.proxy.tensormap::generic.acquire's address: any `[...]`.
_TENSORMAP_ADDR: Final = Slot("addr", "addr", any_address=True, space_message=False)


def _fence_proxy() -> Instr:
    """fence.proxy.proxykind (PTX ISA 9.7.13.4), the bidirectional proxy fence: `.alias` or
    `.async{.global, .shared::{cta,cluster}}` (ptxas: one "proxykind", the first written named in
    "Multiple .async modifiers specified"); no .scope ("Illegal modifier"), no .sem but `.acquire` or
    `.release` with a `.sync_restrict`, no operands; a `.sync_restrict` taken silently. PTX ISA 7.5
    ("Feature 'fence.proxy'"), `.alias` 7.5, `.async` 8.0 and sm_90, `.sync_restrict` 8.6 and sm_90
    (measured). ptxas also matches the tensor map's
    operands `[addr], imm` here (the line without `.tensormap::generic`): the proxy kinds and a
    `.sync_restrict` are then illegal, any state space unexpected, the size and the sub-qualifiers
    not judged, the rest as without operands (measured)."""
    spaces = (".global", ".shared::cta", ".shared::cluster")
    size = Slot("size", "value", ".b32", imm_only=True)
    return Instr(
        ("fence", ".proxy"), _FENCE_SECTION, operands=((_TENSORMAP_ADDR, size), ()), types=(), spaces=spaces,
        exact_spaces=True, flags=_SYNC_RESTRICT, uncounted_with="size", sems=(".acquire", ".release"),
        words=((".alias", "proxykind"), (".async", "proxykind")), canonical=(".async",),
        constraints=(
            Constraint(Cond(lacks=(".alias", ".async")), "required-modifier", _PROXY, mod=".proxykind"),
            *(Constraint(Cond(has=("space:" + sp,), lacks=(".async",)), "space-incorrect", _PROXY)
              for sp in spaces),
            # the tensor map's operands without `.tensormap::generic`: its words refused there
            # (a proxy kind after the address: a refused sink hides it, measured)
            *(Constraint(Cond(has=(w,), roles=("size",)), "illegal-modifier", _PROXY, mod=w, late=True)
              for w in (".alias", ".async")),
            *(Constraint(Cond(has=(w,), roles=("size",)), "illegal-modifier", _PROXY, mod=w)
              for w in _SYNC_RESTRICT),
            *(Constraint(Cond(has=("space:" + sp,), roles=("size",)), "space-none", _PROXY)
              for sp in _ANY_SPACE),
            *(Constraint(Cond(has=(s,), lacks=("scope",)), "sem-needs-scope", _PROXY, mod=s) for s in _SEMS),
            # (.acquire, .release: taken with a .sync_restrict, illegal without: measured)
            *(Constraint(Cond(has=(s,), lacks=_SYNC_RESTRICT), "illegal-modifier", _PROXY, mod=s, late=True)
              for s in (".acquire", ".release"))),
        object_rules=False,
        gates=(Gate(_feature(_PROXY), ALWAYS, _FENCE_SECTION, version=(7, 5)),
               *_PROXYKIND_GATES,
               # (the sub-qualifiers' gates without the tensor map's operands only: measured)
               Gate(_feature("::cta"), Cond(has=("::cta",), no_roles=("size",)), _FENCE_SECTION,
                    version=(7, 8)),
               Gate(_feature("::cluster"), Cond(has=("::cluster",), no_roles=("size",)), _FENCE_SECTION,
                    version=(7, 8), sm=90),
               *_FENCE_WORD_GATES),
    )


def _fence_proxy_tensormap() -> Instr:
    """fence.proxy.tensormap::generic.release.scope and fence.proxy.tensormap::generic.acquire.scope
    [addr], 128 (PTX ISA 9.7.13.4), the unidirectional proxy fence of a tensor map: the .sem decides
    the operands (".acquire modifier required for instruction 'fence.proxy' with 2 arguments" of an
    acquire without them), any `[...]` as the address, the size 128; PTX ISA 8.3 ("Feature
    'fence.proxy with unidirection proxy fence'"), sm_90 on (measured)."""
    generic = ".tensormap::generic"
    size = Slot("size", "value", ".b32", imm_only=True,
                checks=(ImmCheck("exact", 128, view="u32", when=".acquire"),))
    unidirection = "fence.proxy with unidirection proxy fence"
    # (ptxas takes a state space silently on the release, .global and .shared ones; with the
    # address of the acquire none: measured)
    spaces = _ANY_SPACE
    return Instr(
        ("fence", ".proxy"), _FENCE_SECTION, operands=((), (_TENSORMAP_ADDR, size)), types=(), spaces=spaces,
        object_rules=False, counts_spaces=False, canonical=(".acquire", ".gpu"),
        sems=(".release", ".acquire"), scopes=(".cta", ".cluster", ".gpu", ".sys"), scope_needs_sem=False,
        flags=(generic, *_SYNC_RESTRICT), marker=generic,
        words=((".alias", "proxykind"), (".async", "proxykind")),
        constraints=(
            Constraint(Cond(lacks=("sem",)), "required-modifier", _PROXY, mod=".acquire/.release"),
            Constraint(Cond(has=(".acquire",), no_roles=("size",)), "required-modifier-with", _PROXY,
                       mod=".acquire", other="2 arguments"),
            Constraint(Cond(has=(".release",), roles=("size",)), "required-modifier-with", _PROXY,
                       mod=".release", other="0 arguments"),
            *(Constraint(Cond(has=(k,)), "illegal-modifier-with", _PROXY, mod=k, other="proxy direction")
              for k in (".alias", ".async")),
            # (with the operands, also plain: measured; a refused sink hides that)
            *(Constraint(Cond(has=(k,), roles=("size",)), "illegal-modifier", _PROXY, mod=k, late=True)
              for k in (".alias", ".async")),
            # (.sync_restrict: taken silently without the operands, illegal with them: measured)
            *(Constraint(Cond(has=(r,), roles=("size",)), "illegal-modifier", _PROXY, mod=r)
              for r in _SYNC_RESTRICT),
            *(Constraint(Cond(has=("space:" + sp,), roles=("size",)), "space-none", _PROXY) for sp in spaces),
            *(Constraint(Cond(has=("space:" + sp,), no_roles=("size",)), "space-incorrect", _PROXY)
              for sp in spaces[4:])),
        gates=(*_PROXYKIND_GATES, Gate(_feature(unidirection), ALWAYS, _FENCE_SECTION, version=(8, 3)),
               # (the sub-qualifiers' gates on the release only: measured)
               Gate(_feature("::cta"), Cond(has=("::cta",), no_roles=("size",)), _FENCE_SECTION,
                    version=(7, 8)),
               Gate(_feature("::cluster"), Cond(has=("::cluster",), no_roles=("size",)), _FENCE_SECTION,
                    version=(7, 8), sm=90),
               Gate(f"Instruction '{unidirection}'", ALWAYS, _FENCE_SECTION, targets=SM90_ON),
               *_FENCE_WORD_GATES),
    )


def _fence_proxy_async_generic() -> Instr:
    """fence.proxy.async::generic.acquire.sync_restrict::shared::cluster.cluster and
    fence.proxy.async::generic.release.sync_restrict::shared::cta.cluster (PTX ISA 9.7.13.4), the
    unidirectional fence between the generic and the async proxies: the .sem decides the
    `.sync_restrict` (".sync_restrict::shared::cluster modifier required for instruction
    'fence.proxy'"), the scope `.cluster` (".cluster modifier required", with a .sem); no operands;
    a state space taken silently but `.local`, `.const`, `.param`, `.tex` ("State space incorrect";
    two "Unexpected number of state spaces"); `.alias`/`.async` "with 'proxy direction'" as on the
    tensor map's; PTX ISA 8.3 ("fence.proxy with unidirection proxy fence"), "not supported on .target"
    below sm_90, `.sync_restrict` 8.6 and sm_90 (measured)."""
    generic = ".async::generic"
    restrict = {".acquire": _SYNC_RESTRICT[1], ".release": _SYNC_RESTRICT[0]}
    unidirection = "fence.proxy with unidirection proxy fence"
    spaces = _ANY_SPACE
    return Instr(
        ("fence", ".proxy"), _FENCE_SECTION, operands=((),), types=(), spaces=spaces,
        canonical=(".acquire", ".sync_restrict::shared::cluster", ".cluster"),
        sems=tuple(restrict), scopes=(".cta", ".cluster", ".gpu", ".sys"), scope_needs_sem=False,
        flags=(generic, *restrict.values()), marker=generic,
        words=((".alias", "proxykind"), (".async", "proxykind")),
        constraints=(
            Constraint(Cond(lacks=("sem",)), "required-modifier", _PROXY, mod=".acquire/.release"),
            *(Constraint(Cond(has=(s,), lacks=(r,)), "required-modifier", _PROXY, mod=r)
              for s, r in restrict.items()),
            *(Constraint(Cond(has=("space:" + sp,)), "space-incorrect", _PROXY) for sp in spaces[4:]),
            *(Constraint(Cond(has=(s,), lacks=(".cluster",)), "required-modifier", _PROXY, mod=".cluster")
              for s in restrict),
            *(Constraint(Cond(has=(s,), lacks=("scope",)), "sem-needs-scope", _PROXY, mod=s)
              for s in restrict),
            *(Constraint(Cond(has=(k,)), "illegal-modifier-with", _PROXY, mod=k, other="proxy direction")
              for k in (".alias", ".async"))),
        gates=(*_PROXYKIND_GATES, Gate(_feature(unidirection), ALWAYS, _FENCE_SECTION, version=(8, 3)),
               Gate(f"Instruction '{unidirection}'", ALWAYS, _FENCE_SECTION, targets=SM90_ON),
               *_FENCE_WORD_GATES),
    )


#: wgmma.* (PTX ISA 9.7.15) compiles for sm_90a only: "not supported on .target" elsewhere, and above
#: sm_90 also "cannot be compiled for architecture" (measured on every target ptxas knows).
WGMMA_TARGETS: Final[tuple[str, ...]] = ("sm_90a",)
WGMMA_ARCH: Final = 90


def _wgmma_sync(op: str) -> Instr:
    """wgmma.fence.sync.aligned, wgmma.commit_group.sync.aligned, wgmma.wait_group.sync.aligned N
    (PTX ISA 9.7.15.7.1-3): `.sync` required, `.aligned` optional (measured); PTX ISA 8.0 ("Feature
    'WGMMA'"), sm_90a."""
    name = f"wgmma.{op}"
    section = {"fence": wgmma.FENCE_SECTION, "commit_group": wgmma.COMMIT_SECTION}.get(op, wgmma.WAIT_SECTION)
    wait = op == "wait_group"
    return Instr(
        ("wgmma", f".{op}"), section,
        operands=((Slot("N", "value", ".b32", imm_only=True, checks=(ImmCheck("nonnegative"),)),),)
        if wait else ((),), types=(), spaces=(), flags=(".sync", ".aligned"), object_rules=False,
        constraints=(Constraint(Cond(lacks=(".sync",)), "required-modifier", name, mod=".sync"),),
        gates=(Gate(_feature("WGMMA"), ALWAYS, section, version=(8, 0)),
               Gate(f"Instruction '{name}'", ALWAYS, section, targets=WGMMA_TARGETS, arch_max=WGMMA_ARCH)),
    )


#: How ptxas names wgmma.mma_async by its multiplicand type (measured): "Instruction 'wgmma.mma_async
#: with FP8 types' not supported", "Feature 'WGMMA with integer types' requires PTX ISA .version 8.0";
#: .s8 with .u8 is the kind WGMMA_MIXED.
WGMMA_KINDS: Final[dict[str, str]] = {
    ".f16": "floating point types", ".bf16": "floating point types", ".tf32": "floating point types",
    ".e4m3": "FP8 types", ".e5m2": "FP8 types", ".s8": "integer types", ".u8": "integer types",
    ".b1": "boolean type",
}
WGMMA_MIXED: Final = "mixed integer types"
#: The PTX ISA version of each kind (9.7.15.5.2's PTX ISA notes; measured).
WGMMA_KIND_VERSIONS: Final[dict[str, tuple[int, int]]] = {
    **dict.fromkeys(WGMMA_KINDS.values(), (8, 0)), WGMMA_MIXED: (8, 4)}
#: How ptxas takes A in registers by .atype (measured): "strict" .b32/.f16x2 registers only;
#: "types" also 32-bit .s32/.f32/.pred ones, but says "Unexpected instruction types specified for
#: 'wgmma.mma_async with ...'" of a vector of them; "loose" takes those silently.
WGMMA_A_POLICY: Final[dict[str, str]] = {
    ".f16": "strict", ".bf16": "types", ".tf32": "types", ".e4m3": "types", ".e5m2": "types",
    ".s8": "loose", ".u8": "loose", ".b1": "loose",
}
#: The shapes of each kind (spec.wgmma.N, K): a shape of the kind with another type's K is ptxas's
#: "Illegal instruction types ... with shape", one of no type of the kind "Illegal matrix shape".
WGMMA_KIND_SHAPES: Final[dict[str, frozenset[str]]] = {
    kind: frozenset(f".m{wgmma.M}n{n}k{wgmma.K[t]}" for t, k2 in WGMMA_KINDS.items() if k2 == kind
                    for n in wgmma.N[t])
    for kind in set(WGMMA_KINDS.values())}
#: Matrix shapes ptxas knows from other instructions (measured: it calls them "Illegal matrix shape"
#: on wgmma.mma_async, and any other .mXnYkZ word an "Unknown modifier", e.g. .m64n8k4, .m128n8k16):
#: mma's and wmma's, and the sparse wgmma's K of 64 (measured on .m64n8k64; its other N assumed).
OTHER_SHAPES: Final[frozenset[str]] = frozenset(
    {".m8n8k4", ".m16n8k4", ".m16n8k8", ".m16n8k16", ".m16n8k32", ".m16n8k64", ".m16n8k128", ".m16n8k256",
     ".m8n8k16", ".m8n8k32", ".m8n8k128", ".m16n16k16", ".m32n8k16", ".m8n32k16", ".m16n16k8"}
    | {f".m{wgmma.M}n{n}k64" for n in (*wgmma.N[".e4m3"], *wgmma.N[".s8"])})
WGMMA_MMA: Final = "wgmma.mma_async"
#: The operand lists of each kind, after D: (whether A is a descriptor or registers, the immediates'
#: checks in order). Registers for A take imm-trans-b only (PTX ISA 9.7.15.5.2).
_SCALE_D = ImmCheck("parity")
_SCALE = ImmCheck("values", -1, 1)
_TRANS = ImmCheck("parity")
_FLOAT_LISTS = (("desc", (_SCALE_D, _SCALE, _SCALE, _TRANS, _TRANS)),
                ("regs", (_SCALE_D, _SCALE, _SCALE, _TRANS)))
_SCALED_LISTS = (("desc", (_SCALE_D, _SCALE, _SCALE)), ("regs", (_SCALE_D, _SCALE, _SCALE)))
_PLAIN_LISTS = (("desc", (_SCALE_D,)), ("regs", (_SCALE_D,)))
#: By .atype, the operand lists after D: A a descriptor or registers, then the immediates' checks in
#: order (scale-d, imm-scale-a, imm-scale-b, imm-trans-a, imm-trans-b; registers for A take no
#: imm-trans-a; only .f16/.bf16 transpose: PTX ISA 9.7.15.5.2).
WGMMA_LISTS: Final[dict[str, tuple[tuple[str, tuple[ImmCheck, ...]], ...]]] = {
    ".f16": _FLOAT_LISTS, ".bf16": _FLOAT_LISTS, ".tf32": _SCALED_LISTS, ".e4m3": _SCALED_LISTS,
    ".e5m2": _SCALED_LISTS, ".s8": _PLAIN_LISTS, ".u8": _PLAIN_LISTS, ".b1": _PLAIN_LISTS,
}


#: wgmma.mma_async.sp (PTX ISA 9.7.15.6), the sparse A: ptxas names it "Sparse wgmma.mma_async with
#: {kind}" and its gate "Feature 'Sparse WGMMA with {kind}'" (measured), from PTX ISA 8.2 (mixed
#: integer types 8.4, measured); there is no sparse .b1 (every shape of it "Illegal matrix shape",
#: and no list of operands), though ptxas gates it as the others.
WGMMA_SPARSE: Final = ".sp"
WGMMA_SPARSE_NAME: Final = "Sparse "
WGMMA_SPARSE_KIND_VERSIONS: Final[dict[str, tuple[int, int]]] = {
    **dict.fromkeys(WGMMA_KINDS.values(), (8, 2)), WGMMA_MIXED: (8, 4)}
WGMMA_SPARSE_KIND_SHAPES: Final[dict[str, frozenset[str]]] = {
    kind: frozenset(f".m{wgmma.M}n{n}k{wgmma.SPARSE_K[t]}" for t, k2 in WGMMA_KINDS.items()
                    if k2 == kind and t in wgmma.SPARSE_K for n in wgmma.N[t])
    for kind in set(WGMMA_KINDS.values())}
#: The sparse operand lists (D, A, B, then sp-meta, sp-sel, then those of WGMMA_LISTS): sp-sel's
#: check by .atype (spec.wgmma.SPARSE_SELECTORS), judged on the literal cut to 32 bits; ptxas
#: prints the literal as written in the "0 or 1" message, cut in the "0" one (measured).
WGMMA_SPARSE_SELECTOR: Final[dict[str, ImmCheck]] = {
    t: ImmCheck("parity", view="u32", printed="s64") if v == (0, 1) else ImmCheck("exact", v[0], view="u32")
    for t, v in wgmma.SPARSE_SELECTORS.items()}


def _wgmma_mma() -> Instr:
    """wgmma.mma_async{.sp}.sync.aligned.shape.dtype.atype.btype d, a-desc|a, b-desc{, sp-meta,
    sp-sel}, scale-d {, imm-scale-a, imm-scale-b{, imm-trans-a}, imm-trans-b} (PTX ISA 9.7.15.5.2, the
    sparse `.sp` 9.7.15.6): judged by `ptx.validate_wgmma` from spec.wgmma and the tables above;
    PTX ISA 8.0 (mixed integer types 8.4; sparse 8.2 and 8.4), sm_90a."""
    s = wgmma.MMA_SECTION
    sp = wgmma.SPARSE_SECTION
    return Instr(
        ("wgmma", ".mma_async"), s, operands=((),), types=(), spaces=(),
        flags=(".sync", ".aligned"), object_rules=False, checker=WGMMA_MMA, vector_lengths=None,
        constraints=(Constraint(Cond(lacks=(".sync",)), "required-modifier", WGMMA_MMA, mod=".sync"),),
        gates=(*(g for k, v in WGMMA_KIND_VERSIONS.items() for g in (
            Gate(_feature(f"WGMMA with {k}"), Cond(has=(f"kind:{k}",)), s, version=v),
            Gate(f"Instruction '{WGMMA_MMA} with {k}'", Cond(has=(f"kind:{k}",)), s,
                 targets=WGMMA_TARGETS, arch_max=WGMMA_ARCH))),
               *(g for k, v in WGMMA_SPARSE_KIND_VERSIONS.items() for g in (
                   Gate(_feature(f"Sparse WGMMA with {k}"), Cond(has=(f"kind:{WGMMA_SPARSE_NAME}{k}",)), sp,
                        version=v),
                   Gate(f"Instruction '{WGMMA_SPARSE_NAME}{WGMMA_MMA} with {k}'",
                        Cond(has=(f"kind:{WGMMA_SPARSE_NAME}{k}",)), sp, targets=WGMMA_TARGETS,
                        arch_max=WGMMA_ARCH))),
               # (mma.sp's word, which ptxas reads as the sparsity here, and refuses: measured)
               Gate(_feature(".sp::ordered_metadata"), Cond(has=("word:.sp::ordered_metadata",)), sp,
                    version=(8, 5))),
    )


def _stmatrix() -> Instr:
    """stmatrix.sync.aligned.shape.num{.trans}{.shared{::cta}}.type [p], r (PTX ISA, Warp Level
    Matrix Multiply-Accumulate Instructions, "stmatrix"; not in shared/spec, cited by name): `.m8n8`
    with `.b16`, `.m16n8` with `.b8` and `.trans`; `.x1`/`.x2`/`.x4` registers of 32 bits as a
    vector of that length. PTX ISA 7.8, sm_90; `.m16n8` and `.b8` 8.6 and the sm_100 family
    (measured)."""
    name, section = "stmatrix", "stmatrix"
    nums = {".x1": 1, ".x2": 2, ".x4": 4}
    addr = Slot("p", "addr", space_message=False)
    lists = (*((addr, Slot("r", "value", "any32", imm=False, length=n, flag=x, sized_message=True))
               for x, n in nums.items()),
             (addr, Slot("r", "value", "any32", imm=False, sized_message=True)))  # (no .num: any length)
    return Instr(
        ("stmatrix",), section, operands=lists, types=(".b16", ".b8"), spaces=(".shared", ".shared::cta"),
        exact_spaces=True,
        flags=(".sync", ".aligned", ".trans", ".m8n8", ".m16n8", *nums),
        # (the layouts of mma, taken silently here: measured)
        words=tuple((w, "silent") for w, m in WORD_MESSAGES.items()
                    if m == ("illegal:.alayout or .blayout",)),
        constraints=(
            *(Constraint(Cond(lacks=(w,)), "required-modifier", name, mod=w) for w in (".sync", ".aligned")),
            Constraint(Cond(lacks=tuple(nums)), "required-modifier", name, mod=".num"),
            Constraint(Cond(lacks=(".m8n8", ".m16n8")), "shape-required", name),
            Constraint(Cond(has=(".m8n8", ".b8")), "shape-type", name, mod=".m8n8"),
            Constraint(Cond(has=(".m16n8", ".b16")), "shape-type", name, mod=".m16n8"),
            Constraint(Cond(has=(".m16n8",), lacks=(".trans",)), "requires-modifier-shape", name,
                       mod=".trans", other=".m16n8")),
        gates=(Gate(_feature(name), ALWAYS, section, version=(7, 8), sm=90),
               # (the shape's gates as ptxas reads the word: a mismatch does not hide them)
               Gate("Modifier '.m16n8'", Cond(has=(".m16n8",)), section, version=(8, 6), at_once=True),
               Gate(_feature(".m16n8"), Cond(has=(".m16n8",)), section, targets=ARCH_SPECIFIC_SM100_ON,
                    at_once=True),
               Gate(_feature("stmatrix.b8"), Cond(has=(".b8",)), section, version=(8, 6)),
               Gate(_feature("stmatrix.b8"), Cond(has=(".b8",)), section, targets=ARCH_SPECIFIC_SM100_ON)),
    )


#: ldmatrix's format conversion: `.dst_fmt.src_fmt`, which ptxas reads as one word (measured).
FORMAT_CONVERSIONS: Final[tuple[tuple[str, str], ...]] = ((".b8x16", ".b6x16_p32"), (".b8x16", ".b4x16_p64"))
FORMAT_CONVERSION_WORDS: Final[tuple[str, ...]] = (".b8x16", ".b6x16_p32", ".b4x16_p64")
#: The shapes that take it: ptxas judges the words' pairing and gates the conversion there only.
FORMAT_SHAPES: Final[tuple[str, ...]] = (".m8n16", ".m16n16")


def _ldmatrix() -> Instr:
    """ldmatrix.sync.aligned.shape.num{.trans}{.shared{::cta}}.type r, [p] (PTX ISA, Warp Level
    Matrix Multiply-Accumulate Instructions, "ldmatrix"; cited by name): `.m8n8` with `.b16`,
    `.m16n16` with `.b8` and `.trans` (two registers a matrix); as stmatrix otherwise. PTX ISA 6.5
    (`.m8n8` too), `.m16n16` and `.b8` 8.6 and the sm_100-on architecture-specific targets. The
    format conversion `.b8x16.b6x16_p32`/`.b8x16.b4x16_p64` (one word to ptxas: written apart
    or in the other order "Illegal modifier '.b6x16_p32.b8x16'", alone "Unexpected number of 'format
    conversion' modifiers specified") goes with `.m8n16` (one register a matrix, no `.trans`, no
    type) and `.m16n16` (with `.trans`), not `.m8n8`; `.m8n16` and the conversion 8.6 and those
    targets (measured)."""
    name = section = "ldmatrix"
    nums = {".x1": 1, ".x2": 2, ".x4": 4}
    addr = Slot("p", "addr", space_message=False)
    wide = Slot("p", "addr", space_message=False, flag=".m16n16")
    lists = (*((Slot("r", "value", "any32", imm=False, length=n, flag=x, sized_message=True), addr)
               for x, n in nums.items()),
             # (.m16n16: two registers a matrix, .x4 is "Incorrect no. of matrix" and four: measured)
             *((Slot("r", "value", "any32", imm=False, length=min(2 * n, 4), flag=x, sized_message=True),
                wide) for x, n in nums.items()),
             *((Slot("r", "value", "any32", imm=False, sized_message=True), a)
               for a in (addr, wide)))  # (no .num: any length)
    return Instr(
        ("ldmatrix",), section, operands=lists, types=(".b16", ".b8"), optional_type=True,
        spaces=(".shared", ".shared::cta"), exact_spaces=True, address_space=1,
        flags=(".sync", ".aligned", ".trans", ".m8n8", ".m16n16", ".m8n16", *nums),
        words=(*((w, "silent") for w, m in WORD_MESSAGES.items() if m == ("illegal:.alayout or .blayout",)),
               *((w, "format") for w in FORMAT_CONVERSION_WORDS)),
        constraints=(
            *(Constraint(Cond(lacks=(w,)), "required-modifier", name, mod=w) for w in (".sync", ".aligned")),
            Constraint(Cond(lacks=tuple(nums)), "required-modifier", name, mod=".num"),
            Constraint(Cond(lacks=(".m8n8", ".m16n16", ".m8n16")), "shape-required", name),
            Constraint(Cond(has=(".m8n16",), lacks=("format", ".b16", ".b8")), "requires-modifier-shape",
                       name, mod="format conversion", other=".m8n16"),
            *(Constraint(Cond(has=(".m8n16", t)), "shape-type-count", name, mod=".m8n16")
              for t in (".b16", ".b8")),
            Constraint(Cond(has=(".m8n16", ".trans")), "modifier-shape", name, mod=".trans", other=".m8n16"),
            # (the conversion where no shape takes it, and beside a type: measured)
            Constraint(Cond(has=(".m8n8", "format")), "modifier-shape", name, mod="format conversion",
                       other=".m8n8"),
            Constraint(Cond(has=("format",), lacks=(".m8n8", *FORMAT_SHAPES)), "modifier-shape", name,
                       mod="format conversion", other=""),
            Constraint(Cond(has=(".m8n8", "format")), "shape-type-count", name, mod=".m8n8"),
            *(Constraint(Cond(has=("format", t), lacks=(".m8n8", *FORMAT_SHAPES)), "shape-type-count", name,
                         mod="") for t in (".b16", ".b8")),
            *(Constraint(Cond(has=(sh, "format", t)), "illegal-modifier", name, mod="format conversion")
              for sh in FORMAT_SHAPES for t in (".b16", ".b8")),
            *(Constraint(Cond(has=(".m16n16", "format", t)), "shape-type-count", name, mod=".m16n16")
              for t in (".b16", ".b8")),
            Constraint(Cond(has=(".m8n8", ".b8")), "shape-type", name, mod=".m8n8"),
            Constraint(Cond(has=(".m16n16", ".b16")), "shape-type", name, mod=".m16n16"),
            Constraint(Cond(has=(".m16n16",), lacks=(".trans",)), "requires-modifier-shape", name,
                       mod=".trans", other=".m16n16"),
            Constraint(Cond(has=(".m16n16", ".x4")), "matrix-count", name, mod="4", other=".m16n16"),
            # (the type may be left out only without a shape: measured)
            Constraint(Cond(has=(".m8n8",), lacks=(".b16", ".b8")), "shape-type-count", name, mod=".m8n8"),
            Constraint(Cond(has=(".m8n8",), lacks=(".b16", ".b8")), "shape-type", name, mod=".m8n8"),
            Constraint(Cond(has=(".m16n16",), lacks=(".b16", ".b8", "format")), "requires-modifier-shape",
                       name, mod="format conversion", other=".m16n16"),
            Constraint(Cond(has=(".trans",), lacks=(".m8n8", ".m16n16", ".m8n16")), "modifier-shape", name,
                       mod=".trans", other="")),
        gates=(Gate(_feature(name), ALWAYS, section, version=(6, 5)),
               Gate(_feature(".m8n8"), Cond(has=(".m8n8",)), section, version=(6, 5)),
               # (as ptxas reads the word, a later shape too: measured)
               Gate("Modifier '.m16n16'", Cond(has=("read:.m16n16",)), section, version=(8, 6), at_once=True),
               Gate(_feature(".m16n16"), Cond(has=("read:.m16n16",)), section, targets=ARCH_SPECIFIC_SM100_ON,
                    at_once=True),
               # (with .m16n16 or no shape, and then not beside a format conversion: measured)
               *(g for when in (Cond(has=(".b8", ".m16n16")),
                                Cond(has=(".b8",), lacks=(".m8n8", ".m8n16", ".m16n16", "format")))
                 for g in (Gate(_feature("ldmatrix.b8"), when, section, version=(8, 6)),
                           Gate(_feature("ldmatrix.b8"), when, section, targets=ARCH_SPECIFIC_SM100_ON))),
               Gate(_modifier_on(".m8n16", name), Cond(has=(".m8n16",)), section, version=(8, 6)),
               Gate(_feature(".m8n16"), Cond(has=(".m8n16",)), section, targets=ARCH_SPECIFIC_SM100_ON),
               # (with a shape that takes it only: measured)
               *(g for sh in FORMAT_SHAPES for g in (
                   Gate(_modifier_on("format conversion", name), Cond(has=("format", sh)), section,
                        version=(8, 6)),
                   Gate(_feature("ldmatrix with format conversion"), Cond(has=("format", sh)), section,
                        targets=ARCH_SPECIFIC_SM100_ON)))),
    )


def _bulk_prefetch() -> Instr:
    """cp.async.bulk.prefetch.L2.global{.L2::cache_hint} [srcMem], size{, cache-policy} (PTX ISA
    9.7.9.25.4.4): PTX ISA 8.0, sm_90. Modifiers in any order; no state space is "State space
    modifier required" and "incorrect", no `.L2` ".level modifier required" (measured)."""
    name = "cp.async.bulk.prefetch"
    section = "9.7.9.25.4.4"
    src = Slot("srcMem", "addr", spaces=(".global",), space_message=False)
    size = Slot("size", "value", ".b32", checks=(ImmCheck("multiple", 16),
                                                 ImmCheck("range", 0, 1048560, printed="s32")))
    policy = Slot("cachePolicy", "value", ".b64", flag=".L2::cache_hint")
    no_space = Cond(lacks=(".global", ".shared", ".local", ".const", ".param", ".tex"))
    return Instr(
        ("cp", ".async", ".bulk", ".prefetch"), section, operands=((src, size), (src, size, policy)),
        types=(), spaces=(".global",), generic=False, flags=(".L2", ".L2::cache_hint"),
        subspace_illegal=True, words=((".L1", "cacheop"), (".L2", "cacheop")),
        constraints=(Constraint(Cond(lacks=("cacheop",)), "required-modifier", name, mod=".level"),
                     Constraint(no_space, "required-modifier", name, mod="State space"),
                     Constraint(no_space, "space-incorrect", name),
                     Constraint(Cond(has=(".L2::cache_hint",), lacks=no_space.lacks), "space-modifier", name,
                                mod=".L2::cache_hint", other="")),
        gates=(Gate(_feature(name), ALWAYS, section, version=(8, 0), sm=90),
               Gate("Modifier '.L2::cache_hint'", Cond(has=(".L2::cache_hint",)), section, version=(7, 4),
                    late=True)),
    )


def _tensormap_cp_fenceproxy() -> Instr:
    """tensormap.cp_fenceproxy.global.shared::cta.tensormap::generic.release.scope.sync.aligned
    [dst], [src], 128 (PTX ISA "tensormap.cp_fenceproxy"): copies a tensor map from shared to global
    memory and fences the tensormap proxy. PTX ISA 8.3, the targets from sm_90 on (measured)."""
    name = "tensormap.cp_fenceproxy"
    section = "tensormap.cp_fenceproxy"
    dst = Slot("dst", "addr", spaces=(".global",), space_message=False, governed_by=0)
    src = Slot("src", "addr", spaces=(".shared",), space_message=False, governed_by=1)
    size = Slot("size", "value", ".b32", imm_only=True, checks=(ImmCheck("exact", 128, view="u32"),))
    generic = ".tensormap::generic"
    return Instr(
        ("tensormap", ".cp_fenceproxy"), section, operands=((dst, src, size),), types=(), spaces=(),
        space_pairs=((".global", ".shared::cta"),), pair_each=True, missing_pair_incorrect=False,
        # (.acquire is ".release modifier required", another .sem illegal besides, measured)
        sems=(".release", ".acquire"),
        scopes=(".cta", ".cluster", ".gpu", ".sys"), scope_needs_sem=False,
        flags=(generic, ".sync", ".aligned"), object_rules=False,
        constraints=(*(Constraint(Cond(lacks=(w,)), "required-modifier", name, mod=w)
                       for w in (".sync", ".aligned", generic)),
                     Constraint(Cond(lacks=(".release",)), "required-modifier", name, mod=".release"),
                     Constraint(Cond(lacks=("scope",)), "required-modifier", name, mod="scope")),
        gates=(Gate(_feature(name), ALWAYS, section, version=(8, 3)),
               Gate(f"Instruction '{name}'", ALWAYS, section, targets=SM90_ON),
               Gate(_feature(".cluster scope"), Cond(has=(".cluster",)), section, version=(7, 8), sm=90)),
    )


COMPANIONS: Final[tuple[Instr, ...]] = (
    _setmaxnreg("inc"), _setmaxnreg("dec"), _elect(), _barrier_cluster("arrive"),
    _barrier_cluster("wait"), _bulk_group("commit_group"), _bulk_group("wait_group"),
    _cluster_address("mapa"), _cluster_address("getctarank"), _griddepcontrol(),
    _wgmma_sync("fence"), _wgmma_sync("commit_group"), _wgmma_sync("wait_group"), _wgmma_mma(),
    _fence_proxy_tensormap(), _fence_proxy_async_generic(), _fence_proxy(), _stmatrix(), _ldmatrix(),
    _bulk_prefetch(),
    prefetch_tensormap(), _tensormap_cp_fenceproxy(), tensormap_replace(),
)
