"""results/index.html: the latest suite run, what changed, links to every cell's report.

Pure: a page model in, HTML out (`render_index`). `harness.suite.index` reads the folders and
the history, decides what changed and builds the model; this module only presents it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from importlib import resources
from typing import Any

import jinja2

from harness.report.cell_report import fmt
from harness.results.flips import FLAKY

# The figures shown as columns of the cells table (every flagged figure is listed as well).
FIGURE_COLUMNS = ("lost", "duplicated", "reprocessed", "max_stall_s", "unavailable_s")


@dataclass(frozen=True)
class FigureView:
    name: str
    text: str  # the value as shown ("?" undecided)
    note: str = ""  # why it is flagged ("" when it is not)
    direction: str = ""  # above | below | undecided ("" when not flagged)

    @property
    def flagged(self) -> bool:
        return bool(self.note)


def range_note(name: str, value: Any, low: Any, high: Any, nights: int) -> str:
    """`lost 12: above the last 7 night(s) (all 0)`, `max_stall_s ?: undecided, the last 3
    night(s) decided it (4.0 to 9.0)`."""
    span = f"all {fmt(low)}" if low == high else f"{fmt(low)} to {fmt(high)}"
    if value is None:
        return f"{name} ?: undecided, the last {nights} night(s) decided it ({span})"
    where = "above" if value > high else "below"
    return f"{name} {fmt(value)}: {where} the last {nights} night(s) ({span})"


def figure_view(name: str, value: Any, flag: tuple[Any, Any, int] | None = None) -> FigureView:
    """A figure's cell in the page; `flag` = (low, high, nights) when it is out of range."""
    if flag is None:
        return FigureView(name, fmt(value))
    low, high, nights = flag
    direction = "undecided" if value is None else "above" if value > high else "below"
    return FigureView(name, fmt(value), range_note(name, value, low, high, nights), direction)


@dataclass(frozen=True)
class CellView:
    experiment: str
    cell: str
    verdict: str
    params: str = ""
    previous_verdict: str | None = None  # None: not in any earlier run (new)
    previous_run: str | None = None
    columns: list[FigureView] = field(default_factory=list)  # FIGURE_COLUMNS, in order
    flags: list[FigureView] = field(default_factory=list)  # every out-of-range figure
    report_href: str | None = None  # relative to index.html; None: the cell has no report
    # What changed, as `harness.suite.changes.CellChange` decided it (this module only shows it).
    new: bool = True  # in no earlier run
    flipped: bool = False  # its verdict differs from the previous run's
    flipped_from_pass: bool = False
    changed: bool = False  # flipped, or a figure out of range (listed in `flags`)
    # The flip's confirmation by a re-run (harness.results.flips): confirmed | flaky |
    # unconfirmed; None when it did not flip or was not run again.
    confirmation: str | None = None

    @property
    def flaky(self) -> bool:
        return self.confirmation == FLAKY


@dataclass(frozen=True)
class ExperimentView:
    name: str
    verdict: str
    cells: list[CellView]
    run_href: str | None = None  # its run folder's summary.md, relative
    error: str | None = None
    trend_svg: str | None = None  # an inline <svg> (our own matplotlib output)


@dataclass(frozen=True)
class EarlierRun:
    run_id: str
    started: str
    verdict: str
    href: str | None  # its summary.md when its folder is here


@dataclass(frozen=True)
class MarginView:
    """A bound whose margin fell under the limit in one of the last runs (its smallest)."""

    metric: str
    experiment: str
    cell: str
    margin: float  # signed, relative (harness.verdict.margin)
    run: str  # the suite run that had it
    started: str
    under: int  # how many of the runs looked at had it under the limit
    report_href: str | None = None  # the cell's report in the latest run, when it is there

    @property
    def text(self) -> str:
        return f"{self.margin * 100:.1f} %"


@dataclass(frozen=True)
class ExploreView:
    """The newest explore run of one spec in the results folder (harness explore): its verdict,
    violations, coverage (kind x role, trials per workload phase) and "sometimes" states."""

    spec: str
    run: str  # its folder's name
    started: str
    verdict: str
    trials: int
    spent: str  # what its budget spent ("14 cells, 31 min")
    summary_href: str
    # (property, what the shrink gave, its minimal-repro.yaml relative to index.html or None)
    violations: list[tuple[str, str, str | None]] = field(default_factory=list)
    phases: tuple[str, ...] = ()
    coverage: list[tuple[str, str, list[int]]] = field(default_factory=list)
    states: list[tuple[str, int | None]] = field(default_factory=list)  # None: never reached
    # Violations seen once whose shrink did not confirm them (the verdict is then unknown).
    unconfirmed: list[tuple[str, str]] = field(default_factory=list)
    # The coverage curve: distinct states reached after each counted trial, in order.
    curve: list[int] = field(default_factory=list)

    def curve_points(self, width: int = 240, height: int = 48) -> str:
        """The curve as an SVG polyline's points (x: counted trials, y: states)."""
        if not self.curve:
            return ""
        top = max(max(self.curve), 1)
        step = width / max(len(self.curve) - 1, 1)
        return " ".join(
            f"{round(i * step, 1)},{round(height - height * n / top, 1)}"
            for i, n in enumerate(self.curve)
        )


def short_commit(revision: str | None) -> str:
    """`6048c915ca3e` (`-dirty` kept): enough of a commit to find it."""
    if revision is None:
        return "?"
    head, dirty, _ = revision.partition("-dirty")
    return head[:12] + dirty


@dataclass(frozen=True)
class IndexPage:
    suite: str
    run_id: str
    started: str
    verdict: str
    experiments: list[ExperimentView]
    nights: int  # N of "out of the range of the last N nights"
    duration: str = "?"
    previous_run: str | None = None
    links: list[tuple[str, str]] = field(default_factory=list)  # (label, relative href)
    earlier: list[EarlierRun] = field(default_factory=list)  # newest first
    notes: list[str] = field(default_factory=list)  # what could not be read
    generated: str = ""
    overhead: str | None = None  # the latest run's `harness overhead: …` line (None: unknown)
    cost_svg: str | None = None  # the nights' cost plot, inline <svg> (harness.report.trends)
    thin_margins: list[MarginView] = field(default_factory=list)  # smallest first
    margin_low: float = 0.2  # a margin under it is listed
    margin_runs: int = 7  # over the latest run and the ones just before it
    margins_known: bool = True  # some run has margins (older histories have none)
    explorations: list[ExploreView] = field(default_factory=list)  # one per spec explored
    # The commit the latest run's harness and the previous run's were checked out at (None:
    # not known): a flip across a change of harness may be ours, not Kafka's.
    harness: str | None = None
    previous_harness: str | None = None

    @property
    def harness_short(self) -> str:
        return short_commit(self.harness)

    @property
    def previous_harness_short(self) -> str:
        return short_commit(self.previous_harness)

    @property
    def harness_changed(self) -> bool:
        return None not in (self.harness, self.previous_harness) and (
            self.harness != self.previous_harness
        )

    @property
    def cells(self) -> list[CellView]:
        return [c for e in self.experiments for c in e.cells]

    @property
    def changed(self) -> list[CellView]:
        return [c for c in self.cells if c.changed]

    def count(self, verdict: str) -> int:
        """Cells of that verdict; a flaky cell is counted under `flaky` only."""
        if verdict == FLAKY:
            return sum(1 for c in self.cells if c.flaky)
        return sum(1 for c in self.cells if c.verdict == verdict and not c.flaky)


def _template() -> jinja2.Template:
    source = resources.files("harness.report").joinpath("templates/index.html.j2")
    env = jinja2.Environment(
        autoescape=True, undefined=jinja2.StrictUndefined, trim_blocks=True, lstrip_blocks=True
    )
    return env.from_string(source.read_text("utf-8"))


def render_index(page: IndexPage) -> str:
    return _template().render(page=page, columns=FIGURE_COLUMNS)
