"""Real data for a local Kafka: topics filled to a size, and a producer writing at a steady
rate (so a replication throttle has something to hold back), on kafka-python."""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence

from kafka import KafkaProducer

RECORD_BYTES = 10_000  # one steady record's value (compression off)
FILL_RECORD_BYTES = 100_000  # fill's records: fewer, so kafka-python's per-record cost is small


def producer(bootstrap: Sequence[str], client_id: str = "railyard-workload") -> KafkaProducer:
    return KafkaProducer(bootstrap_servers=list(bootstrap), client_id=client_id, acks=1,
                         linger_ms=20, batch_size=512 * 1024, max_request_size=4 << 20,
                         compression_type=None)


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
    """A daemon thread writing ``rate`` bytes/s round-robin over the topics' partitions
    until ``stop``; send errors (a broker restarting) are counted, not raised."""

    def __init__(self, bootstrap: Sequence[str], topics: dict[str, int], rate: float,
                 tick: float = 0.1) -> None:
        self.bootstrap, self.topics, self.rate, self.tick = list(bootstrap), topics, rate, tick
        self.sent = self.errors = 0
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
        p = producer(self.bootstrap, "railyard-steady-producer")
        value = bytes(RECORD_BYTES)
        slots = [(t, i) for t, n in sorted(self.topics.items()) for i in range(n)]
        owed, k, last = 0.0, 0, time.monotonic()
        try:
            while not self._stop.wait(self.tick):
                now = time.monotonic()
                owed += (now - last) * self.rate
                last = now
                while owed >= RECORD_BYTES:
                    topic, part = slots[k % len(slots)]
                    k += 1
                    owed -= RECORD_BYTES
                    p.send(topic, value, partition=part).add_errback(self._failed)
                    self.sent += RECORD_BYTES
        finally:
            p.close(timeout=10)

    def _failed(self, _exc: BaseException) -> None:
        self.errors += 1
