"""The timeline's ISR band: one row per partition of the workload's topic, coloured by how
many of its replicas are out of the ISR, the ISR's size written where it changes, a mark
where it shrank or grew (harness.results.isr reads the history's `partition.state` events).
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from typing import Any

from matplotlib.axes import Axes
from matplotlib.lines import Line2D
from matplotlib.patches import Patch

from harness.results.isr import PartitionSample, partition_samples, watch_end

# Replicas out of the ISR -> (colour, legend); 2 stands for two or more.
SHORTFALL_STYLES = {
    0: ("#a5d6a7", "ISR full"),
    1: ("#ffb74d", "ISR 1 replica short"),
    2: ("#e53935", "ISR 2+ replicas short"),
}
NO_LEADER = ("#424242", "no leader")


@dataclass(frozen=True)
class Mark:
    marker: str
    color: str
    label: str


SHRANK = Mark("v", "tab:red", "ISR shrank")
GREW = Mark("^", "tab:green", "ISR grew")
# Rows drawn at most (a history is input: a million partitions must not make a figure that
# tall); the others are counted in the axis label.
MAX_ROWS = 24
# A segment narrower than this share of the axis gets no size written in it (unreadable),
# unless it is a partition's first or last.
MIN_LABELLED_SHARE = 0.025


def band_height_in(rows: int) -> float:
    """Inches of figure the band needs: readable up to ~9 partitions."""
    return 0.9 + 0.2 * rows


class IsrBand:
    """What the band draws, read from a history once."""

    def __init__(self, events: list[dict[str, Any]]) -> None:
        self.samples = partition_samples(events)
        end = watch_end(events)
        self.end_ms: int | None = int(end["ts"]) if end is not None else None
        keys = sorted({s.key for s in self.samples})
        self.rows = keys[:MAX_ROWS]
        self.left_out = len(keys) - len(self.rows)

    def __bool__(self) -> bool:
        return bool(self.samples)

    def _label(self, key: tuple[str, int]) -> str:
        topics = {topic for topic, _ in self.rows}
        return f"p{key[1]}" if len(topics) == 1 else f"{key[0]}/{key[1]}"

    def draw(self, ax: Axes, t0: int, t_end: int) -> None:
        """Rows from the top (p0 first); each state lasts until the partition's next one,
        the last until the watch's end (or the timeline's when the watch never ended)."""
        by_row: dict[tuple[str, int], list[PartitionSample]] = defaultdict(list)
        for sample in self.samples:
            by_row[sample.key].append(sample)
        end_ms = self.end_ms if self.end_ms is not None else t_end
        span_s = max((t_end - t0) / 1000, 1e-9)
        used: set[tuple[str, str]] = set()
        for y, key in enumerate(self.rows):
            states = by_row[key]
            for sample, following in zip(states, [*states[1:], None], strict=True):
                stop_ms = max(end_ms, sample.ts) if following is None else following.ts
                start, width = (sample.ts - t0) / 1000, (stop_ms - sample.ts) / 1000
                style = self._style(sample)
                used.add(style)
                ax.broken_barh([(start, width)], (y - 0.38, 0.76), facecolors=style[0])
                if (
                    width >= MIN_LABELLED_SHARE * span_s
                    or sample is states[0]
                    or sample is states[-1]
                ):
                    ax.annotate(
                        str(len(sample.isr)),
                        (start, y),
                        xytext=(5, 0),  # clear of a shrink or grow mark
                        textcoords="offset points",
                        fontsize=7,
                        va="center",
                        color="white" if style == NO_LEADER else "black",
                    )
                if sample.change:
                    mark = SHRANK if sample.change < 0 else GREW
                    ax.plot([start], [y], mark.marker, color=mark.color, markersize=6)
        ax.set_yticks(range(len(self.rows)), [self._label(k) for k in self.rows], fontsize=7)
        ax.set_ylim(len(self.rows) - 0.5, -0.5)
        more = f"\n(+{self.left_out} partitions)" if self.left_out else ""
        ax.set_ylabel(f"ISR size{more}")
        handles: list[Any] = [
            Patch(facecolor=colour, label=label)
            for colour, label in [*SHORTFALL_STYLES.values(), NO_LEADER]
            if (colour, label) in used
        ]
        changes = {s.change for key in self.rows for s in by_row[key]}
        handles += [
            Line2D([], [], linestyle="none", marker=m.marker, color=m.color, label=m.label)
            for change, m in ((-1, SHRANK), (1, GREW))
            if change in changes
        ]
        ax.legend(handles=handles, loc="center left", bbox_to_anchor=(1.005, 0.5), fontsize=7)

    @staticmethod
    def _style(sample: PartitionSample) -> tuple[str, str]:
        if sample.leader is None:
            return NO_LEADER
        short = max(0, len(sample.replicas) - len(sample.isr))
        return SHORTFALL_STYLES[min(2, short)]
