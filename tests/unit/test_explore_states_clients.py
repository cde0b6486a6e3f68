"""The clients' newer "sometimes" states (harness.explore.states_clients) on hand-built
histories and summaries with known answers: each reached by one, missed by a near miss."""

from __future__ import annotations

from typing import Any

from tests.unit.test_explore_states import START, T0, event
from tests.unit.test_explore_states_cluster import fault, reached

KILL = fault(10, 30, "kill", "broker-1", 0)


# --- consumer_stalled_in_fault --------------------------------------------------------------


def stall(start_s: float, end_s: float, name: str = "group") -> dict[str, Any]:
    return {"set": name, "start_ms": T0 + int(start_s * 1000), "end_ms": T0 + int(end_s * 1000),
            "duration_s": end_s - start_s}  # fmt: skip


def test_a_long_consumer_stall_counts_when_it_overlaps_a_fault() -> None:
    found = reached([*START, *KILL], {"stall_windows": [stall(2, 3), stall(25, 38)]})
    assert found == {"consumer_stalled_in_fault": "set group stalled 13 s during kill broker-1"}
    for near in (
        {"stall_windows": [stall(12, 20)]},  # inside the fault, 8 s: short of a failover
        {"stall_windows": [stall(40, 60)]},  # 20 s, after the heal
        {"stall_windows": None},  # the stall check could not decide
        {},
    ):
        assert reached([*START, *KILL], near) == {}
    assert reached(START, {"stall_windows": [stall(12, 25)]}) == {}  # no fault at all


def test_a_crashed_member_is_not_a_fault_for_the_stall() -> None:
    crash = [
        *START,
        event(10, "consumer.crash", consumer="group/m0", pid=7),
        event(40, "consumer.launch", consumer="group/m0", pid=8),
    ]
    assert reached(crash, {"stall_windows": [stall(12, 35)]}) == {}


# --- aborted_transaction --------------------------------------------------------------------


def txn_error(kind: str, action: str, **fields: Any) -> dict[str, Any]:
    return event(15, kind, call="commit_transaction", error="Broker: coordinator not available",
                 code="COORDINATOR_NOT_AVAILABLE", action=action, **fields)  # fmt: skip


def test_a_transaction_aborted_by_an_error() -> None:
    found = reached([*START, txn_error("producer.txn_error", "abort", producer="p0", txn=7)])
    assert found == {
        "aborted_transaction": "p0 aborted a transaction: commit_transaction: "
        "Broker: coordinator not available"
    }
    piped = reached([*START, txn_error("consumer.txn_error", "abort", consumer="pipeline/m1")])
    assert piped["aborted_transaction"].startswith("pipeline/m1 aborted a transaction")


def test_retries_rewinds_and_planned_aborts_are_not_aborted_transactions() -> None:
    # a retried call, a call the producer gave up on (its outcome unknown, a new client:
    # producer_fenced's), a non-transactional pipeline's failed flush, and a history whose
    # planned aborts (abort_every) left no error event
    events = [
        *START,
        txn_error("producer.txn_error", "retry", producer="p0"),
        txn_error("producer.txn_error", "reinit", producer="p0"),
        event(16, "producer.reinit", producer="p1", txn=3),
        txn_error("consumer.txn_error", "rewind", consumer="pipeline/m0"),
        event(17, "consumer.rewind", consumer="pipeline/m0", partitions={"0": 40}),
    ]
    assert "aborted_transaction" not in reached(events, {"transactions": {"aborted": 12}})


# --- producer_blocked -----------------------------------------------------------------------


def test_a_producer_blocked_on_its_buffer() -> None:
    found = reached([*START, event(12, "producer.blocked", seq=500, ms=1200)])
    assert found == {"producer_blocked": "a send waited 1200 ms in the client (seq 500)"}


def test_short_waits_and_the_first_send_of_an_incarnation_are_not_blocking() -> None:
    events = [
        *START,
        event(2, "producer.start", client="java", first_seq=0),
        event(2, "producer.schedule", first_seq=0, rate=100, planned=3000),
        event(3, "producer.blocked", seq=0, ms=800),  # the Java client's metadata wait
        event(12, "producer.blocked", seq=501, ms=40),  # a GC pause
        event(20, "producer.launch", producer="p1", pid=9, first_seq=1800),
        event(21, "producer.blocked", seq=1800, ms=650),
        event(22, "producer.blocked", seq=1801, ms="slow"),
    ]
    assert reached(events) == {}
    assert "producer_blocked" in reached([*events, event(23, "producer.blocked", seq=1802, ms=100)])


# --- share_lock_expired ---------------------------------------------------------------------


def test_a_share_acknowledgement_refused_for_an_expired_lock() -> None:
    summary = {"share_by_set": {"a": {"lock_expired": 0}, "share": {"lock_expired": 3}}}
    found = reached(START, summary)
    assert found == {
        "share_lock_expired": "set share: 3 acknowledgement(s) refused, the lock had expired"
    }


def test_redeliveries_alone_are_not_an_expired_lock() -> None:
    # records redelivered (a RELEASE answer, a member gone) with no refused acknowledgement;
    # a figure undecided; a cell without share groups
    redelivered = {"lock_expired": 0, "redelivered": 40, "delivery_counts": {"2": 40}}
    summaries: list[dict[str, Any]] = [
        {"share_by_set": {"share": redelivered}},
        {"share_by_set": {"share": {"lock_expired": None, "redelivered": 5}}},
        {"share_by_set": {}},
    ]
    for summary in summaries:
        assert reached(START, summary) == {}
