"""A shrink migration's operator steps, checked against what the cluster says: step 2
(producers switched) is refused while Prometheus shows writes to the old topic, step 3
(consumer groups read it to the end) while a group's committed offsets are behind its log
end, with kafka-consumer-groups' LAG arithmetic; where the cluster cannot say, the step is
checked off with "not confirmed" and why, kept in the audit entry. (On Apache Kafka with a
real consumer group: tests/integration/test_kafka_shrink_migration.py; on a real
Prometheus scraping the twin: tests/integration/test_migration_checks.py.)"""

from __future__ import annotations

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlparse

import pytest

from backend.errors import Conflict, Unavailable
from backend.gateways.kafka import lags_from
from backend.model.snapshot import Limits
from backend.services import migration_checks, plans
from backend.services.cluster import ClusterSource
from tests.plan_helpers import OPERATOR
from tests.servers import send_json
from tests.unit.test_shrink_execution import World

OLD, NEW = "a", "a.p2"  # World.approved(): topic a shrunk to 2 partitions


class Prometheus:
    """Answers the catalog's per-topic produce rate with ``rates`` (topic -> bytes/s);
    a topic left out has no series, as in Prometheus."""

    def __init__(self, rates: dict[str, float]) -> None:
        self.rates, self.asked = rates, []
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                query = parse_qs(urlparse(self.path).query).get("query", [""])[0]
                outer.asked.append(query)
                send_json(self, {"status": "success", "data": {"resultType": "vector",
                                                               "result": outer.answer(query)}})

            def log_message(self, *args) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"

    def answer(self, query: str) -> list[dict]:
        return [{"metric": {"topic": t}, "value": [0, repr(float(r))]}
                for t, r in self.rates.items() if f'topic=~"{t}"' in query]

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()


class Groups:
    """A gateway that reads consumer groups: ``lags`` as group_lags answers them, or
    Unavailable when ``lags`` is an exception."""

    def __init__(self, lags) -> None:
        self.lags = lags

    def group_lags(self, topic: str) -> dict[str, int]:
        if isinstance(self.lags, Exception):
            raise self.lags
        return self.lags


def source(url: str | None = None, gateway=None) -> ClusterSource:
    return ClusterSource("small", None, Limits(), prometheus_url=url, metrics_ttl=0,
                         gateway=gateway)


@pytest.fixture
def prom():
    p = Prometheus({})
    yield p
    p.stop()


def test_lag_is_the_log_end_less_the_committed_offset_summed_over_partitions():
    """kafka-consumer-groups --describe: LAG = LOG-END-OFFSET - CURRENT-OFFSET; a partition
    the group has no offset for (-1) counts from the log start; other topics' offsets and
    groups without one on the topic do not count."""
    ends, starts = {0: 10, 1: 10, 2: 10}, {0: 0, 1: 3, 2: 0}
    committed = {
        "billing": {("a", 0): 4, ("a", 1): -1, ("a", 2): -1, ("b", 0): 0},
        "audit": {("a", 0): 10, ("a", 1): 10, ("a", 2): 10},
        "other": {("b", 0): 1},
        "none": {("a", 0): -1},
    }
    # billing: (10 - 4) + (10 - 3) + (10 - 0) = 23
    assert lags_from("a", committed, ends, starts) == {"audit": 0, "billing": 23}


def test_no_prometheus_or_no_series_is_not_confirmed_but_not_refused(prom):
    assert migration_checks.producers_switched(None, OLD, NEW, 2).startswith(
        "not confirmed: no Prometheus configured")
    said = migration_checks.producers_switched(source(prom.url), OLD, NEW, 2)
    assert said.startswith(f"not confirmed: Prometheus has no BytesInPerSec series for "
                           f"'{OLD}'")
    # only the old topic's series was asked for, over the live rate window
    assert prom.asked == ['sum by (topic) (rate(kafka_server_brokertopicmetrics_bytesin_total'
                          '{topic=~"a"}[60s]))']


def test_writes_to_the_old_topic_refuse_step_2_and_none_confirm_it(prom):
    prom.rates = {OLD: 1234.4}
    with pytest.raises(Conflict) as e:
        migration_checks.producers_switched(source(prom.url), OLD, NEW, 2)
    assert str(e.value) == (
        "step 2: producers still write to 'a': 1,234 B/s over the last 60 s (Kafka's "
        "BytesInPerSec for the topic, from Prometheus): switch them to 'a.p2', then check "
        "this step off (the rate reads 0 once 60 s pass without a write)")
    prom.rates = {OLD: 0.0}
    assert migration_checks.producers_switched(source(prom.url), OLD, NEW, 2) == \
        "confirmed: no writes to 'a' over the last 60 s (BytesInPerSec)"


def test_a_group_behind_refuses_step_3_naming_the_furthest_behind():
    lags = {"g1": 5, "g2": 0, "g3": 1, "g4": 2_000, "g5": 7}
    with pytest.raises(Conflict) as e:
        migration_checks.consumers_drained(source(gateway=Groups(lags)), OLD, NEW, 3)
    assert str(e.value) == (
        "step 3: consumer groups have not read 'a' to the end: 'g4' 2,000 records, 'g5' 7 "
        "records, 'g1' 5 records and 1 more behind (committed offsets against the log "
        "end): let them finish, then start them on 'a.p2' and check this step off")
    with pytest.raises(Conflict, match="'g3' 1 record behind"):
        migration_checks.consumers_drained(source(gateway=Groups({"g3": 1})), OLD, NEW, 3)


def test_groups_at_the_end_or_none_confirm_step_3_and_unreadable_groups_do_not():
    at_end = source(gateway=Groups({"b": 0, "a": 0}))
    assert migration_checks.consumers_drained(at_end, OLD, NEW, 3) == \
        "confirmed: every consumer group with offsets on 'a' is at its end (a, b)"
    assert migration_checks.consumers_drained(source(gateway=Groups({})), OLD, NEW, 3) == \
        "confirmed: no consumer group has a committed offset on 'a'"
    failing = source(gateway=Groups(Unavailable("Kafka", "OffsetFetch failed: timeout")))
    assert migration_checks.consumers_drained(failing, OLD, NEW, 3) == (
        "not confirmed: the consumer groups could not be read (Kafka: OffsetFetch failed: "
        "timeout)")
    assert migration_checks.consumers_drained(source(gateway=object()), OLD, NEW, 3) \
        .startswith("not confirmed: Railyard cannot read this cluster's consumer groups")


@pytest.fixture
def world(tmp_path):
    w = World(tmp_path, enable=False)
    yield w
    w.store.close()


def test_steps_are_refused_while_the_cluster_shows_them_undone_and_audited_with_its_words(
        world, prom):
    """Through the service the page and the API call: refused while producers write,
    checked off once they stop; step 3 likewise for a group."""
    plan_id = world.approved()
    world.execute(plan_id, migration=True)
    world.cycle(3)  # the new topic created: step 1 done
    groups = Groups({"billing": 12})
    src = source(prom.url, groups)

    def check(step: int) -> dict:
        return world.check(plan_id, step, source_of=lambda cluster: src)

    prom.rates = {OLD: 50.0}
    with pytest.raises(Conflict, match="step 2: producers still write to 'a'"):
        check(1)
    prom.rates = {OLD: 0.0}
    assert check(1)["checked"] == {
        "step": 2, "cluster": "confirmed: no writes to 'a' over the last 60 s (BytesInPerSec)"}
    with pytest.raises(Conflict, match="'billing' 12 records behind"):
        check(2)
    groups.lags = {"billing": 0}
    assert check(2)["checked"]["cluster"].startswith("confirmed: every consumer group")
    done = [e.detail for e in plans.audit_entries(world.store, plan=plan_id)
            if e.action == "migration_step_done"]
    assert [(d["step"], d["cluster"][:9]) for d in done] == [(2, "confirmed"),
                                                              (3, "confirmed")]


def test_where_the_cluster_cannot_say_the_steps_are_checked_off_not_confirmed(world):
    plan_id = world.approved()
    world.execute(plan_id, migration=True)
    world.cycle(3)
    said = [world.check(plan_id, step)["checked"]["cluster"] for step in (1, 2)]
    assert said == [
        "not confirmed: no Prometheus configured for the cluster, so Railyard cannot read "
        "what producers write to 'a'",
        "not confirmed: Railyard cannot read this cluster's consumer groups (Apache Kafka's "
        "ListGroups and OffsetFetch)"]
    [entry] = [e for e in plans.audit_entries(world.store, plan=plan_id)
               if e.action == "migration_step_done" and e.detail["step"] == 3]
    assert entry.user == OPERATOR.name and entry.detail["cluster"] == said[1]
