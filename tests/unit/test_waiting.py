"""wait_until: outcomes and messages on a fake clock (no real sleeping, no timing thresholds)."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest

from harness.common.waiting import wait_until
from harness.errors import HarnessError, WaitTimeout


class FakeClock:
    """Time moves only when the code under test sleeps."""

    def __init__(self) -> None:
        self.now = 0.0
        self.sleeps: list[float] = []

    def __call__(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        self.now += seconds


def no_sleep(_seconds: float) -> None:
    raise AssertionError("no pause expected")


def results(*values: object) -> Callable[[], object]:
    """A probe giving these values in turn (raising the exceptions among them)."""
    it: Iterator[object] = iter(values)

    def probe() -> object:
        value = next(it)
        if isinstance(value, BaseException):
            raise value
        return value

    return probe


def test_returns_the_first_done_state() -> None:
    clock = FakeClock()
    got = wait_until(
        results(None, [], [1, 2]), 10, "a list", clock=clock, sleep=clock.sleep, interval_s=1
    )
    assert got == [1, 2]
    assert clock.sleeps == [1, 1]


def test_custom_done_and_last_state_in_the_message() -> None:
    clock = FakeClock()
    with pytest.raises(WaitTimeout) as info:
        wait_until(
            lambda: [1, 2],
            3,
            "brokers [1, 2, 3] registered",
            done=lambda seen: seen == [1, 2, 3],
            interval_s=1,
            clock=clock,
            sleep=clock.sleep,
        )
    err = info.value
    assert isinstance(err, HarnessError)
    assert (err.what, err.timeout_s, err.last) == ("brokers [1, 2, 3] registered", 3, [1, 2])
    assert str(err) == "brokers [1, 2, 3] registered: not within 3 s (last seen: [1, 2])"


def test_no_attempt_starts_after_the_timeout() -> None:
    clock = FakeClock()
    starts: list[float] = []

    def probe() -> bool:
        starts.append(clock.now)
        return False

    with pytest.raises(WaitTimeout):
        wait_until(probe, 2, "never", interval_s=0.5, clock=clock, sleep=clock.sleep)
    assert starts == [0.0, 0.5, 1.0, 1.5, 2.0]


def test_zero_timeout_still_looks_once() -> None:
    assert wait_until(lambda: "here", 0, "at once", sleep=no_sleep) == "here"
    with pytest.raises(WaitTimeout, match="not within 0 s"):
        wait_until(lambda: "", 0, "at once", sleep=no_sleep)


def test_retried_exceptions_are_the_last_state() -> None:
    clock = FakeClock()
    with pytest.raises(WaitTimeout) as info:
        wait_until(
            results(HarnessError("no broker answered"), HarnessError("still none")),
            1,
            "metadata",
            retry_on=HarnessError,
            interval_s=1,
            clock=clock,
            sleep=clock.sleep,
        )
    assert isinstance(info.value.last, HarnessError)
    assert str(info.value) == "metadata: not within 1 s (last error: HarnessError: still none)"


def test_retried_exception_then_success() -> None:
    probe = results(OSError("busy"), 7)
    assert wait_until(probe, 5, "seven", retry_on=OSError, sleep=lambda _s: None) == 7


def test_other_exceptions_propagate_at_once() -> None:
    calls: list[int] = []

    def probe() -> bool:
        calls.append(1)
        raise KeyError("not retried")

    with pytest.raises(KeyError):
        wait_until(probe, 60, "x", retry_on=HarnessError, sleep=no_sleep)
    assert calls == [1]


def test_on_retry_sees_each_failure_before_another_attempt() -> None:
    clock = FakeClock()
    seen: list[object] = []
    got = wait_until(
        results("exited", RuntimeError("boom"), "ok"),
        10,
        "a start",
        done=lambda s: s == "ok",
        retry_on=RuntimeError,
        on_retry=seen.append,
        interval_s=2,
        clock=clock,
        sleep=clock.sleep,
    )
    assert got == "ok"
    assert seen[0] == "exited" and isinstance(seen[1], RuntimeError) and len(seen) == 2


def test_on_retry_not_called_when_no_attempt_follows() -> None:
    clock = FakeClock()
    seen: list[object] = []
    with pytest.raises(WaitTimeout):
        wait_until(
            lambda: "exited",
            3,
            "a start",
            done=lambda s: s == "ok",
            on_retry=seen.append,
            interval_s=2,
            clock=clock,
            sleep=clock.sleep,
        )
    assert seen == ["exited"]  # attempts at 0 and 2; none would start at 4


def test_real_clock_tiny_timeout() -> None:
    with pytest.raises(WaitTimeout, match=r"a flag: not within 0.05 s \(last seen: False\)"):
        wait_until(lambda: False, 0.05, "a flag", interval_s=0.01)
