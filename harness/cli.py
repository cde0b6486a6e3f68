"""Command line: `python -m harness …` (also installed as `kafka-chaos`)."""

from __future__ import annotations

import typer
from rich.console import Console

from harness.cluster import docker_client
from harness.errors import HarnessError
from harness.reaper import RUN_LABEL, remove_dead_runs, remove_run

app = typer.Typer(
    add_completion=False, no_args_is_help=True, help="Chaos experiments on real Kafka clusters."
)
console = Console(stderr=True)

EXIT_INFRA = 3


@app.callback()
def _root() -> None:
    """Keeps `cleanup` a subcommand while it is the only one."""


@app.command()
def cleanup(
    all_runs: bool = typer.Option(
        False, "--all", help="Also remove resources of runs whose process is still alive."
    ),
) -> None:
    """Remove containers and networks left by kafka-chaos runs (those of dead runs by default)."""
    try:
        client = docker_client()
        removed = remove_run(client) if all_runs else remove_dead_runs(client)
        live = client.containers.list(all=True, filters={"label": RUN_LABEL})
    except HarnessError as exc:
        console.print(f"[red]error:[/red] {exc}")
        raise typer.Exit(EXIT_INFRA) from None
    for name in removed:
        console.print(f"removed {name}")
    console.print(f"cleanup: removed {len(removed)} resource(s)")
    if live:
        names = ", ".join(str(c.name) for c in live)
        console.print(f"still running (their run is alive; --all removes them): {names}")


def main() -> None:
    app()
