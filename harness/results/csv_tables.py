"""The CSV files workload processes append to, read as Arrow tables chunk by chunk.

A soak test appends millions of lines; reading them one Python object per line took GBs.
Here a file is read in chunks of whole lines (bounded memory; a last line torn by a SIGKILL
is left out) and each chunk is parsed by pyarrow into typed columns. The result is exactly
what the line readers gave (`_complete_lines` + `split(",")` or `csv.reader`, then `int`):
a line with another number of fields, or a value that is not an integer where one belongs,
is dropped. A chunk holding anything pyarrow might read otherwise than those readers (a
line break other than `\\n`, "0x", a quote where the csv module would not put one) is
read line by line in Python instead, as before; the workload's writers write none.
"""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pacsv

CHUNK_BYTES = 4 << 20  # whole lines read and parsed at a time
INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1

# What str.splitlines (the line readers) splits on besides "\n": pyarrow does not. As bytes,
# and the UTF-8 forms of U+0085, U+2028, U+2029.
_LINE_BREAK_BYTES = frozenset(b"\r\x0b\x0c\x1c\x1d\x1e")
_LINE_BREAK_UTF8 = (b"\xc2\x85", b"\xe2\x80\xa8", b"\xe2\x80\xa9")
# pyarrow reads "0x1f" as an integer, int() does not; any other text pyarrow takes for an
# integer int() takes too, as the same number (what only int() takes fails pyarrow's parse,
# and the chunk is read line by line).
_HEX = (b"0x", b"0X")
# Bytes that cannot make pyarrow read a chunk otherwise than the line readers (deleted
# before looking at what is left): printable ASCII but the quote and x, tab, newline.
_HARMLESS = bytes(b for b in range(0x20, 0x7F) if b not in b'"xX') + b"\t\n"
# A line the csv module writes: each field bare (no quote, no comma) or quoted whole (a quote
# doubled). pyarrow and csv.reader read such a line alike; other uses of quotes may differ.
_FIELD = rb'(?:[^",]*|"(?:[^"]|"")*")'
_WRITTEN_BY_CSV = re.compile(_FIELD + rb"(?:," + _FIELD + rb")*")


@dataclass(frozen=True)
class CsvColumns:
    """The columns of one kind of file (no header line), and how each is read.

    ints: integer columns (int64); others are strings. nullable: an empty value is null
    (for an integer column: else the line is dropped). quoted: CSV quoting (the producer's
    files, whose error texts hold commas), else fields are split on every comma."""

    names: tuple[str, ...]
    ints: frozenset[str]
    nullable: frozenset[str] = frozenset()
    quoted: bool = False

    @property
    def schema(self) -> pa.Schema:
        return pa.schema([(n, pa.int64() if n in self.ints else pa.string()) for n in self.names])


def whole_chunks(path: Path, start: int = 0) -> Iterator[tuple[bytes, int]]:
    """The file's whole lines from byte `start`, about CHUNK_BYTES at a time, each chunk
    with the position after it; a last line without its newline (torn) is not given."""
    if not path.exists():
        return
    with path.open("rb") as f:
        f.seek(start)
        carry = b""
        while data := f.read(CHUNK_BYTES):
            data = carry + data
            end = data.rfind(b"\n")
            if end < 0:
                carry = data
                continue
            start += end + 1
            carry = data[end + 1 :]
            yield data[: end + 1], start


def parse_chunk(chunk: bytes, columns: CsvColumns) -> pa.Table:
    """Whole lines as a table (`columns.schema`); torn and foreign lines dropped."""
    if not _needs_lines(chunk, columns.quoted):
        table = _fast(chunk, columns)
        if table is not None:
            return table
    return _line_by_line(chunk, columns)


def _needs_lines(chunk: bytes, quoted: bool) -> bool:
    """Whether pyarrow might read the chunk otherwise than the line readers."""
    rest = frozenset(chunk.translate(None, _HARMLESS))  # usually nothing is left
    if not rest:
        return False
    if rest & _LINE_BREAK_BYTES:
        return True
    if ord('"') in rest and (not quoted or not _quotes_as_csv_writes(chunk)):
        return True
    if rest & frozenset(b"xX") and any(h in chunk for h in _HEX):
        return True
    return max(rest) >= 0x80 and any(b in chunk for b in _LINE_BREAK_UTF8)


def _quotes_as_csv_writes(chunk: bytes) -> bool:
    """Whether every line holding a quote is quoted as the csv module quotes (error texts
    with commas): checked line by line, for those lines only."""
    at = chunk.find(b'"')
    while at >= 0:
        start = chunk.rfind(b"\n", 0, at) + 1
        end = chunk.find(b"\n", at)  # a chunk ends with a newline
        if not _WRITTEN_BY_CSV.fullmatch(chunk, start, end):
            return False
        at = chunk.find(b'"', end)
    return True


def read_chunks(path: Path, columns: CsvColumns) -> Iterator[pa.Table]:
    """The file as tables of one chunk each, in file order (none for a missing file)."""
    for chunk, _ in whole_chunks(path):
        yield parse_chunk(chunk, columns)


def read_table(path: Path, columns: CsvColumns) -> pa.Table:
    """The whole file as one table (`columns.schema`)."""
    tables = list(read_chunks(path, columns))
    return pa.concat_tables(tables) if tables else columns.schema.empty_table()


def _fast(chunk: bytes, columns: CsvColumns) -> pa.Table | None:
    """pyarrow's parse; None when the chunk must be read line by line to be read alike."""
    try:
        table = pacsv.read_csv(
            pa.py_buffer(chunk),
            read_options=pacsv.ReadOptions(column_names=list(columns.names)),
            parse_options=pacsv.ParseOptions(
                quote_char='"' if columns.quoted else False,
                newlines_in_values=False,
                invalid_row_handler=lambda _row: "skip",  # another number of fields
            ),
            convert_options=pacsv.ConvertOptions(
                column_types=columns.schema,
                null_values=[""],
                strings_can_be_null=False,
                quoted_strings_can_be_null=False,
            ),
        )
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        return None  # a value int() may read otherwise, or not UTF-8: the slow way says
    keep = None
    for name in columns.names:
        if name in columns.ints and name not in columns.nullable:
            valid = pc.is_valid(table.column(name))  # empty: the line is dropped
            keep = valid if keep is None else pc.and_(keep, valid)
        elif name in columns.nullable and name not in columns.ints:
            text = table.column(name)
            empty = pc.if_else(pc.equal(text, ""), pa.scalar(None, pa.string()), text)
            table = table.set_column(table.schema.get_field_index(name), name, empty)
    if keep is not None and table.num_rows and not pc.all(keep).as_py():
        table = table.filter(keep)
    return table


def _line_by_line(chunk: bytes, columns: CsvColumns) -> pa.Table:
    """The line readers' way: one line at a time (only for chunks the fast path leaves)."""
    values: dict[str, list[object]] = {name: [] for name in columns.names}
    width = len(columns.names)
    for line in chunk.decode().splitlines():
        if columns.quoted:
            if not line:
                continue
            fields = next(csv.reader(io.StringIO(line)))
        else:
            fields = line.split(",")
        if len(fields) != width:
            continue
        row = _row(fields, columns)
        if row is not None:
            for name, value in zip(columns.names, row, strict=True):
                values[name].append(value)
    return pa.table(values, schema=columns.schema)


def _row(fields: list[str], columns: CsvColumns) -> list[object] | None:
    row: list[object] = []
    for name, text in zip(columns.names, fields, strict=True):
        if name in columns.nullable and text == "":
            row.append(None)
        elif name in columns.ints:
            try:
                number = int(text)
            except ValueError:
                return None
            if not INT64_MIN <= number <= INT64_MAX:
                return None
            row.append(number)
        else:
            row.append(text)
    return row
