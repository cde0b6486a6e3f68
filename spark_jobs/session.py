"""One small, quiet Spark session shared by the checks and their tests: `local[2]` by
default, or any master a user names (`--spark-master`, KAFKA_CHAOS_SPARK_MASTER), or a Spark
Connect server (`sc://host:port`: the checks then start no JVM of their own)."""

from __future__ import annotations

import atexit
import contextlib
import os
import shutil
import tempfile
import warnings
from pathlib import Path
from typing import Any

from pyspark.sql import SparkSession

# Spark's default log4j2 profile prints INFO lines and start-up noise (native-hadoop,
# loopback hostname) on every start; this keeps warnings and errors only.
_LOG4J2 = """\
rootLogger.level = warn
rootLogger.appenderRef.stderr.ref = console
appender.console.type = Console
appender.console.name = console
appender.console.target = SYSTEM_ERR
appender.console.layout.type = PatternLayout
appender.console.layout.pattern = %d{yy/MM/dd HH:mm:ss} %p %c{1}: %m%n%ex
logger.spark_utils.name = org.apache.spark.util.Utils
logger.spark_utils.level = error
logger.hadoop.name = org.apache.hadoop
logger.hadoop.level = error
# The checks order whole-run series in one window on purpose (checks.stall).
logger.window.name = org.apache.spark.sql.execution.window.WindowExec
logger.window.level = error
# Equal to the root level, so pyspark does not announce "Setting default log level".
logger.repl.name = org.apache.spark.repl.Main
logger.repl.level = warn
"""


def _log4j2_file() -> Path:
    path = Path(tempfile.gettempdir()) / "kafka-chaos-spark-log4j2.properties"
    if not path.exists() or path.read_text() != _LOG4J2:
        path.write_text(_LOG4J2)
    return path


_scratch: Path | None = None


def scratch_dir() -> Path:
    """The driver's scratch folder, the harness's own (removed at process exit): Spark must
    write nothing into the working directory, which may be read-only or a result folder."""
    global _scratch
    if _scratch is None:
        _scratch = Path(tempfile.mkdtemp(prefix="kafka-chaos-spark-"))
        atexit.register(shutil.rmtree, _scratch, True)
    return _scratch


def _artifacts_into_scratch(spark: SparkSession, scratch: Path) -> None:
    """Spark 4.0's ArtifactManager roots its folder at `artifacts/` *relative to the JVM's
    working directory* (`Utils.createTempDir("artifacts")`, a lazy val computed at the first
    job), and no setting moves it: in a read-only directory every job failed, elsewhere an
    empty `artifacts/` was left behind. Before the first job, set that lazy value to a folder
    in `scratch` by reflection. Another Spark version without that field: left as it is."""
    with contextlib.suppress(Exception):
        jvm: Any = spark.sparkContext._jvm
        owner = jvm.java.lang.Class.forName("org.apache.spark.sql.artifact.ArtifactManager$")
        computed = owner.getDeclaredField("bitmap$0")
        computed.setAccessible(True)
        if computed.getBoolean(None):  # a job of an earlier session already chose its root
            return
        root = owner.getDeclaredField("artifactRootDirectory")
        root.setAccessible(True)
        folder = scratch / "artifacts"
        folder.mkdir(exist_ok=True)
        root.set(None, jvm.java.io.File(str(folder)).toPath())
        computed.setBoolean(None, True)


# For checks whose cells are small (SMALL_CELL_ROWS ledger rows at most): their time goes
# into planning, code generation and compiling, not into long hot loops, so the JIT's
# optimizing compiler (C2) compiles far more than it ever pays back. C1 alone took an
# 8-cell chaos-run folder's verify from 173 s to 120 s (docs/benchmarks.md); the code cache
# then needs more room than C1's default 48 MB (a class per query stage), else the JVM
# stops compiling. Large cells keep the JVM's default tiers.
SMALL_CELLS_JVM = "-XX:TieredStopAtLevel=1 -XX:ReservedCodeCacheSize=256m"
SMALL_CELL_ROWS = 1_000_000

MASTER_ENV = "KAFKA_CHAOS_SPARK_MASTER"
CODEGEN_CACHE_ENTRIES = 2000
DEFAULT_MASTER = "local[2]"


def master_url(given: str | None = None) -> str:
    """The master to use: the one given, else $KAFKA_CHAOS_SPARK_MASTER, else local[2]."""
    return given or os.environ.get(MASTER_ENV) or DEFAULT_MASTER


CONNECT_SCHEME = "sc://"
CONNECT_MODE_ENV = "SPARK_CONNECT_MODE_ENABLED"  # set by pyspark in a process using Connect
# The session settings the checks depend on that a Connect client may set (runtime SQL
# settings); the server's JVM settings are its own (spark_jobs.connect_server starts one
# with spark_session's).
_CONNECT_CONF = {
    "spark.sql.shuffle.partitions": "4",
    "spark.sql.adaptive.enabled": "false",
    "spark.sql.session.timeZone": "UTC",
}


def is_connect(url: str) -> bool:
    """A Spark Connect address (`sc://host:port`), not a master."""
    return url.startswith(CONNECT_SCHEME)


def is_connect_session(spark: SparkSession) -> bool:
    """A session through Spark Connect (no SparkContext, no JVM in this process)."""
    return type(spark).__module__.startswith("pyspark.sql.connect")


def _connect_session(url: str, conf: dict[str, str] | None) -> SparkSession:
    """A new session on a running Spark Connect server: a warm JVM shared by every process
    that names it (make test's integration lane: one server instead of a cold JVM per test).
    The executors read the cell's Parquet files by the path the client names, so the
    server must see the same file system (the same machine, or a shared mount)."""
    # The checks order whole-run series in one window on purpose (checks.stall); the classic
    # session silences the same notice in its log4j2 profile.
    warnings.filterwarnings("ignore", "WARN WindowExpression: No Partition Defined", UserWarning)
    builder = SparkSession.builder.remote(url)
    for key, value in {**_CONNECT_CONF, **(conf or {})}.items():
        builder = builder.config(key, value)
    session: SparkSession = builder.create()
    return session


def spark_session(
    app: str = "kafka-chaos-verify",
    jars: list[Path] | None = None,
    conf: dict[str, str] | None = None,
    master: str | None = None,
    small_cells: bool = False,
) -> SparkSession:
    """A session on `master_url(master)` with few shuffle partitions (the checks run on one
    laptop-sized machine by default). With a cluster master the checks are a normal Spark
    application: executors read the cell's Parquet files by the path the driver names, so
    that path must be one every executor can reach (a shared mount, or the same machine).

    `small_cells`: every cell it will check has SMALL_CELL_ROWS ledger rows at most (the
    driver then runs C1 only: SMALL_CELLS_JVM).

    getOrCreate reuses a running session (JVM options and the master then no longer apply).
    """
    url = master_url(master)
    if is_connect(url):
        return _connect_session(url, conf)
    # The parallel collector: the checks are batch work on a small heap, and G1's concurrent
    # threads took ~5 s of CPU per 10 M-row cell from two cores (docs/benchmarks.md).
    scratch = scratch_dir()
    java_opts = (
        f"-Dlog4j2.configurationFile=file:{_log4j2_file()} -XX:+UseParallelGC "
        f"-Dderby.system.home={scratch / 'derby'}"  # derby.log, metastore_db: not in the cwd
    )
    if small_cells:
        java_opts += f" {SMALL_CELLS_JVM}"
    # pyspark marks a process that opened a Connect session by an environment variable its
    # children inherit, and refuses a classic session there (CONNECT_URL_NOT_SET): a Spark
    # query process started by a harness whose checks went through Spark Connect.
    os.environ.pop(CONNECT_MODE_ENV, None)
    builder = (
        SparkSession.builder.master(url)
        .appName(app)
        .config("spark.sql.shuffle.partitions", "4")
        # With few fixed shuffle partitions AQE has little to tune, and re-planning each
        # stage as its own job more than doubled the checks' wall time on small cells.
        .config("spark.sql.adaptive.enabled", "false")
        .config("spark.default.parallelism", "4")
        # One cell's checks generate a few hundred classes; Spark's default cache of 100
        # evicted them between cells, and recompiling them (Janino, then the JIT's C2) cost
        # 12 s of CPU per warm 10 M-row cell (docs/benchmarks.md).
        .config("spark.sql.codegen.cache.maxEntries", str(CODEGEN_CACHE_ENTRIES))
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.session.timeZone", "UTC")
        .config("spark.sql.warehouse.dir", str(scratch / "spark-warehouse"))
        .config("spark.driver.memory", "1g")
        .config("spark.driver.extraJavaOptions", java_opts)
        .config("spark.executor.extraJavaOptions", java_opts)
    )
    if jars:
        builder = builder.config("spark.jars", ",".join(str(p.resolve()) for p in jars))
    for key, value in (conf or {}).items():
        builder = builder.config(key, value)
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("WARN")
    _artifacts_into_scratch(spark, scratch)
    return spark


def local_session(
    app: str = "kafka-chaos-verify",
    jars: list[Path] | None = None,
    conf: dict[str, str] | None = None,
) -> SparkSession:
    """Always `local[2]`, whatever the environment says: the streaming consumer and tests."""
    return spark_session(app, jars, conf, master=DEFAULT_MASTER)
