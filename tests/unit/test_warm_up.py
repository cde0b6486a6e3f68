"""The warm-up's settle rule (harness.workload.warm_up.settled): pure, no Kafka."""

from __future__ import annotations

from harness.workload.warm_up import (
    MAX_RATE,
    MIN_RATE,
    SETTLE_RATIO,
    SETTLED_FLOOR_MS,
    WarmUpOutcome,
    p99_ms,
    settled,
    settled_after_checks,
    settled_beside,
    warm_up_rate,
)


def test_p99_is_nearest_rank() -> None:
    assert p99_ms([]) is None
    assert p99_ms([5.0]) == 5.0
    # 200 samples: the 198th smallest (ceil(200 * 0.99))
    values = [float(v) for v in range(1, 201)]
    assert p99_ms(values) == 198.0


def test_the_measured_start_does_not_settle_and_its_end_does() -> None:
    """The plain cell's 4-s windows of 2026-12-07: 1,128 and 649 ms in its first 8 s, then
    95-280 ms. The first pair differs by 1.7x (not settled); a slow window after a fast
    one does not settle either; two close windows do."""
    assert not settled([1128.0])
    assert not settled([1128.0, 649.0])
    assert not settled([1128.0, 649.0, 120.0])
    assert not settled([1128.0, 649.0, 120.0, 200.0])
    assert settled([1128.0, 649.0, 120.0, 110.0])
    assert not settled([649.0, 120.0, 110.0, 280.0])


def test_two_equally_slow_windows_after_a_fast_one_are_not_settled() -> None:
    """Measured with the first rule (two windows within 1.5x): 128 and 135 ms passed for
    settled while the machine was still loaded, and the workload's first 10 s had an ack
    p99 8x its last 10 s'. Now the last window must also be near the best one seen."""
    assert not settled([900.0, 60.0, 128.0, 135.0])
    assert settled([900.0, 128.0, 135.0, 130.0])  # never better: that is this machine's pace


def test_never_before_four_windows() -> None:
    assert not settled([10.0, 10.0, 10.0])
    assert settled([10.0, 10.0, 10.0, 10.0])


def test_two_fast_windows_settle_whatever_their_ratio() -> None:
    assert settled([500.0, 5.0, SETTLED_FLOOR_MS / 3, SETTLED_FLOOR_MS])
    assert not settled([500.0, 5.0, SETTLED_FLOOR_MS / 3, SETTLED_FLOOR_MS + 1])


def test_a_warm_clusters_noisy_windows_settle() -> None:
    """A run's windows of 2026-12-07 (cell 04, after the checks): 43.2, 26.4, 41.0, 25.8 ms,
    ratios 1.6x: warm, but the ratio alone kept it going 12 s more."""
    assert settled([187.1, 144.1, 43.2, 26.4])
    assert settled([85.3, 144.1, 43.2, 26.4, 41.0, 25.8])


def test_windows_beside_the_checks_pass_only_when_fast() -> None:
    """Beside the checks a pace that stopped changing may be the checks' own (two slow,
    equal windows); only two windows under the floor show a warm cluster there."""
    assert settled([1044.0, 514.4, 54.6, 49.6]) and settled_beside([1044.0, 514.4, 54.6, 49.6])
    slow = [900.0, 400.0, 130.0, 135.0]
    assert settled(slow) and not settled_beside(slow)
    assert not settled_beside([900.0, 40.0, 40.0])  # never before four windows
    assert not settled_beside([900.0, 40.0, None])
    assert not settled_beside([900.0, 40.0, SETTLED_FLOOR_MS + 1])


def test_one_fast_window_after_the_checks_ends_it() -> None:
    """A run's cell 05 of 2026-12-07: beside the checks 1,072 / 536 / 152 / 94 ms, then
    33.9 ms quiet (2.8x the last beside: no agreement, yet a warm pace)."""
    beside_then_quiet = [1072.4, 536.1, 151.8, 94.0, 33.9]
    assert not settled(beside_then_quiet)
    assert settled_after_checks(beside_then_quiet, traffic_s=9.5)
    assert not settled_after_checks([900.0, 33.9], traffic_s=7.9)  # too little traffic yet
    assert not settled_after_checks([94.0, 151.8], traffic_s=9.5)  # still slow
    assert not settled_after_checks([94.0, None], traffic_s=9.5)  # no ack at all
    assert not settled_after_checks([], traffic_s=9.5)


def test_the_ratio_is_a_bound_both_ways() -> None:
    assert settled([900.0, 100.0, 100.0, 100.0 * SETTLE_RATIO])
    assert settled([900.0, 100.0, 100.0 * SETTLE_RATIO, 100.0])
    assert not settled([900.0, 100.0, 100.0, 100.0 * SETTLE_RATIO + 1])


def test_a_window_without_an_ack_never_settles() -> None:
    """A broker that stalls the warm-up's writes leaves windows without acks: not settled."""
    assert not settled([None, None, None, None])
    assert not settled([50.0, 50.0, 50.0, None])


def test_the_rate_is_the_workloads_within_bounds() -> None:
    assert warm_up_rate(300) == 300
    assert warm_up_rate(50) == MIN_RATE
    assert warm_up_rate(100_000) == MAX_RATE


def test_the_event_names_what_happened() -> None:
    done = WarmUpOutcome(True, 4.21234, [90.0, 80.0], 4000)
    assert done.fields() == {
        "settled": True,
        "seconds": 4.212,
        "window_p99_ms": [90.0, 80.0],
        "records": 4000,
        "beside_checks_s": 0.0,
    }
    failed = WarmUpOutcome(False, 1.0, [], 0, error="KafkaException: boom")
    assert failed.fields()["error"] == "KafkaException: boom"


def test_a_warm_up_that_did_not_settle_is_a_note_of_the_run_summary() -> None:
    from harness.report.run_summary import cells_markdown, unsettled_line

    cell = {
        "cell": "01_main",
        "verdict": "pass",
        "checks": [],
        "warm_up": {"settled": False, "seconds": 30.2, "window_p99_ms": [900.0, 450.0, None]},
    }
    line = unsettled_line(cell)
    assert line is not None and "`01_main` — warm-up: **not settled** after 30.2 s" in line
    assert "900.0, 450.0" in line
    assert line in cells_markdown([cell])
    settled = {**cell, "warm_up": {**cell["warm_up"], "settled": True}}
    assert unsettled_line(settled) is None
    assert unsettled_line({"cell": "01_main"}) is None  # run cold, or before the warm-up
