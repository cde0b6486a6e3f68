"""The cell runner's phases with fake collaborators (no Docker, no Kafka): their order, and
what a crash in one of them leaves in the result folder."""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
import yaml

from harness.results.history import History
from harness.results.history_reader import read_jsonl
from harness.runner import collect, settle
from harness.runner.cell_runner import CellRunner, Parts
from harness.runner.status import Status
from harness.spec import Cell, expand_cells, parse_spec
from harness.verdict.cell_verdict import run_check
from harness.workload.log_reader import LogContents
from harness.workload.warm_up import WarmUpOutcome

SPEC = """
name: phases
producer: {records: 10}
consumer: {kind: group, group: g}
faults: [{at_s: 1, kind: kill, target: "broker:1", duration_s: 1}]
"""
PHASES = ["cluster", "steady-state", "warm-up", "workload", "heal", "recovery", "drain", "collect"]


class Boom(RuntimeError):
    pass


class Fakes:
    """Every collaborator of a cell; `fail_in` names the call that raises."""

    def __init__(self, fail_in: str = "") -> None:
        self.fail_in = fail_in
        self.calls: list[str] = []
        self.history: History | None = None
        self.consumer_seed: int | None = None

    def called(self, name: str) -> None:
        self.calls.append(name)
        if name == self.fail_in:
            raise Boom(f"{name} broke")

    # --- the cluster -----------------------------------------------------------------------
    def cluster(self, *_args: Any, history: History, **_kw: Any) -> Fakes:
        self.history = history
        return self

    bootstrap_servers = "fake:9092"
    dynamic_quorum = False  # a static quorum: the recovery records no quorum.status
    warm = False  # a fresh cluster (a reused one, explore's, skips the warm-up)

    @property
    def admin(self) -> Fakes:
        return self

    def up(self) -> Fakes:
        self.called("cluster.up")
        return self

    def create_topic(self, *_a: Any) -> None:
        self.called("cluster.create_topic")

    def delete_topic(self, *_a: Any) -> None:
        self.called("admin.delete_topic")

    def wait_topic_gone(self, *_a: Any) -> None:
        self.called("admin.wait_topic_gone")

    def warm_up(self, *_a: Any, **_kw: Any) -> WarmUpOutcome:
        self.called("warm_up")
        return WarmUpOutcome(settled=True, seconds=4.0, window_p99_ms=[90.0, 80.0], records=4000)

    def ensure_offsets_topic(self) -> None:
        self.called("admin.ensure_offsets_topic")

    def agreed_leaders(self, _topic: str, partitions: int) -> dict[int, int]:
        self.called("admin.agreed_leaders")
        return dict.fromkeys(range(partitions), 1)

    def heal_all(self) -> None:
        self.called("cluster.heal_all")

    def close(self, beside: Callable[[], None] | None = None) -> None:
        self.called("cluster.close")
        if beside is not None:
            beside()

    # --- consumers, producer, nemesis ------------------------------------------------------
    def consumers(self, *_a: Any, seed: int | None = None, **_kw: Any) -> Fakes:
        self.consumer_seed = seed
        return self

    default_group = "g"
    rows = attempted = acked = failed = 0
    running = False
    done = True

    def start(self, *_a: Any) -> Fakes:
        self.called("start")
        return self

    def wait_assigned(self, _timeout: float) -> None:
        self.called("consumers.wait_assigned")

    def poll(self) -> None:
        pass

    def reached(self, _ends: dict[int, int]) -> bool:
        self.called("consumers.reached")
        return True

    def not_started(self) -> dict[str, str]:
        return {}

    def lag(self, _ends: dict[int, int]) -> dict[str, Any]:
        return {}

    def stop(self) -> None:
        self.called("stop")

    def join(self, _timeout: float) -> None:
        pass

    def consumed_tables(self) -> Iterator[pa.Table]:
        return iter(())

    def commits_tables(self) -> Iterator[pa.Table]:
        return iter(())

    def share_sets(self) -> list[str]:
        return []

    def merge_events(self) -> None:
        self.called("consumers.merge_events")

    def producer(self, *_a: Any) -> Fakes:
        return self

    def write(self, path: Path) -> int:
        self.called("producer.write")
        path.write_text("", encoding="utf-8")
        return 0

    def nemesis(self, *_a: Any, **_kw: Any) -> Fakes:
        return self

    def restart_crashed(self) -> None:
        self.called("nemesis.restart_crashed")

    # --- the machine sampler ------------------------------------------------------------------
    def container_names(self) -> dict[str, str]:
        return {}

    def parts(self) -> Parts:
        fakes = self

        class Sampler:
            def start(self) -> Sampler:
                fakes.called("machine.start")
                return self

            def stop(self, names: Any) -> None:
                names()
                fakes.called("machine.stop")

        return Parts(
            cluster=self.cluster,
            consumers=self.consumers,
            producer=self.producer,
            nemesis=self.nemesis,
            machine_sampler=lambda *_a, **_k: Sampler(),
            warm_up=self.warm_up,
        )


@pytest.fixture(autouse=True)
def no_kafka(monkeypatch: pytest.MonkeyPatch) -> None:
    """The log-end and final-read helpers talk to Kafka: answer for them."""
    monkeypatch.setattr(settle, "end_offsets", lambda *_a, **_k: {0: 10})
    monkeypatch.setattr(
        collect,
        "read_log",
        lambda *_a, **_k: LogContents([0], [0], [0], {0: 1}, complete=True, detail="ok"),
    )


def cell() -> Cell:
    return expand_cells(parse_spec(yaml.safe_load(SPEC)))[0]


def run(tmp_path: Path, fakes: Fakes) -> tuple[list[dict[str, Any]], list[Status]]:
    shown: list[Status] = []
    runner = CellRunner(cell(), [], 1, tmp_path / "cell", "run", shown.append, parts=fakes.parts())
    assert fakes.history is None
    try:
        runner.run()
    finally:
        assert fakes.history is runner.history  # the cluster writes into the cell's history
    return read_jsonl(tmp_path / "cell" / "history.jsonl")[0], shown


def phases(history: list[dict[str, Any]]) -> list[str]:
    return [e["phase"] for e in history if e["kind"] == "phase"]


def test_phases_run_in_order_and_the_cell_ran_its_course(tmp_path: Path) -> None:
    fakes = Fakes()
    history, shown = run(tmp_path, fakes)
    assert phases(history) == PHASES
    assert fakes.consumer_seed == 1  # the cell's seed reaches the members (their work times)
    assert shown[-1].phase == "collect"
    by_kind = {e["kind"]: e for e in history}
    assert by_kind["recovery.end"]["recovered"] is True
    assert by_kind["drain.end"]["complete"] is True
    assert by_kind["log.read"]["complete"] is True and by_kind["log.read"]["records"] == 1
    assert "cell.error" not in by_kind
    assert run_check(history).verdict == "pass"
    for name in ("ledger.parquet", "consumed.parquet", "commits.parquet", "log.parquet"):
        assert (tmp_path / "cell" / name).exists(), name
    # heal comes after the workload, the restart of crashed members after heal_all
    assert fakes.calls.index("cluster.heal_all") < fakes.calls.index("nemesis.restart_crashed")
    assert fakes.calls[-1] == "cluster.close"
    # The warm-up's topic is deleted and gone from every broker before the workload writes.
    warm_up_end = fakes.calls.index("admin.wait_topic_gone")
    assert (
        fakes.calls.index("admin.delete_topic") < warm_up_end < fakes.calls.index("producer.write")
    )
    # The machine is sampled from before the cluster starts to the collect, once.
    calls = fakes.calls
    assert calls.index("machine.start") < calls.index("cluster.up")
    assert calls.index("consumers.reached") < calls.index("machine.stop")
    assert calls.index("machine.stop") < calls.index("producer.write")
    assert calls.count("machine.stop") == 1


@pytest.mark.parametrize(
    ("fail_in", "phase"),
    [
        ("consumers.wait_assigned", "warm-up"),  # before the workload phase begins
        ("cluster.heal_all", "heal"),
        ("consumers.reached", "drain"),
        ("consumers.merge_events", "collect"),
    ],
)
def test_a_crash_in_a_phase_still_collects_and_leaves_the_cell_unknown(
    tmp_path: Path, fail_in: str, phase: str
) -> None:
    fakes = Fakes(fail_in)
    with pytest.raises(Boom):
        run(tmp_path, fakes)
    history = read_jsonl(tmp_path / "cell" / "history.jsonl")[0]
    seen = phases(history)
    assert seen == [
        *PHASES[: PHASES.index(phase) + 1],
        *([] if phase == "collect" else ["collect"]),
    ]
    errors = [e for e in history if e["kind"] == "cell.error"]
    assert errors == [{**errors[0], "error": f"Boom: {fail_in} broke"}]
    assert run_check(history).verdict == "unknown"
    assert (tmp_path / "cell" / "ledger.parquet").exists()  # what was collected is kept
    assert fakes.calls[-1] == "cluster.close"
    assert fakes.calls.count("machine.stop") == 1  # stopped whichever phase broke


def test_a_crash_in_recovery_still_collects(tmp_path: Path) -> None:
    """The health probe breaks on its second use (recovery), not in the steady-state gate."""

    class BreaksLater(Fakes):
        probes = 0

        def agreed_leaders(self, topic: str, partitions: int) -> dict[int, int]:
            self.probes += 1
            if self.probes == 2:
                raise Boom("admin.agreed_leaders broke")
            return super().agreed_leaders(topic, partitions)

    with pytest.raises(Boom):
        run(tmp_path, BreaksLater())
    history = read_jsonl(tmp_path / "cell" / "history.jsonl")[0]
    assert phases(history) == [
        "cluster",
        "steady-state",
        "warm-up",
        "workload",
        "heal",
        "recovery",
        "collect",
    ]
    assert run_check(history).verdict == "unknown"


@pytest.mark.parametrize("fail_in", ["cluster.up", "cluster.create_topic", "admin.agreed_leaders"])
def test_a_cell_that_never_reached_its_workload_is_unknown(tmp_path: Path, fail_in: str) -> None:
    """Before the steady-state gate is passed nothing runs yet, so there is nothing to collect."""
    fakes = Fakes(fail_in)
    with pytest.raises(Boom):
        run(tmp_path, fakes)
    history = read_jsonl(tmp_path / "cell" / "history.jsonl")[0]
    assert "workload" not in phases(history)
    assert [e["error"] for e in history if e["kind"] == "cell.error"] == [f"Boom: {fail_in} broke"]
    check = run_check(history)
    assert check.verdict == "unknown" and fail_in in check.detail
    assert fakes.calls[-1] == "cluster.close"  # the cluster goes even when it never came up


def test_the_history_file_is_json_lines_sorted_by_time(tmp_path: Path) -> None:
    run(tmp_path, Fakes())
    lines = (tmp_path / "cell" / "history.jsonl").read_text(encoding="utf-8").splitlines()
    ts = [json.loads(line)["ts"] for line in lines]
    assert ts == sorted(ts) and len(ts) > len(PHASES)


def test_the_partition_watch_runs_from_the_topic_to_the_collect_phase(tmp_path: Path) -> None:
    """The topic's states are recorded once the topic exists; the watch ends before collect."""
    from harness.faults.control import PartitionState

    class Watched(Fakes):
        def partition_states(self, topic: str, timeout_s: float) -> dict[int, PartitionState]:
            assert timeout_s <= 3
            return {0: PartitionState(0, 1, (1, 2, 3), (1, 2, 3))}

    history, _ = run(tmp_path, Watched())
    kinds = [e["kind"] for e in history]
    at = {e["phase"]: i for i, e in enumerate(history) if e["kind"] == "phase"}
    first, end = kinds.index("partition.state"), kinds.index("partition.watch_end")
    assert at["steady-state"] < first < end < at["collect"]
    state = history[first]
    assert state == {**state, "topic": "chaos", "partition": 0, "leader": 1, "isr": [1, 2, 3]}
    assert kinds.count("partition.state") == 1  # the state never changed
    assert history[end]["failed"] == 0 and history[end]["polls"] >= 1


def test_a_watch_that_cannot_poll_never_breaks_the_cell(tmp_path: Path) -> None:
    """The fakes have no partition_states: every poll fails, is counted, and the cell runs on."""
    history, _ = run(tmp_path, Fakes())
    assert phases(history) == PHASES and run_check(history).verdict == "pass"
    (end,) = [e for e in history if e["kind"] == "partition.watch_end"]
    assert end["polls"] == 0 and end["failed"] >= 1 and "AttributeError" in end["error"]
    assert "partition.state" not in {e["kind"] for e in history}


NOT_STARTED = "cannot start 'definitely-not-a-program-xyz': [Errno 2] No such file or directory"


def test_a_member_that_cannot_start_ends_the_drain_at_once_and_is_the_reason(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A member whose program could not be started never reads: the drain does not wait out
    its timeout (120 s here) for it, and the cell is unknown with the launcher's error."""
    from spark_jobs.history_facts import drain_undecided

    class CannotStart(Fakes):
        def not_started(self) -> dict[str, str]:
            return {"pipeline/m0": NOT_STARTED}

        def reached(self, _ends: dict[int, int]) -> bool:
            raise AssertionError("the drain asked the consumers: it waited")

        def merge_events(self) -> None:  # the member's own event, as its file holds it
            assert self.history is not None
            self.history.append("consumer.not_started", consumer="pipeline/m0", error=NOT_STARTED)

    waits: list[float] = []
    real_wait_until = settle.wait_until

    def timed(*args: Any, **kwargs: Any) -> Any:
        started = time.monotonic()
        try:
            return real_wait_until(*args, **kwargs)
        finally:
            waits.append(time.monotonic() - started)

    monkeypatch.setattr(settle, "wait_until", timed)
    history, _ = run(tmp_path, CannotStart())
    assert phases(history) == PHASES
    (drain,) = [e for e in history if e["kind"] == "drain.end"]
    reason = f"pipeline/m0 could not start: {NOT_STARTED}"
    assert drain == {**drain, "complete": False, "lag": {}, "reason": reason}
    assert waits[-1] < 5  # the drain's wait (the last): at once, not drain_timeout_s
    check = run_check(history)
    assert check.verdict == "unknown"
    assert check.detail == f"consumer.not_started: pipeline/m0: {NOT_STARTED}"
    assert (
        drain_undecided(history) == f"final drain incomplete (drain.end complete=false: {reason})"
    )


def behind_runner(tmp_path: Path, fakes: Fakes) -> CellRunner:
    """A run's cell but its last: its collect-behind left to whoever calls `behind`."""
    return CellRunner(
        cell(),
        [],
        1,
        tmp_path / "cell",
        "run",
        lambda _s: None,
        parts=fakes.parts(),
        collect_behind=True,
    )


def test_a_collect_behind_runs_once_and_completes_the_folder(tmp_path: Path) -> None:
    fakes = Fakes()
    runner = behind_runner(tmp_path, fakes)
    runner.run()
    # run() left the end of the collect to whoever runs `behind`: nothing written yet.
    assert runner.behind is not None and "cluster.close" not in fakes.calls
    assert not (tmp_path / "cell" / "history.jsonl").exists()
    runner.behind()
    runner.behind()  # the run's cleanup after the checks' thread: nothing twice
    assert fakes.calls.count("cluster.close") == 1
    history = read_jsonl(tmp_path / "cell" / "history.jsonl")[0]
    assert phases(history) == [*PHASES, "collect-behind"]
    kinds = [e.get("phase", e["kind"]) for e in history]
    assert kinds.index("tables.written") < kinds.index("collect-behind")  # after the collect


def test_a_cell_that_broke_finishes_at_once_even_with_collect_behind(tmp_path: Path) -> None:
    fakes = Fakes(fail_in="cluster.heal_all")
    runner = behind_runner(tmp_path, fakes)
    with pytest.raises(Boom):
        runner.run()
    assert runner.behind is None and fakes.calls[-1] == "cluster.close"
    assert "collect-behind" not in phases(read_jsonl(tmp_path / "cell" / "history.jsonl")[0])


def test_a_warm_cluster_skips_the_warm_up(tmp_path: Path) -> None:
    """A cluster that ran a workload before (explore's reuse) is warm: no warm-up phase, no
    warm-up topic, the workload right after the steady state."""
    fakes = Fakes()
    fakes.warm = True
    history, _ = run(tmp_path, fakes)
    assert phases(history) == [p for p in PHASES if p != "warm-up"]
    assert "warm_up" not in fakes.calls and "admin.delete_topic" not in fakes.calls
    assert not [e for e in history if e["kind"] == "warm_up.end"]
