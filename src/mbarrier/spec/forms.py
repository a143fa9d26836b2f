"""The mbarrier family's instruction forms as data: what ptxas accepts, and in which words it refuses.

Sources: PTX ISA 9.7.13.15.9-17 (the syntax, the PTX ISA notes and the target ISA notes of every
instruction), "cp.async.bulk" and 9.7.13.4 "membar/fence" (fence.mbarrier_init; neither text is in
shared/spec, so those two are cited by name and from the manual's contents). ptxas (CUDA 13.0) is the
oracle for the wording and for what the manual leaves open: every message template below is ptxas's
own, and `tests/ptx/test_ptxas_diff.py` checks the whole table against ptxas on every CI run.

The validator (`mbarrier.ptx.validate`) reads nothing else: adding a form or a gate is a data change.

How ptxas sees an instruction (measured): the opcode is a fixed dotted path (`mbarrier.arrive.expect_tx`,
`mbarrier.test_wait.parity`: `INSTRUCTIONS[*].path`); what follows are modifiers from one global
vocabulary, in any order: the family's own words (`MODIFIERS`) and every other word ptxas knows from
some instruction (`spec.modifiers`, measured). A word ptxas does not know is an "Unknown modifier"; a
known word the instruction does not take is an "Illegal modifier", or for some classes of words a
message of the class ("Illegal rounding modifier", "Vector qualifier is not allowed", ...). Then the
operands are matched against the instruction's operand lists by count, kind and type: no match is
"Arguments mismatch" and hides every later check of that line. Then the semantic constraints and
the feature gates by `.version`/`.target`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final, Literal

from mbarrier.spec.modifiers import HIDING_WORDS, WORD_GATES, WORD_MESSAGES
from mbarrier.spec.rules import Rule
from mbarrier.spec.targets import TARGET_MIN_VERSION, Version

Severity = Literal["error", "fatal"]

# -- the modifier vocabulary -----------------------------------------------------------------------

#: Class of the modifiers the family's instructions take or ptxas judges with them (any other word
#: is judged by what ptxas says of it, `spec.modifiers.WORD_MESSAGES`: "Unknown modifier" for a
#: word it does not know, "Illegal modifier" or a message of the word's class for one it knows).
#: sem: memory-ordering (ptxas: "order"); scope; space: a state space (`.shared::cta` is `.shared` with
#: the sub-qualifier `::cta`); type: an instruction type (every word ptxas takes as one, measured:
#: the others it calls a type, `.bf16`, are judged by `spec.modifiers` like other words); dim
#: and load_mode: a tensor copy's dimension and load mode (one of each; ptxas judges the last
#: written); flag: any other modifier.
MODIFIERS: Final[dict[str, str]] = {
    **{w: "type" for w, toks in WORD_MESSAGES.items() if toks == ("type",) and w in HIDING_WORDS},
    **dict.fromkeys((".acquire", ".release", ".relaxed", ".acq_rel", ".sc"), "sem"),
    **dict.fromkeys((".cta", ".cluster", ".gpu", ".sys"), "scope"),
    **dict.fromkeys((".shared", ".global", ".local", ".const", ".param", ".tex"), "space"),
    **dict.fromkeys((".b8", ".b16", ".b32", ".b64", ".b128", ".u8", ".u16", ".u32", ".u64",
                     ".s8", ".s16", ".s32", ".s64", ".f16", ".f32", ".f64"), "type"),
    **dict.fromkeys((".noinc", ".noComplete", ".sync", ".aligned", ".mbarrier_init",
                     ".multicast::cluster", ".L2::cache_hint", ".mbarrier::complete_tx::bytes",
                     ".bulk_group", ".ftz", ".sat", ".weak", ".volatile", ".ca", ".cg", ".nc",
                     ".cta_group::1", ".cta_group::2"), "flag"),
    **dict.fromkeys((".1d", ".2d", ".3d", ".4d", ".5d"), "dim"),
    **dict.fromkeys((".tile", ".im2col", ".tile::gather4", ".im2col::w", ".im2col::w::128", ".tile::scatter4",
                     ".im2col_no_offs"), "load_mode"),
}

#: How ptxas names a modifier class in "Illegal modifier" (measured: `mbarrier.init.1d` is "Illegal
#: modifier 'dimension'"); a class not listed is named by the word itself.
CLASS_NAMES: Final[dict[str, str]] = {"dim": "dimension"}

#: The number each dimension modifier stands for (a tensor copy's coordinate count, PTX ISA
#: 9.7.9.25.5.2).
DIMENSIONS: Final[dict[str, int]] = {f".{n}d": n for n in range(1, 6)}

#: Modifiers of which one instruction takes at most one: a second one of the group is "Multiple
#: {word} modifiers specified", named by the later word (measured).
FLAG_GROUPS: Final[dict[str, str]] = {
    ".cta_group::1": "cta_group", ".cta_group::2": "cta_group",
    ".mbarrier::complete_tx::bytes": "completion_mechanism", ".bulk_group": "completion_mechanism",
    # (and cp.async's `.mbarrier`, a word the family does not take: measured, "Multiple .mbarrier
    # modifiers specified" after `.mbarrier::complete_tx::bytes`, the later judged)
    ".mbarrier": "completion_mechanism",
    # stmatrix (measured: "Multiple .num modifiers specified", "Multiple matrix shape modifiers ...")
    ".x1": "num", ".x2": "num", ".x4": "num", ".m8n8": "shape", ".m16n8": "shape", ".m16n16": "shape",
    ".m8n16": "shape",
    # fence's .sync_restrict, one of them (measured: "Multiple .sync_restrict::shared::cluster ...")
    ".sync_restrict::shared::cta": "sync_restrict", ".sync_restrict::shared::cluster": "sync_restrict",
    # tensormap.replace's fields (measured: "Multiple .rank modifiers specified")
    **dict.fromkeys((".global_address", ".rank", ".box_dim", ".global_dim", ".global_stride",
                     ".element_stride", ".elemtype", ".interleave_layout", ".swizzle_mode",
                     ".swizzle_atomicity", ".fill_mode"),
                    "tensormap_field"),
}
#: How ptxas names a group in "Multiple {..} modifiers specified" where it names no word (measured).
GROUP_NAMES: Final[dict[str, str]] = {"num": ".num", "shape": "matrix shape"}

#: The vector lengths ptxas takes in an instruction's operands: a vector of another length anywhere
#: in them (an address's too) is "Illegal vector size: N", beside what ptxas says of the rest of the
#: line, even of an unknown instruction (measured on every instruction lint judges: 3, 5, 6, 7, 8,
#: 16, 72 elements). Instructions that take other lengths say so: `Instr.vector_lengths`.
VECTOR_LENGTHS: Final[tuple[int, ...]] = (1, 2, 4)
#: The lengths the tensor copies take (cp.async.bulk.tensor, its reduction and prefetch), in any
#: operand ("Illegal vector size: 6", measured; a vector of 3 is "Vector operand is not allowed" at
#: mbar, no illegal length).
TENSOR_VECTOR_LENGTHS: Final[tuple[int, ...]] = (1, 2, 3, 4, 5)

#: How ptxas gates each load mode word on any instruction that takes one (measured on the tensor copy
#: and tensormap.replace): (PTX ISA version, the lowest target or None, whether only the sm_100
#: family has it).
LOAD_MODE_GATES: Final[dict[str, tuple[Version, int | None, bool]]] = {
    ".tile": ((8, 0), 90, False), ".im2col": ((8, 0), 90, False), ".im2col_no_offs": ((8, 0), 90, False),
    ".tile::gather4": ((8, 6), None, False), ".im2col::w": ((8, 6), None, False),
    ".im2col::w::128": ((8, 6), None, True), ".tile::scatter4": ((8, 6), None, True),
}

#: Load modes of the im2col family: they bring the im2col operand (the fact "im2col" in conditions).
IM2COL_MODES: Final[tuple[str, ...]] = (".im2col", ".im2col::w", ".im2col::w::128")

#: Modifiers that, where an instruction does not take them, end ptxas's checks of the line: only the
#: words' own errors (unknown, repeated), the vectors' lengths and the first of these are reported,
#: in this order (measured); of the load modes, the one written last, on an instruction that takes
#: none (`.im2col` on cp.async.bulk hides its "Arguments mismatch"; on the tensor copies and
#: tensormap.replace another load mode is an illegal modifier like any other: measured).
TERMINAL_MODIFIERS: Final[tuple[str, ...]] = (".sync", ".L2::cache_hint", ".multicast::cluster",
                                              *LOAD_MODE_GATES, ".cta_group::1", ".cta_group::2")

#: Sub-qualifiers of `.shared`: `.shared::cta` and `.shared::cluster` (9.7.13.15.8).
SUBSPACES: Final[tuple[str, ...]] = ("::cta", "::cluster")

#: Register and immediate types an operand slot of a given type accepts (ptxas: same size, integer or
#: bit type; floats, predicates and other sizes are an "Arguments mismatch").
TYPE_COMPATIBLE: Final[dict[str, tuple[str, ...]]] = {
    ".b16": (".b16", ".u16", ".s16"),
    ".b32": (".b32", ".u32", ".s32"),
    ".b64": (".b64", ".u64", ".s64"),
    ".pred": (".pred",),
    # the value of st.async/red.async of these types (measured)
    ".u32": (".b32", ".u32", ".s32"), ".s32": (".b32", ".u32", ".s32"),
    ".u64": (".b64", ".u64", ".s64"), ".s64": (".b64", ".u64", ".s64"),
    ".f32": (".f32", ".b32", ".u32", ".s32"), ".f64": (".f64", ".b64", ".u64", ".s64"),
    # stmatrix's registers: any of 32 bits, and predicates (measured)
    "any32": (".b32", ".u32", ".s32", ".f32", ".f16x2", ".bf16x2", ".pred"),
}

#: Register types ptxas refuses as an address base ("Use integer or bit only").
NON_ADDRESS_TYPES: Final[tuple[str, ...]] = (".f16", ".f32", ".f64", ".pred")

#: Special registers (PTX ISA 10) and their types; ptxas refuses them as mbarrier operands.
SPECIAL_REGISTERS: Final[dict[str, str]] = {
    **{f"%{r}.{c}": ".u32" for r in ("tid", "ntid", "ctaid", "nctaid", "cluster_ctaid",
                                     "cluster_nctaid", "clusterid", "nclusterid") for c in "xyzw"},
    **dict.fromkeys(("%laneid", "%warpid", "%nwarpid", "%smid", "%nsmid", "%gridid", "%clock", "%clock_hi",
                     "%lanemask_eq", "%lanemask_le", "%lanemask_lt", "%lanemask_ge", "%lanemask_gt",
                     "%cluster_ctarank", "%cluster_nctarank", "%dynamic_smem_size", "%total_smem_size",
                     "%aggr_smem_size", "%globaltimer_lo", "%globaltimer_hi"), ".u32"),
    **dict.fromkeys(("%reserved_smem_offset_begin", "%reserved_smem_offset_end",
                     "%reserved_smem_offset_cap", "%reserved_smem_offset_0", "%reserved_smem_offset_1"),
                    ".b32"),
    **{f"%envreg{i}": ".b32" for i in range(32)},
    **{f"%pm{i}": ".u32" for i in range(8)},
    **{f"%pm{i}_64": ".u64" for i in range(8)},
    **dict.fromkeys(("%clock64", "%globaltimer", "%current_graph_exec"), ".u64"),
    "%is_explicit_cluster": ".pred",
}
"""The special registers of PTX ISA 10 with their types (a `.x`/`.y`/`.z`/`.w` component for the
vector ones): which names ptxas 13.0 resolves (measured: `%envreg32`, `%pm8` and
`%reserved_smem_offset_2` are unknown symbols to it)."""

#: Vector special registers named whole (`mov.v4.u32 {...}, %tid;`): known symbols, of no scalar type.
SPECIAL_VECTORS: Final[frozenset[str]] = frozenset(
    f"%{r}" for r in ("tid", "ntid", "ctaid", "nctaid", "cluster_ctaid", "cluster_nctaid", "clusterid",
                      "nclusterid"))

#: Identifiers PTX predefines (PTX ISA 4.5, "Predefined identifiers"), known without a declaration.
PREDEFINED_IDENTIFIERS: Final[frozenset[str]] = frozenset({"WARP_SZ"})

# -- declarations ----------------------------------------------------------------------------------

#: State spaces a variable or a parameter is declared in (PTX ISA 5.1).
STATE_SPACES: Final[frozenset[str]] = frozenset({".reg", ".const", ".global", ".local", ".param", ".shared",
                                                 ".tex"})
#: Fundamental and opaque types (PTX ISA 5.2); alternate float formats too, for declarations of them.
TYPES: Final[frozenset[str]] = frozenset(
    f".{k}{w}" for k in "bsu" for w in (8, 16, 32, 64, 128)
) | frozenset({".f16", ".f16x2", ".f32", ".f64", ".bf16", ".bf16x2", ".tf32", ".pred", ".e4m3", ".e5m2",
               ".e4m3x2", ".e5m2x2", ".texref", ".samplerref", ".surfref"})
#: The types a variable, parameter or .section data line may have: not those only instructions take
#: (ptxas 13.0: a syntax error at `.reg .bf16 x;`, `.global .u128 y;`).
VARIABLE_TYPES: Final[frozenset[str]] = TYPES - {".bf16", ".bf16x2", ".tf32", ".s128", ".u128"}
#: Vector declarations (PTX ISA 5.4.2) and their lengths.
VECTORS: Final[dict[str, int]] = {".v2": 2, ".v4": 4, ".v8": 8}

# -- messages --------------------------------------------------------------------------------------

#: ptxas's wording, one template per check; {name} is ptxas's instruction name (the opcode path).
MESSAGES: Final[dict[str, str]] = {
    "unknown-modifier": "Unknown modifier '{mod}'",
    "illegal-modifier": "Illegal modifier '{mod}' for instruction '{name}'",
    "illegal-modifier-with": "Illegal modifier '{mod}' for instruction '{name}' with '{other}'",
    "illegal-modifier-type": "Illegal modifier '{mod}' for instruction '{name}' with type '{other}'",
    "duplicate-sem": "Duplicate {mod} modifier",
    "duplicate-scope": "Multiple scope modifiers specified",
    "duplicate-flag": "Multiple {mod} modifiers specified",
    "duplicate-dim": "Multiple dimension modifiers specified",
    "types": "Unexpected instruction types specified for '{name}'",
    "space-count": "Unexpected number of state spaces specified in instruction '{name}'",
    "space-incorrect": "State space incorrect for instruction '{name}'",
    "space-incorrect-expected": "State space incorrect for instruction '{name}', expected '{other}'",
    # (the tensor load lowered through a `mov` ptxas cannot type: MOV_LOWERING_TARGETS)
    "lowering-mov": "Arguments mismatch for instruction 'mov'",
    # (the tensor load's .cta_group on the store's state spaces: ptxas joins the words, measured)
    "space-incorrect-cta-group": "State space incorrect for instruction '{name}with .cta_group modifier'",
    "space-none": "No state space qualifier expected for instruction '{name}'",
    "space-feature": "State space incorrect for feature '{mod}'",
    "evict-level": "Modifier '{mod}' requires cache level L2 with '{name}' instruction",
    "space-multiple": "Multiple state spaces specified",
    "sem-needs-scope": "Modifier '{mod}' requires scope with '{name}' instruction",
    "scope-needs-sem": "Modifier '{mod}' requires order with '{name}' instruction",
    "combine": "Modifier '{mod}' cannot be combined with modifier '{other}'",
    "space-modifier": "Modifier '{mod}' cannot be applied to '{other}' space for instruction '{name}'",
    "requires-modifier": "Modifier '{mod}' requires modifier '{other}'",
    "scope-required": "Scope modifier required for instruction '{name}'",
    "operands": "Arguments mismatch for instruction '{name}'",
    "result-register": "Result register required for instruction '{name}'",
    "special-register": "Special register argument not allowed for instruction '{name}'",
    "must-be-register": "Argument {index} of instruction '{name}': must be register",
    "sink-parse": "Parsing error near '_': syntax error",
    "sink-discard": "Result discard mode is not allowed for instruction '{name}'",
    "sink-required": "Sink '_' is expected as a destination operand for instruction '{name}' with '{mod}'",
    "address-type": "Illegal to use symbol '{symbol}' of type {type} as address operand. Use integer or "
                    "bit only.",
    "address-immediate": "Immediate addresses allowed only for .local state space",
    "address-space": "Illegal state space for address operand '{symbol}' with instruction '{name}'",
    "address-mismatch": "State space mismatch between instruction and address in instruction '{name}'",
    "imm-positive": "Argument {index} of instruction '{name}' : value '{value}' expected to be a "
                    "non-zero positive",
    "imm-parity": "Argument {index} of instruction '{name}': unexpected value '{value}', expected to be "
                  "0 or 1",
    "imm-multiple": "Argument {index} of instruction '{name}': unexpected value '{value}', expected to "
                    "be multiple of {lo}",
    "imm-range": "Argument {index} of instruction '{name}': value '{value}' out of range, expected to be "
                 "in range [{lo}..{hi}]",
    "imm-exact": "Argument {index} of instruction '{name}': unexpected value '{value}', expected to be {lo}",
    "imm-field-range": "Argument {index} of instruction '{name}': value '{value}' expected to be in range "
                       "[{lo}..{hi}] when {mod} modifier is used.",
    "imm-nonnegative": "Argument {index} of instruction '{name}': unexpected value '{value}', expected to "
                       "be non-negative integer",
    "required-modifier": "{mod} modifier required for instruction '{name}'",
    "required-modifier-with": "{mod} modifier required for instruction '{name}' with {other}",
    "gate-version": "{subject} requires PTX ISA .version {version} or later",
    "gate-target": "{subject} requires .target sm_{sm} or higher",
    "unknown-instruction": "Not a name of any known instruction: '{opcode}'",
    "target-version": "PTX .version {version} does not support .target {target}",
    "missing-version": "Missing .version directive at start of file '{file}'",
    "unknown-symbol": "Unknown symbol '{symbol}'",
    "operand-type": "Illegal operand type to instruction '{name}'",
    "guard-predicate": "Predicate expression expected",
    "gate-unsupported": "{subject} not supported on .target '{target}'",
    "gate-arch": "{subject} cannot be compiled for architecture '{target}'",
    "vector-size": "Argument {index} of instruction '{name}': Argument vector size mismatch",
    "vector-expected": "Vector expected for argument {index}",
    "vector-elements": "Incompatible elements of vector expression",
    "vector-operand": "Vector operand is not allowed for instruction '{name}'",
    "illegal-expression": "Illegal expression '{symbol}'",
    "sink-source": "Sink '_' not allowed as a source operand",
    "vector-illegal-size": "Illegal vector size: {size}",
    "vector-unexpected": "Vector is not expected for argument {index} of instruction '{name}'",
    "vector-infer": "Unable to infer type of vector elements (assuming .b8)",
    "addressing-mode": "Illegal Addressing Mode in instruction '{name}'",
    "address-expected": "Address expected for argument {index} of instruction '{name}'",
    # a modifier word of another instruction (spec.modifiers: the tokens of WORD_MESSAGES)
    "illegal-rounding": "Illegal rounding modifier for instruction '{name}'",
    "illegal-comparison": "Comparison qualifier is not allowed for instruction '{name}'",
    "comparison-type": "Mismatch between instruction type and comparison qualifier",
    "illegal-vector": "Vector qualifier is not allowed for instruction '{name}'",
    "vector-wide": "Vector type too large, exceeds 128 bit limit",
    "vector-length": "Argument vector size mismatch for instruction '{name}'",
    "illegal-reduction": "Illegal reduction operation for instruction '{name}'",
    "illegal-query": "Illegal query modifier for instruction '{name}'",
    "integer-only": "Modifier '{mod}' applies only to {name} integer types",
    "modifier-parse": "Parsing error near '{mod}': syntax error",
    "repeat-class": "{text}",  # spec.modifiers.CLASS_REPEATS: "Multiple rounding modifiers specified" ...
    # an opcode word that runs on past an instruction's name (ptx.validate_split)
    "unknown-field": "Unknown field '{mod}'",
    # st.async, red.async
    "requires-modifier-for": "Modifier '{mod}' requires modifier '{other}' for instruction '{name}'",
    "order-required": "order modifier required for instruction '{name}'",
    "op-required": "Reduction operation is required for instruction '{name}'",
    "op-type": "Incorrect type '{mod}' for operation '{other}' in instruction '{name}'",
    "requires-space": "Modifier '{mod}' requires '{other}' space for instruction '{name}'",
    "illegal-type-dst": "Illegal type for {name} with {other} destination state space",
    "op-multiple": "Multiple instruction post-operation flags set",
    "pred-output": "Predicate output expected for instruction '{name}'",
    "result-vector": "Result vector expected",
    "array-index": "Array indexing on non-array",
    "vector-size-expected": "Vector of size {size} is expected for argument {index} of instruction '{name}'",
    "shape-type": "Incorrect instruction type specified for {name} with shape '{mod}'",
    "requires-modifier-shape": "Modifier '{mod}' require for instruction {name} with shape '{other}'",
    "modifier-shape": "Modifier {mod} not allowed for shape '{other}'",
    "shape-type-count": "Unexpected number of instruction types specified for {name} with shape '{mod}'",
    "matrix-count": "Incorrect no. of matrix: {mod} for {name} with shape '{other}'",
    "format-count": "Unexpected number of 'format conversion' modifiers specified",
    # wgmma.mma_async
    "shape-required": "Shape modifier required for instruction '{name}'",
    "shape-multiple": "Multiple matrix shape modifiers specified",
    "sparsity-multiple": "Multiple sparsity modifiers specified",
    "shape-illegal": "Illegal matrix shape '{mod}' for instruction '{name}'",
    "shape-types": "Illegal instruction types specified for '{name}' with shape '{mod}'",
    "imm-values": "Argument {index} of instruction '{name}': unexpected value '{value}', expected to be "
                  "{lo} or {hi}",
    "bool-op-count": "Unexpected number of operations specified for {name} with shape '{mod}'",
    "bool-op-required": "Boolean operation is required for instruction '{name}'",
    "bool-op-order": "Incorrect operations specified for {name} with shape '{mod}'",
    "wgmma-mixed": "Vector with elements of different types are not allowed in wgmma.mma_async instruction",
}

#: Our stable rule id for each ptxas check (JSON output, docs); all are errors ptxas also raises.
RULE_IDS: Final[dict[str, str]] = {key: f"ptxas-{key}" for key in MESSAGES}

#: The front end's own rule ids, beside the templates above: a module that does not parse, a .version
#: newer than the model, ptxas's rule on the module's address size (its facts: `spec.addressing`).
SYNTAX: Final = "syntax"
VERSION_BEYOND_MODEL: Final = "version-beyond-model"
ADDRESS_SIZE: Final = "ptxas-address-size"
FRONT_END_RULES: Final[tuple[Rule, ...]] = (
    Rule(SYNTAX, "", "syntax error",
         "The module does not parse (ptxas's wording where ptxas has one); the file's judgement stops at "
         "the first syntax error.", "lint"),
    Rule(VERSION_BEYOND_MODEL, "", ".version newer than the model",
         "The module's .version is newer than the last PTX ISA version lint models: its instructions are "
         "judged as under that version.", "lint"),
    Rule(ADDRESS_SIZE, "", "address size",
         "ptxas's rule on the module's .address_size and the width of the addresses an instruction uses "
         "(measured with ptxas 13.0).", "lint"),
)


# -- conditions, gates and constraints -------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class Cond:
    """A predicate over one instruction's facts: the modifiers present (full words like
    `.shared::cluster` and their parts `.shared`, `::cluster`), the operand roles of the matched
    operand list, whether the destination is the sink `_`."""

    has: tuple[str, ...] = ()
    lacks: tuple[str, ...] = ()
    roles: tuple[str, ...] = ()
    no_roles: tuple[str, ...] = ()
    sink: bool | None = None

    def holds(self, mods: frozenset[str], roles: frozenset[str], sink: bool) -> bool:
        return (all(m in mods for m in self.has) and not any(m in mods for m in self.lacks)
                and all(r in roles for r in self.roles) and not any(r in roles for r in self.no_roles)
                and (self.sink is None or self.sink == sink))


ALWAYS: Final = Cond()


@dataclass(frozen=True, slots=True)
class Gate:
    """A feature gate from the PTX ISA / target ISA notes: when `when` holds, the feature needs
    `.version >= version` and `.target >= sm_<sm>`. `subject` is how ptxas names the feature:
    "Feature 'mbarrier.expect_tx'", "Modifier '.relaxed' on 'mbarrier.arrive'", ..."""

    subject: str
    when: Cond
    section: str
    version: Version | None = None
    sm: int | None = None
    late: bool = False
    """ptxas checks it after the destination operand: a fatal error there hides it."""
    targets: tuple[str, ...] = ()
    """The only targets that have the feature (family-specific ones, "sm_100a" ...): on any other,
    ptxas says it is "not supported on .target"."""
    early: bool = False
    """ptxas checks it with the modifiers, before the operands (a mismatch does not hide it)."""
    at_once: bool = False
    """ptxas checks it as it reads the word: a wrong type or a word that ends the line does not
    hide it (fence.proxy's `.async`, measured)."""
    arch_max: int | None = None
    """The newest architecture ptxas compiles the feature for: on a target above sm_<arch_max> it
    also says the feature "cannot be compiled for architecture" (wgmma.*: sm_90, measured)."""


@dataclass(frozen=True, slots=True)
class Constraint:
    """Any other rule: when `when` holds (and, if set, the target is below `below_sm`), ptxas says
    MESSAGES[message] formatted with `mod`/`other`. `rule` names it in our output."""

    when: Cond
    message: str
    section: str
    mod: str = ""
    other: str = ""
    below_sm: int | None = None
    below_version: Version | None = None
    """With `below_sm` and/or `below_version` set, the rule holds only on a target below sm_<below_sm>
    or under a `.version` below `below_version` (either one)."""
    name_suffix: str = ""
    early: bool = False
    """ptxas reports it with the modifiers, before the operands (a mismatch does not hide it)."""
    late: bool = False
    """ptxas checks it after the destination operand: a fatal error there hides it."""


# -- operand slots ---------------------------------------------------------------------------------

SlotKind = Literal["dest", "addr", "value", "tensor", "vector", "pair"]


@dataclass(frozen=True, slots=True)
class ImmCheck:
    """A constraint on an immediate operand, in ptxas's terms: "positive" (> 0), "parity" (0 or 1),
    "multiple" (of `lo`), "range" ([lo, hi]), "nonnegative" (>= 0), "values" (lo or hi),
    "exact" (lo). `view`:
    how ptxas reads the literal before judging and printing it (measured): as written ("s64"), or
    cut to 32 bits, signed or unsigned."""

    kind: Literal["positive", "parity", "multiple", "range", "nonnegative", "values", "exact", "field-range",
                  "fact"]
    lo: int = 0
    hi: int = 0
    view: Literal["s64", "s32", "u32"] = "s64"
    when: str = ""
    """A modifier without which ptxas does not check it (fence.proxy's size: `.acquire`); "": always."""
    printed: Literal["", "s64", "s32", "u32"] = ""
    """How ptxas prints the literal when that differs from `view` (cp.async.bulk.prefetch's size:
    judged as written, printed cut to 32 bits, measured)."""
    targets: tuple[str, ...] = ()
    """The targets on which ptxas checks it (tensormap.replace's ranges); (): every target."""
    fact: str = ""
    """With kind "fact": no error, but the fact for the gates' conditions when lo <= value <= hi
    (tensormap.replace's "with input value >= 13")."""

    def value(self, v: int, view: str = "") -> int:
        view = view or self.view
        if view == "s64":
            return v
        u = v & 0xFFFFFFFF
        return u if view == "u32" or u < 1 << 31 else u - (1 << 32)


@dataclass(frozen=True, slots=True)
class Slot:
    """One operand position. `type` is what a register there must be compatible with
    (TYPE_COMPATIBLE). dest: a register written (ptxas: "Result register required" for anything
    else); `sink_from`: the PTX ISA version from which `_` may stand here (None: never).
    addr: `[...]`; `spaces` the variable spaces it may name (`.shared` for every mbarrier object,
    9.7.13.15.1); `space_message` whether ptxas names the symbol when it is in another space;
    `governed_by` which state-space modifier the variable must match (an index; None: the
    instruction's `address_space` rule); `value_types` registers or immediates of those types ptxas
    also takes there (cp.async.bulk's mbar; "imm": an immediate only). value: a source register or
    integer immediate; `checks` the immediate's constraints."""

    role: str
    kind: SlotKind
    type: str = ".b64"
    imm: bool = True
    sink_from: Version | None = None
    spaces: tuple[str, ...] = (".shared",)
    space_message: bool = True
    governed_by: int | None = None
    value_types: tuple[str, ...] = ()
    checks: tuple[ImmCheck, ...] = ()
    vector1: bool = False
    """Whether ptxas takes a one-element vector `{r}` here for `r` (measured: only arrive counts)."""
    vector_any: bool = False
    """Whether a vector of any length stands here (of more than one element, with `vector1`), judged
    by its elements only ("Incompatible elements of vector expression"; the first element's type
    when their sizes differ): the arrive counts, cp.async.bulk's ctaMask (measured: `{%r1, %r2}` is
    taken as a count, `{%h1}` as a ctaMask)."""
    flag: str | None = None
    """The modifier that brings this optional operand (cp.async.bulk's ctaMask, cache-policy)."""
    loose_types: tuple[str, ...] = ()
    """`value_types` for an operand list ptxas only half-accepts, when none of the optional
    modifiers is written (cp.async.bulk's mbar)."""
    sizes: tuple[tuple[str, int, int], ...] = ()
    """tensor (`[tensorMap, {coords}]`) and vector slots: how many elements the vector holds, as
    (load mode, a, b) for a * dimension + b; the first entry whose load mode is written counts, "" for
    any. `arg` is ptxas's number of the vector in its messages."""
    arg: int = 0
    typed: bool = False
    """A value of the instruction's type (st.async's, red.async's `b`), `TYPE_COMPATIBLE` of it."""
    special_message: bool = False
    """A special register here is "Special register argument not allowed" (and fits); else a
    mismatch (of a typed slot: st.async's value says so, mapa's address does not)."""
    symbol_ok: bool = False
    """A variable's name fits here (mapa's and getctarank's address `a`)."""
    imm_only: bool = False
    """An immediate only (setmaxnreg's count): a register is "Arguments mismatch"."""
    vector_message: bool = False
    """A vector here is ptxas's "Vector operand is not allowed" (and the operand fits)."""
    vector_first_size: bool = False
    """With `vector_message`: a vector whose first register is not of the value's size is a
    mismatch instead (red.async's `b`, measured; a predicate or an immediate first passes)."""
    length: int = 0
    """A vector of that many values (st.async with `.v2`/`.v4`)."""
    exact_space: bool = False
    """An address governed by a state space that is not written is compared with none (not the last
    one written): the tensor load's mbar when the tensorMap operand is no address (measured)."""
    needs_space: bool = False
    """An address judged only where its governing state space is written: with fewer state spaces
    ptxas says nothing of it (the tensor store's and reduction's srcMem, measured)."""
    sized_message: bool = False
    """A vector of another length than `length` is "Vector of size N is expected for argument"
    (and a scalar is; stmatrix's registers, measured)."""
    wide: Slot | None = None
    """A typed slot's rules under a 64-bit instruction type, where they differ (tensormap.replace's
    new value, measured)."""
    vector_refused: bool = False
    """A vector of the slot's type fits, and ptxas says "Vector is not expected for argument N" of
    it wherever the operands fit a list of the instruction: the tensor load's ctaMask (measured)."""
    any_address: bool = False
    """Any `[...]` fits, and is judged no further unless a state space is written
    (fence.proxy.tensormap::generic's address: a register of any type, a variable, an immediate,
    measured)."""


def _addr(role: str = "addr", **kw: object) -> Slot:
    return Slot(role, "addr", **kw)  # type: ignore[arg-type]


ADDR: Final = _addr()
#: 9.7.13.15.13: the sink as destination of mbarrier.arrive needs PTX ISA 7.1; ptxas takes it on
#: arrive_drop and the .expect_tx forms from 7.0 (measured).
STATE_DEST: Final = Slot("state", "dest", ".b64", sink_from=(7, 0))
ARRIVE_DEST: Final = Slot("state", "dest", ".b64", sink_from=(7, 1))
COUNT: Final = Slot("count", "value", ".b32", checks=(ImmCheck("positive"),), vector1=True,
                    vector_any=True)
TX_COUNT: Final = Slot("txCount", "value", ".b32")
WAIT_DEST: Final = Slot("waitComplete", "dest", ".pred")
STATE_SRC: Final = Slot("state", "value", ".b64")
PARITY: Final = Slot("phaseParity", "value", ".b32", checks=(ImmCheck("parity"),))
HINT: Final = Slot("suspendTimeHint", "value", ".b32")
PENDING_DEST: Final = Slot("count", "dest", ".b32")


# -- the instructions ------------------------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class Instr:
    """One instruction as ptxas names it. `path`: the opcode words (`("mbarrier", ".arrive",
    ".expect_tx")`). `types`: the instruction type, exactly one required. `spaces`: the state-space
    modifiers it takes (an empty tuple: none; `generic` whether it may be left out). `sems`/`scopes`:
    the `.sem`/`.scope` it takes (9.7.13.15: "must be specified together"). `flags`: any other modifier
    it takes. `operands`: the operand lists it accepts."""

    path: tuple[str, ...]
    section: str
    operands: tuple[tuple[Slot, ...], ...]
    types: tuple[str, ...] = (".b64",)
    spaces: tuple[str, ...] = (".shared", ".shared::cta")
    generic: bool = True
    sems: tuple[str, ...] = ()
    scopes: tuple[str, ...] = ()
    flags: tuple[str, ...] = ()
    gates: tuple[Gate, ...] = ()
    constraints: tuple[Constraint, ...] = ()
    address_space: int = 0
    """Which of several state-space modifiers ptxas compares with the address's variable: 0 the
    first, 1 the second (the last of two, the first of one; measured: it differs between
    instructions, and of three or four the arrive and wait forms take the second), -1 each."""
    marker: str | None = None
    """A modifier that makes the instruction ours wherever it stands (fence's `.mbarrier_init`)."""
    marker_implied: bool = False
    """Whether the instruction is ours without the marker too, when no other modifier of the
    marker's group (FLAG_GROUPS) is written and its first two state spaces are not one of
    `other_pairs`: ptxas judges the copy with no completion mechanism as this form, and says one is
    required (measured)."""
    space_pairs: tuple[tuple[str, str], ...] = ()
    """For copies: the (destination, source) state-space pairs it takes; exactly two are required."""
    other_pairs: tuple[tuple[str, str], ...] = ()
    """State-space pairs of the instruction's forms that are not ours: ptxas calls the marker
    modifier illegal there instead of the state spaces incorrect."""
    implied_pairs: tuple[tuple[str, str], ...] = ()
    """With `marker_implied`: the only state-space pairs on which the form is ours without its marker
    (the tensor store's: a line of no completion mechanism and `.global.shared::cta`); empty: any
    pair but `other_pairs`."""
    tensor_first: bool = False
    """Whether the form's tensor operand `[tensorMap, {...}]` comes first (the tensor store's). A
    tensor copy with no completion mechanism and state spaces that are no pair of either direction
    (one, none, or a pair neither takes) is the form whose lists have the tensor operand where the
    line has it: first, the store's; else the load's (measured)."""
    leaves_other_pairs: bool = False
    """Whether a line with the marker and one of `other_pairs` is left alone (the tensor store's
    `.bulk_group` with a load's state spaces, which ptxas matches against the load's operand lists:
    not modelled)."""
    missing_pair_incorrect: bool = True
    """Whether ptxas says "State space incorrect" beside "Unexpected number of state spaces" of a
    copy with fewer than two state spaces (not on `cp.async`, measured)."""
    pair_each: bool = False
    """Whether ptxas compares each of the first two state spaces with those of the (one) pair it
    takes and names the one expected (tensormap.cp_fenceproxy, measured)."""
    other_operands: tuple[tuple[Slot, ...], ...] = ()
    """Operand lists of the instruction's forms that are not ours (cp.async.bulk's .bulk_group
    copies): operands that fit one make ptxas report "Arguments mismatch" and go on (measured)."""
    object_rules: bool = True
    """Whether the family-wide MODIFIER_GATES apply (to the instructions
    on an mbarrier object; not to fence or cp.async.bulk)."""
    canonical: tuple[str, ...] = ()
    """Modifiers every legal use needs beyond the opcode (fence.mbarrier_init: .release.cluster)."""
    scope_needs_sem: bool = True
    default_sem: str | None = None
    """The .sem ptxas assumes when none is written, for "requires scope" (fence: .acq_rel)."""
    dims: tuple[str, ...] = ()
    load_modes: tuple[str, ...] = ()
    """The dimension and load-mode modifiers it takes (the tensor copy)."""
    words: tuple[tuple[str, str], ...] = ()
    """Modifier words this instruction takes beyond `MODIFIERS`, with their class: "op" (a reduction
    operation, one required: red.async's `.add`), "vec" (`.v2`, `.v4`), "type", "sem", "cacheop" (a
    prefetch's cache operation, `.L1`, `.L2`, `.tensormap`: one, the last judged, illegal unless a
    flag or the marker), "evict" (prefetch.tensormap's eviction priorities), or "silent" (ptxas says
    nothing of it there). Elsewhere these words are judged by `spec.modifiers`."""
    exact_spaces: bool = False
    """Whether ptxas calls any state space but those of `spaces` "incorrect" (tcgen05.commit's
    `.shared::cta`; elsewhere another sub-qualifier of `.shared` is an illegal modifier)."""
    space_expected: str = ""
    """What ptxas names as expected in "State space incorrect" of a `.shared` space it does not
    take ('.shared::cta' for clusterlaunchcontrol.try_cancel.async, '::cluster' for mapa; measured);
    "": it names nothing."""
    mismatch_words: tuple[str, ...] = ()
    """Types and modifiers ptxas takes for the instruction but for none of our operand lists:
    "Arguments mismatch", which hides the rest of the line (cp.reduce.async.bulk's float types and
    .L2::cache_hint, measured)."""
    other_words: tuple[str, ...] = ()
    """With `marker_implied`: words of the instruction's forms that are not ours (st.async's `.global`,
    `.release`, `.mmio`): a line with one of them and without the marker is left alone."""
    name_types_reduction: bool = True
    """Whether ptxas names the instruction with its type in "Illegal reduction operation" (the
    family's `mbarrier.arrive.b64`; not `red.async`)."""
    subspace_illegal: bool = False
    """Whether ptxas also calls the sub-qualifier of a state space it does not take an illegal
    modifier (`.shared::cta` on cp.async.bulk.prefetch, measured)."""
    optional_type: bool = False
    """Whether the instruction type may be left out (ldmatrix's, measured)."""
    counts_spaces: bool = True
    """Whether ptxas says "Unexpected number of state spaces" of two (not on
    fence.proxy.tensormap::generic, measured)."""
    uncounted_with: str = ""
    """An operand role with which ptxas does not count the state spaces either (fence.proxy with
    the tensor map's operands, measured)."""
    checker: str = ""
    """The name of a checker of its own in `mbarrier.ptx` for what these tables cannot say
    (wgmma.mma_async: three types, a shape, operand lists by both); "": the generic one."""
    any_list: bool = False
    """Whether ptxas matches the operands against every list whatever the words (tensormap.replace,
    measured): one of another word's is a mismatch it goes on after (no mismatch without any of
    `operands_need`)."""
    operands_need: tuple[str, ...] = ()
    load_mode_name: str = ""
    """How ptxas names a load mode the instruction does not take, where not by the word itself
    (tensormap.replace: '.tile', measured)."""
    vector_lengths: tuple[int, ...] | None = VECTOR_LENGTHS
    """The vector lengths it takes in its operands (None: any, wgmma.mma_async's; measured)."""
    unaddressed: tuple[tuple[Cond, tuple[Slot, ...]], ...] = ()
    """The tensor copy's operand lists ptxas matches when the tensor operand is no `[tensorMap,
    {...}]` address, each with the modifiers it needs (measured): ptxas then says "Vector expected"
    and "Illegal Addressing Mode", and wants an address in each `addr` slot. ptxas also matches
    `[tensorMap, x]` read as the two operands `tensorMap, x` against them, before the usual lists:
    a tensor map of the coordinates' type (32 bits) with `x` in the `mbar` slot fits, a vector
    there being "Vector operand is not allowed" (measured with ptxas 13.0 on 7.0/sm_80 to
    8.7/sm_120a; `ptx.validate_tensor_flat`)."""

    @property
    def name(self) -> str:
        return "".join(self.path)


def _feature(what: str) -> str:
    return f"Feature '{what}'"


def load_mode_gates(section: str) -> tuple[Gate, ...]:
    """The gates of the load mode written last (LOAD_MODE_GATES)."""
    return tuple(Gate(_feature(m), Cond(has=(m,)), section, version=v, sm=sm,
                      targets=_SM100_FAMILY if family else ())
                 for m, (v, sm, family) in LOAD_MODE_GATES.items())


def _modifier_on(mod: str, name: str) -> str:
    return f"Modifier '{mod}' on '{name}'"


def _intro(name: str, section: str = "9.7.13.15") -> Gate:
    """Target ISA notes: every instruction of the family "Requires sm_80 or higher"."""
    return Gate(_feature(name), ALWAYS, section, sm=80)


def _mbarrier(*gates: Gate) -> tuple[Gate, ...]:
    """The gates of an `mbarrier.*` instruction: its own and the .shared::cluster one."""
    return (*gates, _SHARED_CLUSTER)


#: Gates of the state-space sub-qualifiers: ptxas applies them to every instruction of the family
#: that takes a state space, whether or not it takes the sub-qualifier (PTX ISA notes, 9.7.13.15.9-16).
MODIFIER_GATES: Final[tuple[Gate, ...]] = (
    Gate(_feature("::cta"), Cond(has=("::cta",)), "9.7.13.15.9", version=(7, 8)),
    Gate(_feature("::cluster"), Cond(has=("::cluster",)), "9.7.13.15.13", version=(7, 8), sm=90),
)
#: ... and this one to the `mbarrier.*` instructions only (not to cp.async.mbarrier.arrive).
_SHARED_CLUSTER = Gate(_feature(".shared::cluster"), Cond(has=(".shared::cluster",)), "9.7.13.15.13",
                       version=(8, 0), sm=90)

#: 9.7.13.15.13/14: `.noComplete` goes with `.shared{::cta}` only; ptxas says so on every `mbarrier.*`
#: instruction that takes a state space, even those that do not take the word (`mbarrier.init`,
#: `try_wait`), but not on `mbarrier.pending_count` (no state space) nor on
#: `cp.async.mbarrier.arrive` (measured).
_NO_COMPLETE_CLUSTER = Constraint(Cond(has=(".noComplete", ".shared::cluster")), "combine", "9.7.13.15.13",
                                  mod=".shared::cluster", other=".noComplete")

#: ... and with `.release.cta` only, which ptxas checks on the arrive forms (measured).
_NO_COMPLETE_ORDER = tuple(
    Constraint(Cond(has=(".noComplete", m)), "combine", "9.7.13.15.13", mod=m, other=".noComplete")
    for m in (".cluster", ".gpu", ".sys", ".relaxed", ".acquire", ".acq_rel", ".sc"))

#: The gates ptxas checks of a word that the instruction does not take, whatever the instruction
#: (`spec.modifiers.WORD_GATES`, measured: `barrier.cluster.wait.wait` at 7.0 says "Modifier '.wait'
#: requires PTX ISA .version 7.8 or later"), some as it reads the word, the others once the
#: operands match.
OTHER_WORD_GATES: Final[tuple[Gate, ...]] = tuple(
    Gate(subject.format(mod=w), Cond(has=("word:" + w,)), "", version=v, sm=sm, at_once=at_once)
    for w, gates in WORD_GATES.items() for subject, v, sm, at_once in gates)

#: Modifiers whose repetition ptxas does not report (measured).
UNCOUNTED_REPEATS: Final[tuple[str, ...]] = (".sync",)

# Gates shared by several instructions (PTX ISA notes of 9.7.13.15.9-16).
_SCOPES = Gate(_feature("scopes on mbarrier operations"), Cond(has=("scope",)), "9.7.13.15.13",
               version=(8, 0), late=True)
_CLUSTER_SCOPE = Gate(_feature(".cluster scope"), Cond(has=(".cluster",)), "9.7.13.15.13",
                      version=(7, 8), sm=90, late=True)


def _sem_gates(name: str, sems: tuple[str, ...]) -> tuple[Gate, ...]:
    """`.release`/`.acquire` need 8.0; `.relaxed` needs 8.6 and sm_90 (9.7.13.15.13/16)."""
    gates = [Gate(_modifier_on(s, name), Cond(has=(s,)), "9.7.13.15.13", version=(8, 0))
             for s in sems if s != ".relaxed"]
    if ".relaxed" in sems:
        gates.append(Gate(_modifier_on(".relaxed", name), Cond(has=(".relaxed",)), "9.7.13.15.13",
                          version=(8, 6), sm=90))
    return (*gates, _SCOPES, _CLUSTER_SCOPE)


def _arrive(op: str, section: str) -> tuple[Instr, Instr]:
    """mbarrier.arrive / mbarrier.arrive_drop and their .expect_tx forms (9.7.13.15.13/14)."""
    name = f"mbarrier.{op}"
    sems = (".release", ".relaxed")
    spaces = (".shared", ".shared::cta", ".shared::cluster")
    dest = ARRIVE_DEST if op == "arrive" else STATE_DEST
    sink_cluster = Constraint(Cond(has=(".shared::cluster",), sink=False), "sink-required", section,
                              mod=".shared::cluster")
    plain = Instr(
        ("mbarrier", f".{op}"), section,
        operands=((dest, ADDR), (dest, ADDR, COUNT)),
        spaces=spaces, sems=sems, scopes=(".cta", ".cluster"), flags=(".noComplete",), address_space=1,
        gates=_mbarrier(
            _intro(name), *_sem_gates(name, sems),
            Gate(_feature(f"{name} with count argument and without '.noComplete' modifier"),
                 Cond(roles=("count",), lacks=(".noComplete",)), section, version=(7, 8), sm=90),
        ),
        constraints=(
            _NO_COMPLETE_CLUSTER, sink_cluster,
            Constraint(Cond(has=(".noComplete",), no_roles=("count",)), "illegal-modifier", section,
                       mod=".noComplete", name_suffix=" without count argument"),
            # 9.7.13.15.13: "for sm_8x, when the argument count is specified, the modifier
            # .noComplete is required"; and (PTX ISA notes) count without .noComplete came with PTX
            # ISA 7.8: ptxas requires .noComplete under an older .version on any target (measured).
            Constraint(Cond(roles=("count",), lacks=(".noComplete",)), "required-modifier", section,
                       mod=".noComplete", below_sm=90, below_version=(7, 8),
                       name_suffix=" with count argument"),
            *_NO_COMPLETE_ORDER,
        ),
    )
    expect = Instr(
        ("mbarrier", f".{op}", ".expect_tx"), section,
        operands=((STATE_DEST, ADDR, TX_COUNT),),
        spaces=spaces, sems=sems, scopes=(".cta", ".cluster"), address_space=1,
        gates=_mbarrier(
            Gate(_feature(f"{name}.expect_tx"), ALWAYS, section, version=(8, 0), sm=90),
            *_sem_gates(f"{name}.expect_tx", sems),
        ),
        constraints=(_NO_COMPLETE_CLUSTER, sink_cluster, *_NO_COMPLETE_ORDER),
    )
    return plain, expect


def _tx(op: str, section: str) -> Instr:
    """mbarrier.expect_tx / mbarrier.complete_tx (9.7.13.15.11/12)."""
    name = f"mbarrier.{op}"
    return Instr(
        ("mbarrier", f".{op}"), section,
        operands=((ADDR, TX_COUNT),),
        spaces=(".shared", ".shared::cta", ".shared::cluster"), sems=(".relaxed",),
        scopes=(".cta", ".cluster"),
        gates=_mbarrier(Gate(_feature(name), ALWAYS, section, version=(8, 0), sm=90), _SCOPES,
               _CLUSTER_SCOPE),
        constraints=(_NO_COMPLETE_CLUSTER,),
    )


def _wait(op: str, parity: bool) -> Instr:
    """mbarrier.test_wait / mbarrier.try_wait, with or without .parity (9.7.13.15.16)."""
    section = "9.7.13.15.16"
    path = ("mbarrier", f".{op}", ".parity") if parity else ("mbarrier", f".{op}")
    name = "".join(path)
    third = PARITY if parity else STATE_SRC
    lists = ((WAIT_DEST, ADDR, third), (WAIT_DEST, ADDR, third, HINT)) if op == "try_wait" else \
        ((WAIT_DEST, ADDR, third),)
    sems = (".acquire", ".relaxed")
    if op == "try_wait":
        intro = Gate(_feature(name), ALWAYS, section, version=(7, 8), sm=90)
    elif parity:
        intro = Gate(_feature(name), ALWAYS, section, version=(7, 1), sm=80)
    else:
        intro = _intro(name)
    return Instr(
        path, section, operands=lists, sems=sems, scopes=(".cta", ".cluster"), address_space=1,
        gates=_mbarrier(intro, *_sem_gates(name, sems)), constraints=(_NO_COMPLETE_CLUSTER,),
    )


_ARRIVE, _ARRIVE_EXPECT = _arrive("arrive", "9.7.13.15.13")
_DROP, _DROP_EXPECT = _arrive("arrive_drop", "9.7.13.15.14")

_FENCE_SEMS = (".sc", ".acq_rel", ".release", ".acquire")
_FENCE_SECTION = "9.7.13.4"  # membar/fence (not in shared/spec; number from the PTX ISA 8.x contents)


def _fence_mbarrier_init() -> Instr:
    """fence.mbarrier_init.release.cluster (PTX ISA 9.7.13.4, membar/fence): only .release and
    .cluster may go with .mbarrier_init; ptxas judges each missing or other .sem/.scope."""
    init = ".mbarrier_init"
    others = (*(s for s in (*_FENCE_SEMS, ".relaxed") if s != ".release"), ".cta", ".gpu", ".sys")
    return Instr(
        ("fence",), _FENCE_SECTION, operands=((),), types=(), spaces=(), sems=_FENCE_SEMS,
        scopes=(".cta", ".cluster", ".gpu", ".sys"), flags=(init,), marker=init,
        scope_needs_sem=False, default_sem=".acq_rel", canonical=(".release", ".cluster"),
        object_rules=False,
        gates=(
            Gate(_feature(".op_restrict"), ALWAYS, _FENCE_SECTION, version=(8, 0), sm=90),
            Gate(f"Modifier '{init}'", ALWAYS, _FENCE_SECTION, version=(8, 0), sm=90),
            Gate(_feature(".cluster scope"), Cond(has=(".cluster",)), _FENCE_SECTION, version=(7, 8),
                 sm=90),
        ),
        constraints=(
            *(Constraint(Cond(has=(o,)), "combine", _FENCE_SECTION, mod=init, other=o) for o in others),
            Constraint(Cond(lacks=("sem",)), "requires-modifier", _FENCE_SECTION, mod=init,
                       other="order"),
            Constraint(Cond(lacks=("sem",)), "combine", _FENCE_SECTION, mod=init, other=""),
            Constraint(Cond(lacks=("scope",)), "requires-modifier", _FENCE_SECTION, mod=init,
                       other="scope"),
            Constraint(Cond(lacks=("scope",)), "combine", _FENCE_SECTION, mod=init, other=""),
            Constraint(Cond(lacks=("scope",)), "scope-required", _FENCE_SECTION),
        ),
    )


_BULK = "cp.async.bulk"
_BYTES = ".mbarrier::complete_tx::bytes"
_MC, _L2 = ".multicast::cluster", ".L2::cache_hint"
#: A copy with no completion mechanism (neither `.mbarrier::complete_tx::bytes` nor `.bulk_group`):
#: ptxas says one is required where the state spaces are a pair it takes, and judges the rest of
#: the line as usual (measured).
_NO_COMPLETION = Constraint(Cond(has=("pair",), lacks=(_BYTES, ".bulk_group", "word:.mbarrier")),
                            "required-modifier", _BULK,
                            mod=".completion_mechanism")


def _bulk_copy() -> Instr:
    """cp.async.bulk.dst.src.mbarrier::complete_tx::bytes{.multicast::cluster}{.L2::cache_hint}
    [dstMem], [srcMem], size, [mbar] {, ctaMask} {, cache-policy} (PTX ISA "cp.async.bulk", the copy
    that signals complete-tx on an mbarrier, 9.7.13.15.5.2). Only the forms with the mbarrier
    completion mechanism are ours; ptxas derives the optional operands from the modifiers."""
    dst = _addr("dstMem", space_message=False, governed_by=0)
    src = _addr("srcMem", space_message=False, governed_by=1)
    size = Slot("size", "value", ".b32", checks=(ImmCheck("multiple", 16, view="u32"),
                                                 ImmCheck("range", 0, 1048560, view="s32")))
    # The mbar's variable must be in the destination's state space. In the four-operand form
    # ptxas also takes a 64-bit or 16-bit register or an immediate there (measured).
    mbar = _addr("mbar", space_message=False, governed_by=0)
    mbar5 = _addr("mbar", space_message=False, governed_by=0, loose_types=("imm",))
    loose = _addr("mbar", space_message=False, governed_by=0, value_types=(".b64", ".b16"))
    mask = Slot("ctaMask", "value", ".b16", flag=_MC, vector_any=True)
    policy = Slot("cachePolicy", "value", ".b64", flag=_L2)
    # With .L2::cache_hint and a 64-bit register or an immediate (no address) as mbar, ptxas takes
    # a 16-bit register or an immediate as the fifth operand, never a 64-bit cache-policy register
    # (measured; it looks like the list of the .cp_mask copies, cache-policy and byteMask).
    mbar_value = Slot("mbar", "value", ".b64")
    byte_mask = Slot("byteMask", "value", ".b16", flag=_L2)
    base = (dst, src, size, mbar)
    other_pairs = ((".global", ".shared::cta"),)  # the .bulk_group copy's pair
    pairs = ((".shared::cluster", ".global"), (".shared::cta", ".global"),
             (".shared::cluster", ".shared::cta"))
    takes = {pairs[0]: (_MC, _L2), pairs[1]: (_L2,), pairs[2]: (), other_pairs[0]: (_L2,)}
    return Instr(
        ("cp", ".async", ".bulk"), _BULK, types=(), spaces=(), space_pairs=pairs,
        scopes=(".cta", ".cluster", ".gpu", ".sys"), scope_needs_sem=False,
        flags=(_BYTES, _MC, _L2), marker=_BYTES, marker_implied=True, object_rules=False,
        operands=((dst, src, size, loose), (dst, src, size, mbar5, mask), (*base, policy),
                  (dst, src, size, mbar_value, byte_mask), (*base, mask, policy)),
        other_pairs=other_pairs,
        other_operands=((dst, src, size), (dst, src, size, policy)),
        constraints=(
            *(Constraint(Cond(has=(m, "".join(p))), "illegal-modifier-with", _BULK, mod=m,
                         other="".join(p))
              for p in (*pairs, *other_pairs) for m in (_MC, _L2) if m not in takes[p]),
            _NO_COMPLETION,
        ),
        gates=(
            Gate(_feature(_BULK), ALWAYS, _BULK, version=(8, 0), sm=90),
            Gate(_feature(_BYTES), Cond(has=(_BYTES,)), _BULK, version=(8, 0), sm=90),
            Gate(f"Modifier '{_MC}'", Cond(has=(_MC,)), _BULK, version=(8, 0), sm=90),
            Gate(f"Modifier '{_L2}'", Cond(has=(_L2,)), _BULK, version=(7, 4), late=True),
            Gate(_feature(".cluster scope"), Cond(has=(".cluster",)), _BULK, version=(7, 8), sm=90),
            Gate(_feature(f"{_BULK} with destination state space as .shared::cta"),
                 Cond(has=("dst:.shared::cta",)), _BULK, version=(8, 6)),
        ),
    )


_TENSOR = "cp.async.bulk.tensor"
_CTA_GROUPS = (".cta_group::1", ".cta_group::2")
#: The family-specific targets that have .cta_group, .tile::gather4 and .im2col::w into
#: .shared::cluster, .im2col::w::128 (measured: every other target of TARGET_MIN_VERSION is refused).
_SM100_FAMILY = ("sm_100a", "sm_100f", "sm_103a", "sm_103f", "sm_110a", "sm_110f")


#: Load modes that need 3d to 5d, and those that need exactly 2d (PTX ISA 9.7.9.25.5.2; ptxas judges
#: them on every tensor copy, whether it takes the mode or not: measured).
_WIDE_MODES = (*IM2COL_MODES, ".im2col_no_offs")
_ROW_MODES = (".tile::gather4", ".tile::scatter4")


def tensor_mode_dims(name: str, modes: tuple[str, ...] = (*_WIDE_MODES, *_ROW_MODES),
                     need: tuple[str, ...] = ("pair",)) -> tuple[Constraint, ...]:
    """A load mode of `modes` with a dimension it does not take ("Modifier '.2d' cannot be combined
    with modifier '.im2col'"), or with none ("Modifier ''"), on the tensor copy `name`, where the
    facts `need` hold: a copy of two state spaces judges it only where they are a pair it takes
    (measured: the prefetch, of one, always, and checks only its own modes)."""
    return (*(Constraint(Cond(has=(m, d, *need)), "combine", name, mod=d, other=m, early=True)
              for d, n in DIMENSIONS.items() for m in modes
              if (m in _WIDE_MODES and n < 3) or (m in _ROW_MODES and n != 2)),
            *(Constraint(Cond(has=(m, *need), lacks=("dim",)), "combine", name, other=m, early=True)
              for m in modes))


def tensor_map(arg: int, governed_by: int, rows: tuple[str, ...] = _ROW_MODES) -> Slot:
    """`[tensorMap, {coords}]`: a .global variable or any register, and a vector of .dim 32-bit
    coordinates (5 for the modes of `rows`, whether the copy takes them or not: measured); `arg` is
    ptxas's number of the vector."""
    return Slot("tensorMap", "tensor", ".b32", spaces=(".global",), space_message=False,
                governed_by=governed_by, sizes=(*((m, 0, 5) for m in rows), ("", 1, 0)), arg=arg)


def tensor_im2col(arg: int) -> Slot:
    """The im2col vector of 16-bit offsets: dim - 2 for .im2col, 2 for .im2col::w{::128}."""
    return Slot("im2colInfo", "vector", ".b16", flag="im2col", arg=arg,
                sizes=((".im2col", 1, -2), (".im2col::w", 0, 2), (".im2col::w::128", 0, 2)))


_WITH_DST = "{} with destination state space as {}"
#: The gates of cp.async.bulk.tensor, the load and the store (one instruction to ptxas: measured).
TENSOR_GATES: Final[tuple[Gate, ...]] = (
    Gate(_feature(_TENSOR), ALWAYS, _TENSOR, version=(8, 0), sm=90),
    # of the completion mechanisms and the load modes, the one written last (measured)
    *(Gate(_feature(m), Cond(has=(m,)), _TENSOR, version=(8, 0), sm=90) for m in (_BYTES, ".bulk_group")),
    *load_mode_gates(_TENSOR),
    Gate(f"Modifier '{_MC}'", Cond(has=(_MC,)), _TENSOR, version=(8, 0), sm=90),
    Gate(f"Modifier '{_L2}'", Cond(has=(_L2,)), _TENSOR, version=(7, 4), sm=80, late=True),
    Gate(_feature(_WITH_DST.format(_TENSOR, ".shared::cta")), Cond(has=("dst:.shared::cta",)), _TENSOR,
         version=(8, 6)),
    # (the modifier's own gate only where the state spaces are a pair the copy takes: measured)
    *(g for c in _CTA_GROUPS for g in (
        Gate(_modifier_on(c, _TENSOR), Cond(has=(c, "pair")), _TENSOR, version=(8, 6)),
        Gate(_feature(c), Cond(has=(c,)), _TENSOR, version=(8, 6), targets=_SM100_FAMILY))),
    # (these read the first state space as the destination even where it is the only one, unlike
    # the copy's own gate above: measured)
    *(g for m in (".tile::gather4", ".im2col::w") for g in (
        Gate(_feature(_WITH_DST.format(m, ".shared::cluster")), Cond(has=(m, "first:.shared::cluster")),
             _TENSOR, targets=_SM100_FAMILY),
        Gate(_feature(_WITH_DST.format(m, ".shared::cta")), Cond(has=(m, "first:.shared::cta")), _TENSOR,
             sm=100))),
)


#: On these targets ptxas lowers a tensor load into `.shared::cluster` whose tensor map is a 32-bit
#: register through a `mov` it cannot type: "Arguments mismatch for instruction 'mov'", said only
#: while neither that line nor one before it has an error (measured with ptxas 13.0 on sm_120,
#: sm_120a, sm_120f, sm_121, sm_121a, sm_121f; not on sm_90 to sm_110; not into `.shared::cta`,
#: nor with a 64-bit register).
MOV_LOWERING_TARGETS: Final[tuple[str, ...]] = tuple(t for t in TARGET_MIN_VERSION
                                                     if t.startswith(("sm_120", "sm_121")))


def _tensor_copy() -> Instr:
    """cp.async.bulk.tensor.dim.dst.src{.load_mode}.mbarrier::complete_tx::bytes{.multicast::cluster}
    {.cta_group}{.L2::cache_hint} [dstMem], [tensorMap, {coords}], [mbar]{, im2colInfo}{, ctaMask}
    {, cache-policy} (PTX ISA 9.7.9.25.5.2): the TMA tensor load, which completes on an mbarrier.
    Modifiers in any order; the coordinate vector holds .dim elements (5 for .tile::gather4), the
    im2col vector dim - 2 (2 for .im2col::w). ptxas accepts any register, or a bare symbol, as
    dstMem and mbar; a .global variable or any register as tensorMap (measured)."""
    dst = _addr("dstMem", space_message=False, governed_by=0)
    tmap = tensor_map(2, 1)
    mbar = _addr("mbar", space_message=False, governed_by=0)
    im2col = tensor_im2col(4)
    mask = Slot("ctaMask", "value", ".b16", flag=_MC, vector_refused=True)
    policy = Slot("cachePolicy", "value", ".b64", flag=_L2)
    # tensorMap no address (a 32-bit scalar or vector there): ptxas judges dstMem and mbar as
    # addresses against the two state spaces in order; no list with .multicast::cluster or .cta_group
    coords = Slot("coords", "vector", ".b32", arg=2)
    plain = (_addr("dstMem", space_message=False, governed_by=0), coords,
             _addr("mbar", space_message=False, governed_by=1, exact_space=True))
    no_list = (_MC, *_CTA_GROUPS)
    unaddressed = ((Cond(lacks=(*no_list, _L2)), plain),
                   (Cond(lacks=no_list), (*plain, Slot("cachePolicy", "value", ".b64"))))
    lists = tuple((dst, tmap, mbar, *extra) for extra in (
        (), (im2col,), (mask,), (policy,), (im2col, mask), (im2col, policy), (mask, policy),
        (im2col, mask, policy)))
    pairs = ((".shared::cluster", ".global"), (".shared::cta", ".global"))
    modes = (".tile", ".im2col", ".tile::gather4", ".im2col::w", ".im2col::w::128")
    return Instr(
        ("cp", ".async", ".bulk", ".tensor"), "9.7.9.25.5.2", types=(), spaces=(), space_pairs=pairs,
        flags=(_BYTES, _MC, _L2, *_CTA_GROUPS), marker=_BYTES, marker_implied=True, object_rules=False,
        dims=tuple(DIMENSIONS), load_modes=modes, operands=lists, unaddressed=unaddressed,
        vector_lengths=TENSOR_VECTOR_LENGTHS,
        other_pairs=((".global", ".shared::cta"),),  # the store direction (.bulk_group)
        constraints=(
            # (ptxas says so only when the state spaces are a pair it takes: the fact "pair")
            Constraint(Cond(has=("pair",), lacks=("dim",)), "required-modifier", _TENSOR, mod=".dim"),
            *tensor_mode_dims(_TENSOR),
            Constraint(Cond(has=(_MC, ".shared::cta.global")), "illegal-modifier-with", _TENSOR, mod=_MC,
                       other=".shared::cta.global"),
            _NO_COMPLETION,
            # .cta_group with no completion mechanism: ptxas names the missing one as '' (measured)
            *(Constraint(Cond(has=(c,), lacks=(_BYTES, ".bulk_group")), "combine", _TENSOR, other=c)
              for c in _CTA_GROUPS),
        ),
        gates=TENSOR_GATES,
    )


_ASYNC_TYPES = (".u32", ".b32", ".b64", ".u64", ".s32", ".s64", ".f32", ".f64")
#: red.async's operations and the types each takes (PTX ISA 9.7.12.7, measured with ptxas 13.0)
_RED_ASYNC_OPS: Final[dict[str, tuple[str, ...]]] = {
    ".add": (".u32", ".s32", ".u64", ".s64"), ".inc": (".u32",), ".dec": (".u32",), ".min": (".u32", ".s32"),
    ".max": (".u32", ".s32"), ".and": (".b32",), ".or": (".b32",), ".xor": (".b32",),
}


def _async_store(op: str) -> Instr:
    """st.async / red.async with .mbarrier::complete_tx::bytes (PTX ISA 9.7.9.12, 9.7.12.7): a store or
    a reduction into another CTA's shared memory that completes a transaction on that CTA's
    mbarrier: `st.async{.weak}{.shared::cluster}.mbarrier::complete_tx::bytes{.v2,.v4}.type [a], b,
    [mbar]`, `red.async.relaxed.cluster{.shared::cluster}.mbarrier::complete_tx::bytes.op.type [a], b,
    [mbar]`. Ours only with `.mbarrier::complete_tx::bytes` (`marker`): the forms without it
    (`.release`, `.global`, PTX ISA 8.7 and sm_100) complete on no mbarrier, and ptxas judges a
    line without it by what earlier lines of the module said (measured: it reports "requires
    modifier '.completion_mechanism'" once per module), which lint does not model."""
    name = f"{op}.async"
    red = op == "red"
    a = _addr("a", space_message=False, governed_by=0)
    mbar = _addr("mbar", space_message=False, governed_by=0)
    # ptxas takes any register of the type's size there, a float too, or any immediate (measured)
    value = Slot("b", "value", typed=True, vector1=not red, vector_message=red, vector_first_size=red,
                 special_message=True)
    alone = Slot("b", "value", typed=True, vector_message=True, vector_first_size=red,
                 special_message=True)  # (no mbarrier)
    # .v2/.v4: a vector of that many values (ptxas takes a scalar there too; a vector of another
    # length is "Argument vector size mismatch", measured)
    vectors = [] if red else [
        (a, Slot("b", "value", typed=True, length=n, flag=f".v{n}", special_message=True), mbar)
        for n in (2, 4)]
    lists: list[tuple[Slot, ...]] = [*vectors, (a, alone), (a, value, mbar)]
    section = "9.7.12.7" if red else "9.7.9.12"
    pair = "st.async/red.async with {} "
    gates = [Gate(_feature(name), ALWAYS, section, version=(8, 1), sm=90),
             Gate(_feature(_BYTES), Cond(has=(_BYTES,)), section, version=(8, 0), sm=90),  # (judged last)
             Gate(_feature(".cluster scope"), Cond(has=(".cluster",)), section, version=(7, 8), sm=90),
             Gate(_feature(pair.format(".global") + "state space"), Cond(has=(".global",)), section,
                  version=(8, 7), sm=100),
             Gate(_feature(pair.format(".release") + "modifier"), Cond(has=(".release",)), section,
                  version=(8, 7), sm=100),
             Gate(_feature(pair.format(".mmio") + "modifier"), Cond(has=(".mmio",)), section,
                  version=(8, 7), sm=100)]
    # the scopes and the state space of the forms without an mbarrier, named by the completion
    # mechanism written last; of another one, also the mbarrier form's (measured)
    constraints = [
        *(Constraint(Cond(has=(m, w)), "illegal-modifier-with", section, mod=m.removeprefix("word:"),
                     other=w.removeprefix("space:"))
          for m in (_BYTES, "word:.mbarrier") for w in (".gpu", ".sys", ".global")),
        *(Constraint(Cond(has=("word:.mbarrier", w)), "illegal-modifier-with", section, mod=".mbarrier",
                     other=w.removeprefix("space:")) for w in ("space:.shared::cluster", ".cluster")),
        *(Constraint(Cond(has=(w, ".shared")), "requires-space", section, mod=w, other=".global")
          for w in (".gpu", ".sys")),
        *(Constraint(Cond(has=(".cluster", w)), "requires-space", section, mod=".cluster",
                     other=".shared::cluster") for w in (".shared::cta", "space:.shared", ".global")),
        # .global where its gate is closed is also a wrong state space
        Constraint(Cond(has=(".global",)), "space-incorrect", section, below_sm=100,
                   below_version=(8, 7)),
        # .release goes with .gpu/.sys and .global only (the forms without an mbarrier)
        *(Constraint(Cond(has=(".release", w)), "illegal-modifier-with", section,
                     mod=w.removeprefix("space:"), other=".release")
          for w in (".shared::cluster", "space:.shared", ".shared::cta", ".cta", ".cluster")),
        # .release where its gate is closed (below sm_100 or PTX ISA 8.7) is also illegal
        Constraint(Cond(has=(".release",)), "illegal-modifier", section, mod=".release", below_sm=100,
                   below_version=(8, 7)),
    ]
    if red:
        constraints += [
            # (.exch and .cas, operations of other reductions, count as one: measured)
            Constraint(Cond(lacks=("op", "word:.exch", "word:.cas")), "op-required", section),
            Constraint(Cond(lacks=("sem",)), "order-required", section),
            *(Constraint(Cond(has=(o, t)), "op-type", section, mod=t, other=o)
              for o, ok in _RED_ASYNC_OPS.items() for t in _ASYNC_TYPES[:6] if t not in ok)]
    else:
        constraints += [*(Constraint(Cond(has=(".weak", c)), "combine", section, mod=".weak", other=c)
                          for c in (".cluster", ".gpu", ".sys")),
                        # the form without an mbarrier operand takes no vector
                        Constraint(Cond(has=("vec",), no_roles=("mbar",)), "illegal-vector", section),
                        *(Constraint(Cond(has=(".v4", t)), "vector-wide", section, mod=".v4")
                          for t in (".b64", ".u64", ".s64", ".f64"))]
    return Instr(
        (op, ".async"), section, operands=tuple(lists),
        types=_ASYNC_TYPES[:6] if red else _ASYNC_TYPES,
        spaces=(".shared::cluster", ".shared", ".shared::cta", ".global"),
        sems=(".relaxed", ".release") if red else (".weak", ".release"), scopes=(".cluster", ".gpu", ".sys"),
        scope_needs_sem=False,
        flags=(_BYTES,), marker=_BYTES, name_types_reduction=not red,
        # (ptxas takes .weak for a .sem on st.async: "Duplicate .release modifier" after it, measured)
        words=tuple((o, "op") for o in _RED_ASYNC_OPS) if red else ((".v2", "vec"), (".v4", "vec"),
                                                                   (".weak", "sem")),
        gates=tuple(gates), constraints=tuple(constraints),
    )


_REDUCE = "cp.reduce.async.bulk"
#: cp.reduce.async.bulk's integer operations and the types each takes in any of its forms (PTX ISA
#: 9.7.9.25.4.2, measured with ptxas 13.0: "Incorrect type" otherwise); into .shared::cluster a 64-bit
#: type but .add.u64 is refused besides.
_REDUCE_OPS: Final[dict[str, tuple[str, ...]]] = {
    ".add": (".u32", ".s32", ".u64"), ".and": (".b32", ".b64"), ".or": (".b32", ".b64"),
    ".xor": (".b32", ".b64"), ".inc": (".u32",), ".dec": (".u32",), ".min": (".u32", ".s32", ".u64", ".s64"),
    ".max": (".u32", ".s32", ".u64", ".s64"),
}


def _reduce_bulk() -> Instr:
    """cp.reduce.async.bulk.shared::cluster.shared::cta.mbarrier::complete_tx::bytes.redOp.type [dstMem],
    [srcMem], size, [mbar] (PTX ISA 9.7.9.25.4.2): the bulk reduction into another CTA's shared
    memory, which completes a transaction on that CTA's mbarrier. The `.bulk_group` forms (a .global
    destination) take no mbarrier and are not ours."""
    dst = _addr("dstMem", space_message=False, governed_by=0)
    src = _addr("srcMem", space_message=False, governed_by=1)
    size = Slot("size", "value", ".b32", checks=(ImmCheck("multiple", 16, view="u32"),
                                                 ImmCheck("range", 0, 1048560, view="s32")))
    # (ptxas also takes a 64-bit register or an immediate as mbar, measured)
    mbar = _addr("mbar", space_message=False, governed_by=0, value_types=(".b64",))
    pair = "".join(p := (".shared::cluster", ".shared::cta"))
    ints = (".u32", ".b32", ".s32", ".b64", ".u64", ".s64")
    return Instr(
        ("cp", ".reduce", ".async", ".bulk"), "9.7.9.25.4.2", types=(*ints, ".f32", ".f64", ".f16", ".bf16"),
        # (the float types and .L2::cache_hint are the .global forms': no list of ours, a mismatch)
        mismatch_words=(".f32", ".f64", ".f16", ".bf16", _L2), spaces=(), space_pairs=(p,),
        other_pairs=((".global", ".shared::cta"),), flags=(_BYTES,), marker=_BYTES, object_rules=False,
        # (.pred: ptxas takes it silently there, measured)
        words=((".bf16", "type"), (".pred", "silent"), *((o, "op") for o in _REDUCE_OPS)),
        operands=((dst, src, size, mbar),), other_operands=((dst, src, size),),
        constraints=(
            Constraint(Cond(lacks=("op",)), "op-required", _REDUCE),
            *(Constraint(Cond(has=(o, t)), "op-type", _REDUCE, mod=t, other=o)
              for o, ok in _REDUCE_OPS.items() for t in ints if t not in ok),
            # the 64-bit types but .add.u64: ptxas names the instruction with its state spaces and type
            *(Constraint(Cond(has=(t,), lacks=(".add",)), "illegal-reduction", _REDUCE,
                         name_suffix=pair + t) for t in (".b64", ".u64")),
            Constraint(Cond(has=(".s64",)), "illegal-type-dst", _REDUCE, other=".shared::cluster"),
        ),
        gates=(Gate(_feature(_REDUCE), ALWAYS, _REDUCE, version=(8, 0), sm=90),
               Gate(_feature(_BYTES), Cond(has=(_BYTES,)), _REDUCE, version=(8, 0), sm=90)),
    )


_COMMIT = "tcgen05.commit"
_ARRIVE_ONE = ".mbarrier::arrive::one"


def _rot13(word: str) -> str:
    """ptxas 13.0 names `.mbarrier::arrive::one` in its gate rot13-encoded (measured)."""
    return word.translate(str.maketrans("abcdefghijklmnopqrstuvwxyz", "nopqrstuvwxyzabcdefghijklm"))


def _tcgen05_commit() -> Instr:
    """tcgen05.commit.cta_group.mbarrier::arrive::one{.shared::cluster}{.multicast::cluster}.b64 [mbar]
    {, ctaMask} (PTX ISA 9.7.16.12.5): the tensor core's completed operations arrive, once, on an
    mbarrier (of each CTA in ctaMask with .multicast::cluster). PTX ISA 8.6, the sm_100 family."""
    mbar = _addr("mbar", space_message=False)
    mask = Slot("ctaMask", "value", ".b16", flag=_MC, imm=False)
    return Instr(
        ("tcgen05", ".commit"), _COMMIT, operands=((mbar,), (mbar, mask)), exact_spaces=True,
        spaces=(".shared::cluster",), flags=(_ARRIVE_ONE, _MC, *_CTA_GROUPS), marker=_ARRIVE_ONE,
        marker_implied=True,
        constraints=(Constraint(Cond(lacks=_CTA_GROUPS), "required-modifier", _COMMIT, mod=".cta_group",
                                early=True),
                     Constraint(Cond(lacks=(_ARRIVE_ONE,)), "required-modifier", _COMMIT,
                                mod=".completion_mechanism", early=True)),
        gates=(Gate(_feature(_COMMIT), ALWAYS, _COMMIT, version=(8, 6)),
               Gate(f"Instruction '{_COMMIT}'", ALWAYS, _COMMIT, targets=_SM100_FAMILY),
               Gate(_feature(_rot13(_ARRIVE_ONE)), Cond(has=(_ARRIVE_ONE,)), _COMMIT, version=(8, 6), sm=90),
               Gate(f"Modifier '{_MC}'", Cond(has=(_MC,)), _COMMIT, version=(8, 0), sm=90),
               *(g for c in _CTA_GROUPS for g in (
                   Gate(_feature(c), Cond(has=(c,)), _COMMIT, version=(8, 6)),
                   Gate(_feature(c), Cond(has=(c,)), _COMMIT, targets=_SM100_FAMILY)))),
    )


_CANCEL = "clusterlaunchcontrol.try_cancel.async"
_ALL = ".multicast::cluster::all"


def _try_cancel() -> Instr:
    """clusterlaunchcontrol.try_cancel.async{.shared::cta}.mbarrier::complete_tx::bytes
    {.multicast::cluster::all}.b128 [addr], [mbar] (PTX ISA 9.7.12.21.1): asks to cancel a cluster
    not yet launched; the 16-byte response completes a transaction on the mbarrier. PTX ISA 8.6,
    sm_100."""
    addr = _addr("addr", space_message=False)
    mbar = _addr("mbar", space_message=False)
    return Instr(
        ("clusterlaunchcontrol", ".try_cancel", ".async"), _CANCEL, operands=((addr, mbar),),
        types=(".b128",), spaces=(".shared::cta",), exact_spaces=True, space_expected=".shared::cta",
        flags=(_BYTES, _ALL), marker=_BYTES, marker_implied=True, address_space=-1,
        constraints=(Constraint(Cond(lacks=(_BYTES, "word:.mbarrier")), "required-modifier", _CANCEL,
                                mod=_BYTES),),  # (`.mbarrier` is one, illegal: measured)
        gates=(Gate(_feature(_CANCEL), ALWAYS, _CANCEL, version=(8, 6), sm=100),
               Gate(_feature(_BYTES), Cond(has=(_BYTES,)), _CANCEL, version=(8, 0), sm=90),
               Gate(_feature(_ALL), Cond(has=(_ALL,)), _CANCEL, version=(8, 6), targets=_SM100_FAMILY)),
    )


_CP_ASYNC = "cp.async"


def _cp_async_typo() -> Instr:
    """`cp.async.mbarrier.WORD`, WORD no name of the family (`cp.async.mbarrier.arive`): ptxas reads
    it as the non-bulk copy `cp.async.ca.shared{::cta}.global [dst], [src], cp-size{, src-size}
    {, cache-policy}` (PTX ISA 9.7.9.25.3) with `.mbarrier` among its modifiers, an illegal one it
    also calls unknown (measured). Ours only with that word (`marker`): the copy itself is not
    judged."""
    dst = _addr("dst", space_message=False, governed_by=0)
    src = _addr("src", space_message=False, governed_by=1)
    size = Slot("cp-size", "value", ".b32")
    src_size = Slot("src-size", "value", ".b32")
    policy = Slot("cache-policy", "value", ".b64", flag=_L2)
    return Instr(
        ("cp", ".async"), _CP_ASYNC, types=(), spaces=(), marker=".mbarrier", object_rules=False,
        space_pairs=((".shared", ".global"), (".shared::cta", ".global")), missing_pair_incorrect=False,
        flags=(".ca", ".cg", _L2, ".L2::64B", ".L2::128B", ".L2::256B"),
        operands=((dst, src, size), (dst, src, size, src_size), (dst, src, size, policy),
                  (dst, src, size, src_size, policy)),
        gates=(Gate(_feature(_CP_ASYNC), ALWAYS, _CP_ASYNC, version=(7, 0), sm=80),
               Gate(_feature(".mbarrier"), ALWAYS, _CP_ASYNC, sm=90),
               Gate(f"Modifier '{_L2}'", Cond(has=(_L2,)), _CP_ASYNC, version=(7, 4)),
               *(Gate(_feature("cache prefetching"), Cond(has=(w,)), _CP_ASYNC, version=(7, 4))
                 for w in (".L2::64B", ".L2::128B", ".L2::256B"))),
        constraints=(Constraint(Cond(lacks=(".ca", ".cg")), "required-modifier", _CP_ASYNC,
                                mod="'.ca or .cg'"),
                     # five operands without .L2::cache_hint (a list ptxas half-accepts)
                     Constraint(Cond(roles=("cache-policy", "src-size"), lacks=(_L2,)),
                                "required-modifier-with", _CP_ASYNC, mod=_L2, other="5 arguments")),
    )


#: Longer opcode paths under a family opcode that are not ours.
UNCHECKED_PATHS: Final[tuple[tuple[str, ...], ...]] = (
    ("clusterlaunchcontrol", ".query_cancel"),
)
#: Opcode paths and words that, anywhere among the modifiers after them, make the line an
#: instruction lint does not judge: the fences with `.sync_restrict` but the proxy fences
#: (an instruction's own flag is no reason: `unchecked`).
UNCHECKED_WORDS: Final[tuple[tuple[tuple[str, ...], str], ...]] = (
    # the fences with .sync_restrict (PTX ISA 8.6) but fence.proxy.async::generic
    *((("fence",), w) for w in (".sync_restrict::shared::cta", ".sync_restrict::shared::cluster")),
)
#: Words that, written after the last of a marker word, make the line another instruction ptxas
#: judges (prefetch's cache level after `.tensormap`: the plain prefetch, not ours).
UNCHECKED_AFTER: Final[tuple[tuple[tuple[str, ...], str, tuple[str, ...]], ...]] = (
    (("prefetch",), ".tensormap", (".L1", ".L2")),
)


def unchecked(words: tuple[str, ...], longer_than: int = 0, own: tuple[str, ...] = ()) -> bool:
    """Whether an instruction's words (opcode and modifiers) are one lint leaves alone though an
    entry of the tables is a prefix of them (`UNCHECKED_PATHS` longer than `longer_than`,
    `UNCHECKED_WORDS` but the resolved form's `own` flags)."""
    return any(words[:len(u)] == u and len(u) > longer_than for u in UNCHECKED_PATHS) or any(
        words[:len(p)] == p and w in words[len(p):] and w not in own for p, w in UNCHECKED_WORDS) or any(
        words[:len(p)] == p and any(w in after for w in _after_last(words, m))
        for p, m, after in UNCHECKED_AFTER)


def _after_last(words: tuple[str, ...], marker: str) -> tuple[str, ...]:
    """The words after the last `marker` (none without it)."""
    return words[len(words) - words[::-1].index(marker):] if marker in words else ()

#: The instructions that arrive on or complete a transaction on an mbarrier (and fence.mbarrier_init,
#: and the misspelt cp.async.mbarrier.WORD).
FAMILY: Final[tuple[Instr, ...]] = (
    Instr(("mbarrier", ".init"), "9.7.13.15.9", operands=((ADDR, Slot("count", "value", ".b32")),),
          gates=_mbarrier(_intro("mbarrier.init")), constraints=(_NO_COMPLETE_CLUSTER,)),
    Instr(("mbarrier", ".inval"), "9.7.13.15.10", operands=((ADDR,),),
          gates=_mbarrier(_intro("mbarrier.inval")), constraints=(_NO_COMPLETE_CLUSTER,)),
    _tx("expect_tx", "9.7.13.15.11"),
    _tx("complete_tx", "9.7.13.15.12"),
    _ARRIVE, _ARRIVE_EXPECT, _DROP, _DROP_EXPECT,
    _wait("test_wait", False), _wait("test_wait", True),
    _wait("try_wait", False), _wait("try_wait", True),
    Instr(("mbarrier", ".pending_count"), "9.7.13.15.17",
          operands=((PENDING_DEST, Slot("state", "value", ".b64")),), spaces=(),
          gates=_mbarrier(_intro("mbarrier.pending_count"))),
    Instr(("cp", ".async", ".mbarrier", ".arrive"), "9.7.13.15.15",
          operands=((_addr(space_message=False),),),
          flags=(".noinc",), gates=(_intro("cp.async.mbarrier.arrive"),)),
    _fence_mbarrier_init(),
    _bulk_copy(),
    _reduce_bulk(),
    _tensor_copy(),
    _cp_async_typo(),
    _async_store("st"),
    _async_store("red"),
    _tcgen05_commit(),
    _try_cancel(),
)

#: Opcodes whose every instruction belongs to the family: an unknown path under them is an error.
FAMILY_OPCODES: Final[tuple[str, ...]] = ("mbarrier", "clusterlaunchcontrol", "wgmma", "tensormap")



def markdown_table() -> str:
    """The ptxas checks as a Markdown table (rule id, ptxas's wording), for docs/lint.md."""
    lines = ["| rule | ptxas's message |", "|---|---|"]
    for key, template in MESSAGES.items():
        lines.append(f"| `{RULE_IDS[key]}` | {template.replace('|', chr(92) + '|')} |")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":  # pragma: no cover - a docs generator
    import sys

    from mbarrier.spec.textout import emit

    if sys.argv[1:] == ["--markdown"]:
        emit(markdown_table())
    else:
        emit("".join(f"{i.name:32} {i.section:14} {len(i.operands)} operand list(s), {len(i.gates)} gate(s)\n"
                     for i in FAMILY))
