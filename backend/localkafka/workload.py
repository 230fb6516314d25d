"""Real data for a local Kafka: topics filled to a size, a producer writing at a steady
rate (so a replication throttle has something to hold back), and a consumer group reading
what it writes, on kafka-python. Both can be told that a topic's traffic moved to another
topic (a shrink migration's new one) and follow it, as an application switched does."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Self

from kafka import (
    KafkaAdminClient,
    KafkaConsumer,
    KafkaProducer,
    OffsetAndMetadata,
    TopicPartition,
)

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
# the steady producer's line when it moves a topic's traffic ({old}: the topic written to
# until now, {new}: the topic written to from now on)
MOVE_LINE = "steady producer: the traffic of topic '{old}' goes to topic '{new}' now"

# the steady consumer's line when it leaves a topic moved from ({group}, {topic})
LEFT_LINE = "steady consumer: group '{group}' read topic '{topic}' to its end and left it"

Moves = Callable[[], Mapping[str, str]]  # {topic: the topic its traffic moved to}


def follow(topic: str, moves: Mapping[str, str]) -> str:
    """Where ``topic``'s traffic goes under ``moves``, followed move after move (a topic
    shrunk twice); a cycle ends where it would come back."""
    seen = {topic}
    while moves.get(topic) is not None and moves[topic] not in seen:
        topic = moves[topic]
        seen.add(topic)
    return topic


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


class _Daemon:
    """A daemon thread running ``_run`` from ``start`` until ``stop`` (or the ``with``
    block's end), which waits up to 30 s for it to end."""

    def __init__(self, name: str) -> None:
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)

    def _run(self) -> None:
        raise NotImplementedError

    def _moves(self) -> Mapping[str, str]:
        """What ``moves`` (a subclass's: {old topic: new}) says now; its last answer when
        it fails (a store not answering): the traffic goes on where it went."""
        if self.moves is not None:
            try:
                self._told = dict(self.moves())
            except Exception as e:  # any
                self.errors += 1
                log.debug("%s: asking for moves failed: %s", self._thread.name, e)
        return self._told

    def start(self) -> Self:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(30)

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


class SteadyProducer(_Daemon):
    """A daemon thread writing ``rate`` bytes/s round-robin over the partitions of those of
    ``topics`` that exist, until ``stop``. It looks them up every ``look`` seconds: a topic
    deleted (a shrink migration's last step) is dropped with one log line, the others keep
    the whole rate, and a topic created again gets traffic again. Send errors (a broker
    restarting, a topic deleted between two looks) are counted, never raised: one topic's
    failure never stops the others.

    ``moves``, asked at each look, says which topics' traffic moved to another topic
    ({old: new}, as a shrink migration's application is switched): once ``new`` is on the
    cluster, the share of ``old`` goes to ``new``'s partitions (as many as the cluster
    says) and none to ``old``, with one log line (``move_line``, formatted with ``old``
    and ``new``); until then ``old`` keeps it. A ``moves`` that fails keeps its last
    answer."""

    def __init__(self, bootstrap: Sequence[str], topics: dict[str, int], rate: float,
                 tick: float = 0.1, look: float = LOOK_SECONDS, moves: Moves | None = None,
                 move_line: str = MOVE_LINE) -> None:
        self.bootstrap, self.topics, self.rate, self.tick = list(bootstrap), topics, rate, tick
        self.look, self.moves, self.move_line = look, moves, move_line
        self.sent = self.errors = 0
        self.dropped: set[str] = set()  # topics written to (``topics``, moved) that are not now
        self._returning: set[str] = set()  # dropped ones one look found again
        # {topic of ``topics``: the topic its traffic goes to instead}; replaced, never
        # changed in place, so another thread may read it
        self.moved: dict[str, str] = {}
        self._told: dict[str, str] = {}  # the last answer of ``moves``
        super().__init__("railyard-producer")

    def _run(self) -> None:
        p = self._producer()
        value = bytes(RECORD_BYTES)
        slots: list[tuple[str, int]] = []
        owed, k, last, looked = 0.0, 0, time.monotonic(), None
        try:
            while not self._stop.wait(self.tick):
                now = time.monotonic()
                if looked is None or now - looked >= self.look:
                    before, moved = set(self.dropped), self.moved
                    slots, looked = self._slots(slots), now
                    if self.dropped - before or self.moved != moved:
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
        """A producer that no longer tracks a dropped topic, or one moved from (kafka-python
        would keep asking for its metadata, logging an error each time it is deleted); the
        old one closes aside once its
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
        """(topic, partition) to write to, of the topics that exist now, each topic of
        ``topics`` at the topic its traffic moved to once that one exists; the last ones
        when the cluster does not answer (a broker restarting)."""
        moves = self._moves()  # asked once a look (a plan store read)
        wanted = {t: follow(t, moves) for t in self.topics}
        at = {t: self.moved.get(t, t) for t in self.topics}
        try:
            live = existing_partitions(self.bootstrap,
                                       sorted({*at.values(), *wanted.values()}))
        except Exception as e:  # any: the producer outlives a failed look
            self.errors += 1
            log.debug("steady producer: looking up topics failed: %s", e)
            return slots
        for topic in sorted(self.topics):
            if wanted[topic] != at[topic] and wanted[topic] in live:
                log.warning(self.move_line.format(old=at[topic], new=wanted[topic]))
                at[topic] = wanted[topic]
        self.moved = {t: to for t, to in at.items() if to != t}
        targets = sorted(set(at.values()))
        self.dropped &= set(targets)  # a topic moved from is no longer written to at all
        for topic in targets:
            if topic not in live:
                self._returning.discard(topic)
                self._drop(topic, "no longer on the cluster")
            elif topic in self.dropped and topic not in self._returning:
                # a broker that has not applied the deletion yet still lists the topic
                # (Metadata is answered from each broker's own cache): back only when the
                # next look finds it too, not dropped, back and dropped again
                self._returning.add(topic)
            elif topic in self.dropped:
                self._returning.discard(topic)
                self.dropped.discard(topic)
                log.warning("steady producer: topic '%s' is back: writing to it again", topic)
        return [(t, i) for t in targets if t in live and t not in self.dropped
                for i in range(live[t])]

    def _drop(self, topic: str, why: str) -> None:
        """Stop writing to ``topic`` until a look finds it; one log line per drop."""
        if topic not in self.dropped:
            self.dropped.add(topic)
            log.warning("steady producer: stopped writing to topic '%s' (%s); the other "
                        "topics keep their traffic", topic, why)

    def _failed(self, _exc: BaseException) -> None:
        self.errors += 1


class SteadyConsumer(_Daemon):
    """A daemon thread reading ``topics`` for consumer group ``group``, each from its start,
    committing what it read (every second, and on leaving a topic), until ``stop``. It
    takes every partition itself (no group membership, so no rebalance ever holds its
    commits up): to the cluster the group is its committed offsets, as kafka-consumer-groups
    and a shrink migration's step 3 read them.

    It looks every ``look`` seconds. ``moves`` ({topic of ``topics``: the topic its traffic
    goes to now}, as a SteadyProducer's ``moved``) adds the topic moved to, once the cluster
    has it (read from its start: nothing written there is missed); a topic moved from is
    read to its end, then left with one log line (``left_line``, formatted with ``group``
    and ``topic``), its offsets committed at that end, so the group's lag on it reads 0,
    as an application's consumers drained (a shrink migration's step 3). Its end counts as
    reached when the group is there and the end did not move since the last look (the
    producer's last records there have landed). A deleted topic is no longer read. Errors
    (a broker restarting) are counted, never raised."""

    def __init__(self, bootstrap: Sequence[str], topics: Sequence[str], group: str,
                 look: float = LOOK_SECONDS, moves: Moves | None = None,
                 left_line: str = LEFT_LINE, tick: float = 0.2) -> None:
        self.bootstrap, self.topics, self.group = list(bootstrap), list(topics), group
        self.look, self.moves, self.left_line, self.tick = look, moves, left_line, tick
        self.records = self.errors = 0
        self.reading: frozenset[str] = frozenset()  # the topics read now
        self.left: frozenset[str] = frozenset()  # topics moved from, read to their end
        self._ends: dict[str, dict[TopicPartition, int]] = {}  # at the last look
        self._told: dict[str, str] = {}
        super().__init__("railyard-consumer")

    def _run(self) -> None:
        c = KafkaConsumer(bootstrap_servers=self.bootstrap, group_id=self.group,
                          client_id="railyard-steady-consumer", auto_offset_reset="earliest",
                          enable_auto_commit=True, auto_commit_interval_ms=1_000,
                          request_timeout_ms=15_000)
        looked = None
        try:
            while not self._stop.is_set():
                try:
                    if looked is None or time.monotonic() - looked >= self.look:
                        looked = time.monotonic()
                        c.assign([TopicPartition(t, i)
                                  for t, n in sorted(self._look(c).items())
                                  for i in range(n)])
                    if self.reading:
                        self.records += sum(map(len, c.poll(timeout_ms=200).values()))
                    else:
                        self._stop.wait(self.tick)
                except Exception as e:  # any: the group reads on after a failed round
                    self.errors += 1
                    log.debug("steady consumer: %s: %s", type(e).__name__, e)
                    self._stop.wait(self.tick)
        finally:
            try:
                c.close()  # commits what was read
            except Exception as e:  # any: done with either way
                log.debug("steady consumer: closing: %s", e)

    def _look(self, c: KafkaConsumer) -> dict[str, int]:
        """{topic: partitions} to read now: ``topics`` where their traffic goes, and the
        topics moved from until read to their end."""
        moves = self._moves()
        targets = {follow(t, moves) for t in self.topics}
        live = existing_partitions(self.bootstrap, sorted(self.reading | targets))
        reading = {t for t in self.reading | targets if t in live}
        for topic in sorted(reading & self.reading - targets):
            if self._read_to_end(c, topic, live[topic]):
                reading.discard(topic)
                self.left |= {topic}
                log.warning(self.left_line.format(group=self.group, topic=topic))
        self.reading = frozenset(reading)
        return {t: live[t] for t in reading}

    def _read_to_end(self, c: KafkaConsumer, topic: str, partitions: int) -> bool:
        """Whether the group has read ``topic`` to an end that did not move since the last
        look; its offsets there committed when it has."""
        tps = [TopicPartition(topic, i) for i in range(partitions)]
        ends = c.end_offsets(tps)
        stable, self._ends[topic] = self._ends.get(topic) == ends, ends
        if not stable or not set(tps) <= c.assignment():
            return False
        if any(c.position(tp) < ends[tp] for tp in tps):
            return False
        c.commit({tp: OffsetAndMetadata(ends[tp], "", -1) for tp in tps})
        self._ends.pop(topic)
        return True


def _close(p: KafkaProducer) -> None:
    """Close ``p``, its last records sent or failed; never raising (kafka-python's close
    raises when they have not ended in the time given)."""
    try:
        p.close(timeout=CLOSE_SECONDS)
    except Exception as e:  # any: the producer is done with either way
        log.debug("steady producer: closing: %s", e)
