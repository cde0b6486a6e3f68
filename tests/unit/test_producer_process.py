"""The producer process's pieces without Kafka: its ledger assembled from the files of every
incarnation, the nemesis's producer faults on a virtual clock, librdkafka's transactional
errors mapped to actions, SIGSTOP / SIGCONT of a real child process, the spec's rules, and
the process itself: what crosses to it (its spec part and the Runtime, as they are), what it
loads, and a short run with no broker to reach."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml
from confluent_kafka import KafkaError

from harness.common.processes import ManagedProcess
from harness.faults import healing
from harness.nemesis.nemesis import Nemesis
from harness.nemesis.schedule import plan_faults
from harness.results.history import History
from harness.results.ledger_join import ledger_tables
from harness.results.producer_files import IncarnationPaths, incarnations, last_numbers
from harness.results.tables import LEDGER, concat
from harness.spec import parse_spec
from harness.spec.matrix import expand_cells
from harness.spec.models import Spec
from harness.spec.producer import ProducerSpec
from harness.workload.producer import member
from harness.workload.producer.supervisor import ProducerSupervisor
from harness.workload.producer.transactions import txn_action
from harness.workload.runtime import Runtime
from tests.unit.fakes import FakeCluster, FakeConsumers, FakeProducer, Planned

ROOT = Path(__file__).resolve().parents[2]


def write(path: Path, text: str) -> None:
    path.write_text(text, encoding="utf-8")


def test_the_ledger_joins_sends_acks_and_transaction_ends_of_every_incarnation(
    tmp_path: Path,
) -> None:
    p0, p1 = IncarnationPaths(tmp_path, "p0"), IncarnationPaths(tmp_path, "p1")
    # p0: txn 0 committed (seq 0, 1), txn 1 aborted (seq 2), txn 2 open when it was killed
    # (seq 3 acked, seq 4 never reported); a torn last ack line.
    write(p0.sends, "0,0,100\n1,0,100\n2,1,101\n3,2,102\n4,2,102\n")
    write(
        p0.acks,
        "0,1,10,ok,110,\n1,2,20,ok,111,\n2,0,5,ok,112,\n3,1,11,ok,113,\n4,2,2",
    )
    write(p0.txns, "0,committed,115,\n1,aborted,116,\n")
    # p1 after the restart: seq 5 in txn 3, failed with an error text holding commas.
    write(p1.sends, "5,3,200\n")
    write(p1.acks, '5,0,,fail,210,"Local: fenced, by a newer instance"\n')
    write(p1.txns, '3,unknown,220,"commit: timed out, then fenced"\n')

    cols = concat(LEDGER, ledger_tables(incarnations(tmp_path))).to_pydict()

    assert cols["seq"] == [0, 1, 2, 3, 4, 5]
    assert cols["txn"] == [0, 0, 1, 2, 2, 3]
    assert cols["outcome"] == ["committed", "committed", "aborted", "unknown", "unknown", "unknown"]
    assert cols["status"] == ["ok", "ok", "ok", "ok", "unknown", "fail"]
    assert cols["partition"] == [1, 2, 0, 1, None, 0]
    assert cols["offset"] == [10, 20, 5, 11, None, None]
    assert cols["error"][5] == "Local: fenced, by a newer instance"
    assert cols["error"][4] == "no delivery report before the producer ended"
    assert cols["key"][3] == "k3" and cols["send_ts"][5] == 200 and cols["ack_ts"][0] == 110
    # The next incarnation goes on after the highest seq and transaction so far.
    assert last_numbers(tmp_path) == (5, 3)


def test_a_producer_without_transactions_has_null_txn_and_outcome(tmp_path: Path) -> None:
    p0 = IncarnationPaths(tmp_path, "p0")
    write(p0.sends, "0,,100\n1,,100\n")
    write(p0.acks, "1,0,0,ok,105,\n")
    cols = concat(LEDGER, ledger_tables(incarnations(tmp_path))).to_pydict()
    assert cols["txn"] == [None, None] and cols["outcome"] == [None, None]
    assert cols["status"] == ["unknown", "ok"]
    assert last_numbers(tmp_path) == (1, -1)


def _nemesis(*plan: Planned, producer: bool = True) -> tuple[FakeCluster, Nemesis, FakeProducer]:
    cluster = FakeCluster()
    fake = FakeProducer(cluster.clock)
    nemesis = Nemesis(
        cluster,
        plan,
        FakeConsumers(cluster.clock),
        cluster.history,
        seed=1,
        default_group="g",
        clock=cluster.clock,
        producer=fake if producer else None,
    )
    return cluster, nemesis, fake


def test_producer_faults_are_booked_like_cluster_faults_and_healed_in_time() -> None:
    cluster, nemesis, producer = _nemesis(
        Planned(0, at_s=2, kind="producer-crash", target="producer", duration_s=3),
        Planned(1, at_s=10, kind="producer-pause", target="producer"),
    )
    nemesis.start()
    cluster.clock.play(100, lambda: nemesis.playing)
    assert producer.log == [(2.0, "crash"), (5.0, "restart"), (10.0, "pause")]
    injects = [e.fields for e in cluster.history.events if e.kind == "fault.inject"]
    assert [(f["fault"], f["target"], f["index"], f["late_s"]) for f in injects] == [
        ("producer-crash", "producer", 0, 0.0),
        ("producer-pause", "producer", 1, 0.0),
    ]
    # The pause without a duration stays until the heal phase, which resumes it.
    assert len(cluster.faults) == 1
    healing.heal_all(cluster, lambda deadline: None)
    assert producer.log[-1] == (100.0, "resume") and len(cluster.faults) == 0


def test_a_producer_fault_without_a_producer_process_is_skipped() -> None:
    cluster, nemesis, _ = _nemesis(
        Planned(0, at_s=1, kind="producer-pause", target="producer", duration_s=1), producer=False
    )
    nemesis.start()
    cluster.clock.play(10, lambda: nemesis.playing)
    skipped = [e.fields for e in cluster.history.events if e.kind == "fault.skipped"]
    assert len(skipped) == 1 and "not a process" in str(skipped[0]["reason"])


def test_the_transaction_coordinator_is_a_target() -> None:
    cluster, nemesis, _ = _nemesis(
        Planned(0, at_s=1, kind="kill", target="txn-coordinator-of:chaos-txn", duration_s=1)
    )
    cluster.coordinators["txn:chaos-txn"] = 3
    nemesis.start()
    cluster.clock.play(10, lambda: nemesis.playing)
    assert [(op, node) for _, op, node in cluster.ops()] == [
        ("kill", "broker-3"),
        ("start", "broker-3"),
    ]


@pytest.mark.parametrize(
    ("error", "attempt", "abortable_aborts", "action"),
    [
        (KafkaError(KafkaError._FENCED, "fenced", fatal=True), 1, True, "reinit"),
        (KafkaError(KafkaError._TIMED_OUT, "x", txn_requires_abort=True), 1, True, "abort"),
        (KafkaError(KafkaError._TIMED_OUT, "x", txn_requires_abort=True), 1, False, "reinit"),
        (KafkaError(KafkaError._TIMED_OUT, "x", retriable=True), 1, True, "retry"),
        (KafkaError(KafkaError._TIMED_OUT, "x", retriable=True), 3, True, "reinit"),
        (KafkaError(KafkaError._STATE, "x"), 1, True, "reinit"),
    ],
)
def test_transactional_errors_get_the_action_librdkafka_prescribes(
    error: KafkaError, attempt: int, abortable_aborts: bool, action: str
) -> None:
    assert txn_action(error, attempt, abortable_aborts) == action


def _state(pid: int) -> str:
    """The process state letter from /proc (T: stopped)."""
    stat = Path(f"/proc/{pid}/stat").read_text()
    return stat.rsplit(")", 1)[1].split()[0]


def test_pause_stops_the_child_and_resume_lets_it_go_on(tmp_path: Path) -> None:
    proc = ManagedProcess([sys.executable, "-c", "import time; time.sleep(30)"]).start()
    try:
        proc.pause()
        deadline = time.monotonic() + 5
        while _state(proc.pid) != "T" and time.monotonic() < deadline:
            time.sleep(0.01)
        assert _state(proc.pid) == "T"
        proc.resume()
        deadline = time.monotonic() + 5
        while _state(proc.pid) == "T" and time.monotonic() < deadline:
            time.sleep(0.01)
        assert _state(proc.pid) in ("S", "R")
        # A paused child still stops on stop(): SIGTERM is followed by SIGCONT.
        proc.pause()
        assert proc.stop(5) is True and proc.returncode is not None
    finally:
        proc.kill()


def test_the_pause_guard_lets_a_stopped_group_run_again_once_the_runner_is_gone() -> None:
    """The runner dies while the producer is SIGSTOPped: nobody else would SIGCONT it."""
    child = ManagedProcess([sys.executable, "-c", "import time; time.sleep(30)"]).start()
    try:
        child.pause()
        # A stand-in runner: starts the guard for the stopped group, then dies at once.
        runner = (
            "import os, subprocess, sys; subprocess.Popen([sys.executable, '-m', "
            f"'harness.workload.producer.pause_guard', '{child.pid}', '60', str(os.getpid())])"
        )
        subprocess.run([sys.executable, "-c", runner], check=True, cwd=ROOT)
        deadline = time.monotonic() + 10
        while _state(child.pid) == "T" and time.monotonic() < deadline:
            time.sleep(0.05)
        assert _state(child.pid) in ("S", "R")
    finally:
        child.kill()


BASE = """
name: t
producer: {acks: all, rate: 10, duration_s: 5, transactions: {records_per_txn: 5}}
consumer: {kind: group}
"""


def load(text: str) -> Spec:
    return parse_spec(yaml.safe_load(text))


def problems(text: str) -> list[str]:
    try:
        expand_cells(load(text))
    except Exception as exc:  # SpecError lists every problem
        return str(exc).splitlines()
    return []


def test_a_valid_transactional_spec_plans_producer_faults_on_the_producer() -> None:
    spec = load(
        BASE
        + "faults:\n  - {at_s: 1, kind: producer-crash, duration_s: 1}\n"
        + "  - {at_s: 2, kind: kill, target: 'txn-coordinator-of:chaos-txn'}\n"
    )
    cells = expand_cells(spec)
    plan = plan_faults(cells[0], seed=1)
    assert [(f.kind, f.target) for f in plan] == [
        ("producer-crash", "producer"),
        ("kill", "txn-coordinator-of:chaos-txn"),
    ]


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        ("producer: {acks: 1, rate: 10, duration_s: 5, transactions: {}}", "needs acks=all"),
        (
            "producer: {acks: all, enable_idempotence: false, rate: 10, duration_s: 5, transactions: {}}",
            "a transactional producer is idempotent",
        ),
        (
            "producer: {acks: all, rate: 10, duration_s: 5, config: {transactional.id: x}}",
            "set through producer.transactions.transactional_id",
        ),
        (
            "producer: {acks: all, rate: 10, duration_s: 5}\nfaults: [{at_s: 1, kind: kill, target: 'txn-coordinator-of:chaos-txn'}]",
            "needs a transactional producer (producer.transactions) or a pipeline",
        ),
        (
            "producer: {acks: all, rate: 10, duration_s: 5, transactions: {}}\nfaults: [{at_s: 1, kind: kill, target: 'txn-coordinator-of:other'}]",
            "expected one of the transactional ids chaos-txn (got 'other')",
        ),
        (
            "producer: {acks: all, rate: 10, duration_s: 5}\nfaults: [{at_s: 1, kind: producer-pause, target: 'broker:1'}]",
            "expected producer",
        ),
    ],
)
def test_transactional_spec_mistakes_are_named(change: str, expected: str) -> None:
    found = problems("name: t\nconsumer: {kind: group}\n" + change + "\n")
    assert any(expected in line for line in found), found


def test_the_spec_part_and_the_runtime_travel_to_the_child_as_they_are(tmp_path: Path) -> None:
    """The supervisor's argv, read back by the process: the spec's own producer part and the
    Runtime, equal to what the runner gave (nothing copied field by field)."""
    spec = load(
        BASE.replace(
            "transactions: {records_per_txn: 5}",
            "config: {linger.ms: 7}, transactions: {records_per_txn: 50, abort_every: 3}",
        )
    ).producer
    runtime = Runtime("127.0.0.1:1", "chaos", tmp_path / "producer", max_s=900.0, seed=7)
    supervisor = ProducerSupervisor(spec, runtime, History())
    args = member.parse_args(supervisor.argv("p1", first_seq=40, first_txn=4)[3:])
    assert ProducerSpec.model_validate_json(args.spec) == spec
    assert Runtime.from_json(args.runtime) == runtime
    assert (args.name, args.first_seq, args.first_txn) == ("p1", 40, 4)
    plain = ProducerSpec(acks="1", records=5)
    assert ProducerSpec.model_validate_json(plain.model_dump_json()) == plain


def test_the_producer_process_loads_no_fault_kind_nor_cluster_class() -> None:
    """Contract "light-processes" at run time: the harness.spec package face is lazy, so the
    process's spec part does not bring harness.spec.models (and harness.faults) with it."""
    code = (
        "import sys, harness.workload.producer.member\n"
        "heavy = ('harness.faults', 'harness.cluster', 'harness.spec.models', 'testcontainers')\n"
        "print([m for m in heavy if m in sys.modules])"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True
    )
    assert done.stdout.strip() == "[]"


def test_the_producer_process_runs_from_its_spec_part_alone(tmp_path: Path) -> None:
    """The supervisor starts the member with the spec part and the Runtime; with no broker
    to reach, every record it sent times out (unknown) and the ledger and events say so."""
    # A count, not a duration: a child that starts late on a loaded machine still sends them.
    spec = ProducerSpec(rate=40, records=20, config={"message.timeout.ms": 1000})
    runtime = Runtime("127.0.0.1:1", "chaos", tmp_path / "producer", max_s=60.0, seed=0)
    history = History()
    supervisor = ProducerSupervisor(spec, runtime, history).start()
    deadline = time.monotonic() + 30
    while supervisor.running and time.monotonic() < deadline:
        time.sleep(0.1)
    supervisor.join(5)
    assert supervisor.crashed is None
    rows = supervisor.write(tmp_path / "ledger.parquet")
    cols = concat(LEDGER, ledger_tables(incarnations(runtime.directory))).to_pydict()
    assert rows == len(cols["seq"]) == supervisor.attempted > 0
    assert cols["seq"] == list(range(rows)) and set(cols["status"]) == {"unknown"}
    assert not (runtime.directory / "p0.txns.csv").exists()
    events = {e.kind: e.fields for e in history.events}
    assert events["producer.start"]["first_seq"] == 0 and events["producer.start"]["acks"] == "all"
    assert events["producer.end"]["attempted"] == rows == events["producer.end"]["failed"]
    schedule = events["producer.schedule"]  # its pacing's start: the slip is measured from it
    assert (schedule["first_seq"], schedule["rate"], schedule["planned"]) == (0, 40, 20)
