"""Command line: `python -m harness …` (also installed as `kafka-chaos`).

Exit codes (a contract): 0 every verdict pass; 1 some verdict fail; 2 bad spec or
usage; 3 infrastructure error or a verdict `unknown`. `run` and `validate` take an experiment
file or a suite file (a top-level `suite:` key: harness.suite); `compare` exits 1 when a
verdict flipped from pass; `index` writes results/index.html; `run SUITE --shard K/N` runs a
part of a suite and `merge-shards` joins the parts (harness.suite.shards).

This module builds the app from one module per verb group (validate, run, suite_run,
calibrate, explore, folders, incidents, cleanup); what they share: terminal (console, exit codes),
options, plans and builds. Every verb imports what it runs when it runs (the run side loads Docker).
"""

from __future__ import annotations

from typing import Annotated

import typer

from harness.cli import (
    calibrate,
    cleanup,
    explore,
    folders,
    incidents,
    run,
    suite_run,
    validate,
)

app = typer.Typer(
    add_completion=False, no_args_is_help=True, help="Chaos experiments on real Kafka clusters."
)


def _version(value: bool) -> None:
    if value:
        from harness._version import __version__

        typer.echo(f"kafka-chaos {__version__}")
        raise typer.Exit()


@app.callback()
def _main(
    version: Annotated[
        bool,
        typer.Option(
            "--version", callback=_version, is_eager=True, help="Print the version and exit."
        ),
    ] = False,
) -> None:
    """Chaos experiments on real Kafka clusters."""


# In the order `--help` lists them.
app.command()(validate.validate)
app.command()(incidents.incidents)
app.command()(run.run)
app.command()(calibrate.calibrate)
app.command()(explore.explore)
app.command("merge-shards")(suite_run.merge_shards_command)
app.command()(folders.compare)
app.command()(folders.index)
app.command()(folders.verify)
app.command()(cleanup.cleanup)


def main() -> None:
    app()
