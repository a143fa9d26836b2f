"""Probe ptxas with every modifier word PTX knows (and some it does not) inserted into instructions of
the mbarrier family, and print what ptxas says about each word: the data of
`mbarrier.spec.modifiers` (regenerate it with `--write`).

    python tools/probe_modifiers.py [--version 9.0] [--target sm_90] [--show] [--write]

Each word goes after the opcode of a few otherwise legal instructions (`PROBES`), one line each, all in
one kernel per (`.version`, `.target`) (through `mbarrier.ptx.validate_oracle`, which splits batches
at fatal errors). ptxas's messages about the line, with the word written as `{mod}`, are the word's
signature; words with the same signature on every probe instruction form a class.
"""

from __future__ import annotations

import argparse
import re
import sys
from collections import defaultdict

from mbarrier.ptx import ast
from mbarrier.ptx.validate_oracle import ptxas_verdicts
from mbarrier.ptx.variant_pools import Case, _addr, _imm, _name
from mbarrier.spec.targets import parse_target, parse_version

P0 = ast.Pos(0, 0)

#: Candidate modifier words, from the PTX ISA's instruction sections (9.7: the syntax blocks of the
#: integer, floating-point, comparison, logic, data-movement, conversion, texture/surface, control
#: flow, synchronization, warp-level matrix, tensor-core (wgmma/tcgen05), bulk-copy and tensor-map
#: instructions), the words of the repository's .ptx files, the module and function directives (most
#: of them end ptxas's parse wherever they stand in an instruction), and words no instruction has.
VOCABULARY: tuple[str, ...] = tuple(dict.fromkeys("""
.b8 .b16 .b32 .b64 .b128 .u8 .u16 .u32 .u64 .s8 .s16 .s32 .s64 .f16 .f32 .f64 .f16x2 .bf16 .bf16x2
.tf32 .e4m3 .e5m2 .e4m3x2 .e5m2x2 .e2m1 .e2m1x2 .e3m2 .e2m3 .e3m2x2 .e2m3x2 .ue8m0x2 .u4 .s4 .b1 .pred
.v2 .v4 .v8 .v16
.rn .rz .rm .rp .rna .rs .rni .rzi .rmi .rpi
.eq .ne .lt .le .gt .ge .lo .ls .hi .hs .equ .neu .ltu .leu .gtu .geu .num .nan
.and .or .xor .not .popc .add .sub .inc .dec .min .max .exch .cas .mul .mad .wide .cc
.ftz .sat .approx .full .relu .satfinite .NaN .xorsign .abs .oob .noftz .shiftamt
.weak .volatile .mmio .relaxed .acquire .release .acq_rel .sc .cta .cluster .gpu .sys .warp
.ca .cg .cs .lu .cv .wb .wt .nc .unified
.L1::evict_normal .L1::evict_unchanged .L1::evict_first .L1::evict_last .L1::no_allocate
.L2::evict_normal .L2::evict_first .L2::evict_last .L2::evict_unchanged .L2::64B .L2::128B .L2::256B
.L2::cache_hint .L1 .L2
.shared .shared::cta .shared::cluster .global .local .const .param .param::entry .param::func .tex .reg
.sync .aligned .uni .all .any .ballot .up .down .bfly .idx .red .arrive .wait .proxy .alias .async
.generic .tensormap::generic .proxy::async .op_restrict .sync_restrict::shared::cta
.sync_restrict::shared::cluster .mbarrier_init
.bulk .bulk_group .tensor .prefetch .multicast::cluster .cp_mask .cta_group::1 .cta_group::2
.tile .im2col .tile::gather4 .im2col::w .im2col::w::128 .tile::scatter4 .im2col_no_offs .1d .2d .3d
.4d .5d .mbarrier::complete_tx::bytes .mbarrier::arrive::one .commit_group .wait_group .read
.init .inval .arrive_drop .test_wait .try_wait .parity .expect_tx .complete_tx .pending_count
.noComplete .noinc .mbarrier
.row .col .m8n8 .m16n8k16 .m64n128k16 .x1 .x2 .x4 .trans .sp .sp::ordered_metadata .kind::f16
.kind::tf32 .kind::f8f6f4 .kind::i8 .kind::mxf4 .block_scale .scale_vec::1X .collector::a::fill .ws
.pack::16b .unpack::16b .16x64b .32x32b .16x128b .16x256b .16x32bx2 .alloc .dealloc
.relinquish_alloc_permit .shift .commit .wait::ld .wait::st .ld .st .cp .128x256b .warpx2::02_13
.warpx4 .b6x16_p32 .b4x16_p64 .load .store .mma .mma_async .wgmma .fence .m16n16k16
.a1d .a2d .cube .acube .2dms .a2dms .level .grad .base .nearest .clamp .wrap .trap .zero .b .p .r
.g .a .width .height .depth .l .f4e .b4e .rc8 .ecl .ecr .rc16 .to .launch_dependents .fractional
.range .global_address .rank .box_dim .global_dim .global_stride .element_stride .elemtype
.swizzle_mode .b1024 .replace .try_cancel .query_cancel .multicast::cluster::all .ld_reduce
.acc::f32 .gl .mask .texref .samplerref .surfref .entry .func .extern .visible .align
.loc .pragma .attribute .target .file .section .common .callprototype .version .address_size
.branchtargets .calltargets .maxntid .reqntid .minnctapersm .maxnctapersm .maxnreg .explicitcluster
.reqnctapercluster .maxclusterrank .blocksareclusters .noreturn .abi_preserve .abi_preserve_control
.managed .ptr
.foo .zzz .xyz .NOCOMPLETE .Release .shared::foo .L2::foo .L1::foo .cta_group::3 .multicast::cta
.mbarrier::complete_tx::foo .tile::gather8 .kind::foo
""".split()))

#: The instructions a word is tried in: (label, opcode path, modifiers after the word, operands).
PROBES: tuple[tuple[str, tuple[str, ...], tuple[str, ...], tuple[ast.Operand, ...]], ...] = (
    ("arrive", ("mbarrier", ".arrive"), (".shared", ".b64"), (_name("%rd1"), _addr("bar"))),
    ("try_wait", ("mbarrier", ".try_wait"), (".shared", ".b64"),
     (_name("%p1"), _addr("bar"), _name("%rd2"))),
    ("bulk", ("cp", ".async", ".bulk"), (".shared::cluster", ".global", ".mbarrier::complete_tx::bytes"),
     (_addr("%rd2"), _addr("%rd3"), _imm(16), _addr("bar"))),
)


#: A probe whose line has an error of its own after the modifiers (`.release` without a scope): a
#: word after which ptxas no longer reports it ends ptxas's checks of the line.
HIDE_PROBE = ("hide", ("mbarrier", ".arrive"), (".release", ".shared", ".b64"), (_name("%rd1"), _addr("bar")))
_LATER_ERROR = ("error", "Modifier '.release' requires scope with 'mbarrier.arrive' instruction")
#: The arrive probe with an operand list ptxas does not take: the gates it still reports of a word
#: are those it checks as it reads the word.
SHORT_PROBE = ("short", ("mbarrier", ".arrive"), (".shared", ".b64"), (_name("%rd1"),))


def probe(version: tuple[int, int], target: str) -> dict[str, dict[str, frozenset[tuple[str, str]]]]:
    """word -> probe label -> ptxas's (severity, message) set, with the word written `{mod}`."""
    cases: list[Case] = []
    keys: list[tuple[str, str]] = []
    for label, path, rest, ops in (*PROBES, HIDE_PROBE, SHORT_PROBE):
        for w in VOCABULARY:
            words = (*path[1:], w, *rest)
            cases.append(Case(f"{label} {w}", ast.Instruction(path[0], words, ops, None, P0)))
            keys.append((w, label))
    out: dict[str, dict[str, frozenset[tuple[str, str]]]] = defaultdict(dict)
    for (w, label), verdict in zip(keys, ptxas_verdicts(cases, version, target), strict=True):
        pattern = re.compile(rf"'{re.escape(w)}'")
        out[w][label] = frozenset((s, pattern.sub("'{mod}'", m)) for s, m in verdict)
    return out


#: How each of ptxas's messages about a word on `mbarrier.arrive.WORD.shared.b64` reads as a token of
#: `mbarrier.spec.modifiers.WORD_MESSAGES` (None: a message no token stands for).
_TOKENS: tuple[tuple[str, str], ...] = (
    (r"error: Unknown modifier '\{mod\}'", "unknown"),
    (r"fatal: Parsing error near '\{mod\}': syntax error", "syntax"),
    (r"error: Illegal modifier '\{mod\}' for instruction 'mbarrier.arrive'", "illegal"),
    (r"error: Illegal modifier '(.+)' for instruction 'mbarrier.arrive'", "illegal:{0}"),
    (r"error: Illegal rounding modifier for instruction 'mbarrier.arrive'", "rounding"),
    (r"error: Comparison qualifier is not allowed for instruction 'mbarrier.arrive'", "comparison"),
    (r"error: Mismatch between instruction type and comparison qualifier", "comparison-type"),
    (r"error: Vector qualifier is not allowed for instruction 'mbarrier.arrive'", "vector"),
    (r"error: Vector type too large, exceeds 128 bit limit", "vector-wide"),
    (r"error: Illegal reduction operation for instruction 'mbarrier.arrive.b64'", "reduction"),
    (r"error: Illegal query modifier for instruction 'mbarrier.arrive'", "query"),
    (r"error: Modifier '\{mod\}' requires modifier '(.+)'", "requires:{0}"),
    (r"error: Modifier '\{mod\}' applies only to mbarrier.arrive integer types", "integer-only"),
    (r"error: Unexpected instruction types specified for 'mbarrier.arrive'", "type"),
)


def tokens(messages: frozenset[tuple[str, str]]) -> tuple[str, ...] | None:
    """The word's messages on the arrive probe as tokens, sorted; None if one has no token."""
    out = []
    for s, m in messages:
        line = f"{s}: {m}"
        tok = next((t.format(*g.groups()) for r, t in _TOKENS if (g := re.fullmatch(r, line))), None)
        if tok is None:
            return None
        out.append(tok)
    return tuple(sorted(out))


#: The pairs the arrive probe runs under to tell the words that carry gates of their own (their
#: messages differ from pair to pair): the classes are read at the most open one, the last.
GATE_PAIRS: tuple[tuple[str, str], ...] = (("7.0", "sm_80"), ("8.0", "sm_90a"), ("9.0", "sm_90"),
                                           ("9.0", "sm_120"), ("9.0", "sm_100a"))


def classify() -> tuple[dict[str, tuple[str, ...]], list[str], list[str], list[str]]:
    """word -> its tokens at the most open pair (from the arrive probe, else from the try_wait one
    where ptxas reads the word as part of the opcode there; ('illegal',) where neither has a token
    for every message), the gated words (their messages on the arrive probe differ between pairs)
    and the irregular ones (no token, or tokens from try_wait), and the words that hide the line's
    later errors (HIDE_PROBE)."""
    runs = []
    for v, t in GATE_PAIRS:
        version = parse_version(v)
        assert version is not None
        runs.append(probe(version, t))
    last = runs[-1]
    words: dict[str, tuple[str, ...]] = {}
    gated, irregular, hiding = [], [], []
    for w in VOCABULARY:
        if _LATER_ERROR not in last[w]["hide"]:
            hiding.append(w)
        if any(r[w]["arrive"] != last[w]["arrive"] for r in runs):
            gated.append(w)
        toks = tokens(last[w]["arrive"])
        if toks is None:
            irregular.append(w)
            other = frozenset((s, m.replace("mbarrier.try_wait", "mbarrier.arrive"))
                              for s, m in last[w]["try_wait"])
            toks = tokens(other) or ("illegal",)
        words[w] = toks
    return words, gated, irregular, hiding


#: Tokens that name no class of their own (a word's class is its token most words share).
_NOT_A_CLASS = ("illegal", "comparison-type", "vector-wide", "integer-only", "type", "unknown", "syntax")


def classes(words: dict[str, tuple[str, ...]]) -> dict[str, str]:
    """word -> its class: of its tokens, the one most words have (words with no such token: none)."""
    count: dict[str, int] = defaultdict(int)
    for toks in words.values():
        for t in toks:
            count[t] += 1
    out = {}
    for w, toks in words.items():
        cands = [t for t in toks if t not in _NOT_A_CLASS and not t.startswith("requires:")]
        if cands:
            out[w] = max(cands, key=lambda t: (count[t], t))
    return out


def repeats(words: dict[str, tuple[str, ...]]) -> tuple[dict[str, str], list[str]]:
    """class -> what ptxas says of a second word of the class (two different ones, and one twice,
    on the arrive probe at the last of GATE_PAIRS): the message the words' tokens do not explain;
    and the classes of which ptxas judges every word written (of the others, the last one only:
    told by a first word whose own messages differ from the second's)."""
    by_class: dict[str, list[str]] = defaultdict(list)
    for w, c in classes(words).items():
        by_class[c].append(w)
    cases, keys = [], []
    label, path, rest, ops = PROBES[0]
    for c, ws in by_class.items():
        first = max(ws, key=lambda w: (len(words[w]), "illegal" in words[w]))
        second = next((w for w in ws if set(words[w]) != set(words[first])), ws[-1])
        for pair in ((first, second), (first, first)):
            cases.append(Case(f"{c}", ast.Instruction(path[0], (*path[1:], *pair, *rest), ops, None, P0)))
            keys.append((c, pair))
    v, t = GATE_PAIRS[-1]
    version = parse_version(v)
    assert version is not None
    seen: dict[str, set[str]] = defaultdict(set)
    every: list[str] = []
    for (c, pair), verdict in zip(keys, ptxas_verdicts(cases, version, t), strict=True):
        either = re.compile("|".join(rf"'{re.escape(w)}'" for w in pair))
        extra = {m for s, m in verdict if tokens(frozenset({(s, either.sub("'{mod}'", m))})) is None}
        seen[c] |= extra if extra else {""}
        if pair[0] != pair[1]:
            got = {tokens(frozenset({(s, re.sub(rf"'{re.escape(pair[0])}'", "'{mod}'", m))}))
                   for s, m in verdict if f"'{pair[1]}'" not in m}
            own = {(t,) for t in words[pair[0]] if t not in words[pair[1]] or t == "illegal"}
            if own & got:
                every.append(c)
    return {c: next(iter(ms)) for c, ms in seen.items() if len(ms) == 1 and "" not in ms}, every


_GATE = re.compile(r"error: ((?:Feature|Modifier) '\{mod\}') requires "
                   r"(?:PTX ISA \.version (\d+)\.(\d+) or later|\.target sm_(\d+) or higher)")
WordGate = tuple[str, tuple[int, int] | None, int | None, bool]


def _gate_messages(gates: tuple[WordGate, ...], version: tuple[int, int], target: str) -> set[str]:
    """What ptxas says of the gates under (version, target), as `_GATE` reads it."""
    sm = parse_target(target)
    out = set()
    for subject, v, s, _ in gates:
        if v is not None and version < v:
            out.add(f"error: {subject} requires PTX ISA .version {v[0]}.{v[1]} or later")
        if s is not None and sm is not None and not sm.at_least(s):
            out.add(f"error: {subject} requires .target sm_{s} or higher")
    return out


def word_gates(gated: list[str]) -> dict[str, tuple[WordGate, ...]]:
    """word -> the gates ptxas checks of it where it is no word of the instruction (the arrive
    probe): those of the gated words whose messages differ between GATE_PAIRS by plain version and
    target gates only, read at the first pair and checked against every pair (the others' gates,
    "not supported on .target" ones among them, are not modelled); each with whether ptxas checks
    it as it reads the word (it says so of SHORT_PROBE too) or only once the operands match."""
    runs = []
    for v, t in GATE_PAIRS:
        version = parse_version(v)
        assert version is not None
        runs.append((version, t, probe(version, t)))
    last = runs[-1][2]
    out = {}
    for w in gated:
        gates: list[WordGate] = []
        for s, m in sorted(runs[0][2][w]["arrive"] - last[w]["arrive"]):
            g = _GATE.fullmatch(f"{s}: {m}")
            if g is None:
                break
            ver = (int(g.group(2)), int(g.group(3))) if g.group(2) else None
            gates.append((g.group(1), ver, int(g.group(4)) if g.group(4) else None,
                          (s, m) in runs[0][2][w]["short"]))
        else:
            if gates and all(
                    {f"{s}: {m}" for s, m in r[w]["arrive"] ^ last[w]["arrive"]}
                    == _gate_messages(tuple(gates), version, t) for version, t, r in runs):
                out[w] = tuple(gates)
    return out


def word_repeats(words: dict[str, tuple[str, ...]]) -> dict[str, str]:
    """word -> what ptxas says of it written twice on the arrive probe (at the last of GATE_PAIRS),
    where that is one message more than of it once, "Multiple ..." or "Duplicate ...", and the word
    has no class (CLASS_REPEATS)."""
    cls = classes(words)
    label, path, rest, ops = PROBES[0]
    plain = [w for w in VOCABULARY if w not in cls]
    cases = [Case(f"{label} {w}", ast.Instruction(path[0], (*path[1:], *ws, *rest), ops, None, P0))
             for w in plain for ws in ((w,), (w, w))]
    v, t = GATE_PAIRS[-1]
    version = parse_version(v)
    assert version is not None
    verdicts = ptxas_verdicts(cases, version, t)
    out = {}
    for i, w in enumerate(plain):
        extra = verdicts[2 * i + 1] - verdicts[2 * i]
        if len(extra) == 1 and next(iter(extra))[1].startswith(("Multiple ", "Duplicate ")):
            out[w] = next(iter(extra))[1]
    return out


def write(path: str) -> None:
    words, gated, irregular, hiding = classify()
    cls = classes(words)
    again, every = repeats(words)
    gates = word_gates(gated)
    twice = word_repeats(words)
    lines = [_HEADER]
    lines.append("WORD_MESSAGES: Final[dict[str, tuple[str, ...]]] = {")
    for w, toks in words.items():
        lines.append(f"    {w!r}: {toks!r},")
    lines.append("}")
    lines.append("")
    lines.append("#: A word's class: the token of its messages most words share (WORD_MESSAGES).")
    lines.append("WORD_CLASSES: Final[dict[str, str]] = {")
    lines += [f"    {w!r}: {c!r}," for w, c in cls.items()]
    lines.append("}")
    lines.append("")
    lines.append("#: What ptxas says of a second word of a class, at once (before the operands: a wrong")
    lines.append("#: type or operand count does not hide it), two different words or one twice alike.")
    lines.append("CLASS_REPEATS: Final[dict[str, str]] = {")
    lines += [f"    {c!r}: {m!r}," for c, m in again.items()]
    lines.append("}")
    lines.append("")
    lines.append("#: The classes of which ptxas judges every word written (of any other, the last).")
    lines.append("EVERY_WORD_CLASSES: Final[frozenset[str]] = frozenset({")
    lines += [f"    {c!r}," for c in every]
    lines.append("})")
    lines.append("")
    lines.append("#: Words after which ptxas judges no more of the line than the words themselves")
    lines.append("#: (measured: `.release` without a scope goes unreported after them): for an instruction")
    lines.append("#: type, one that replaces the type written (`.b32`; the others, `.bf16`, are reported")
    lines.append("#: and the line judged on), for another word a terminal one (`.L2::64B`, like `.sync`).")
    lines.append("HIDING_WORDS: Final[frozenset[str]] = frozenset({")
    lines += [f"    {w!r}," for w in hiding]
    lines.append("})")
    lines.append("")
    lines.append("#: Words with feature gates of their own (ptxas's messages about them differ between")
    lines.append(f"#: {', '.join(' '.join(p) for p in GATE_PAIRS)}): their gates are not modelled but")
    lines.append("#: those of WORD_GATES.")
    lines.append("GATED_WORDS: Final[frozenset[str]] = frozenset({")
    lines += [f"    {w!r}," for w in gated]
    lines.append("})")
    lines.append("")
    lines.append("#: The gated words' gates that ptxas checks as it reads such a word on an instruction that")
    lines.append("#: does not take it, where they are plain version and target gates: (subject, PTX ISA")
    lines.append("#: version, sm, whether ptxas checks it as it reads the word rather than once the operands")
    lines.append("#: match) each, on every pair of GATE_PAIRS as measured (the others' are not modelled).")
    lines.append("WORD_GATES: Final[dict[str, tuple[tuple[str, tuple[int, int] | None, int | None, bool], "
                 "...]]] = {")
    for w, g in gates.items():  # (one line a word, or a gate a line where that is too long)
        lines += ([f"    {w!r}: {g!r},"] if len(f"    {w!r}: {g!r},") <= 110
                  else [f"    {w!r}: (", *(f"        {x!r}," for x in g), "    ),"])
    lines.append("}")
    lines.append("")
    lines.append("#: What ptxas says at once of a word without a class written twice, where it says one")
    lines.append("#: message more than of the word once, \"Multiple ...\" or \"Duplicate ...\" (measured on")
    lines.append("#: the arrive probe).")
    lines.append("WORD_REPEATS: Final[dict[str, str]] = {")
    lines += [f"    {w!r}: {m!r}," for w, m in twice.items()]
    lines.append("}")
    lines.append("")
    lines.append("#: Words ptxas says more of than the tokens tell on the arrive probe (the sem-like")
    lines.append("#: .weak, a part of the opcode ...): their tokens are try_wait's, else ('illegal',).")
    lines.append("IRREGULAR_WORDS: Final[frozenset[str]] = frozenset({")
    lines += [f"    {w!r}," for w in irregular]
    lines.append("})")
    with open(path, "w") as fh:
        fh.write("\n".join(lines) + "\n")


_HEADER = '''"""What ptxas says of a modifier word on an instruction that does not take it: measured
with ptxas 13.0 (V13.0.88) by `tools/probe_modifiers.py --write` (which wrote this file: regenerate it there,
never edit it by hand).

The probe writes each word of its vocabulary (the modifiers of the PTX ISA's instruction sections,
the words of this repository's .ptx files, and words no instruction has) after the opcode of
`mbarrier.arrive.WORD.shared.b64 %rd1, [bar];` under several (.version, .target) pairs, and reads
ptxas's messages as tokens (the validator, `mbarrier.ptx.validate`, turns them back into ptxas's
words for any instruction of the family):

- unknown: "Unknown modifier '{mod}'" (also any word not listed here); syntax: a fatal "Parsing
  error near '{mod}'"; type: the word is an instruction type (`spec.forms.MODIFIERS`);
- illegal: "Illegal modifier '{mod}' for instruction '{name}'"; illegal:X: the same naming X (ptxas
  names some words by their class: 'Permute', 'Geometry', '.level::eviction_priority' ...);
- rounding, comparison, vector, reduction, query: "Illegal rounding modifier ...", "Comparison
  qualifier is not allowed ...", "Vector qualifier is not allowed ...", "Illegal reduction operation
  for instruction '{name}{type}'", "Illegal query modifier ..."; comparison-type: "Mismatch between
  instruction type and comparison qualifier" (on an instruction without a type every comparison
  word says it); vector-wide: "Vector type too large, exceeds 128 bit limit" (with a type);
- requires:X: "Modifier '{mod}' requires modifier 'X'" (unless X is written too); integer-only:
  "Modifier '{mod}' applies only to {name} integer types";
- none at all: ptxas takes the word silently.
"""

from __future__ import annotations

from typing import Final
'''


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--version", default="9.0")
    ap.add_argument("--target", default="sm_90")
    ap.add_argument("--write", action="store_true", help="write src/mbarrier/spec/modifiers.py")
    a = ap.parse_args()
    if a.write:
        write("src/mbarrier/spec/modifiers.py")
        return 0
    version = parse_version(a.version)
    assert version is not None
    result = probe(version, a.target)
    classes: dict[tuple[tuple[str, frozenset[tuple[str, str]]], ...], list[str]] = defaultdict(list)
    for w, by in result.items():
        classes[tuple(sorted(by.items()))].append(w)
    for sig, words in sorted(classes.items(), key=lambda kv: -len(kv[1])):
        print(f"== {len(words)} words: {' '.join(words)}")
        for label, msgs in sig:
            for s, m in sorted(msgs):
                print(f"   {label:9} {s}: {m}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
