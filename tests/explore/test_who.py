"""Threads in words (`explore.who`): runs of ids, with the warps (and CTA) they make up."""

from __future__ import annotations

from mbarrier.explore.who import Layout, plural, ranges


def test_ids_fall_into_runs_of_consecutive_ids() -> None:
    assert ranges([5, 3, 4, 9, 4]) == [(3, 5), (9, 9)]
    assert ranges([]) == []


def test_a_run_names_its_warps_and_a_partial_warp_its_lanes() -> None:
    one = Layout(160, ("0",))
    assert one.threads([7]) == "thread 7"
    assert one.threads(range(32, 64)) == "threads 32-63 (warp 1)"
    assert one.threads(range(33, 64)) == "threads 33-63 (warp 1, lanes 1-31)"
    assert one.threads(range(32, 160)) == "threads 32-159 (warps 1-4)"
    assert one.threads([*range(0, 32), *range(64, 96)]) == "threads 0-31 (warp 0), 64-95 (warp 2)"
    assert one.threads(range(20, 40)) == "threads 20-39"   # parts of two warps: the ids say it
    assert one.threads([]) == "no thread"


def test_a_block_of_one_partial_warp_has_no_warp_to_name_and_a_cluster_names_the_cta() -> None:
    assert Layout(3, ("0",)).threads([1, 2]) == "threads 1-2"
    two = Layout(48, ("0", "1"))   # the last warp of a CTA of 48 threads has 16 lanes: a whole warp
    assert two.threads(range(48, 96)) == "threads 48-95 (CTA 1, warps 0-1)"
    assert two.threads(range(80, 96)) == "threads 80-95 (CTA 1, warp 1)"
    assert two.threads(range(40, 56)) == "threads 40-55"   # across two CTAs
    assert Layout(2, ("0", "1")).threads([2, 3]) == "threads 2-3 (CTA 1)"


def test_the_verb_agrees_with_the_threads() -> None:
    assert plural([4], "waits", "wait") == "waits"
    assert plural([4, 5], "waits", "wait") == "wait"
