"""The validator of the mbarrier family: ptxas's verdict and wording on every instruction of PTX ISA
9.7.13.15 (and the hazards ptxas cannot see, as warnings). Everything it knows about the instructions
comes from `mbarrier.spec.forms`; this module is the generic machinery that applies those tables.

The checks run in ptxas's order (measured): the modifier words themselves (unknown, repeated), a
misplaced sink, an illegal terminal modifier, the instruction type, the operands (a mismatch hides
the rest of the line), which modifiers the instruction takes, then semantic constraints, addresses,
immediate values and feature gates. A fatal diagnostic ends the module, as ptxas stops there.
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass

from mbarrier.ptx import ast, validate_tensor_flat, validate_wgmma
from mbarrier.ptx.diagnostics import Diagnostic
from mbarrier.ptx.validate_hazards import hazards
from mbarrier.ptx.validate_line import Context
from mbarrier.ptx.validate_line import Facts as _Facts
from mbarrier.ptx.validate_line import Line as _Line
from mbarrier.ptx.validate_module import address_bits, address_size, declared_address_size
from mbarrier.ptx.validate_scope import TYPE_SIZE, Scope
from mbarrier.ptx.validate_split import read, split_opcode
from mbarrier.ptx.validate_vectors import check_lengths, written
from mbarrier.spec.companions import FORMAT_CONVERSIONS, FORMAT_SHAPES
from mbarrier.spec.forms import (
    CLASS_NAMES,
    DIMENSIONS,
    FAMILY_OPCODES,
    FLAG_GROUPS,
    GROUP_NAMES,
    IM2COL_MODES,
    MESSAGES,
    MODIFIER_GATES,
    MODIFIERS,
    MOV_LOWERING_TARGETS,
    NON_ADDRESS_TYPES,
    OTHER_WORD_GATES,
    RULE_IDS,
    SUBSPACES,
    TERMINAL_MODIFIERS,
    TYPE_COMPATIBLE,
    UNCOUNTED_REPEATS,
    VECTOR_LENGTHS,
    VECTORS,
    VERSION_BEYOND_MODEL,
    Instr,
    Slot,
    unchecked,
)
from mbarrier.spec.instructions import INSTRUCTIONS
from mbarrier.spec.modifiers import (
    CLASS_REPEATS,
    EVERY_WORD_CLASSES,
    HIDING_WORDS,
    WORD_CLASSES,
    WORD_MESSAGES,
    WORD_REPEATS,
)
from mbarrier.spec.targets import (
    LATEST_VERSION,
    TARGET_MIN_VERSION,
    format_version,
    parse_target,
)

_TARGET_WORD = re.compile(r"(sm|compute)_\d+[af]?|texmode_\w+|map_f64_to_f32|debug")


def _missing_version_line(lines: tuple[str, ...]) -> int:
    """Where ptxas reports a missing `.version`: at the first token, unless that is `.target`, whose
    target list ptxas reads first; then at the token after it (or the end of the file)."""
    words = [(n, w) for n, text in enumerate(lines, 1)
             for w in re.split(r"[\s,]+", text.split("//", 1)[0]) if w]
    end = max(len(lines), 1)  # source_lines is the text split at '\n': its length is the last line
    if not words:
        return end
    if words[0][1] != ".target":
        return words[0][0]
    rest = [(n, w) for n, w in words[1:] if not _TARGET_WORD.fullmatch(w)]
    return rest[0][0] if rest else end


def validate(module: ast.Module, target: str | None = None) -> list[Diagnostic]:
    """Every diagnostic of the module, in source order. `target` overrides the module's `.target`."""
    out: list[Diagnostic] = []
    if module.version is None:
        # ptxas stops at once: nothing else in the module is judged.
        return [Diagnostic("fatal", _missing_version_line(module.source_lines), 1,
                           MESSAGES["missing-version"].format(file=module.path),
                           RULE_IDS["missing-version"], module.path)]
    version = module.version
    tname = target or next((t for t in module.targets if t.startswith("sm_")), None)
    tgt = parse_target(tname) if tname else None
    if tgt is not None and version < TARGET_MIN_VERSION[tgt.name]:
        at = next((i + 1 for i, s in enumerate(module.source_lines) if s.lstrip().startswith(".target")),
                  1)
        out.append(Diagnostic("error", at, 1, MESSAGES["target-version"].format(
            version=format_version(version), target=tgt.name), RULE_IDS["target-version"], module.path))
    if version > LATEST_VERSION:
        # ptxas 13.0 stops here ("Unsupported .version"); a newer ptxas takes the module. Rather than
        # refuse what the user's toolkit may accept, say what the verdicts below are worth.
        at = next((i + 1 for i, s in enumerate(module.source_lines) if s.lstrip().startswith(".version")), 1)
        out.append(Diagnostic("warning", at, 1, (
            f".version {format_version(version)} is newer than PTX ISA {format_version(LATEST_VERSION)}, the "
            f"last this lint models (ptxas 13.0 stops: Unsupported .version {format_version(version)}): "
            f"the instructions are judged as under {format_version(LATEST_VERSION)}"),
            VERSION_BEYOND_MODEL, module.path))
    ctx = Context(version, tgt)
    # ptxas resolves names in a pass of its own after the whole file's other checks, and only when
    # none of them was fatal (measured): so unknown symbols are held back until the end.
    unknown: list[Diagnostic] = []
    narrow: list[tuple[ast.Instruction, int]] = []  # the addresses narrower than 64 bits
    for fn in module.functions:
        if fn.body is None:
            continue
        scope = Scope(module, fn)
        for instr in ast.instructions(fn.body):
            n = instr.pos.line
            src = module.source_lines[n - 1] if 0 < n <= len(module.source_lines) else ""
            line = _Line(instr, module.path, src)
            check_instruction(instr, scope, ctx, line)
            clean = not any(d.severity != "warning" for d in (*out, *line.out))
            if clean and lowered_by_mov(instr, scope, ctx):
                line.add("lowering-mov")  # (ptxas lowers a line only while no error came before)
            out.extend(line.out)
            if line.fatal:  # ptxas stops here: nothing after it is judged
                return sorted(out, key=lambda d: (d.line, d.column))
            unknown.extend(unknown_symbols(instr, scope, module.path))
            bits = address_bits(instr, scope)
            if bits is not None:
                narrow.append((instr, bits))
        out.extend(hazards(module, fn, scope))
    out.extend(unknown)
    if not any(d.severity != "warning" for d in out):
        # ptxas judges the address size only when every line passed (measured)
        out.extend(address_size(module, narrow, declared_address_size(module), tgt))
    return sorted(out, key=lambda d: (d.line, d.column))


def lowered_by_mov(instr: ast.Instruction, scope: Scope, ctx: Context) -> bool:
    """The tensor load into `.shared::cluster` with a 32-bit register as the tensor map, on a target of
    `MOV_LOWERING_TARGETS` (ptxas's lowering refuses it; the caller: only before any error)."""
    if ctx.target is None or ctx.target.name not in MOV_LOWERING_TARGETS:
        return False
    form, mods = resolve(instr)
    if form is None or not form.dims or form.tensor_first or _spaces_of(mods)[:1] != (".shared::cluster",):
        return False
    tmap = instr.operands[1] if len(instr.operands) > 1 else None
    base = tmap.base if isinstance(tmap, ast.Address) and tmap.items else None
    sym = scope.lookup(base.name) if base is not None else None
    return sym is not None and sym.space == ".reg" and TYPE_SIZE.get(sym.type) == 4


@dataclass(frozen=True, slots=True)
class Coverage:
    """Which of a module's instructions lint judges as ptxas does (those of `spec.forms`, and the
    words that run on past their names), and how many of each other opcode it leaves alone (their
    names are resolved, nothing else)."""

    judged: int
    not_judged: dict[str, int]


def coverage(module: ast.Module) -> Coverage:
    judged = 0
    other: dict[str, int] = {}
    for fn in module.functions:
        for instr in ast.instructions(fn.body or ()):
            if resolve(instr)[0] is not None or split_opcode(instr) is not None:
                judged += 1
            else:
                other[instr.opcode] = other.get(instr.opcode, 0) + 1
    return Coverage(judged, dict(sorted(other.items())))


def unknown_symbols(instr: ast.Instruction, scope: Scope, path: str) -> list[Diagnostic]:
    """ptxas's "Unknown symbol" errors of one instruction (reported only for a file without fatal
    errors)."""
    names = scope.unknown_names(instr)
    split = split_opcode(instr)
    if split is not None:
        r = read(instr, split)
        if r.near is not None:  # a syntax error: ptxas resolves no name of the file
            return []
        if r.identifier is not None and not scope.known(r.identifier):
            names.insert(0, ast.Name(r.identifier, instr.pos))
    return [Diagnostic("error", name.pos.line, name.pos.column,
                       MESSAGES["unknown-symbol"].format(symbol=name.name), RULE_IDS["unknown-symbol"], path)
            for name in names]


def _check_guard(instr: ast.Instruction, scope: Scope, line: _Line) -> None:
    """`@p`/`@!p` needs a declared .pred register (any instruction)."""
    g = instr.guard
    if g is None:
        return
    sym = scope.lookup(g.predicate)
    if sym is None or sym.type != ".pred":
        line.add("guard-predicate", g.pos)


def resolve(instr: ast.Instruction) -> tuple[Instr | None, tuple[str, ...]]:
    """The table entry whose opcode path is the longest prefix of the instruction's words, and the
    modifiers after it. (None, ()) for an instruction outside the family."""
    words = (instr.opcode, *instr.qualifiers)
    best: Instr | None = None
    for form in INSTRUCTIONS:
        n = len(form.path)
        if form.marker is not None and not _marked(form, words[n:]) \
                and not _marker_implied(form, words[n:], instr.operands):
            continue
        if words[:n] == form.path and (best is None or n > len(best.path)):
            best = form
    if best is None or unchecked(words, len(best.path), best.flags):
        return None, ()
    return best, words[len(best.path):]


def _spaces_of(mods: tuple[str, ...]) -> tuple[str, ...]:
    return tuple(m for m in mods if MODIFIERS.get(m) == "space" or _split_space(m))


def _marked(form: Instr, mods: tuple[str, ...]) -> bool:
    """The form's marker is written (and, for a form that leaves them alone, the first two state
    spaces are not one of `other_pairs`)."""
    return form.marker in mods and not (form.leaves_other_pairs and _spaces_of(mods)[:2] in form.other_pairs)


def _marker_implied(form: Instr, mods: tuple[str, ...], operands: tuple[ast.Operand, ...]) -> bool:
    """A copy without its completion mechanism is ours when no other one is written and its first
    two state spaces are not a pair of the forms that are not ours (`Instr.marker_implied`); a
    tensor copy's of no pair of either direction, when the tensor operand stands where the form's
    lists have it (`Instr.tensor_first`)."""
    if not form.marker_implied or form.marker is None:
        return False
    group = FLAG_GROUPS.get(form.marker)
    # (of the family's words: another instruction's, `.mbarrier`, is an illegal one here, measured)
    if group is not None and any(FLAG_GROUPS.get(m) == group and m in MODIFIERS for m in mods):
        return False
    if any(m in form.other_words for m in mods):
        return False
    pair = _spaces_of(mods)[:2]
    if form.dims and pair not in form.space_pairs and pair not in form.other_pairs:
        first = bool(operands) and isinstance(operands[0], ast.Address) and bool(operands[0].items)
        return form.tensor_first == first
    return pair in form.implied_pairs if form.implied_pairs else pair not in form.other_pairs


def check_instruction(instr: ast.Instruction, scope: Scope, ctx: Context, line: _Line) -> None:
    _check_guard(instr, scope, line)
    split = split_opcode(instr)
    if split is None:
        _check(instr, scope, ctx, line)
    else:  # an opcode word longer than the instruction's name: what ptxas reads there
        r = read(instr, split)
        if r.field is not None:
            line.add("unknown-field", mod=r.field)
        if r.near is not None:
            line.add("modifier-parse", severity="fatal", mod=r.near)
        else:
            if r.indexed:
                line.add("array-index")
            if r.judged is not None:
                _check(r.judged, scope, ctx, line)
    line.flush()


def _check(instr: ast.Instruction, scope: Scope, ctx: Context, line: _Line) -> None:
    form, mods = resolve(instr)
    if form is None:
        # ptxas reads directive words (`.func`, `.loc`, `.align` ...) as such wherever they stand: in
        # any instruction they end the parse (spec.modifiers, measured)
        directive = next((m for m in instr.qualifiers if "syntax" in WORD_MESSAGES.get(m, ())), None)
        words = (instr.opcode, *instr.qualifiers)
        family = instr.opcode in FAMILY_OPCODES and not unchecked(words)
        if family:
            for m in instr.qualifiers[:instr.qualifiers.index(directive) if directive else None]:
                if m not in MODIFIERS and "unknown" in WORD_MESSAGES.get(m, ("unknown",)):
                    line.add("unknown-modifier", mod=m)
        if directive is not None:
            line.add("modifier-parse", severity="fatal", mod=directive)
        elif family:
            check_lengths(instr, VECTOR_LENGTHS, line)
            line.add("unknown-instruction", opcode=instr.opcode)
        return
    # ptxas's order (measured): a word it cannot parse (fatal), the words themselves, a misplaced
    # sink (fatal), an illegal terminal modifier, the instruction type, the operands; only then
    # which modifiers are legal.
    unparsed = next((i for i, m in enumerate(mods)
                     if m not in MODIFIERS and "syntax" in WORD_MESSAGES.get(m, ())), None)
    if unparsed is not None:  # what ptxas says at once of the words before it, then the fatal error
        _check_modifiers(form, mods[:unparsed], line, [])
        line.add("modifier-parse", severity="fatal", mod=mods[unparsed])
        return
    legality: list[tuple[str, dict[str, object]]] = []
    own: tuple[str, ...] = ()
    if form.checker:  # (wgmma.mma_async: its shape, types and operations are its checker's)
        mods, own = validate_wgmma.split(mods, line)
    facts = _check_modifiers(form, mods, line, legality)
    check_lengths(instr, form.vector_lengths, line)
    _check_gates(form, facts, frozenset(), False, ctx, line, at_once=True)
    if _sink_misplaced(instr, line):
        return
    terminal = [m for m in TERMINAL_MODIFIERS  # of the words ptxas judges (a load mode: the last)
                if m in facts.words and m not in (*form.flags, *form.load_modes, *form.mismatch_words)
                and not (form.load_modes and MODIFIERS.get(m) == "load_mode")]
    if terminal:  # the first of them by ptxas's priority ends the line
        line.add("illegal-modifier", mod=terminal[0], name=form.name)
        return
    # words of other instructions that end the line too (spec.modifiers.HIDING_WORDS): the first
    # one's own messages
    later_ops = _post_ops(form, mods)[1:]
    hiding = next((m for i, m in enumerate(mods) if m in HIDING_WORDS and m not in MODIFIERS
                   and m not in form.flags and m not in dict(form.words) and i not in later_ops
                   and not {"type", "syntax", "unknown"} & set(WORD_MESSAGES.get(m, ()))), None)
    if hiding is not None:
        for key, fmt in legality:
            if fmt.get("mod") == hiding or fmt.get("word") == hiding:
                line.emit(key, None, "error", {k: v for k, v in fmt.items() if k != "word"})
        return
    if facts.clean and any(m in form.mismatch_words for m in mods):  # (after the words that end the line)
        line.add("operands", name=form.name)
        return
    if not facts.clean:
        line.add("types", name=form.name)
        return
    if form.checker:
        def conclude(found: tuple[str, ...], judged: list[tuple[str, dict[str, object]]] | None) -> None:
            """The words' legality (`judged`, None where ptxas judges the gates only) and the
            gates of the facts the checker found (the kind, its own words)."""
            if judged is not None:
                emit_legality(instr, facts, judged, line)
                _check_semantics(form, facts, frozenset(), False, ctx, line)
            facts.words.update(found)
            _check_gates(form, facts, frozenset(), False, ctx, line)
        validate_wgmma.finish(instr, own, legality, scope, line, conclude)
        return
    _check_semantics(form, facts, frozenset(), False, ctx, line, early=True)
    _check_gates(form, facts, frozenset(), False, ctx, line, early=True)
    if form.dims:
        if tuple(facts.spaces[:2]) in form.other_pairs:
            _check_other_direction(form, instr, facts, scope, ctx, line)
            return
        instr, slots, soft = _match_tensor(form, instr, facts, scope, line)
    else:
        slots, soft = _match_operands(form, instr, facts, scope, ctx, line)
    if slots is None:
        line.add("operands", name=form.name)
        return
    if form.uncounted_with and any(s.role == form.uncounted_with for s in slots):
        legality = [(key, fmt) for key, fmt in legality if key != "space-count"]
    emit_legality(instr, facts, legality, line)
    if form.space_pairs:
        pair = _check_space_pair(form, facts, line)
        if pair != "ok":
            # no operand list for a pair ptxas does not take: the addresses only, then the gates
            if pair == "other" and soft:
                line.add("operands", name=form.name)
            _check_semantics(form, facts, frozenset(), False, ctx, line)
            if facts.spaces:
                _check_addresses(form, instr, slots, facts, scope, line)
            if pair == "other":
                _check_immediates(form, instr, slots, line, frozenset(), ctx)
            _check_gates(form, facts, frozenset(), False, ctx, line)
            return
    if soft:
        line.add("operands", name=form.name)
    roles = frozenset(s.role for s in slots)
    sink = bool(instr.operands) and isinstance(instr.operands[0], ast.Sink)
    _check_semantics(form, facts, roles, sink, ctx, line)
    # a refused sink hides the addresses too, all but the state space of their variables (measured)
    _check_addresses(form, instr, slots, facts, scope, line, spaces_only=line.pending_fatal)
    _check_immediates(form, instr, slots, line, facts.words, ctx)
    _check_gates(form, facts, roles, sink, ctx, line)


def _check_other_direction(form: Instr, instr: ast.Instruction, facts: _Facts, scope: Scope, ctx: Context,
                           line: _Line) -> None:
    """A tensor copy with its marker and the other direction's state spaces (the load's
    completion mechanism on `.global.shared::cta`; measured): ptxas matches the operands against
    the lists of the direction whose tensor operand stands where the line has it (a mismatch, and
    that direction's `mismatch_words`, hide the rest; a list another flag asks for is a mismatch it
    goes on after), calls the marker illegal,
    wants the other direction's tensor operand where the line matched the form's own lists
    ("Vector expected for argument 1": the store's, first), judges the load mode against the
    other direction's, and applies the gates."""
    pair = tuple(facts.spaces[:2])
    other = next(f for f in INSTRUCTIONS if f.path == form.path and pair in f.space_pairs)
    tensor = next(s for s in other.operands[0] if s.kind == "tensor")
    head = instr.operands[0] if instr.operands else None
    shaped = isinstance(head, ast.Address) and bool(head.items)
    theirs = shaped == (next(k for k, s in enumerate(other.operands[0]) if s.kind == "tensor") == 0)
    mine = other if theirs else form
    _, slots, soft = _match_tensor(mine, instr, facts, scope, line)
    if slots is None or facts.words & set(mine.mismatch_words):
        line.add("operands", name=form.name)
        return
    if soft:
        line.add("operands", name=form.name)
    line.add("illegal-modifier", mod=form.marker, name=form.name)
    if any(FLAG_GROUPS.get(w) == "cta_group" for w in facts.words):
        line.add("space-incorrect-cta-group", name=form.name)
    if not theirs:
        line.add("vector-expected", index=tensor.arg)
    _check_addresses(mine, instr, slots, facts, scope, line)
    mode = next((m for m in reversed(instr.qualifiers) if MODIFIERS.get(m) == "load_mode"), None)
    if mode is not None and mode not in other.load_modes:
        line.add("illegal-modifier", mod=mode, name=form.name)
    _check_gates(form, facts, frozenset(), False, ctx, line)


def emit_legality(instr: ast.Instruction, facts: _Facts, legality: list[tuple[str, dict[str, object]]],
                  line: _Line) -> None:
    """What ptxas says of the modifiers once the operands match (`_check_modifiers`'s `legality`)."""
    for key, fmt in legality:  # a refused sink stops ptxas before it judges some modifiers
        fmt.pop("word", None)
        if key == "vector-length" and not fmt.pop("always", False) and not any(
                len(v.items) != fmt["size"] for v in written(instr)):
            continue  # (a vector word is compared with every vector operand as written)
        if key == "vector-wide" and facts.type and VECTORS[str(fmt["mod"])] * TYPE_SIZE[facts.type] <= 16:
            continue  # (at most 128 bits: .v4 of a 32-bit type)
        if key == "comparison-type" and facts.type and fmt["mod"] in COMPARISONS_OF.get(facts.type[1], ()):
            continue  # (a comparison of the type's kind: .lo on .u32)
        if not (fmt.pop("late", False) and line.pending_fatal):
            line.emit(key, None, "error", fmt)


# -- modifiers -------------------------------------------------------------------------------------

def _split_space(mod: str) -> tuple[str, str] | None:
    """`.shared::cluster` -> (".shared", "::cluster"); None when `mod` is no sub-qualified space."""
    base, sep, sub = mod.partition("::")
    if sep and MODIFIERS.get(base) == "space" and "::" + sub in SUBSPACES:
        return base, "::" + sub
    return None


def _check_modifiers(form: Instr, mods: tuple[str, ...], line: _Line,
                     legality: list[tuple[str, dict[str, object]]]) -> _Facts:
    """Reports what ptxas finds in the words themselves (unknown, repeated) at once, and leaves in
    `legality` what it reports only when the operands match (modifiers the instruction does not
    take, state spaces)."""
    name = form.name
    words: set[str] = set()
    spaces: list[str] = []
    types: list[str] = []
    own = dict(form.words)
    classes = [("space" if _split_space(m) else own.get(m) or MODIFIERS.get(m)
                or ("flag" if m in form.flags else None)) for m in mods]
    at = {c: [i for i, k in enumerate(classes) if k == c] for c in ("sem", "scope", "dim", "load_mode")}
    # a copy's load mode is judged only where its state spaces are a pair of either direction
    # (measured; of the other direction against that direction's modes: _check_other_direction)
    written = tuple(m for m, k in zip(mods, classes, strict=True) if k == "space")[:2]
    paired = not form.space_pairs or written in form.space_pairs or written in form.other_pairs
    if form.space_pairs and paired:
        words.add("pair")  # (for the constraints that ptxas checks only then)
    seen_flags: set[str] = set()

    def illegal(key: str, **fmt: object) -> None:
        legality.append((key, fmt))

    def illegal_late(key: str, **fmt: object) -> None:  # after the destination operand
        legality.append((key, {**fmt, "late": True}))

    seen_classes: set[str] = set()
    evicts: list[str] = []
    later_ops = _post_ops(form, mods)[1:]
    formats: list[int] = []
    for i, (m, cls) in enumerate(zip(mods, classes, strict=True)):
        if i in later_ops:  # (with the illegal modifiers; the first is judged, the others not at all)
            if i == later_ops[0]:
                illegal("op-multiple")
            continue
        if cls is None:
            group = FLAG_GROUPS.get(m)
            if group is not None:  # (`.mbarrier`, of the completion mechanisms: the last judged)
                if group in seen_flags:
                    line.add("duplicate-flag", mod=GROUP_NAMES.get(group, m))
                seen_flags.add(group)
                if i != max(j for j, w in enumerate(mods) if FLAG_GROUPS.get(w) == group):
                    continue
            _other_word(form, i, mods, line, legality, seen_classes)
            words.add("word:" + m)  # (for conditions on another instruction's word: red.async's .exch)
        elif cls in ("sem", "scope"):
            # ptxas keeps the last .sem/.scope written: it judges that one, and names the repeats
            allowed = form.sems if cls == "sem" else form.scopes
            if i != at[cls][0]:
                if cls == "sem":
                    line.add("duplicate-sem", mod=m)
                else:
                    line.add("duplicate-scope")
            if i == at[cls][-1]:
                words.update((m, cls))
                if m not in allowed and cls == "sem" and form.scopes:  # judged with the pairing
                    illegal("illegal-modifier", mod=m, name=name)
                elif m not in allowed:
                    illegal_late("illegal-modifier", mod=m, name=name)
        elif cls == "space":
            split = _split_space(m)
            base, sub = split if split else (m, "")
            spaces.append(m)
            if len(spaces) == 3:
                line.add("space-multiple")
            if form.space_pairs or len(spaces) > 1:
                continue  # copies: judged as a pair; others: ptxas judges the first only
            words.update((m, "space:" + m))
            if not form.spaces:  # the sub-qualifier gates do not apply then (measured)
                illegal("space-none", name=name)
                continue
            words.update((base, sub) if sub else ())
            if form.space_expected and base == ".shared" and m not in form.spaces:
                illegal("space-incorrect-expected", name=name, other=form.space_expected)
            elif base not in {s.partition("::")[0] for s in form.spaces} or (
                    form.exact_spaces and m not in form.spaces):
                illegal("space-incorrect", name=name)
                if sub and form.subspace_illegal:
                    illegal("illegal-modifier", mod=sub, name=name)
            elif m not in form.spaces:
                illegal("illegal-modifier", mod=sub, name=name)
        elif cls in ("dim", "load_mode"):
            # one of each, on any instruction; ptxas judges the last written and names the repeats
            if i != at[cls][0]:
                if cls == "dim":
                    line.add("duplicate-dim")
                else:
                    line.add("duplicate-flag", mod=".load_mode")
            if i == at[cls][-1]:
                words.update((m, cls, *(("im2col",) if m in IM2COL_MODES else ())))
                if m not in (*form.dims, *form.load_modes) and (paired or cls == "dim"):
                    illegal("illegal-modifier", mod=CLASS_NAMES.get(cls, form.load_mode_name or m), name=name)
        elif cls == "type":
            types.append(m)
        elif cls == "silent":
            continue
        elif cls == "vecdest":  # a vector word on mapa, whose destination is a scalar: more (measured)
            _other_word(form, i, mods, line, legality, seen_classes)
            illegal("result-vector")
            illegal("vector-length", mod=m, name=name, size=0, always=True)
        elif cls == "proxykind":  # (fence.proxy's .alias, .async: one of them; ptxas names the
            # one written before each repeat, and judges the last: measured)
            before = [w for w in mods[:i] if own.get(w) == "proxykind"]
            if before:
                line.add("duplicate-flag", mod=before[-1])
            words.update(("read:" + m, cls))
            if not any(own.get(w) == "proxykind" for w in mods[i + 1:]):
                words.add(m)
        elif cls == "action":  # (griddepcontrol's one action: ptxas reads the words in order and
            # judges each against the one before it, measured)
            before = [w for w in mods[:i] if own.get(w) == "action"]
            if before and before[-1] == m:
                line.add("duplicate-sem", mod=m)
            elif before:
                line.add("combine", mod=before[-1], other=m)
            words.update((m, cls))
        elif cls == "cacheop":  # (a prefetch's .L1, .L2, .tensormap: one at most, the last judged; measured)
            if any(own.get(w) == cls for w in mods[:i]):
                line.add("duplicate-flag", mod="cache operation")
            if i == max(j for j, w in enumerate(mods) if own.get(w) == cls):
                words.update((m, cls))
                if m not in form.flags and m != form.marker:
                    illegal("illegal-modifier", mod=m, name=name)
        elif cls == "evict":  # (one eviction priority, judged; two judged no further: measured)
            evicts.append(m)
        elif cls == "format":  # (ldmatrix's .dst_fmt.src_fmt, one word to ptxas)
            formats.append(i)
        elif cls in ("op", "vec"):  # the instruction's own words (Instr.words)
            words.update((m, cls))
        else:
            group = FLAG_GROUPS.get(m)
            words.add("read:" + m)  # (for the gates ptxas checks as it reads a word)
            # of a group (one of them at most), ptxas judges the last written
            last = group is None or i == max(j for j, w in enumerate(mods) if FLAG_GROUPS.get(w) == group)
            if last:
                words.add(m)
            repeated = (group or m) in seen_flags and m not in UNCOUNTED_REPEATS
            if repeated and CLASS_REPEATS.get(WORD_CLASSES.get(m, "")):
                # (ptxas names some words by their class: tcgen05.commit's .mbarrier::arrive::one
                # rot13-encoded, measured)
                line.add("repeat-class", text=CLASS_REPEATS[WORD_CLASSES[m]])
            elif repeated and group is None and m in WORD_REPEATS:
                line.add("repeat-class", text=WORD_REPEATS[m])
            elif repeated:
                line.add("duplicate-flag", mod=GROUP_NAMES.get(group or "", m))
            if m not in form.flags and last and not (repeated and group is None):
                illegal("illegal-modifier", mod=m, name=name)
            seen_flags.add(group or m)
    if formats:
        words.add("format")
        if words & set(FORMAT_SHAPES):
            _format_pairs(mods, formats, line, legality, name)
    if len(evicts) > 1:
        line.add("repeat-class", text=CLASS_REPEATS["illegal:.level::eviction_priority"])
    elif evicts:
        words.update((evicts[0], "evict"))
    if form.space_pairs:
        words.update(_pair_words(spaces))
    elif len(spaces) > 1 and form.spaces and form.counts_spaces:
        illegal("space-count", name=name)
    types_ok = ((len(types) == 1 and types[0] in form.types) or (form.optional_type and not types)
                if form.types else not types)
    if types_ok and types:
        words.add(types[0])  # (for the conditions on the type: red.async's operations)
    return _Facts(words, spaces, types_ok, types[0] if types_ok and types else None)


def _post_ops(form: Instr, mods: tuple[str, ...]) -> list[int]:
    """Where an instruction with reduction operations (`Instr.words` "op") has them, and the other
    post-operation words (`.exch`, `.cas`): one class to ptxas, which judges the first written and
    says "Multiple instruction post-operation flags set" of the others (measured)."""
    own = dict(form.words)
    if "op" not in own.values():
        return []
    return [i for i, m in enumerate(mods)
            if own.get(m) == "op" or WORD_CLASSES.get(m) == "reduction" or m == ".cas"]


def _format_pairs(mods: tuple[str, ...], at: list[int], line: _Line,
                  legality: list[tuple[str, dict[str, object]]], name: str) -> None:
    """ldmatrix's format conversion words (at positions `at`), which ptxas reads two adjacent ones
    at a time as one word (measured): a pair it does not know is an illegal modifier named by both,
    a word alone "Unexpected number of 'format conversion' modifiers specified"."""
    k = 0
    while k < len(at):
        i = at[k]
        if k + 1 < len(at) and at[k + 1] == i + 1:
            if (mods[i], mods[i + 1]) not in FORMAT_CONVERSIONS:
                legality.append(("illegal-modifier", {"mod": mods[i] + mods[i + 1], "name": name}))
            k += 2
        else:
            line.add("format-count")
            k += 1


def _other_word(form: Instr, i: int, mods: tuple[str, ...], line: _Line,
                legality: list[tuple[str, dict[str, object]]], seen: set[str]) -> None:
    """A word the family does not take (`mods[i]`): what ptxas says of it (`spec.modifiers`,
    measured). An unknown word and a second word of a class are reported at once; the rest, like
    any illegal modifier, only when the operands match, and of a class only for the last word
    written (but for EVERY_WORD_CLASSES)."""
    name, m = form.name, mods[i]
    cls = WORD_CLASSES.get(m)
    judged = True
    if m in mods[:i] and m in WORD_REPEATS:  # (a word without a class, twice: measured)
        line.add("repeat-class", text=WORD_REPEATS[m])
    if cls is not None:
        if cls in seen and cls in CLASS_REPEATS:
            line.add("repeat-class", text=CLASS_REPEATS[cls])
        seen.add(cls)
        judged = cls in EVERY_WORD_CLASSES or not any(
            WORD_CLASSES.get(w) == cls and w not in MODIFIERS for w in mods[i + 1:])
    for tok in WORD_MESSAGES.get(m, ("unknown",)):
        if not judged and tok != "unknown":
            continue
        kind, _, arg = tok.partition(":")
        if kind == "unknown" and "illegal" in WORD_MESSAGES.get(m, ()):
            # both (`.mbarrier`): ptxas says so with the illegal modifiers, when the operands match
            legality.append(("unknown-modifier", {"mod": m, "word": m}))
        elif kind == "unknown":
            line.add("unknown-modifier", mod=m)
        elif kind == "illegal":
            legality.append(("illegal-modifier", {"mod": arg or m, "name": name, "word": m}))
        elif kind == "comparison":
            legality.append(("illegal-comparison", {"mod": m, "name": name}))
            if not form.types:  # with no instruction type, every comparison is a mismatch
                legality.append(("comparison-type", {"mod": m}))
        elif kind == "vector-wide":
            if form.types:  # (a type of 64 bits: .v2 fills the 128 bits)
                legality.append(("vector-wide", {"mod": m}))
        elif kind == "reduction":  # ptxas names the instruction with its type (but red.async)
            typed = name + (form.types[0] if form.types and form.name_types_reduction else "")
            legality.append(("illegal-reduction", {"mod": m, "name": typed}))
        elif kind == "type":  # a type ptxas reports and judges the line on (`.bf16`)
            line.add("types", name=name)
        elif kind == "requires":
            if arg not in mods:
                legality.append(("requires-modifier", {"mod": m, "other": arg}))
        elif kind in ("rounding", "vector", "query"):
            legality.append((f"illegal-{kind}", {"mod": m, "name": name}))
            if kind == "vector" and m in VECTORS:  # and the vector operands' lengths (measured)
                legality.append(("vector-length", {"mod": m, "name": name, "size": VECTORS[m]}))
                if form.types and VECTORS[m] * TYPE_SIZE.get(form.types[0], 0) > 16 \
                        and "vector-wide" not in WORD_MESSAGES.get(m, ()):
                    legality.append(("vector-wide", {"mod": m}))  # (a .b128 instruction's .v2)
        else:  # comparison-type, integer-only
            legality.append((kind, {"mod": m, "name": name}))


def _pair_words(spaces: list[str]) -> set[str]:
    """The facts a copy's state spaces give its conditions: each space, its parts, the pair (the
    first two), the destination (of two or more) and the first (of one or more)."""
    words = {*spaces, "".join(spaces[:2])}
    if len(spaces) >= 2:
        words.add("dst:" + spaces[0])
    if spaces:
        words.add("first:" + spaces[0])
    for sp in spaces:
        words.update(_split_space(sp) or ())
    return words


def _check_space_pair(form: Instr, facts: _Facts, line: _Line) -> str:
    """Copies take a (destination, source) pair of state spaces from `form.space_pairs`. Returns
    "ok" (the first two are a pair it takes), "pair" (exactly two, no such pair) or "bad" (fewer
    than two, or more with a wrong first pair)."""
    spaces = facts.spaces
    if len(spaces) < 2:
        if form.missing_pair_incorrect:
            line.add("space-incorrect", name=form.name)
        line.add("space-count", name=form.name)
        return "bad"
    if tuple(spaces[:2]) in form.space_pairs:
        facts.words.add("pair")  # for the constraints that ptxas checks only then
        return "ok"
    if form.pair_each:  # each of the two compared with the pair's own, which ptxas names
        for space, want in zip(spaces[:2], form.space_pairs[0], strict=True):
            if space != want:
                line.add("space-incorrect", name=form.name)
                line.add("space-incorrect-expected", name=form.name, other=want)
        return "bad"
    if tuple(spaces[:2]) in form.other_pairs and form.marker:
        line.add("illegal-modifier", mod=form.marker, name=form.name)
        return "other" if len(spaces) == 2 else "bad"
    line.add("space-incorrect", name=form.name)
    return "bad"


# -- operands --------------------------------------------------------------------------------------

def _sink_misplaced(instr: ast.Instruction, line: _Line) -> bool:
    """ptxas's grammar takes `_` only as the first operand: elsewhere it is a fatal syntax error."""
    for op in instr.operands[1:]:
        if isinstance(op, ast.Sink):
            line.add("sink-parse", op.pos, severity="fatal")
            return True
    return False


def _match_operands(form: Instr, instr: ast.Instruction, facts: _Facts, scope: Scope, ctx: Context,
                    line: _Line) -> tuple[tuple[Slot, ...] | None, bool]:
    """The operand list that matches and False; or a list ptxas only half-accepts (it reports
    "Arguments mismatch" and goes on) and True; or None. An optional operand (`Slot.flag`) belongs
    exactly to the modifier that brings it; a half-accepted list has every modifier's operand."""
    ops = instr.operands
    flags = {s.flag for slots in form.operands for s in slots if s.flag}
    present = flags & facts.words
    quiet = _Line(instr, line.path)
    lists = tuple(tuple(_typed(s, facts.type) for s in slots) for slots in form.operands)
    for slots in lists:
        if len(slots) == len(ops) and {s.flag for s in slots if s.flag} == present and all(
                _operand_fits(slot, op, i, form, scope, ctx, quiet)
                for i, (slot, op) in enumerate(zip(slots, ops, strict=True))):
            for i, (slot, op) in enumerate(zip(slots, ops, strict=True)):
                _operand_fits(slot, op, i, form, scope, ctx, line)  # its errors that do not stop
            return slots, False
    # a list of another word's that fits (`Instr.any_list`): a mismatch ptxas goes on after where
    # one of `operands_need` is written, none without; the operands judged as the written word's
    for slots in lists if form.any_list else ():
        if len(slots) == len(ops) and all(_operand_fits(slot, op, i, form, scope, ctx, quiet)
                                          for i, (slot, op) in enumerate(zip(slots, ops, strict=True))):
            own = next((s for s in lists if {x.flag for x in s if x.flag} == present), ())
            judged = own[:len(ops)] if len(own) >= len(ops) else slots
            for i, (slot, op) in enumerate(zip(judged, ops, strict=False)):
                _operand_fits(slot, op, i, form, scope, ctx, line)
            return judged, bool(facts.words & set(form.operands_need))
    # a list of the forms that are not ours fits without a mismatch where no marker says which
    # form is meant (a copy with no completion mechanism: measured)
    other_soft = form.marker is None or form.marker in facts.words
    for strict in (*lists, *form.other_operands):
        slots = tuple(dataclasses.replace(s, value_types=s.loose_types)
                      if s.loose_types and not present else s for s in strict)
        if len(slots) == len(ops) and present <= {s.flag for s in slots if s.flag} and all(
                _operand_fits(slot, op, i, form, scope, ctx, quiet)
                for i, (slot, op) in enumerate(zip(slots, ops, strict=True))):
            for i, (slot, op) in enumerate(zip(slots, ops, strict=True)):
                _operand_fits(slot, op, i, form, scope, ctx, line)
            return slots, strict in lists or other_soft
    # a mismatch; ptxas still says a vector's elements differ in size (measured on stmatrix, ldmatrix,
    # st.async), and compares the state space of a variable where mapa and getctarank want an address
    for op in ops:
        if isinstance(op, ast.Vector) and len({_element_size(i, scope) for i in op.items} - {0}) > 1:
            line.add("vector-elements", op.pos)
    for slots in lists:
        if len(slots) == len(ops):
            for i, (slot, op) in enumerate(zip(slots, ops, strict=True)):
                if isinstance(op, ast.Address) and slot.typed and not slot.special_message:
                    _operand_fits(slot, op, i, form, scope, ctx, line)
            break
    return None, False


def _typed(slot: Slot, ty: str | None) -> Slot:
    """A slot of the instruction's type: that type, and the slot's 64-bit rules under a 64-bit one."""
    if not slot.typed or ty is None:
        return slot
    if slot.wide is not None and TYPE_SIZE.get(ty) == 8:
        slot = slot.wide
    return dataclasses.replace(slot, type=ty)


def _match_tensor(form: Instr, instr: ast.Instruction, facts: _Facts, scope: Scope, line: _Line
                  ) -> tuple[ast.Instruction, tuple[Slot, ...] | None, bool]:
    """The tensor copy's operand list (see `_match_listed`), and the instruction as judged further.
    A tensor operand that is no `[tensorMap, {...}]` address is matched as ptxas does (measured):
    against `form.unaddressed`, or else as the tensorMap address and the coordinate vector written
    apart (`[dst], [tmap], {x, y}, [mbar]`), which ptxas reads as the usual list, then says
    "Illegal Addressing Mode" and wants an address for every address slot."""
    ops = instr.operands
    t = next(k for k, s in enumerate(form.operands[0]) if s.kind == "tensor")  # (the load's: 1)
    head = ops[t] if len(ops) > t else None
    if head is None or (isinstance(head, ast.Address) and head.items):
        flat = validate_tensor_flat.flattened(instr, t) if form.unaddressed else None
        other = validate_tensor_flat.fit(form, flat, frozenset(facts.words), scope) if flat else None
        if flat is None or other is None:
            return (instr, *_match_listed(form, instr, facts, scope, line))
        # ptxas reads the operands by that list too (validate_tensor_flat), and goes on after a count
        # the usual lists do not have (a mismatch), judging the coordinates by them still (measured)
        validate_tensor_flat.judge(form, flat, other, scope, line)
        slots, soft = _match_listed(form, instr, facts, scope, line, judged=t + 1)
        if slots is None:
            _judge_uncounted(form, ops, t, facts, scope, line)
        return instr, validate_tensor_flat.unflattened(other, t), soft or slots is None
    if form.unaddressed:  # (a scalar or a vector there: measured on the load only)
        alt = _match_unaddressed(form, ops, facts, scope, line)
        if alt is not None:
            return instr, alt, False
    tmap = _as_address(ops[t]) if len(ops) > t + 1 else None
    if tmap is None:
        return (instr, *_match_listed(form, instr, facts, scope, line))
    joined = instr._replace(operands=(*ops[:t], tmap._replace(items=(ops[t + 1],)), *ops[t + 2:]))
    slots, soft = _match_listed(form, joined, facts, scope, line)
    if slots is not None and not line.pending_fatal:
        line.add("addressing-mode", ops[t].pos, name=form.name)
        for k, op in enumerate(ops):  # the operands as written: ptxas numbers them so
            slot = slots[k if k <= t else k - 1] if k != t + 1 else None
            if slot is not None and slot.kind in ("addr", "tensor") and not isinstance(op, ast.Address):
                line.add("address-expected", op.pos, index=k, name=form.name)
            sym = scope.lookup(op.name) if k in (t, t + 1) and isinstance(op, ast.Name) else None
            if sym is not None and sym.special:
                line.add("special-register", op.pos, name=form.name)
        name = tmap.base if tmap is ops[t] else None
        base = scope.lookup(name.name) if name is not None else None
        if name is not None and base is not None and base.space == ".reg" and base.type in NON_ADDRESS_TYPES:
            # `[tmap]` written apart is an address like any other (in `[tmap, {...}]` any register is)
            line.add("address-type", name.pos, symbol=base.name, type=base.type)
    return joined, slots, soft


def _judge_uncounted(form: Instr, ops: tuple[ast.Operand, ...], t: int, facts: _Facts, scope: Scope,
                     line: _Line) -> None:
    """The operands up to `[tensorMap, x]` (operand `t`) judged as by the usual lists, whatever
    their count: the destination as an address, the coordinates."""
    for k in range(t):
        _tensor_operand_fits(form.operands[0][k], ops[k], k + 1, form, scope, line)
    slot, op = form.operands[0][t], ops[t]
    vec, size = _vector_of(slot, op), _vector_size(slot, facts.words)
    if isinstance(vec, ast.Vector):
        _vector_fits(slot, vec, scope, line)
    if vec is None or size is None or not _spaces_right(form, facts):
        return
    if not isinstance(vec, ast.Vector):
        line.add("vector-expected", op.pos, index=slot.arg)
    elif size != len(vec.items):
        line.add("vector-size", vec.pos, index=slot.arg, name=form.name)


def _as_address(op: ast.Operand) -> ast.Address | None:
    """The tensorMap operand written apart from its vector, as an address: `[tmap]` itself, a name
    as its base, an integer as an immediate address (then judged as such); None for anything else."""
    if isinstance(op, ast.Address):
        return op
    if isinstance(op, ast.Name):
        return ast.Address(op, 0, op.pos)
    if isinstance(op, ast.Imm):
        return ast.Address(None, op.value, op.pos)
    return None


def _match_listed(form: Instr, instr: ast.Instruction, facts: _Facts, scope: Scope,
                  line: _Line, judged: int | None = None) -> tuple[tuple[Slot, ...] | None, bool]:
    """The tensor copy's operand list, as ptxas matches it (measured). The candidates are the lists
    with the operands of every optional modifier written (the im2col vector aside: ptxas counts it
    optional). A count no candidate has is a mismatch at once. Otherwise the vectors' elements are
    judged, then the list the modifiers ask for; another candidate that fits is a mismatch ptxas
    goes on after (that list, and True). Only then, if the state spaces are a pair it takes, the
    vectors' lengths, and the other operands' own errors (as addresses only before operand `judged`,
    where ptxas reads the rest by another list: `validate_tensor_flat`)."""
    ops = instr.operands
    flags = {s.flag for slots in form.operands for s in slots if s.flag}
    present = flags & facts.words
    full = next(slots for slots in form.operands if {s.flag for s in slots if s.flag} == present)
    candidates = [slots for slots in form.operands
                  if {s.flag for s in slots if s.flag} >= present - {"im2col"}]
    if len(ops) < sum(s.kind != "vector" for s in full) or all(len(c) != len(ops) for c in candidates):
        return None, False
    for slot, op in zip(full, ops, strict=False):
        vec = _vector_of(slot, op)
        if isinstance(vec, ast.Vector):
            _vector_fits(slot, vec, scope, line)
    fit: tuple[Slot, ...] | None = full
    if not _tensor_list_fits(full, ops, form, scope, line):
        # another candidate; a scalar taken for the im2col vector only when nothing else fits
        # (the load's: a one-element vector read as its element, measured on the load only)
        alike = tuple(map(_single, ops)) if form.unaddressed else ops
        fit = next((c for strict in (True, False) for c in candidates if c is not full and len(c) == len(ops)
                    and _tensor_list_fits(c, alike, form, scope, line, strict)), None)
    if fit is None:
        return None, False
    # a vector where the words put ctaMask, if a list fits the operands as written (measured)
    refused = [(k, op) for k, (slot, op) in enumerate(zip(full, ops, strict=False))
               if slot.vector_refused and isinstance(op, ast.Vector)]
    if refused and any(len(c) == len(ops) and _tensor_list_fits(c, ops, form, scope, line)
                       for c in candidates):
        for k, op in refused:
            line.add("vector-unexpected", op.pos, index=k + 1, name=form.name)
    pair_ok = _spaces_right(form, facts)
    for k, (slot, op) in enumerate(zip(fit, ops, strict=True)):
        vec = _vector_of(slot, op)
        if slot.kind not in ("tensor", "vector"):
            unjudged = (slot.needs_space and len(facts.spaces) <= (slot.governed_by or 0)) or (
                judged is not None and k >= judged)
            _tensor_operand_fits(slot, op, k + 1, form, scope, line, addresses=not unjudged)
        elif not pair_ok or vec is None or _vector_size(slot, facts.words) is None:
            continue  # (no load mode asks for an im2col vector: ptxas does not judge one)
        elif not isinstance(vec, ast.Vector):  # ptxas takes a scalar as a vector of length 0
            line.add("vector-expected", op.pos, index=slot.arg)
            if slot.kind == "vector" and _vector_size(slot, facts.words) not in (0, None):
                line.add("vector-size", op.pos, index=slot.arg, name=form.name)
        elif _vector_size(slot, facts.words) not in (len(vec.items), None):
            line.add("vector-size", vec.pos, index=slot.arg, name=form.name)
    return fit, fit is not full


def _spaces_right(form: Instr, facts: _Facts) -> bool:
    """The state spaces are a pair the copy takes (a copy of one state space, the prefetch: any):
    only then does ptxas judge the vectors' lengths (measured)."""
    return not form.space_pairs or tuple(facts.spaces[:2]) in form.space_pairs


def _match_unaddressed(form: Instr, ops: tuple[ast.Operand, ...], facts: _Facts, scope: Scope,
                       line: _Line) -> tuple[Slot, ...] | None:
    """A tensor operand that is no address: the first of `form.unaddressed` whose modifiers are
    written and whose slots the operands fit (measured). Reports what ptxas says then: "Vector
    expected", "Illegal Addressing Mode", the vector's elements, and for each `addr` slot an
    operand that is no address; the addresses themselves are judged later, as for any list."""
    words = frozenset(facts.words)
    fit = next((slots for when, slots in form.unaddressed if when.holds(words, frozenset(), False)
                and len(slots) == len(ops) and all(
                    _unaddressed_fits(s, op, scope, line) for s, op in zip(slots, ops, strict=True))), None)
    if fit is None:
        return None
    pair_ok = tuple(facts.spaces[:2]) in form.space_pairs  # as for the usual list's vectors
    for slot, op in zip(fit, ops, strict=True):
        if slot.kind == "vector":
            if pair_ok:
                line.add("vector-expected", op.pos, index=slot.arg)
            if isinstance(op, ast.Vector):
                _vector_fits(slot, op, scope, line)
    if isinstance(ops[0], ast.Sink):  # fatal: ptxas says no more of the operands
        line.defer("sink-discard", ops[0].pos, severity="fatal", name=form.name)
        return fit
    for k, (slot, op) in enumerate(zip(fit, ops, strict=True)):
        if slot.kind == "addr" and not isinstance(op, ast.Address):
            line.add("address-expected", op.pos, index=k, name=form.name)
            if isinstance(op, ast.Name) and not scope.known(op.name):
                line.add("operand-type", op.pos, name=form.name)
            if isinstance(op, ast.Imm):
                line.add("address-immediate", op.pos)
            sym = scope.lookup(op.name) if isinstance(op, ast.Name) else None
            if sym is not None and sym.space != ".reg" and slot.governed_by is not None \
                    and len(facts.spaces) > slot.governed_by \
                    and facts.spaces[slot.governed_by].partition("::")[0] != sym.space:
                line.add("address-mismatch", op.pos, name=form.name)
        sym = scope.lookup(op.name) if isinstance(op, ast.Name) else None
        if sym is not None and sym.special:
            line.add("special-register", op.pos, name=form.name)
    line.add("addressing-mode", ops[1].pos, name=form.name)
    return fit


def _unaddressed_fits(slot: Slot, op: ast.Operand, scope: Scope, line: _Line) -> bool:
    """Whether `op` stands in `slot` of an unaddressed list: an address slot takes anything but a
    vector (a sink only first); a vector slot a vector of its type or a declared scalar."""
    if slot.kind == "addr":
        return not isinstance(op, ast.Vector)
    if isinstance(op, ast.Vector):
        return slot.kind == "vector" and _vector_fits(slot, op, scope, _Line(line.instr, line.path))
    return _scalar_fits(slot, op, scope)


def _vector_of(slot: Slot, op: ast.Operand) -> ast.Operand | None:
    """What stands where a slot wants a vector: the item of `[tensorMap, item]`, or the operand."""
    if slot.kind == "tensor":
        return op.items[0] if isinstance(op, ast.Address) and len(op.items) == 1 else None
    return op if slot.kind == "vector" else None


def _tensor_list_fits(slots: tuple[Slot, ...], ops: tuple[ast.Operand, ...], form: Instr, scope: Scope,
                      line: _Line, strict: bool = False) -> bool:
    """Whether each operand has the kind and type of its slot (reports nothing); `strict`: only a
    vector stands for the im2col vector."""
    if len(slots) != len(ops):
        return False
    quiet = _Line(line.instr, line.path)
    for k, (slot, op) in enumerate(zip(slots, ops, strict=True)):
        if slot.kind in ("tensor", "vector"):
            vec = _vector_of(slot, op)
            ok = (_vector_fits(slot, vec, scope, quiet) if isinstance(vec, ast.Vector)
                  else vec is not None and not (strict and slot.kind == "vector")
                  and _scalar_fits(slot, vec, scope))
        else:
            ok = _tensor_operand_fits(slot, op, k + 1, form, scope, quiet)
        if not ok:
            return False
    return True


def _single(op: ast.Operand) -> ast.Operand:
    return op.items[0] if isinstance(op, ast.Vector) and len(op.items) == 1 else op


def _scalar_fits(slot: Slot, op: ast.Operand, scope: Scope) -> bool:
    """A register of the slot's type or an integer immediate."""
    if isinstance(op, ast.Imm):
        return True
    sym = scope.lookup(op.name) if isinstance(op, ast.Name) else None
    return sym is not None and sym.space == ".reg" and sym.type in TYPE_COMPATIBLE[slot.type]


def _vector_size(slot: Slot, words: set[str]) -> int | None:
    """The length the modifiers ask of a vector slot (None: no load mode that brings it)."""
    dim = next((n for d, n in DIMENSIONS.items() if d in words), 0)
    rule = next(((a, b) for mode, a, b in slot.sizes if not mode or mode in words), None)
    return None if rule is None else rule[0] * dim + rule[1]


def _vector_fits(slot: Slot, vec: ast.Vector, scope: Scope, line: _Line) -> bool:
    """A coordinate or im2col vector's elements: one of them must have the slot's type, the first
    one when their sizes differ (measured)."""
    sizes: set[int] = set()
    types: list[str | None] = []
    sinks: list[ast.Sink] = []
    for item in vec.items:
        if isinstance(item, ast.Imm):
            continue
        if isinstance(item, ast.FloatImm):
            types.append(".f32" if item.bits == 32 else ".f64")
            sizes.add(item.bits // 8)
            continue
        if isinstance(item, ast.Sink):
            sinks.append(item)
            continue
        sym = scope.lookup(item.name) if isinstance(item, ast.Name) else None
        if isinstance(item, ast.Name) and sym is None and not scope.known(item.name):
            line.add("illegal-expression", item.pos, symbol=item.name)
            continue
        if sym is not None and sym.type != ".pred":
            sizes.add(sym.size // max(sym.count, 1))
        types.append(sym.type if sym is not None and sym.space == ".reg" else None)
    if not types:  # nothing typed: fine for integers only
        if all(isinstance(i, ast.Imm) for i in vec.items):
            return True
        line.add("vector-infer", vec.pos)
        return False
    for sink in sinks:
        line.add("sink-source", sink.pos)
    if len(sizes) > 1:
        line.add("vector-elements", vec.pos)
    ok = [t in TYPE_COMPATIBLE[slot.type] for t in types]
    return ok[0] if len(sizes) > 1 else any(ok)


def _tensor_operand_fits(slot: Slot, op: ast.Operand, arg: int, form: Instr, scope: Scope,
                         line: _Line, addresses: bool = True) -> bool:
    """dstMem and mbar take an address, any register, a symbol or a float (an integer is an
    immediate address); ctaMask and cache-policy a register of their type or an immediate (ptxas's
    argument number `arg` counts the coordinates as one of its own). Measured. `addresses`: whether
    an integer or an undeclared name is judged as an address (not where its state space is
    missing: `Slot.needs_space`)."""
    if isinstance(op, ast.Sink):  # only the first operand gets here (elsewhere a syntax error)
        line.defer("sink-discard", op.pos, severity="fatal", name=form.name)
        return True
    if slot.kind == "addr":
        if isinstance(op, ast.Vector):
            line.add("vector-operand", op.pos, name=form.name)
        elif isinstance(op, ast.Imm) and addresses:
            line.add("address-immediate", op.pos)
        elif isinstance(op, ast.Name):
            sym = scope.lookup(op.name)
            if sym is not None and sym.special:
                line.add("special-register", op.pos, name=form.name)
            elif not scope.known(op.name) and addresses:
                line.add("operand-type", op.pos, name=form.name)
        return not (isinstance(op, ast.Address) and op.items)
    if isinstance(op, ast.Imm):
        return True
    if isinstance(op, ast.Vector) and slot.vector_refused:  # (said by `_match_listed`)
        return _vector_fits(slot, op, scope, _Line(line.instr, line.path))
    sym = scope.lookup(op.name) if isinstance(op, ast.Name) else None
    if sym is None or sym.type not in TYPE_COMPATIBLE[slot.type]:
        return False
    if sym.space != ".reg":
        line.add("must-be-register", op.pos, index=arg, name=form.name)
    return True


def _operand_fits(slot: Slot, op: ast.Operand, index: int, form: Instr, scope: Scope, ctx: Context,
                  line: _Line) -> bool:
    """Whether `op` can stand in `slot` (False: "Arguments mismatch", unless this reported a fatal
    error itself). Errors that do not stop ptxas's other checks are reported here too."""
    if isinstance(op, ast.Address) and op.items:  # `[a, x]`: a tensor copy's operand only (measured)
        return False
    if isinstance(op, ast.Vector) and slot.vector_message and not (len(op.items) == 1 and slot.vector1):
        first = _element_size(op.items[0], scope) if op.items else 0
        if slot.vector_first_size and first and first != TYPE_SIZE.get(slot.type, first):
            return False
        for item in op.items:  # (an undeclared name in it, as in any vector expression)
            if isinstance(item, ast.Name) and scope.lookup(item.name) is None and not scope.known(item.name):
                line.add("illegal-expression", item.pos, symbol=item.name)
        if len({_element_size(i, scope) for i in op.items} - {0}) > 1:
            line.add("vector-elements", op.pos)
        line.add("vector-operand", op.pos, name=form.name)
        return True
    if isinstance(op, ast.Vector) and slot.vector_any and (len(op.items) > 1 or not slot.vector1):
        return _vector_fits(slot, op, scope, line)
    if slot.length or slot.sized_message:  # a vector of values (st.async's .v2/.v4): a scalar fits too
        one = dataclasses.replace(slot, length=0, sized_message=False)
        if slot.sized_message:  # (stmatrix's, by its .num; length 0: any, measured)
            n = len(op.items) if isinstance(op, ast.Vector) else None
            if slot.length and n != slot.length:
                line.add("vector-size-expected", op.pos, size=slot.length, index=index, name=form.name)
                if n is not None and slot.length > 1 and not line.pending_fatal:  # (a refused sink hides it)
                    line.add("vector-length", op.pos, name=form.name)
        if slot.sized_message and isinstance(op, ast.FloatImm):
            if index == 0 and op.bits == 32:  # (ldmatrix's destination: measured)
                line.add("result-register", op.pos, name=form.name)
            return op.bits == 32  # (a float of 32 bits fits: measured)
        if slot.sized_message and isinstance(op, ast.Address):
            # (a variable or a register of the slot's type as the base is "must be register")
            base = scope.lookup(op.base.name) if op.base is not None else None
            if base is None or base.special or (
                    base.space == ".reg" and base.type not in TYPE_COMPATIBLE[slot.type]):
                return False
            line.add("must-be-register", op.pos, index=index, name=form.name)
            return True
        if not isinstance(op, ast.Vector):
            return _operand_fits(one, op, index, form, scope, ctx, line)
        if slot.sized_message and len({_element_size(i, scope) for i in op.items} - {0}) > 1:
            line.add("vector-elements", op.pos)  # (then the first element is judged: measured)
            return _operand_fits(one, op.items[0], index, form, scope, ctx, line)
        if len(op.items) != slot.length and not slot.sized_message:
            line.add("vector-length", op.pos, name=form.name)
        return all(_operand_fits(one, item, index, form, scope, ctx, line) for item in op.items)
    if isinstance(op, ast.Vector) and len(op.items) == 1 and slot.vector1:
        op = op.items[0]
    if slot.imm_only and not isinstance(op, ast.Imm | ast.Sink):
        return False
    if slot.kind == "pair":  # `d|p` (elect.sync): a register of the slot's type or `_`, then a predicate
        if isinstance(op, ast.Imm | ast.Name | ast.Sink):  # one destination: the predicate wanted
            sym = scope.lookup(op.name) if isinstance(op, ast.Name) else None
            if isinstance(op, ast.Name) and (sym is None or sym.space != ".reg" or (
                    sym.type not in TYPE_COMPATIBLE[slot.type] and not sym.special)):
                return False
            line.add("pred-output", op.pos, name=form.name)
            if isinstance(op, ast.Imm):
                line.add("result-register", op.pos, name=form.name)
            elif sym is not None and sym.special:
                line.add("special-register", op.pos, name=form.name)
            return True
        halves = op.text.split("|") if isinstance(op, ast.Expr) else []
        return len(halves) == 2 and all(
            h == "_" or ((sym := scope.lookup(h)) is not None and sym.space == ".reg" and not sym.special
                         and sym.type in TYPE_COMPATIBLE[t])
            for h, t in zip(halves, (slot.type, ".pred"), strict=True))
    if isinstance(op, ast.Sink):
        if slot.kind != "dest" or slot.sink_from is None or ctx.version < slot.sink_from:
            line.defer("sink-discard", op.pos, severity="fatal", name=form.name)
        return True
    if isinstance(op, ast.Address) and slot.typed and not slot.special_message:
        # mapa, getctarank: `[imm]` or `[register]` of the type is "must be register", `[variable]` a
        # mismatch (measured)
        base = scope.lookup(op.base.name) if op.base is not None else None
        if op.base is None or (base is not None and base.space == ".reg" and not base.special
                               and _typed_fits(slot.type, base.type)):
            line.add("must-be-register", op.pos, index=index, name=form.name)
            return True
        if base is not None and base.space not in (".reg", ".shared") and slot.kind != "dest" \
                and slot.space_message:  # (measured)
            line.add("address-mismatch", op.pos, name=form.name)
        return False
    if slot.kind == "addr":
        if isinstance(op, ast.Address) or not slot.value_types:
            return isinstance(op, ast.Address)
        if slot.value_types == ("imm",):
            return isinstance(op, ast.Imm)
        loose = [dataclasses.replace(slot, kind="value", type=t, value_types=()) for t in slot.value_types]
        quiet = _Line(line.instr, line.path)
        slot = next((s for s in loose if _operand_fits(s, op, index, form, scope, ctx, quiet)), loose[0])
    if isinstance(op, ast.Imm):
        if slot.kind == "dest":
            line.add("result-register", op.pos, name=form.name)
            return True
        return slot.imm
    if isinstance(op, ast.FloatImm) and slot.typed:  # (not one of 32 bits for 64: measured)
        return slot.type[1] in "bf" and not (op.bits == 32 and TYPE_SIZE.get(slot.type) == 8)
    if slot.symbol_ok and isinstance(op, ast.Name) and (sym := scope.lookup(op.name)) is not None \
            and sym.space != ".reg":
        return True
    if slot.typed and slot.special_message and _not_a_register(op, slot, scope):
        line.add("must-be-register", op.pos, index=index, name=form.name)  # (whatever its type)
        return True
    if not isinstance(op, ast.Name):
        return False
    sym = scope.lookup(op.name)
    if slot.typed and sym is not None and sym.special:
        if slot.special_message:
            line.add("special-register", op.pos, name=form.name)
        return slot.special_message
    if slot.typed and sym is not None and sym.space == ".reg":
        return _typed_fits(slot.type, sym.type)
    if sym is None or sym.type not in TYPE_COMPATIBLE.get(slot.type, ()):
        return False
    if sym.special:
        line.add("special-register", op.pos, name=form.name)
    elif sym.space != ".reg":
        line.add("must-be-register", op.pos, index=index, name=form.name)
    return True


def _element_size(op: ast.Operand, scope: Scope) -> int:
    """The size of a vector's register element (0: no register, or a predicate)."""
    sym = scope.lookup(op.name) if isinstance(op, ast.Name) else None
    if sym is None or sym.type == ".pred":
        return 0
    return {".f16x2": 4, ".bf16x2": 4}.get(sym.type, TYPE_SIZE.get(sym.type, 0))


def _typed_fits(want: str, reg: str) -> bool:
    """A register for a value of type `want` (st.async, red.async; measured): of a `.b` type any
    register of its size but a predicate, of a `.u`/`.s` type an integer one of its size."""
    if want[1] == "b":
        return reg != ".pred" and TYPE_SIZE.get(reg) == TYPE_SIZE.get(want)
    return reg in TYPE_COMPATIBLE.get(want, ())


def _not_a_register(op: ast.Operand, slot: Slot, scope: Scope) -> bool:
    """Where st.async and red.async want a value: a variable, or an address of a variable or of a
    register that would fit there, is "must be register"; other addresses a mismatch (measured)."""
    name = op.base if isinstance(op, ast.Address) else op if isinstance(op, ast.Name) else None
    sym = scope.lookup(name.name) if name is not None else None
    if sym is None or sym.special:
        return False
    if sym.space != ".reg":
        return True
    return isinstance(op, ast.Address) and _typed_fits(slot.type, sym.type)


#: The comparisons ptxas takes with an integer type of each kind, `u` or `s` (measured on
#: cp.reduce.async.bulk; a `.b` type takes none of them).
COMPARISONS_OF: dict[str, tuple[str, ...]] = {
    "u": (".eq", ".ne", ".lt", ".le", ".gt", ".ge", ".lo", ".ls", ".hi", ".hs"),
    "s": (".eq", ".ne", ".lt", ".le", ".gt", ".ge"),
}


# -- semantics, addresses, immediates, gates -------------------------------------------------------

def _check_semantics(form: Instr, facts: _Facts, roles: frozenset[str], sink: bool, ctx: Context,
                     line: _Line, early: bool = False) -> None:
    """The constraints (those ptxas reports with the modifiers when `early`)."""
    words = frozenset(facts.words)
    if form.scopes and not early:  # ptxas pairs .sem and .scope wherever it takes a scope
        sem = next((m for m in facts.words if MODIFIERS.get(m) == "sem"), form.default_sem)
        scope = next((m for m in facts.words if MODIFIERS.get(m) == "scope"), None)
        if sem and not scope:
            line.add("sem-needs-scope", mod=sem, name=form.name)
        if scope and not sem and form.scope_needs_sem:
            line.add("scope-needs-sem", mod=scope, name=form.name)
    for c in form.constraints:
        if c.early != early or not c.when.holds(words, roles, sink) or (c.late and line.pending_fatal):
            continue
        if c.below_sm is not None or c.below_version is not None:
            old_target = (c.below_sm is not None and ctx.target is not None
                          and not ctx.target.at_least(c.below_sm))
            old_version = c.below_version is not None and ctx.version < c.below_version
            if not (old_target or old_version):
                continue
        line.add(c.message, mod=c.mod, other=c.other, name=form.name + c.name_suffix)


def _check_addresses(form: Instr, instr: ast.Instruction, slots: tuple[Slot, ...], facts: _Facts,
                     scope: Scope, line: _Line, spaces_only: bool = False) -> None:
    """`spaces_only`: after a refused sink ptxas still says "Illegal state space for address
    operand" of a variable, and nothing else of the addresses (measured on the arrive and wait
    forms, `mbarrier.try_wait.b64 _, [gbar], %rd1;`)."""
    for slot, op in zip(slots, instr.operands, strict=False):
        if form.unaddressed and slot.kind == "addr" and isinstance(op, ast.Name) and _variable(op, scope):
            op = ast.Address(op, 0, op.pos)  # to the tensor load a bare variable is an address (measured)
        if slot.kind not in ("addr", "tensor") or not isinstance(op, ast.Address):
            continue
        if (slot.any_address and not facts.spaces) or (  # (judged only with a state space: measured)
                slot.needs_space and len(facts.spaces) <= (slot.governed_by or 0)):
            continue
        if op.base is None:
            if not spaces_only:
                line.add("address-immediate", op.pos)
            continue
        sym = scope.lookup(op.base.name)
        if sym is None:  # an undeclared base: ptxas also names it in its "Unknown symbol" pass
            if not spaces_only:
                line.add("operand-type", op.pos, name=form.name)
            continue
        if sym.space == ".reg":
            if sym.type in NON_ADDRESS_TYPES and slot.kind != "tensor" and not spaces_only:
                line.add("address-type", op.base.pos, symbol=sym.name, type=sym.type)  # tensorMap: any
            continue
        if sym.space not in slot.spaces and slot.space_message:
            line.add("address-space", op.base.pos, symbol=sym.name, name=form.name)
        if spaces_only:
            continue
        if slot.exact_space and len(facts.spaces) <= (slot.governed_by or 0):
            continue
        if slot.governed_by is not None:  # with fewer state spaces than slots, the last one
            given = facts.spaces[min(slot.governed_by, len(facts.spaces) - 1)] if facts.spaces else None
        elif form.address_space < 0:  # every state space written (try_cancel, measured)
            given = next((sp for sp in facts.spaces if sp.partition("::")[0] != sym.space), None)
        else:
            given = facts.spaces[min(form.address_space, len(facts.spaces) - 1)] if facts.spaces else None
        if given is not None and given.partition("::")[0] != sym.space:
            line.add("address-mismatch", op.base.pos, name=form.name)


def _variable(op: ast.Name, scope: Scope) -> bool:
    sym = scope.lookup(op.name)
    return sym is not None and sym.space != ".reg"


def _check_immediates(form: Instr, instr: ast.Instruction, slots: tuple[Slot, ...], line: _Line,
                      words: set[str] | frozenset[str] = frozenset(), ctx: Context | None = None) -> None:
    """The immediates' checks (those of other targets left out); a "fact" check adds its fact to
    `words` (a set: the gates read it next)."""
    target = ctx.target.name if ctx is not None and ctx.target is not None else None
    for index, (slot, op) in enumerate(zip(slots, instr.operands, strict=True)):
        if isinstance(op, ast.Sink) and slot.imm_only:  # ptxas judges the refused sink as 0 there
            op = ast.Imm(0, "0", op.pos)
        if not isinstance(op, ast.Imm):
            continue
        for c in slot.checks:
            if (c.when and c.when not in words) or (c.targets and target not in c.targets):
                continue
            w = c.value(op.value)
            if c.kind == "fact":
                if c.lo <= w <= c.hi and isinstance(words, set):
                    words.add(c.fact)
                continue
            failed = ((c.kind == "positive" and w <= 0) or (c.kind == "parity" and w not in (0, 1))
                      or (c.kind == "multiple" and w % c.lo != 0) or (c.kind == "nonnegative" and w < 0)
                      or (c.kind == "values" and w not in (c.lo, c.hi)) or (c.kind == "exact" and w != c.lo)
                      or (c.kind in ("range", "field-range") and not c.lo <= w <= c.hi))
            if failed:
                shown = c.value(op.value, c.printed) if c.printed else w
                line.add(f"imm-{c.kind}", op.pos, index=slot.arg or index, name=form.name, value=shown,
                         lo=c.lo, hi=c.hi, mod=c.when)


def _check_gates(form: Instr, facts: _Facts, roles: frozenset[str], sink: bool, ctx: Context,
                 line: _Line, early: bool = False, at_once: bool = False) -> None:
    """The feature gates (those ptxas checks with the modifiers when `early`, as it reads the words
    when `at_once`)."""
    words = frozenset(facts.words)
    others = OTHER_WORD_GATES if any(w.startswith("word:") for w in words) else ()
    for g in (*(MODIFIER_GATES if form.object_rules else ()), *form.gates, *others):
        if g.at_once != at_once or g.early != early or not g.when.holds(words, roles, sink) or (
                g.late and line.pending_fatal):
            continue
        if g.version is not None and ctx.version < g.version:
            line.add("gate-version", subject=g.subject, version=format_version(g.version))
        if g.sm is not None and ctx.target is not None and not ctx.target.at_least(g.sm):
            line.add("gate-target", subject=g.subject, sm=g.sm)
        if g.targets and ctx.target is not None and ctx.target.name not in g.targets:
            line.add("gate-unsupported", subject=g.subject, target=ctx.target.name)
        if g.arch_max is not None and ctx.target is not None and ctx.target.sm > g.arch_max:
            line.add("gate-arch", subject=g.subject, target=ctx.target.name)
