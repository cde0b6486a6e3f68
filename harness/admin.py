"""Read-only views of a running cluster through Kafka's own admin protocol."""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

from confluent_kafka import KafkaError, KafkaException, Producer, TopicCollection
from confluent_kafka.admin import (
    AdminClient,
    ClusterMetadata,
    NewPartitions,
    NewTopic,
    PartitionMetadata,
    TopicMetadata,
)

from harness.common.client_log import CLIENT_LOGGER
from harness.common.waiting import wait_until
from harness.errors import HarnessError

OFFSETS_TOPIC = "__consumer_offsets"
TXN_STATE_TOPIC = "__transaction_state"  # created on the first init_transactions
SHARE_STATE_TOPIC = "__share_group_state"  # created when a share group first reads a partition
PROBE_GROUP = "kafka-chaos-probe"
PROBE_TRANSACTIONAL_ID = "kafka-chaos-probe"
PROBE_TIMEOUT_S = 5  # a coordinator lookup's (ensure_offsets_topic)
T = TypeVar("T")


def java_string_hash(text: str) -> int:
    """Java's String.hashCode (UTF-16 code units, 32-bit signed overflow)."""
    h = 0
    data = text.encode("utf-16-be")
    for i in range(0, len(data), 2):
        h = (31 * h + int.from_bytes(data[i : i + 2], "big")) & 0xFFFFFFFF
    return h - (1 << 32) if h >= 1 << 31 else h


def offsets_partition_for(group: str, partitions: int) -> int:
    """The __consumer_offsets partition of a group: Utils.abs(hashCode) % partitions.

    Kafka's Utils.abs is Math.abs with Integer.MIN_VALUE mapped to 0.
    """
    h = java_string_hash(group)
    return (0 if h == -(1 << 31) else abs(h)) % partitions


# A fresh client's metadata request reaches the bootstrap broker about one time in N
# (N brokers): 60 leaves (1 - 1/9) ** 60 < 0.1 % of views unanswered with nine brokers.
METADATA_ATTEMPTS = 60
ATTEMPT_TIMEOUT_S = 5.0
# After every broker's metadata lacks a deleted topic: a KRaft broker's replica manager
# applies the same image right after (its log: the partitions deleted within ~20 ms).
GONE_SETTLE_S = 0.1


def _port_of(broker_name: str) -> int | None:
    """The port in librdkafka's broker name ("127.0.0.1:39001/2", ".../bootstrap")."""
    address = broker_name.split("/", 1)[0]
    _, _, port = address.rpartition(":")
    return int(port) if port.isdigit() else None


class ClusterAdmin:
    """Admin requests, each asked of one trusted broker through a fresh client.

    A broker cut off by a fault still answers clients with its stale view (it
    may call itself leader for ever), and a long-lived librdkafka client keeps
    sending requests to brokers and to a controller it learnt about earlier,
    dead or not. So every request uses a fresh client bootstrapped from a single
    broker that no fault touches. Requests Kafka routes itself (to the controller,
    a leader, a coordinator) need nothing more; a metadata view is checked to
    come from that very broker (`metadata_at`).
    """

    def __init__(self, trusted_ports: Callable[[], list[int]]) -> None:
        self._trusted_ports = trusted_ports

    @staticmethod
    def _ask_port(port: int, request: Callable[[AdminClient], T]) -> T:
        config: dict[str, Any] = {
            "bootstrap.servers": f"127.0.0.1:{port}",
            "socket.connection.setup.timeout.ms": 5000,
            "logger": CLIENT_LOGGER,
        }
        client = AdminClient(config)
        try:
            return request(client)
        except KafkaException as exc:
            raise HarnessError(f"127.0.0.1:{port}: {exc.args[0]}") from exc

    def _ask(self, what: str, request: Callable[[AdminClient], T]) -> T:
        return self._first_trusted(what, lambda port: self._ask_port(port, request))

    def _first_trusted(self, what: str, at_port: Callable[[int], T]) -> T:
        """The first trusted broker's answer; every broker's error if none answers."""
        errors: list[str] = []
        for port in self._trusted_ports():
            try:
                return at_port(port)
            except HarnessError as exc:
                errors.append(str(exc))
        raise HarnessError(f"no trusted broker answered {what}: {errors or 'none running'}")

    @classmethod
    def metadata_at(
        cls, port: int, topic: str | None = None, timeout_s: float = 10
    ) -> ClusterMetadata:
        """The metadata as the broker at `port` has it, and no other.

        librdkafka (2.10 on) drops the bootstrap connection once it has learnt the
        brokers and sends the request to one of them at random, sticking to it: a
        client bootstrapped from a trusted broker answered from a lagging or cut-off
        one about two times in three (3 brokers). So fresh clients are tried, bounded,
        until the answer's `orig_broker_name` is this port's broker.
        """
        deadline = time.monotonic() + timeout_s
        answered: list[str] = []
        while True:
            # One attempt may have picked a broker a fault cuts off: give it a few
            # seconds, then try a fresh client, until the whole timeout is spent.
            left = max(1.0, min(ATTEMPT_TIMEOUT_S, deadline - time.monotonic()))

            def ask(client: AdminClient, left: float = left) -> ClusterMetadata:
                meta: ClusterMetadata = client.list_topics(topic=topic, timeout=left)
                return meta

            try:
                meta = cls._ask_port(port, ask)
            except HarnessError as exc:
                answered.append(str(exc))
            else:
                origin = str(meta.orig_broker_name)  # typed None in the stubs; a str at run time
                if _port_of(origin) == port:
                    return meta
                answered.append(f"answered by {origin}")
            if time.monotonic() >= deadline or len(answered) >= METADATA_ATTEMPTS:
                raise HarnessError(
                    f"127.0.0.1:{port}: no metadata from this broker in {len(answered)} "
                    f"attempts ({'; '.join(sorted(set(answered))[:3])})"
                )

    def metadata(self, topic: str | None = None, timeout_s: float = 10) -> ClusterMetadata:
        return self._first_trusted(
            "a metadata request", lambda port: self.metadata_at(port, topic, timeout_s)
        )

    def topic(self, name: str, timeout_s: float = 10) -> TopicMetadata:
        meta = self.metadata(name, timeout_s)
        topic = meta.topics.get(name)
        if topic is None or topic.error is not None:
            raise HarnessError(
                f"topic {name!r} is unknown to the cluster ({topic.error if topic else 'absent'})"
            )
        return topic

    def partition(self, topic: str, partition: int) -> PartitionMetadata:
        parts = self.topic(topic).partitions
        if partition not in parts:
            raise HarnessError(
                f"topic {topic!r} has no partition {partition} (it has {len(parts)})"
            )
        return parts[partition]

    def registered_brokers(self, timeout_s: float = 10) -> set[int]:
        return set(self.metadata(timeout_s=timeout_s).brokers)

    def topics(self, timeout_s: float = 10) -> dict[str, TopicMetadata]:
        topics: dict[str, TopicMetadata] = self.metadata(timeout_s=timeout_s).topics
        return topics

    def zk_controller(self, timeout_s: float = 10) -> int:
        """Active controller as clients see it (exact in ZooKeeper mode only)."""
        description: Any = self._ask(
            "DescribeCluster", lambda c: c.describe_cluster(request_timeout=timeout_s).result()
        )
        return int(description.controller.id)

    def create_topic(
        self,
        name: str,
        partitions: int,
        replication_factor: int,
        config: dict[str, str] | None = None,
        timeout_s: float = 60,
    ) -> None:
        topic = NewTopic(name, partitions, replication_factor, config=config or {})
        attempts = 0

        def create(client: AdminClient) -> None:
            # A broker may create the topic and then fail to answer (its handle is
            # destroyed, a timeout): the next broker then says "already exists",
            # which after an earlier attempt means our own creation went through.
            nonlocal attempts
            attempts += 1
            try:
                client.create_topics([topic], operation_timeout=timeout_s)[name].result()
            except KafkaException as exc:
                error = exc.args[0]
                if attempts == 1 or error.code() != KafkaError.TOPIC_ALREADY_EXISTS:
                    raise

        try:
            self._ask("CreateTopics", create)
        except HarnessError as exc:
            raise HarnessError(f"creating topic {name!r} failed: {exc}") from exc
        self.wait_all_led(name, partitions, timeout_s)

    def create_partitions(self, name: str, total: int, timeout_s: float = 60) -> None:
        """Grow a topic to `total` partitions (returns once the controller accepted it)."""
        attempts = 0

        def grow(client: AdminClient) -> None:
            # As in create_topic: after an attempt that may have gone through, a broker
            # answering "already has `total` partitions" means ours did.
            nonlocal attempts
            attempts += 1
            request = NewPartitions(name, total)
            try:
                client.create_partitions([request], operation_timeout=timeout_s)[name].result()
            except KafkaException as exc:
                error = exc.args[0]
                if attempts == 1 or error.code() != KafkaError.INVALID_PARTITIONS:
                    raise
                if len(client.list_topics(name, timeout=10).topics[name].partitions) != total:
                    raise

        try:
            self._ask("CreatePartitions", grow)
        except HarnessError as exc:
            raise HarnessError(
                f"growing topic {name!r} to {total} partitions failed: {exc}"
            ) from exc

    def wait_all_led(self, name: str, partitions: int, timeout_s: float) -> None:
        """Until every trusted broker's metadata has the topic with a leader for each partition.

        Brokers apply metadata at their own pace: one seeing a new topic does not
        mean the next one asked will.
        """

        def unled() -> str:
            """The first broker's complaint, or "" once every trusted broker sees all led."""
            for port in self._trusted_ports():
                meta = self.metadata_at(port, name)
                topic = meta.topics.get(name)
                parts = topic.partitions if topic is not None and topic.error is None else {}
                missing = [p for p in range(partitions) if p not in parts or parts[p].leader < 0]
                if missing:
                    return f"broker at :{port} sees no leader for {name}{missing}"
            return ""

        wait_until(
            unled,
            timeout_s,
            f"a leader for every partition of {name}",
            done=lambda complaint: not complaint,
            interval_s=0.25,
            retry_on=HarnessError,
        )

    def agreed_leaders(self, name: str, partitions: int) -> dict[int, int] | None:
        """Each partition's leader if every trusted broker reports the same one with a full ISR.

        After a partition heals, a broker that was cut off can go on describing its
        stale view (itself as leader, an old high watermark) for a while; a client
        bootstrapped from it would read that. None until all views agree. Every partition
        a broker lists counts, `partitions` at least (the topic may have been grown), so
        the views also agree on the partition count.
        """
        views: list[dict[int, int]] = []
        for port in self._trusted_ports():
            try:
                meta = self.metadata_at(port, name)
            except HarnessError:
                return None
            topic = meta.topics.get(name)
            if topic is None or topic.error is not None:
                return None
            view: dict[int, int] = {}
            for p in range(max(partitions, len(topic.partitions))):
                part = topic.partitions.get(p)
                if part is None or part.leader < 0 or len(part.isrs) != len(part.replicas):
                    return None
                view[p] = part.leader
            views.append(view)
        return views[0] if views and all(v == views[0] for v in views) else None

    def delete_topic(self, name: str, timeout_s: float = 30) -> None:
        self._ask(
            "DeleteTopics",
            lambda c: c.delete_topics([name], operation_timeout=timeout_s)[name].result(),
        )

    def wait_topic_gone(self, name: str, timeout_s: float = 10) -> None:
        """Until every trusted broker's own metadata lacks the topic, and a moment more.

        The controller commits a deletion before the brokers apply it: measured, two of three
        brokers removed the warm-up topic's partitions from their replica fetchers 70-100 ms
        into the workload that followed, the seconds its slowest acks often fell in. In
        ZooKeeper mode a broker's metadata drops the topic once its replicas are stopped; a
        KRaft broker publishes the new image to its metadata cache just before its replica
        manager applies it (BrokerMetadataPublisher), hence GONE_SETTLE_S after the last."""
        ports = self._trusted_ports()

        def gone_at(port: int) -> bool:
            return name not in self.metadata_at(port, timeout_s=2).topics

        # The brokers asked at once: one broker's own view takes a few fresh clients.
        with ThreadPoolExecutor(max_workers=max(1, len(ports))) as pool:
            wait_until(
                lambda: all(pool.map(gone_at, ports)),
                timeout_s,
                f"topic {name!r} gone from every broker",
                interval_s=0.05,
                retry_on=HarnessError,
            )
        time.sleep(GONE_SETTLE_S)

    def ensure_offsets_topic(self, timeout_s: float = 60) -> None:
        """The offsets topic is created lazily on first group use; asking for a coordinator
        creates it. The asking runs in a thread of its own and the topic is looked for
        meanwhile: a lookup blocks until its coordinator answers (seconds after the topic
        exists) or its 5 s timeout, and an admin client destroyed with a lookup still in
        flight can hang in librdkafka's destroy (confluentinc/librdkafka#4605; seen here
        with a 0.5 s timeout), so no lookup is cut short."""
        deadline = time.monotonic() + timeout_s
        found = threading.Event()

        def ask() -> None:
            while not found.is_set() and time.monotonic() < deadline:
                with contextlib.suppress(HarnessError):  # no coordinator yet: ask again
                    self._ask(
                        "DescribeConsumerGroups",
                        lambda c: c.describe_consumer_groups(
                            [PROBE_GROUP], request_timeout=PROBE_TIMEOUT_S
                        )[PROBE_GROUP].result(),
                    )
                found.wait(0.5)

        threading.Thread(target=ask, name="offsets-topic-probe", daemon=True).start()
        try:
            wait_until(
                lambda: OFFSETS_TOPIC in self.topics(),
                timeout_s,
                f"{OFFSETS_TOPIC} created",
                interval_s=0.25,
            )
        finally:
            found.set()  # the probe ends after its lookup in flight, if any (<= 5 s)
        meta = self.topic(OFFSETS_TOPIC)
        self.wait_all_led(
            OFFSETS_TOPIC, len(meta.partitions), max(1.0, deadline - time.monotonic())
        )

    def ensure_txn_state_topic(self, timeout_s: float = 60) -> None:
        """__transaction_state is created on the first init_transactions: a probe producer
        does one, so a fault on the transaction coordinator finds it from the first second."""
        deadline = time.monotonic() + timeout_s

        def probe(port: int) -> None:
            config = {
                "bootstrap.servers": f"127.0.0.1:{port}",
                "transactional.id": PROBE_TRANSACTIONAL_ID,
                "logger": CLIENT_LOGGER,
            }
            producer = Producer(config)
            try:
                producer.init_transactions(max(1.0, deadline - time.monotonic()))
            except KafkaException as exc:
                raise HarnessError(f"127.0.0.1:{port}: {exc.args[0]}") from exc
            finally:
                producer.flush(0)

        if TXN_STATE_TOPIC not in self.topics():
            self._first_trusted("InitProducerId", probe)
        meta = self.topic(TXN_STATE_TOPIC)
        self.wait_all_led(
            TXN_STATE_TOPIC, len(meta.partitions), max(1.0, deadline - time.monotonic())
        )

    def offsets_topic_placement(self) -> dict[int, list[int]]:
        parts = self.topic(OFFSETS_TOPIC).partitions
        return {p: list(parts[p].replicas) for p in sorted(parts)}

    def coordinator(self, group: str) -> int | None:
        """Leader of the group's __consumer_offsets partition; None when it has no leader."""
        parts = self.topic(OFFSETS_TOPIC).partitions
        leader = parts[offsets_partition_for(group, len(parts))].leader
        return leader if leader >= 0 else None

    def txn_coordinator(self, transactional_id: str) -> int | None:
        """Leader of the transactional id's __transaction_state partition (Kafka places it
        as it places a group: Utils.abs(hashCode) % partitions); None when leaderless.
        HarnessError while the topic does not exist (no transaction has started yet)."""
        parts = self.topic(TXN_STATE_TOPIC).partitions
        leader = parts[offsets_partition_for(transactional_id, len(parts))].leader
        return leader if leader >= 0 else None

    def topic_id(self, name: str, timeout_s: float = 10) -> str:
        """The topic's id as Kafka prints it (Uuid.toString: URL-safe base64)."""

        def describe(client: AdminClient) -> str:
            futures = client.describe_topics(TopicCollection([name]), request_timeout=timeout_s)
            return str(futures[name].result().topic_id)

        return self._ask(f"DescribeTopics {name}", describe)

    def share_coordinator(self, group: str, topic: str, partition: int) -> int | None:
        """Leader of the __share_group_state partition that keeps the share group's state of
        one topic partition: Utils.abs(hashCode of "group:topicId:partition") % partitions
        (ShareCoordinatorService.partitionFor). None when leaderless; HarnessError while the
        topic does not exist (no share group has read the partition yet)."""
        parts = self.topic(SHARE_STATE_TOPIC).partitions
        key = f"{group}:{self.topic_id(topic)}:{partition}"
        leader = parts[offsets_partition_for(key, len(parts))].leader
        return leader if leader >= 0 else None

    def under_replicated(self) -> list[tuple[str, int]]:
        return [
            (name, p.id)
            for name, topic in sorted(self.topics().items())
            for p in topic.partitions.values()
            if len(p.isrs) < len(p.replicas)
        ]
