"""Whether a run violated an expectation, and whether a schedule does in k of n runs.

An oracle is any callable `(faults) -> checks of one run`, each check verdict-ish: an object
with `name` and `verdict` (harness.verdict.checks.Judgement) or a mapping with those keys (a
cell summary's `checks`). Real clusters are not deterministic, so a schedule is run up to
`k` times and holds as a reproduction when at least `need` runs fail the same expectation;
runs stop as soon as the answer is known. A run the budget does not allow is not run: a
candidate without its `need` failures is not kept.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from harness.explore.budget import Budget
from harness.spec.explore_roles import Entry

RECOVERY_CHECK, RECOVERED = "recovery", "recovered"  # the check judging the `recovered` bound


class VerdictLike(Protocol):
    @property
    def name(self) -> str: ...
    @property
    def verdict(self) -> str: ...


Check = VerdictLike | Mapping[str, Any]
Oracle = Callable[[list[Entry]], Sequence[Check]]


def _field(check: Check, key: str) -> str:
    value = check.get(key) if isinstance(check, Mapping) else getattr(check, key, None)
    return "" if value is None else str(value)


def failed_properties(checks: Sequence[Check], expect: Sequence[str]) -> list[str]:
    """The expectations (`expect:` keys) these checks fail, in check order."""
    out: list[str] = []
    for check in checks:
        name = _field(check, "name")
        prop = RECOVERED if name == RECOVERY_CHECK else name
        if prop in expect and _field(check, "verdict") == "fail" and prop not in out:
            out.append(prop)
    return out


@dataclass(frozen=True)
class Run:
    """One run of a schedule: every check's verdict, the expectation's detail, violated?"""

    verdicts: dict[str, str]
    detail: str
    violated: bool

    def as_dict(self) -> dict[str, Any]:
        return {"verdicts": self.verdicts, "detail": self.detail, "violated": self.violated}


@dataclass(frozen=True)
class Repeats:
    runs: tuple[Run, ...]
    need: int

    @property
    def hits(self) -> int:
        return sum(r.violated for r in self.runs)

    @property
    def kept(self) -> bool:
        return self.hits >= self.need

    @property
    def reproduced(self) -> str:
        """`hits/runs`, e.g. "2/3"."""
        return f"{self.hits}/{len(self.runs)}"


def one_run(checks: Sequence[Check], prop: str) -> Run:
    name = RECOVERY_CHECK if prop == RECOVERED else prop
    detail = next((_field(c, "detail") for c in checks if _field(c, "name") == name), "")
    verdicts = {_field(c, "name"): _field(c, "verdict") for c in checks}
    return Run(verdicts, detail, verdicts.get(name) == "fail")


def repeat(
    oracle: Oracle,
    faults: list[Entry],
    prop: str,
    *,
    k: int = 3,
    need: int = 2,
    budget: Budget | None = None,
    early_stop: bool = True,
) -> Repeats:
    """Run `faults` up to `k` times; stop once `need` runs violated `prop` or can no longer
    (`early_stop`), or when the budget is spent."""
    if not 1 <= need <= k:
        raise ValueError(f"need {need} of k {k}: expected 1 <= need <= k")
    runs: list[Run] = []
    for _ in range(k):
        if budget is not None and budget.exhausted():
            break
        checks = oracle([dict(f) for f in faults])
        if budget is not None:
            budget.spend()
        runs.append(one_run(checks, prop))
        hits = sum(r.violated for r in runs)
        if early_stop and (hits >= need or len(runs) - hits > k - need):
            break
    return Repeats(tuple(runs), need)
