"""Schedules and runs: round-robin, seeded random, replay of a schedule string; the run loop."""

from mbarrier.explore.run import Outcome, RunResult, Stuck, TraceStep, run
from mbarrier.explore.schedule import ScheduleError
from mbarrier.explore.schedulers import RandomScheduler, Replay, RoundRobin, Scheduler

__all__ = ["Outcome", "RandomScheduler", "Replay", "RoundRobin", "RunResult", "ScheduleError", "Scheduler",
           "Stuck", "TraceStep", "run"]
