"""`cleanup`: remove the containers and networks kafka-chaos runs left behind."""

from __future__ import annotations

import typer

from harness.cli.terminal import EXIT_INFRA, console, fail
from harness.errors import HarnessError


def cleanup(
    all_runs: bool = typer.Option(
        False, "--all", help="Also remove resources of runs whose process is still alive."
    ),
) -> None:
    """Remove containers and networks left by kafka-chaos runs (those of dead runs by default)."""
    try:
        from harness.cluster import docker_client
        from harness.nodes.reaper import RUN_LABEL, remove_dead_runs, remove_run

        client = docker_client()
        removed = remove_run(client) if all_runs else remove_dead_runs(client)
        live = client.containers.list(all=True, filters={"label": RUN_LABEL})
    except HarnessError as exc:
        raise fail(EXIT_INFRA, str(exc)) from None
    for name in removed:
        console.print(f"removed {name}")
    console.print(f"cleanup: removed {len(removed)} resource(s)")
    if live:
        names = ", ".join(str(c.name) for c in live)
        console.print(f"still running (their run is alive; --all removes them): {names}")
