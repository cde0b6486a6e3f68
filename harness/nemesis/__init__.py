"""The fault schedule of a cell (planned from the spec and seed) and the nemesis that plays it."""

from harness.nemesis.nemesis import Nemesis
from harness.nemesis.schedule import PlannedFault, plan_faults

__all__ = ["Nemesis", "PlannedFault", "plan_faults"]
