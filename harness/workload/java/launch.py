"""How a Java client is started: the JVM, the cluster version's jars, the bound, the settings.

The clients run on the host like the librdkafka ones (same bootstrap, same process
supervision: SIGKILL and SIGSTOP reach the JVM itself), on the jars of the cluster's own
Kafka version (java_clients/lib/<version>, `make java-clients`). Every JVM is started
through io.kafkachaos.clients.Bounded, which stops it when the runner is gone or after the
runtime's max_s, as the Python children stop themselves.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path

from harness.errors import ConfigError
from harness.workload.runtime import Runtime

ROOT = Path(__file__).resolve().parents[3]
CLIENTS = ROOT / "java_clients"
JAR = CLIENTS / "target" / "kafka-chaos-clients.jar"
PACKAGE = "io.kafkachaos.clients"
# Small heap, one GC thread: several JVMs share two cores with the brokers.
JVM_FLAGS = ("-Xms32m", "-Xmx512m", "-XX:+UseSerialGC", "-XX:+ExitOnOutOfMemoryError")
# Kafka 3.x's tools bring reload4j: its configuration sends the clients' warnings to stderr.
LOG4J = CLIENTS / "log4j.properties"


def clients_built(version: str) -> bool:
    """Whether our clients and `version`'s Kafka jars are built (`make java-clients`)."""
    return JAR.is_file() and (CLIENTS / "lib" / version / ".complete").is_file()


SHARE_JAR = CLIENTS / "target" / "kafka-chaos-share.jar"  # the share member (Kafka 4.2+ API)


def classpath(version: str, extra: Sequence[Path] = ()) -> str:
    """Our clients (and `extra` jars of ours) and `version`'s Kafka jars; a clear error when
    they were not built."""
    lib = CLIENTS / "lib" / version
    missing = [j for j in extra if not j.is_file()]
    if missing:
        raise ConfigError(
            f"{missing[0]} is missing: run `make java-clients` (scripts/build-java-clients.sh)"
        )
    if not clients_built(version):
        raise ConfigError(
            f"the Java clients for Kafka {version or '(no version)'} are not built "
            f"({JAR if not JAR.is_file() else lib} is missing): run "
            f"`make java-clients` or `scripts/build-java-clients.sh {version}`"
        )
    return os.pathsep.join([str(JAR), *map(str, extra), f"{lib}{os.sep}*"])


def java_command(
    runtime: Runtime, main_class: str, args: Sequence[str], extra: Sequence[Path] = ()
) -> list[str]:
    """`java ... Bounded <runner pid> <max_s> <main_class> <args>` (`extra`: jars of ours
    besides the main one)."""
    return [
        "java",
        *JVM_FLAGS,
        f"-Dlog4j.configuration=file:{LOG4J}",
        "-cp",
        classpath(runtime.version, extra),
        f"{PACKAGE}.Bounded",
        str(os.getpid()),
        str(runtime.max_s),
        main_class,
        *args,
    ]


def write_properties(path: Path, settings: Mapping[str, object]) -> Path:
    """A client properties file (java.util.Properties: `key=value`, escaped)."""

    def escape(text: str) -> str:
        out = text.replace("\\", "\\\\").replace("\n", "\\n").replace("=", "\\=")
        return out.replace(":", "\\:").replace("#", "\\#").replace("!", "\\!")

    def scalar(value: object) -> str:
        return str(value).lower() if isinstance(value, bool) else str(value)

    def value(text: str) -> str:  # leading blanks are kept only when escaped
        stripped = text.lstrip(" ")
        return "\\ " * (len(text) - len(stripped)) + stripped

    lines = [f"{escape(k)}={value(escape(scalar(v)))}" for k, v in sorted(settings.items())]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(f"{line}\n" for line in lines))
    return path
