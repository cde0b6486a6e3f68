"""Two plain-Python forms of one consumer set's stall intervals, as oracles for
spark_jobs.checks.stall.stall_frame: the definition, interval by interval, and the counted
form (no record paired with its consumption except those consumed before their ack).

`avail` maps each available seq to the ms it became readable (av), `firsts` each seq the set
consumed to its first consumption (fc). Intervals as (start_ms, end_ms, duration_ms, final,
waiting), in end order.
"""

from __future__ import annotations

Interval = tuple[int, int, int, bool, bool]


def progress_points(firsts: dict[int, int], start: int, end: int) -> list[int]:
    """Every first consumption inside (start, end), `end` for those at or after it, and `end`."""
    return sorted({end} | {min(fc, end) for fc in firsts.values() if fc > start})


def by_definition(
    avail: dict[int, int], firsts: dict[int, int], start: int, end: int
) -> list[Interval]:
    """For (prev, k]: a = the earliest av of a record not consumed by prev; stall
    k - max(prev, a) when a < k."""
    out: list[Interval] = []
    prev = start
    for k in progress_points(firsts, start, end):
        pending = [av for s, av in avail.items() if firsts.get(s, end + 1) > prev]
        a = min(pending) if pending else None
        begin = prev if a is None else max(prev, a)
        out.append((begin, k, k - begin if a is not None and a < k else 0, k == end, a is not None))
        prev = k
    return out


def counted(avail: dict[int, int], firsts: dict[int, int], start: int, end: int) -> list[Interval]:
    """The same from counts up to prev: pending = acks - first consumptions + early records
    (consumed before their ack) not yet acked. Pending > 0: stall from prev. Otherwise a is
    the next ack after prev of a record not consumed early by prev."""
    fc = {s: firsts.get(s) for s in avail}
    early = {s for s, f in fc.items() if f is not None and f < avail[s]}
    out: list[Interval] = []
    prev = start
    for k in progress_points(firsts, start, end):
        acks = sum(1 for av in avail.values() if av <= prev)
        consumed = sum(1 for f in fc.values() if f is not None and f <= prev)
        ahead = sum(1 for s in early if fc[s] <= prev < avail[s])  # type: ignore[operator]
        if acks - consumed + ahead > 0:
            begin, duration = prev, k - prev
        else:
            nxt = [avail[s] for s in avail if s not in early and avail[s] > prev]
            nxt += [avail[s] for s in early if fc[s] > prev]  # type: ignore[operator]
            a = min(nxt) if nxt else None
            begin = prev if a is None else max(prev, a)
            duration = k - begin if a is not None and a < k else 0
        out.append((begin, k, duration, k == end, len(avail) - consumed > 0))
        prev = k
    return out
