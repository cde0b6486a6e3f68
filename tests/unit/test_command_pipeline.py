"""A user's program as the pipeline (`pipeline.kind: command`) without Kafka: its spec rules,
what each member's environment holds, how an output record is matched to the input record it
copies, and that a member's program does not outlive the runner."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from harness.cli import app
from harness.cli.terminal import EXIT_USAGE
from harness.results.history import History
from harness.spec import CommandPipelineSpec, PipelineSpec, SpecError, load_spec
from harness.workload.command.member import member_env
from harness.workload.consumer_kinds import declared_sets
from harness.workload.consumer_sets import ConsumerSets
from harness.workload.log_reader import LogContents, copied_from, value_digest
from harness.workload.records import encode_value
from harness.workload.runtime import Runtime
from tests.unit.test_producer_process import load, problems

ROOT = Path(__file__).resolve().parents[2]

BASE = """
name: t
producer: {acks: all, rate: 10, duration_s: 5}
"""


def with_pipeline(pipeline: str) -> str:
    return BASE + f"pipeline: {pipeline}\n"


def test_a_command_pipeline_parses_with_its_defaults() -> None:
    spec = load(with_pipeline("{kind: command, command: [python, t.py], env: {A: x}}"))
    p = spec.pipeline
    assert isinstance(p, CommandPipelineSpec)
    assert (p.command, p.env, p.members, p.guarantee, p.output, p.group) == (
        ["python", "t.py"],
        {"A": "x"},
        1,
        "at-least-once",
        "chaos-out",
        "chaos-pipeline",
    )
    assert p.member_transactional_id(1) == "chaos-pipeline-1"


def test_without_kind_the_pipeline_is_still_ours() -> None:
    spec = load(with_pipeline("{guarantee: exactly-once, members: 3}"))
    assert isinstance(spec.pipeline, PipelineSpec) and spec.pipeline.kind == "transform"


@pytest.mark.parametrize(
    ("pipeline", "expected"),
    [
        ("{kind: command}", "pipeline.command: required key missing"),
        ("{kind: command, command: []}", "pipeline.command: expected at least 1 item(s)"),
        ("{kind: command, command: python t.py}", "pipeline.command: expected a list"),
        ("{kind: command, command: ['']}", "pipeline.command[0]: expected a non-empty string"),
        ("{kind: command, command: [python, 3]}", "pipeline.command[1]: expected a string"),
        ("{kind: command, command: [x], env: {A: 1}}", "pipeline.env.A: expected a string"),
        ("{kind: command, command: [x], env: [A]}", "pipeline.env: expected a mapping"),
        ("{kind: command, command: [x], env: {1A: x}}", "pipeline.env.1A: expected a variable"),
        (
            "{kind: command, command: [x], shell: true}",
            "pipeline.shell: unknown key; allowed: kind",
        ),
        ("{kind: command, command: [x], members: 0}", "pipeline.members: expected >= 1"),
        ("{kind: command, command: [x], guarantee: maybe}", "pipeline.guarantee: expected one of"),
        ("{kind: command, command: [x], config: {}}", "pipeline.config: unknown key"),
        ("{kind: sql}", "pipeline: expected kind transform or command (got 'sql')"),
        ("{command: [x]}", "pipeline.command: unknown key"),  # no kind: a transform
    ],
)
def test_bad_command_pipelines_name_the_key(pipeline: str, expected: str) -> None:
    found = problems(with_pipeline(pipeline))
    assert any(expected in line for line in found), found


@pytest.mark.parametrize("name", ["KAFKA_BOOTSTRAP_SERVERS", "GROUP_ID", "STATE_DIR"])
def test_env_may_not_set_what_the_harness_sets(name: str) -> None:
    found = problems(with_pipeline(f"{{kind: command, command: [x], env: {{{name}: y}}}}"))
    assert any(f"pipeline.env.{name}: set by the harness" in line for line in found), found


def test_cwd_is_the_experiment_files_folder_or_relative_to_it(tmp_path: Path) -> None:
    folder = tmp_path / "exp"
    folder.mkdir()
    path = folder / "e.yaml"
    path.write_text(with_pipeline("{kind: command, command: [x]}"))
    # (programs=False: the program x and these folders are nowhere; see the tests below)
    p = load_spec(path, programs=False).pipeline
    assert isinstance(p, CommandPipelineSpec) and p.cwd == str(folder.resolve())
    path.write_text(with_pipeline("{kind: command, command: [x], cwd: ../app}"))
    p = load_spec(path, programs=False).pipeline
    assert isinstance(p, CommandPipelineSpec) and p.cwd == str((tmp_path / "app").resolve())
    path.write_text(with_pipeline("{kind: command, command: [x], cwd: /opt/app}"))
    p = load_spec(path, programs=False).pipeline
    assert isinstance(p, CommandPipelineSpec) and p.cwd == "/opt/app"


def _load_error(path: Path, pipeline: str) -> str:
    path.write_text(with_pipeline(pipeline))
    with pytest.raises(SpecError) as info:
        load_spec(path)
    return str(info.value)


def test_a_program_that_is_nowhere_is_a_spec_error_naming_command_0(tmp_path: Path) -> None:
    path = tmp_path / "e.yaml"
    error = _load_error(path, "{kind: command, command: [definitely-not-a-program-xyz]}")
    assert error == (
        f"{path}: pipeline.command[0]: expected a program on PATH or a file relative to "
        f"pipeline.cwd {tmp_path.resolve()} (got 'definitely-not-a-program-xyz': neither)"
    )
    # `validate` says so, exit 2, before anything starts
    result = CliRunner().invoke(app, ["validate", str(path)])
    assert result.exit_code == EXIT_USAGE, result.output
    assert "pipeline.command[0]" in result.output.replace("\n", "")
    # a result folder's spec.yaml is read back without the rule (`verify`: run elsewhere)
    assert load_spec(path, programs=False).pipeline is not None


def test_a_program_on_the_members_path_or_a_file_in_cwd_is_found(tmp_path: Path) -> None:
    path = tmp_path / "e.yaml"
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for folder, name in ((tmp_path, "run.sh"), (bin_dir, "mine")):
        (folder / name).write_text("#!/bin/sh\n")
        (folder / name).chmod(0o755)
    for pipeline in (
        "{kind: command, command: [python, t.py]}",  # the harness's interpreter: PATH's first
        "{kind: command, command: [sh, -c, 'true']}",  # the harness's PATH
        "{kind: command, command: [./run.sh]}",  # relative to cwd (this folder)
        "{kind: command, command: [../run.sh], cwd: bin}",
        f"{{kind: command, command: [{tmp_path / 'run.sh'}]}}",  # absolute
        f"{{kind: command, command: [mine], env: {{PATH: {bin_dir}}}}}",  # env's PATH
    ):
        path.write_text(with_pipeline(pipeline))
        assert load_spec(path).pipeline is not None, pipeline


@pytest.mark.parametrize(
    ("pipeline", "expected"),
    [
        ("{kind: command, command: [./gone.sh]}", "pipeline.command[0]: expected a file relative"),
        ("{kind: command, command: [run.sh]}", "pipeline.command[0]: expected ./run.sh: a name"),
        ("{kind: command, command: [./plain.txt]}", "pipeline.command[0]: expected an executable"),
        ("{kind: command, command: [python], cwd: nowhere}", "pipeline.cwd: expected a folder"),
    ],
)
def test_a_program_that_cannot_start_names_the_key(
    tmp_path: Path, pipeline: str, expected: str
) -> None:
    (tmp_path / "run.sh").write_text("#!/bin/sh\n")
    (tmp_path / "run.sh").chmod(0o755)
    (tmp_path / "plain.txt").write_text("not a program\n")
    assert expected in _load_error(tmp_path / "e.yaml", pipeline)


def test_a_command_pipeline_is_the_set_pipeline_run_by_the_command_kind() -> None:
    spec = load(with_pipeline("{kind: command, command: [x], members: 2}"))
    (*_, (name, kind, model)) = declared_sets(spec)
    assert (name, kind.spec, model) == ("pipeline", CommandPipelineSpec, spec.pipeline)


def test_a_member_is_told_where_to_read_and_write(tmp_path: Path) -> None:
    spec = CommandPipelineSpec(
        command=["x"], env={"APP": "1", "PATH": "/mine"}, output="out", group="g"
    )
    runtime = Runtime("host:1", "in", tmp_path, 10.0, 0)
    env = member_env(spec, runtime, "pipeline/m2", {"HOME": "/h", "PATH": "/usr/bin"})
    assert {k: env[k] for k in ("HOME", "APP")} == {"HOME": "/h", "APP": "1"}
    assert env["PATH"] == f"{Path(sys.executable).parent}{os.pathsep}/mine"
    assert {
        k: env[k]
        for k in (
            "KAFKA_BOOTSTRAP_SERVERS",
            "INPUT_TOPIC",
            "OUTPUT_TOPIC",
            "GROUP_ID",
            "TRANSACTIONAL_ID",
            "MEMBER_INDEX",
            "STATE_DIR",
        )
    } == {
        "KAFKA_BOOTSTRAP_SERVERS": "host:1",
        "INPUT_TOPIC": "in",
        "OUTPUT_TOPIC": "out",
        "GROUP_ID": "g",
        "TRANSACTIONAL_ID": "chaos-pipeline-2",
        "MEMBER_INDEX": "2",
        "STATE_DIR": str(tmp_path / "pipeline-m2.state"),
    }


def contents(rows: list[tuple[int, int, int, bytes]]) -> LogContents:
    out = LogContents()
    for seq, part, off, value in rows:
        out.seq.append(seq)
        out.partition.append(part)
        out.offset.append(off)
        out.digest.append(value_digest(value))
    return out


def test_an_output_record_is_placed_where_the_input_holds_its_value() -> None:
    a, b = encode_value(1, 40), encode_value(2, 40)
    # seq 1 twice in the input (a producer retry): the first place is the record's.
    source = contents([(1, 0, 5, a), (2, 1, 7, b), (1, 0, 9, a)])
    output = contents(
        [
            (1, 0, 0, a),  # a verbatim copy
            (1, 2, 0, a),  # its duplicate, elsewhere in the output
            (2, 1, 1, b[:-1] + b"y"),  # seq 2, but the value was changed: no input's
            (3, 0, 1, encode_value(3, 40)),  # a seq the input never held
        ]
    )
    assert copied_from(output, source) == ([0, 0, None, None], [5, 5, None, None])
    assert copied_from(output, None) == ([None] * 4, [None] * 4)


LAUNCHER = """
import subprocess, sys
from harness.spec import CommandPipelineSpec
from harness.workload.member_process import member_command
from harness.workload.runtime import Runtime
from harness.common.processes import ManagedProcess
spec = CommandPipelineSpec(command=[sys.executable, "-c", {program!r}])
runtime = Runtime("127.0.0.1:1", "in", __import__("pathlib").Path({folder!r}), 600.0, 0)
cmd = member_command("harness.workload.command.member", spec, runtime, "pipeline/m0")
proc = ManagedProcess(cmd).start()
print(proc.pid, flush=True)
sys.stdin.read()  # until the test kills this "runner"
"""
# The user's program: starts a child of its own, writes both pids, and never ends by itself.
PROGRAM = textwrap.dedent(
    """
    import os, subprocess, sys, time
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
    open(os.environ["STATE_DIR"] + "/pids", "w").write(f"{os.getpid()} {child.pid}")
    time.sleep(600)
    """
)


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    with open(f"/proc/{pid}/stat") as f:  # a zombie has ended; it waits for its reaper
        return f.read().rsplit(")", 1)[1].split()[0] != "Z"


def wait_for(condition: object, what: str) -> None:
    deadline = time.monotonic() + 60
    while not condition():  # type: ignore[operator]
        assert time.monotonic() < deadline, what
        time.sleep(0.1)


def test_a_killed_runner_leaves_no_program_behind(tmp_path: Path) -> None:
    """SIGKILL the process that started the launcher: the launcher, the user's program and
    the program's own child all end (the launcher watches its parent, kills its group)."""
    runner = subprocess.Popen(
        [sys.executable, "-c", LAUNCHER.format(program=PROGRAM, folder=str(tmp_path))],
        cwd=ROOT,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert runner.stdout is not None
    launcher = int(runner.stdout.readline())
    pids = tmp_path / "pipeline-m0.state" / "pids"
    wait_for(lambda: pids.exists() and len(pids.read_text().split()) == 2, "the program ran")
    program, child = map(int, pids.read_text().split())
    assert os.getpgid(program) == os.getpgid(child) == launcher  # one group: the launcher's
    runner.send_signal(signal.SIGKILL)
    runner.wait()
    wait_for(lambda: not any(map(alive, (launcher, program, child))), "all of them ended")


def test_a_per_set_expectation_of_a_command_pipeline_is_refused() -> None:
    """The consumer checks leave its set out: such a figure would never be decided."""
    text = with_pipeline("{kind: command, command: [x]}") + "expect: {stall_s.pipeline: '< 30'}\n"
    assert any(
        "expect.stall_s.pipeline: a command pipeline's consumption" in ln for ln in problems(text)
    )
    ours = with_pipeline("{members: 1}") + "expect: {stall_s.pipeline: '< 30'}\n"
    assert problems(ours) == []


def test_the_consumer_checks_leave_a_command_pipelines_set_out() -> None:
    from spark_jobs.history_facts import unseen_sets

    def started(**fields: object) -> list[dict[str, object]]:
        return [{"ts": 1, "kind": "pipeline.start", "guarantee": "at-least-once", **fields}]

    assert unseen_sets(started(pipeline_kind="command")) == {"pipeline"}
    assert unseen_sets(started(pipeline_kind="transform")) == set()
    assert unseen_sets(started()) == set()  # a history from before the field: ours
    assert unseen_sets([]) == set()


def test_a_member_whose_program_cannot_start_is_seen_at_once(tmp_path: Path) -> None:
    """The launcher's exec fails: it says so (consumer.not_started) and ends; the consumer
    sets report it, and waiting for the members to be ready ends at once (no Kafka here)."""
    spec = load(with_pipeline("{kind: command, command: [definitely-not-a-program-xyz]}"))
    consumers = ConsumerSets(spec, "127.0.0.1:1", tmp_path, History(), max_s=60)
    consumers.sets = {"pipeline": consumers.sets["pipeline"]}  # the group set would need Kafka
    started = time.monotonic()
    try:
        consumers.start()
        consumers.wait_assigned(60)
        waited = time.monotonic() - started
        failed = consumers.not_started()
    finally:
        consumers.stop()
    assert waited < 30  # the launcher's start and its word, not the 60 s bound
    assert list(failed) == ["pipeline/m0"]
    assert failed["pipeline/m0"].startswith("cannot start 'definitely-not-a-program-xyz': ")
    assert "No such file or directory" in failed["pipeline/m0"]
