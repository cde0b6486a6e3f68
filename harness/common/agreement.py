"""The one value a set of runs agrees on: a run's seed, the commit that ran it."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TypeVar

T = TypeVar("T")


def agreed(values: Iterable[T]) -> T | None:
    """The one value every item gives, else None (they differ, or there is none): a merged
    figure that only some runs had would claim more than the runs show."""
    distinct = set(values)
    return distinct.pop() if len(distinct) == 1 else None
