"""Where librdkafka's own log lines go: a logger, not the terminal.

librdkafka prints connection churn (`%6|…|FAIL|…`) to stderr by default, which
drowns the progress display during faults. Every client the harness makes
passes `CLIENT_LOGGER`; a cell attaches a file handler so the lines end up in
its result folder (`clients.log`) instead.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Iterator
from pathlib import Path

CLIENT_LOGGER = logging.getLogger("kafka_chaos.librdkafka")
CLIENT_LOGGER.propagate = False
CLIENT_LOGGER.addHandler(logging.NullHandler())
CLIENT_LOGGER.setLevel(logging.DEBUG)


@contextlib.contextmanager
def client_log_to(path: Path) -> Iterator[None]:
    handler = logging.FileHandler(path, encoding="utf-8")
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(message)s"))
    CLIENT_LOGGER.addHandler(handler)
    try:
        yield
    finally:
        CLIENT_LOGGER.removeHandler(handler)
        handler.close()
