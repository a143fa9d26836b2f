"""The segments behind a plan's gates are kept per future (`Frozen.plan`) and name nodes of the graph they
were walked on. A future's graph evicted and built again (unrolled alone instead of with its warp's
lanes, or resumed from another) numbers its nodes otherwise: segments kept from the old one named nodes
the new one does not have (an IndexError in `Plan._alternatives` at the warpgroup shape's 8 trips, once
runs of sets of one made the plans turn over faster) or other nodes than meant."""

from __future__ import annotations

from mbarrier import sim
from mbarrier.examples.shapes import SHAPES
from mbarrier.explore.check import Options, check_machine


def test_segments_are_read_with_the_graph_they_were_walked_on() -> None:
    shape = SHAPES["warpgroup"].sized(8)
    r = check_machine(shape.launch(), sim.load(shape.path), Options(walks=0))
    assert r.verdict == "verified" and r.unsupported is None

