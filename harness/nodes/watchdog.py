"""The cluster's watchdog: removes a run's containers and network once its runner is gone.

Testcontainers' reaper (Ryuk) removes a dead session's containers within seconds,
but its image cannot be pulled here, and a SIGKILLed runner cannot clean up after
itself. So each cluster starts this small process first (in its own session: a
Ctrl-C at the terminal does not reach it). It watches the runner's pid together
with its start time (a reused pid is not the runner) and, once the runner is gone,
removes the run's labelled containers, then its network, and exits.

It also exits by itself, removing nothing, when the run's resources are released
normally (the cluster's close() stops it; failing that, it notices that no container
or network with the run label remains after one was seen), or after `--max-s`.

`python -m harness.nodes.watchdog --run-id ID --owner HOST:PID:START [--max-s N]`
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from pathlib import Path

import docker

from harness.common.processes import ManagedProcess
from harness.nodes.reaper import RUN_LABEL, owner_is_alive, owner_label, remove_run

MAX_S = 24 * 3600.0  # a bound on its own life: longer than any cell plus --keep-cluster
OWNER_EVERY_S = 0.5  # reading /proc is cheap
RESOURCES_EVERY_S = 5.0  # asking Docker is not
SWEEPS = 3  # a request the runner sent just before dying may still create something
SWEEP_PAUSE_S = 2.0


def start_watchdog(run_id: str, max_s: float = MAX_S, log: Path | None = None) -> ManagedProcess:
    """Start the watchdog of a run owned by this process (call before creating anything).

    What it says (what it removed, Docker errors) goes to `log`, or nowhere."""
    argv = [sys.executable, "-m", "harness.nodes.watchdog", "--run-id", run_id]
    argv += ["--owner", owner_label(), "--max-s", str(max_s)]
    return ManagedProcess(argv, log).start()


def _say(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


def run_exists(client: docker.DockerClient, run_id: str) -> bool:
    """Any container or network still carries the run's label."""
    selector: dict[str, str | list[str] | bool] = {"label": f"{RUN_LABEL}={run_id}"}
    return bool(
        client.containers.list(all=True, filters=selector) or client.networks.list(filters=selector)
    )


def watch(
    client: docker.DockerClient,
    run_id: str,
    owner: str,
    max_s: float,
    *,
    log: Callable[[str], None] = _say,
    sleep: Callable[[float], None] = time.sleep,
    clock: Callable[[], float] = time.monotonic,
) -> str:
    """Until the owner dies (then remove the run), the run is released, or max_s; says which."""
    deadline = clock() + max_s
    seen = False
    next_look = 0.0
    while True:
        if not owner_is_alive(owner):
            for sweep in range(SWEEPS):
                if sweep:
                    sleep(SWEEP_PAUSE_S)
                try:
                    removed = remove_run(client, run_id)
                    if removed:
                        log(f"runner {owner} is gone: removed {', '.join(removed)}")
                    if not run_exists(client, run_id):
                        break
                except Exception as exc:  # Docker busy or restarting: the next sweep tries again
                    log(f"removing run {run_id}: {exc}")
            return "owner gone"
        now = clock()
        if now >= deadline:
            return "max lifetime"
        if now >= next_look:
            next_look = now + RESOURCES_EVERY_S
            try:
                exists = run_exists(client, run_id)
            except Exception as exc:  # the watchdog outlives a Docker hiccup
                log(f"asking Docker about run {run_id}: {exc}")
            else:
                if seen and not exists:
                    return "released"
                seen = seen or exists
        sleep(OWNER_EVERY_S)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--run-id", required=True)
    parser.add_argument("--owner", required=True, help="reaper.owner_label() of the runner")
    parser.add_argument("--max-s", type=float, default=MAX_S)
    args = parser.parse_args(argv)
    outcome = watch(docker.from_env(), args.run_id, args.owner, args.max_s)
    _say(f"watchdog of run {args.run_id}: {outcome}")


if __name__ == "__main__":
    main()
