"""Real data for a local Kafka: topics filled to a size, and a producer writing at a steady
rate (so a replication throttle has something to hold back), on kafka-python."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Sequence

from kafka import KafkaAdminClient, KafkaProducer

log = logging.getLogger(__name__)

RECORD_BYTES = 10_000  # one steady record's value (compression off)
FILL_RECORD_BYTES = 100_000  # fill's records: fewer, so kafka-python's per-record cost is small
LOOK_SECONDS = 5.0  # how often the steady producer looks up which of its topics exist
# the steady producer's limits: a send waits at most 5 s for a topic's metadata (kafka-python's
# 60 s held every topic's traffic up behind a deleted one, then raised), and a record it
# cannot deliver (its topic deleted) fails within 10 s instead of being retried for two
# minutes, so that a producer holding some closes in that time
STEADY_LIMITS = {"max_block_ms": 5_000, "request_timeout_ms": 5_000,
                 "delivery_timeout_ms": 10_000}
CLOSE_SECONDS = 15  # > the delivery timeout: a closing producer's last records have ended


def producer(bootstrap: Sequence[str], client_id: str = "railyard-workload",
             **limits: int) -> KafkaProducer:
    return KafkaProducer(bootstrap_servers=list(bootstrap), client_id=client_id, acks=1,
                         linger_ms=20, batch_size=512 * 1024, max_request_size=4 << 20,
                         compression_type=None, **limits)


def existing_partitions(bootstrap: Sequence[str], topics: Sequence[str]) -> dict[str, int]:
    """{topic: partitions} of those of ``topics`` the cluster has now (one Metadata
    request, never creating a topic)."""
    admin = KafkaAdminClient(bootstrap_servers=list(bootstrap), request_timeout_ms=10_000,
                             client_id="railyard-steady-producer-metadata")
    try:
        found = admin.describe_topics(list(topics))
    finally:
        admin.close()
    return {t["name"]: len(t["partitions"]) for t in found
            if t["error_code"] == 0 and t["partitions"]}


def fill(bootstrap: Sequence[str], topic: str, partitions: int, total_bytes: int,
         seed: int = 0, record_bytes: int = FILL_RECORD_BYTES) -> int:
    """Write ``total_bytes`` of record values spread evenly over the topic's partitions;
    returns the bytes written. Values are pseudo-random (seeded) so the log holds what
    was sent, byte for byte."""
    import random
    rng = random.Random(seed)
    value = rng.randbytes(record_bytes)
    count = max(total_bytes // record_bytes, partitions)
    p = producer(bootstrap)
    try:
        for i in range(count):
            p.send(topic, value, partition=i % partitions)
        p.flush(timeout=120)
    finally:
        p.close(timeout=10)
    return count * record_bytes


class SteadyProducer:
    """A daemon thread writing ``rate`` bytes/s round-robin over the partitions of those of
    ``topics`` that exist, until ``stop``. It looks them up every ``look`` seconds: a topic
    deleted (a shrink migration's last step) is dropped with one log line, the others keep
    the whole rate, and a topic created again gets traffic again. Send errors (a broker
    restarting, a topic deleted between two looks) are counted, never raised: one topic's
    failure never stops the others."""

    def __init__(self, bootstrap: Sequence[str], topics: dict[str, int], rate: float,
                 tick: float = 0.1, look: float = LOOK_SECONDS) -> None:
        self.bootstrap, self.topics, self.rate, self.tick = list(bootstrap), topics, rate, tick
        self.look = look
        self.sent = self.errors = 0
        self.dropped: set[str] = set()  # topics of ``topics`` not written to now
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="railyard-producer",
                                        daemon=True)

    def start(self) -> SteadyProducer:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(30)

    def __enter__(self) -> SteadyProducer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def _run(self) -> None:
        p = self._producer()
        value = bytes(RECORD_BYTES)
        slots: list[tuple[str, int]] = []
        owed, k, last, looked = 0.0, 0, time.monotonic(), None
        try:
            while not self._stop.wait(self.tick):
                now = time.monotonic()
                if looked is None or now - looked >= self.look:
                    before = set(self.dropped)
                    slots, looked = self._slots(slots), now
                    if self.dropped - before:
                        p = self._renew(p)
                owed += (now - last) * self.rate
                last = now
                while owed >= RECORD_BYTES and slots:
                    topic, part = slots[k % len(slots)]
                    k += 1
                    owed -= RECORD_BYTES
                    try:
                        p.send(topic, value, partition=part).add_errback(self._failed)
                    except Exception as e:  # any: no topic's error stops the rest
                        self._failed(e)
                        self._drop(topic, f"{type(e).__name__}: {e}")
                        slots = [s for s in slots if s[0] != topic]
                        p = self._renew(p)
                        continue
                    self.sent += RECORD_BYTES
                if not slots:
                    owed = 0.0  # nothing to write to: no debt to pay in one burst later
        finally:
            _close(p)

    def _producer(self) -> KafkaProducer:
        return producer(self.bootstrap, "railyard-steady-producer", **STEADY_LIMITS)

    def _renew(self, p: KafkaProducer) -> KafkaProducer:
        """A producer that no longer tracks a dropped topic (kafka-python would keep asking
        for its metadata, logging an error each time); the old one closes aside once its
        records for that topic have failed. The old one goes on when no new one starts."""
        try:
            fresh = self._producer()
        except Exception as e:  # any: a cluster that does not answer now
            self.errors += 1
            log.debug("steady producer: no new producer: %s", e)
            return p
        threading.Thread(target=_close, args=(p,), name="railyard-producer-close",
                         daemon=True).start()
        return fresh

    def _slots(self, slots: list[tuple[str, int]]) -> list[tuple[str, int]]:
        """(topic, partition) to write to, of the topics that exist now; the last ones
        when the cluster does not answer (a broker restarting)."""
        try:
            live = existing_partitions(self.bootstrap, sorted(self.topics))
        except Exception as e:  # any: the producer outlives a failed look
            self.errors += 1
            log.debug("steady producer: looking up topics failed: %s", e)
            return slots
        for topic in sorted(self.topics):
            if topic not in live:
                self._drop(topic, "no longer on the cluster")
            elif topic in self.dropped:
                self.dropped.discard(topic)
                log.warning("steady producer: topic '%s' is back: writing to it again", topic)
        return [(t, i) for t in sorted(live) for i in range(live[t])]

    def _drop(self, topic: str, why: str) -> None:
        """Stop writing to ``topic`` until a look finds it; one log line per drop."""
        if topic not in self.dropped:
            self.dropped.add(topic)
            log.warning("steady producer: stopped writing to topic '%s' (%s); the other "
                        "topics keep their traffic", topic, why)

    def _failed(self, _exc: BaseException) -> None:
        self.errors += 1


def _close(p: KafkaProducer) -> None:
    """Close ``p``, its last records sent or failed; never raising (kafka-python's close
    raises when they have not ended in the time given)."""
    try:
        p.close(timeout=CLOSE_SECONDS)
    except Exception as e:  # any: the producer is done with either way
        log.debug("steady producer: closing: %s", e)
