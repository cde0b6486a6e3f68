"""Consumer names: `"<set>/<member>"`, e.g. `group/m0` (a group member) or `spark/q` (a query).

The name is in the history (`consumer` field), in `consumed.parquet` and `commits.parquet`,
and, with '-' for '/', in the names of a member's files under `consumers/`. The nemesis
targets a member by index: `consumer:group/0` is member `0` of set `group`.
"""

from __future__ import annotations

from dataclasses import dataclass

SEPARATOR = "/"
STEM_SEPARATOR = "-"  # in file names, where '/' cannot be


@dataclass(frozen=True, order=True)
class ConsumerRef:
    set_name: str
    member: str

    @classmethod
    def parse(cls, text: str) -> ConsumerRef:
        """`group/m0` -> ConsumerRef("group", "m0"); ValueError without both parts."""
        set_name, sep, member = text.partition(SEPARATOR)
        if not sep or not set_name or not member or SEPARATOR in member:
            raise ValueError(f"expected a consumer name <set>{SEPARATOR}<member> (got {text!r})")
        return cls(set_name, member)

    def __str__(self) -> str:
        return f"{self.set_name}{SEPARATOR}{self.member}"

    @property
    def file_stem(self) -> str:
        """`group-m0`: how the member's files under `consumers/` begin."""
        return f"{self.set_name}{STEM_SEPARATOR}{self.member}"

    @property
    def index(self) -> int | None:
        """The member as an index (`group/0` -> 0), None when it is a name like `m0`."""
        return int(self.member) if self.member.isdigit() else None


def set_of(consumer: str) -> str:
    """The set of a consumer name (`group/m0` -> `group`); a name without '/' is its own set."""
    return consumer.split(SEPARATOR, 1)[0]
