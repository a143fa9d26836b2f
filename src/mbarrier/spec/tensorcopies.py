"""The tensor copies that take no mbarrier, as data for the validator (`spec.forms`' classes): the TMA
tensor store, the tensor reduction and the tensor prefetch, as ptxas 13.0 judges them (measured).
Source: PTX ISA 9.7.9.25.5.2 (cp.async.bulk.tensor, the .global <- .shared::cta direction),
9.7.9.25.5.3 (cp.reduce.async.bulk.tensor), 9.7.9.25.5.4 (cp.async.bulk.prefetch.tensor); not in
shared/spec, cited by number from the manual (PTX ISA 9.0).
"""

from __future__ import annotations

from typing import Final

from mbarrier.spec.forms import (
    _BYTES,
    _CTA_GROUPS,
    _L2,
    _MC,
    _NO_COMPLETION,
    _SM100_FAMILY,
    _TENSOR,
    ALWAYS,
    DIMENSIONS,
    TENSOR_GATES,
    TENSOR_VECTOR_LENGTHS,
    Cond,
    Constraint,
    Gate,
    Instr,
    Slot,
    _addr,
    _feature,
    load_mode_gates,
    tensor_im2col,
    tensor_map,
    tensor_mode_dims,
)

_STORE_PAIR = (".global", ".shared::cta")
#: The load's state-space pairs (its .mbarrier::complete_tx::bytes forms).
_LOAD_PAIRS = ((".shared::cluster", ".global"), (".shared::cta", ".global"))
_POLICY = Slot("cachePolicy", "value", ".b64", flag=_L2)
#: A dimension is required where the state spaces are right (the fact "pair"; measured).
_NEEDS_DIM = Cond(has=("pair",), lacks=("dim",))


def _src() -> Slot:
    return _addr("srcMem", space_message=False, governed_by=1, needs_space=True)


def _tensor_store() -> Instr:
    """cp.async.bulk.tensor.dim.global.shared::cta{.load_mode}.bulk_group{.L2::cache_hint}
    [tensorMap, {coords}], [srcMem]{, cache-policy} (PTX ISA 9.7.9.25.5.2): the TMA tensor store,
    which completes in a bulk async-group. `.load_mode` .tile, .tile::scatter4 (2d, 5 coordinates)
    or .im2col_no_offs (3d-5d). ptxas reads it as the load's instruction: the same gates, and for
    `.multicast::cluster` or `.cta_group` an "Arguments mismatch" that hides the rest (measured)."""
    tmap = tensor_map(1, 0)
    return Instr(
        ("cp", ".async", ".bulk", ".tensor"), "9.7.9.25.5.2", types=(), spaces=(), space_pairs=(_STORE_PAIR,),
        flags=(".bulk_group", _L2, _MC, *_CTA_GROUPS), mismatch_words=(_MC, *_CTA_GROUPS),
        marker=".bulk_group", marker_implied=True, implied_pairs=(_STORE_PAIR,), tensor_first=True,
        leaves_other_pairs=True,
        other_pairs=_LOAD_PAIRS, object_rules=False, dims=tuple(DIMENSIONS),
        vector_lengths=TENSOR_VECTOR_LENGTHS,
        load_modes=(".tile", ".tile::scatter4", ".im2col_no_offs"),
        operands=((tmap, _src()), (tmap, _src(), _POLICY)),
        constraints=(Constraint(_NEEDS_DIM, "required-modifier", _TENSOR, mod=".dim"),
                     *tensor_mode_dims(_TENSOR), _NO_COMPLETION),
        gates=TENSOR_GATES,
    )


_REDUCE = "cp.reduce.async.bulk.tensor"
#: The reduction operations (PTX ISA 9.7.9.25.5.3): one is required.
REDUCE_OPS: Final[tuple[str, ...]] = (".add", ".min", ".max", ".inc", ".dec", ".and", ".or", ".xor")


def _tensor_reduce() -> Instr:
    """cp.reduce.async.bulk.tensor.dim.global.shared::cta.redOp{.load_mode}.bulk_group
    {.L2::cache_hint} [tensorMap, {coords}], [srcMem]{, cache-policy} (PTX ISA 9.7.9.25.5.3):
    `.load_mode` .tile or .im2col_no_offs (and .tile::scatter4, which ptxas 13.0 takes there too);
    no instruction type (the tensor map's element type decides). PTX ISA 8.0, sm_90 (measured)."""
    section = "9.7.9.25.5.3"
    tmap = tensor_map(1, 0)
    return Instr(
        ("cp", ".reduce", ".async", ".bulk", ".tensor"), section, types=(), spaces=(),
        space_pairs=(_STORE_PAIR,), flags=(".bulk_group", _L2, _BYTES), object_rules=False,
        dims=tuple(DIMENSIONS),
        vector_lengths=TENSOR_VECTOR_LENGTHS, load_modes=(".tile", ".im2col_no_offs", ".tile::scatter4"),
        words=tuple((o, "op") for o in REDUCE_OPS), operands=((tmap, _src()), (tmap, _src(), _POLICY)),
        constraints=(Constraint(_NEEDS_DIM, "required-modifier", _REDUCE, mod=".dim"),
                     # (.exch and .cas, operations of other reductions, count as one: measured)
                     Constraint(Cond(lacks=("op", "word:.exch", "word:.cas")), "op-required", _REDUCE),
                     # the load's completion mechanism: illegal only with the right state spaces
                     Constraint(Cond(has=(_BYTES, "pair")), "illegal-modifier", _REDUCE, mod=_BYTES),
                     *tensor_mode_dims(_REDUCE), _NO_COMPLETION),
        gates=(Gate(_feature(_REDUCE), ALWAYS, section, version=(8, 0), sm=90),
               *_mode_gates(section, (".bulk_group", _BYTES), default_tile=False),
               Gate(f"Modifier '{_L2}'", Cond(has=(_L2,)), section, version=(7, 4), sm=80, late=True)),
    )


_PREFETCH = "cp.async.bulk.prefetch.tensor"


def _tensor_prefetch() -> Instr:
    """cp.async.bulk.prefetch.tensor.dim.L2.global{.load_mode}{.L2::cache_hint} [tensorMap, {coords}]
    {, im2colInfo}{, cache-policy} (PTX ISA 9.7.9.25.5.4): `.load_mode` .tile, .tile::gather4,
    .im2col, .im2col::w, .im2col::w::128. PTX ISA 8.0, sm_90; `.tile::gather4`, `.im2col::w` and
    `.im2col::w::128` 8.6 and the sm_100 family; `.tile` gated even when not written (measured)."""
    section = "9.7.9.25.5.4"
    tmap = tensor_map(1, 0, rows=(".tile::gather4",))
    im2col = tensor_im2col(2)
    no_space = Cond(lacks=(".global", ".shared", ".local", ".const", ".param", ".tex"))
    with_prefetch = "{} with " + _PREFETCH
    return Instr(
        ("cp", ".async", ".bulk", ".prefetch", ".tensor"), section, types=(), spaces=(".global",),
        generic=False, subspace_illegal=True, flags=(".L2", _L2), dims=tuple(DIMENSIONS),
        vector_lengths=TENSOR_VECTOR_LENGTHS,
        load_modes=(".tile", ".tile::gather4", ".im2col", ".im2col::w", ".im2col::w::128"),
        words=((".L1", "cacheop"), (".L2", "cacheop")),
        operands=((tmap,), (tmap, im2col), (tmap, _POLICY), (tmap, im2col, _POLICY)),
        constraints=(Constraint(Cond(lacks=("dim",)), "required-modifier", _PREFETCH, mod=".dim"),
                     Constraint(Cond(lacks=("cacheop",)), "required-modifier", _PREFETCH, mod=".level"),
                     Constraint(no_space, "required-modifier", _PREFETCH, mod="State space"),
                     Constraint(no_space, "space-incorrect", _PREFETCH),
                     Constraint(Cond(has=(_L2,), lacks=no_space.lacks), "space-modifier", _PREFETCH, mod=_L2,
                                other=""),
                     *tensor_mode_dims(_PREFETCH, (".im2col", ".tile::gather4", ".im2col::w",
                                                   ".im2col::w::128"), need=())),
        gates=(Gate(_feature(_PREFETCH), ALWAYS, section, version=(8, 0), sm=90),
               *_mode_gates(section, (_BYTES, ".bulk_group")),
               *(Gate(_feature(with_prefetch.format(m)), Cond(has=(m,)), section, targets=_SM100_FAMILY)
                 for m in (".tile::gather4", ".im2col::w")),
               Gate(f"Modifier '{_L2}'", Cond(has=(_L2,)), section, version=(7, 4), sm=80, late=True)),
    )


def _mode_gates(section: str, words: tuple[str, ...], default_tile: bool = True) -> tuple[Gate, ...]:
    """The PTX ISA 8.0 and sm_90 gates of these words and the load modes' (`LOAD_MODE_GATES`, of
    every mode: ptxas gates those the copy does not take too); with `default_tile` `.tile` also where
    no load mode is written (ptxas's default on the prefetch, not on the reduction: measured)."""
    return (*(Gate(_feature(w), Cond(has=(w,)), section, version=(8, 0), sm=90) for w in words),
            *load_mode_gates(section),
            *((Gate(_feature(".tile"), Cond(lacks=("load_mode",)), section, version=(8, 0), sm=90),)
              if default_tile else ()))


#: The tensor copies without an mbarrier.
TENSOR_COPIES: Final[tuple[Instr, ...]] = (_tensor_store(), _tensor_reduce(), _tensor_prefetch())
