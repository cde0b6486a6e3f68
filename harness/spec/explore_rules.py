"""What `explore:` may draw in one cell: the (kind, role) pairs its cluster supports, and the
section's problems there (a kind or a role it names that the cell cannot play, no time left
between the quiet periods).

A pair is supported when every entry it makes passes the same rules a written fault does
(its kind's modes and target rules, the capabilities the spec allows), so a drawn schedule
is a schedule `validate` accepts. harness.spec.problems calls this per cell.
"""

from __future__ import annotations

from harness.faults.kind import CellView
from harness.faults.registry import is_operation
from harness.spec.expect import format_number
from harness.spec.explore import ROLES, ExploreSpec, Role, default_kinds
from harness.spec.explore_roles import Entry, role_entries
from harness.spec.models import Spec, parse_fault

Problem = tuple[str, str]


def section(spec: Spec) -> ExploreSpec:
    """The spec's `explore:`, or every default when it has none."""
    return spec.explore if spec.explore is not None else ExploreSpec()


def entry_problems(spec: Spec, entry: Entry, cell: CellView) -> list[str]:
    """Why this fault entry (without at_s) cannot be planned in the cell; [] when it can."""
    # A probe entry has no duration yet: the shortest explore draws, where the kind has one.
    duration = {} if is_operation(entry["kind"]) else {"duration_s": section(spec).duration_s[0]}
    fault = parse_fault({"at_s": 0, **duration, **entry})
    out = [f"{key}: {why}" for key, why in fault.problems(cell)]
    out += [
        need.refused.format(kind=fault.kind, title=need.title)
        for need in fault.cluster_needs()
        if need.refuses(spec.cluster)
    ]
    return out


def pair_problem(spec: Spec, kind: str, role: Role, cell: CellView) -> str | None:
    """Why `kind` cannot be drawn on `role` here (None: it can)."""
    entries = role_entries(kind, role, cell, None)
    if not entries:
        return f"no {role} among {len(cell.brokers)} broker(s)"
    if len(entries) > section(spec).max_faults:
        return f"{role} is {len(entries)} faults, more than max_faults"
    for entry in entries:
        found = entry_problems(spec, entry, cell)
        if found:
            return found[0]
    return None


def drawable_pairs(spec: Spec, cell: CellView) -> list[tuple[str, Role]]:
    """Every (kind, role) explore may draw in this cell, in `kinds` then `targets` order."""
    ex = section(spec)
    return [
        (kind, role)
        for kind in ex.kinds or default_kinds()
        for role in ex.targets or ROLES
        if pair_problem(spec, kind, role, cell) is None
    ]


def on_written_faults(bound: object) -> bool:
    """Whether an expectation's bound refers to the spec's own `faults:` (a relative bound
    such as `'>= 0.55 * faults.1.duration_s'`): explore's trials leave it out, their faults
    being drawn."""
    ref = getattr(bound, "ref", None)
    return isinstance(ref, str) and ref.startswith("faults")


def fault_window(spec: Spec) -> tuple[float, float]:
    """When a drawn fault may start: after the quiet start, before the quiet end of the
    producer's planned workload."""
    quiet = section(spec).quiet
    return quiet.start_s, spec.producer.planned_duration_s - quiet.end_s


def explore_problems(spec: Spec, cell: CellView) -> list[Problem]:
    """The section's problems in this cell (`cell`: its view without the spec's own faults)."""
    if spec.explore is None:
        return []
    ex = spec.explore
    out: list[Problem] = []
    if not spec.expect:
        out.append(
            (
                "explore",
                "explore looks for violations of `expect:`, and this spec expects nothing: no "
                "trial could fail (add e.g. `expect: {lost: 0}`)",
            )
        )
    elif all(on_written_faults(bound) for bound in spec.expect.values()):
        out.append(
            (
                "explore",
                "every expectation is bound to the spec's own faults (faults.<n>...), which "
                "explore replaces: no trial could be judged (add e.g. `expect: {lost: 0}`)",
            )
        )
    roles = ex.targets or ROLES
    for i, kind in enumerate(ex.kinds or ()):
        whys = [pair_problem(spec, kind, role, cell) for role in roles]
        if all(whys):
            out.append((f"explore.kinds[{i}]", f"{kind} cannot be drawn here: {whys[0]}"))
    kinds = ex.kinds or default_kinds()
    for i, role in enumerate(ex.targets or ()):
        if all(pair_problem(spec, kind, role, cell) for kind in kinds):
            out.append((f"explore.targets[{i}]", f"no kind drawn can target {role} here"))
    if not out and not drawable_pairs(spec, cell):
        out.append(("explore", "nothing to draw: no kind supports a role in this cluster"))
    start, end = fault_window(spec)
    if end < start:
        out.append(
            (
                "explore.quiet",
                f"the workload's {format_number(spec.producer.planned_duration_s)} s leave no "
                f"time for a fault after start_s {format_number(ex.quiet.start_s)} and before "
                f"end_s {format_number(ex.quiet.end_s)}",
            )
        )
    return out
