"""How `harness explore` draws a kind: the roles its target may take, and (in the kind's own
`drawn_options`) its options' ranges. Each kind module says it of itself, so explore keeps no
list of kinds (Toxiproxy's toxics, Trogdor's fault specs: a kind owns all of itself).

A role is what a drawn entry's target means on a given cell (harness.spec.explore_roles makes
the entries): a node role names brokers (one, a minority or a majority of them, a partition's
leader, the active controller), `all` every Kafka node at one instant (a site's power cut),
`client` one of the workload's processes and `cluster` a target the kind picks itself (a
topic, a spare broker, none): for these two the kind's `drawn_target` says which.
"""

from __future__ import annotations

import math
import random
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal, TypeVar, get_args

T = TypeVar("T")

Role = Literal["one", "minority", "majority", "leader", "controller", "all", "client", "cluster"]
ROLES: tuple[Role, ...] = get_args(Role)
NODE_ROLES: tuple[Role, ...] = ("one", "minority", "majority", "leader", "controller")
OWN_TARGET: tuple[Role, ...] = ("client", "cluster")  # the kind's drawn_target names it


@dataclass(frozen=True)
class Drawing:
    """A kind's drawing: the roles it is drawn on (in the cells that support them; the
    kind's rules decide) and whether `explore.kinds`' default holds it."""

    roles: tuple[Role, ...] = NODE_ROLES
    # Drawn when `explore.kinds` is not given. False only for what changes the cell's own
    # subject (its versions, its mode): asked for by name, never by default.
    by_default: bool = True


def pick(rng: random.Random | None, choices: Sequence[T]) -> T:
    """One of `choices` (a probe, rng None: the first, which must be the mildest)."""
    return choices[0] if rng is None else rng.choice(list(choices))


def between(rng: random.Random | None, low: float, high: float, digits: int = 1) -> float:
    """A number in [low, high], rounded (a probe: low)."""
    return low if rng is None else round(rng.uniform(low, high), digits)


def whole(rng: random.Random | None, low: int, high: int) -> int:
    """An integer in [low, high] (a probe: low)."""
    return low if rng is None else rng.randint(low, high)


def spread(rng: random.Random | None, low: int, high: int) -> int:
    """An integer in [low, high], log-uniform: as many draws in 100-300 as in 1000-3000, for
    a quantity whose effect goes by its order of magnitude (a delay, a rate) (a probe: low)."""
    if rng is None:
        return low
    return max(low, min(high, round(math.exp(rng.uniform(math.log(low), math.log(high))))))
