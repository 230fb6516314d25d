"""The observed ETA while the first partitions of a plan still copy: the bytes left at the
live copy rate (Kafka's ReassignmentBytesInPerSec, KIP-542) counted every unfinished
partition at its whole size, the partitions in flight too, though their new replicas
already held part of it; so it read high by up to the batch's time so far. Now it
subtracts what those replicas' logs hold, as the cluster reports it (Kafka's
DescribeLogDirs, KIP-113; the twin as Kafka would), asked of the receiving brokers about
the partitions in flight only; when the cluster cannot say, the ETA is the old one and the
page says why."""

from __future__ import annotations

import pytest

from backend.errors import Unavailable
from backend.gateways import kafka as k
from backend.gateways.base import ReplicaSizeReader
from backend.gateways.config import parse_kafka
from backend.services import execution
from backend.services.cluster import ClusterSource
from backend.twin.cluster import TwinCluster
from backend.twin.gateway import TwinGateway
from dashboard.plan_views.progress import copying_text, progress_view
from tests.plan_helpers import moves
from tests.unit.test_execution_service import World
from tests.unit.test_executor import MB
from tests.unit.test_plan_view import text_of
from tests.unit.test_progress_copy_rate import scraped_world

THROTTLE = 200_000  # bytes/s into broker 3
A0 = ("a", 0, [3, 2])  # 10 MB from broker 1 into broker 3: 50 twin seconds at the throttle
NOTHING = "no bytes counted yet (a partition's count when it finishes)"


# ---- the arithmetic -------------------------------------------------------------------------
def live(rate: float | None, copied: int | None = None, why: str | None = None) -> dict:
    return {"bytes_per_second": rate, "brokers": ["3"], "why": why, "copied": copied,
            "copied_why": None if copied is not None else "not known"}


def test_the_eta_at_the_copy_rate_subtracts_what_the_new_replicas_hold():
    # 6 MB left by the plan, 3 MB of it in the new replicas already, 100 kB/s: 30 s, not 60
    assert execution.observed_eta(30.0, 6_000_000, None, 0, 2, live(100_000.0, 3_000_000)) \
        == (30.0, execution.COPY_RATE, None)
    assert execution.observed_eta(30.0, 6_000_000, None, 0, 2, live(100_000.0, 0)) \
        == (60.0, execution.COPY_RATE, None)


def test_without_the_copied_bytes_the_eta_is_the_bytes_left_at_the_rate():
    assert execution.observed_eta(30.0, 6_000_000, None, 0, 2, live(100_000.0)) \
        == (60.0, execution.COPY_RATE, None)


def test_replicas_holding_all_the_bytes_left_give_no_time_and_say_why():
    eta, basis, why = execution.observed_eta(30.0, 6_000_000, None, 0, 2,
                                             live(100_000.0, 6_000_000))
    assert (eta, basis) == (None, None)
    assert why == (f"{NOTHING} and the partitions in flight hold all the bytes the plan "
                   "counted (producers wrote to them since)")


def test_bytes_in_new_replicas_never_make_a_time_without_a_rate():
    assert execution.observed_eta(30.0, 6_000_000, None, 0, 2,
                                  live(None, 3_000_000, "Prometheus has no reassignment "
                                       "bytes yet")) == (
        None, None, f"{NOTHING} and Prometheus has no reassignment bytes yet")
    assert execution.observed_eta(30.0, 6_000_000, None, 0, 2, live(0.0, 3_000_000)) == (
        None, None, f"{NOTHING} and nothing copied in the last minute")


def test_once_bytes_are_counted_the_copied_bytes_change_nothing():
    # 2 MB counted in 20 s: the rate of the partitions finished, as before
    assert execution.observed_eta(20.0, 4_000_000, 100_000.0, 1, 2,
                                  live(100_000.0, 3_000_000)) == (
        40.0, execution.FINISHED, None)


# ---- on the twin, the receiving brokers' copy rate from a stand-in Prometheus -------------
class NoSizes:
    """The twin's gateway without the log-size read (as a gateway that has none)."""

    def __init__(self, gw: TwinGateway) -> None:
        self.gw = gw

    def __getattr__(self, name: str):
        if name == "replica_sizes":
            raise AttributeError(name)
        return getattr(self.gw, name)


class Sizes(TwinGateway):
    """The twin's gateway, recording what the log sizes were asked of, or failing."""

    def __init__(self, twin: TwinCluster, fail: bool = False,
                 extra: int = 0) -> None:
        super().__init__(twin)
        self.asked: list[dict] = []
        self.fail, self.extra = fail, extra

    def replica_sizes(self, wanted):
        self.asked.append(wanted)
        if self.fail:
            raise Unavailable("Kafka at k1:9092", "DescribeLogDirs failed: "
                              "NodeNotReadyError: 3")
        return {key: size + self.extra for key, size in super().replica_sizes(wanted).items()}


@pytest.fixture
def world(tmp_path):
    # a-0 as big as the plan counts (10 MB) and b-1 empty: it finishes at once
    w = scraped_world(tmp_path, {("a", 0): 10 * MB, ("b", 1): 0})
    yield w
    w.prom.stop()
    w.store.close()


def copying_until(w: World, plan_id: int, held: int) -> None:
    """Twin seconds (scraped after each) until broker 3's new a-0 holds ``held`` bytes."""
    for _ in range(200):
        w.cycle()
        w.prom.scrape()
        if w.gw.replica_sizes({3: [("a", 0)]}).get(("a", 0, 3), 0) >= held:
            return
    raise AssertionError(f"a-0 on broker 3 never held {held} bytes")


def held_by_3(w: World) -> int:
    """What the twin itself holds of a-0 on broker 3: the leader's log less its lag (0
    before the move adds the replica)."""
    snap, st = w.twin.snap, w.twin.state
    row = snap.partition_row("a", 0)
    if 3 not in snap.replicas_of(row):
        return 0
    replica = int(snap.replica_offsets[row]) + snap.replicas_of(row).index(3)
    return int(st.log_size[row] - st.lag[replica])


def progress_through(w: World, plan_id: int, gw) -> dict:
    return execution.progress(w.store, plan_id, now=w.now(), source=ClusterSource(
        "small", None, w.twin.snap.limits, prometheus_url=w.prom.url, metrics_ttl=0,
        gateway=gw))


def test_half_copied_the_eta_is_half_the_bytes_over_the_rate(world):
    plan_id = world.executing(moves(A0, ("b", 1, [2, 1])), throttle=THROTTLE)
    copying_until(world, plan_id, 5 * MB)
    gw = Sizes(world.twin)
    p = progress_through(world, plan_id, gw)
    assert p["partitions_done"] == 1 and p["bytes_copied"] == 0  # b-1, empty
    assert p["bytes_total"] == 10 * MB
    live_now = p["copy_rate"]
    assert live_now["bytes_per_second"] == pytest.approx(THROTTLE)
    held = held_by_3(world)
    assert 5 * MB <= held < 5 * MB + THROTTLE  # within one twin second of half
    assert live_now["copied"] == held and live_now["copied_why"] is None
    assert p["observed_eta_basis"] == execution.COPY_RATE
    assert p["observed_eta_seconds"] == pytest.approx(
        (10 * MB - held) / live_now["bytes_per_second"])
    old = 10 * MB / live_now["bytes_per_second"]  # every byte left at the rate
    assert p["observed_eta_seconds"] / old == pytest.approx(0.5, abs=THROTTLE / (10 * MB))
    # only the receiving broker, only about the partition in flight (b-1 has finished)
    assert gw.asked == [{3: [("a", 0)]}]
    s = round(p["observed_eta_seconds"])
    assert (f"observed {s // 60}m {s % 60}s at the copy rate now (the bytes not yet copied: "
            f"{held / 1e6:.1f} MB already in the new replicas, by their log sizes)"
            ) in text_of(progress_view(p, "bar"))


def test_new_replicas_past_the_batch_count_only_up_to_it(world):
    """Producers grow logs while they move: what the new replicas hold counts up to the
    batch's bytes (the rest of the plan's bytes belong to other batches)."""
    plan_id = world.executing(moves(A0), throttle=THROTTLE)
    copying_until(world, plan_id, 1)
    batch = execution.progress(world.store, plan_id)["per_batch"][0]["bytes_total"]
    assert batch == 10 * MB
    p = progress_through(world, plan_id, Sizes(world.twin, extra=20 * MB))
    assert p["copy_rate"]["copied"] == batch
    assert p["observed_eta_seconds"] is None
    assert p["observed_eta_why"].endswith("the partitions in flight hold all the bytes the "
                                          "plan counted (producers wrote to them since)")


@pytest.mark.parametrize(("gateway", "why"), [
    (lambda twin: NoSizes(TwinGateway(twin)), "the gateway reads no replica log sizes"),
    (lambda twin: Sizes(twin, fail=True),
     "log sizes not read: DescribeLogDirs failed: NodeNotReadyError: 3"),
])
def test_when_the_cluster_cannot_say_the_eta_is_the_old_one_and_the_page_says_why(
        world, gateway, why):
    plan_id = world.executing(moves(A0), throttle=THROTTLE)
    copying_until(world, plan_id, 2 * MB)
    gw = gateway(world.twin)
    assert isinstance(gw, ReplicaSizeReader) == isinstance(gw, Sizes)
    p = progress_through(world, plan_id, gw)
    live_now = p["copy_rate"]
    assert live_now["copied"] is None and live_now["copied_why"] == why
    assert p["observed_eta_basis"] == execution.COPY_RATE
    assert p["observed_eta_seconds"] == pytest.approx(
        10 * MB / live_now["bytes_per_second"])
    text = text_of(progress_view(p, "bar"))
    assert ("at the copy rate now (the bytes not yet counted: none has finished; what the "
            f"partitions in flight copied is not known ({why}))") in text


def test_without_a_copy_rate_no_log_size_is_asked(world):
    plan_id = world.executing(moves(A0), throttle=THROTTLE)
    copying_until(world, plan_id, 1)
    world.prom.empty = True
    gw = Sizes(world.twin)
    p = progress_through(world, plan_id, gw)
    assert p["copy_rate"]["bytes_per_second"] is None and p["copy_rate"]["copied"] is None
    assert gw.asked == []


# ---- the Kafka gateway's read ---------------------------------------------------------------
def _wire(request, version: int) -> dict:
    return type(request).decode(request.encode(version=version), version=version).to_dict()


def test_describe_log_dirs_asks_only_for_the_partitions_named():
    """As kafka-log-dirs --describe --topic-list asks, per topic its partitions."""
    req = k.describe_log_dirs_request([("b", 1), ("a", 2), ("a", 0), ("a", 2)])
    for version in (1, 4):
        assert _wire(req, version)["topics"] == [{"topic": "a", "partitions": [0, 2]},
                                                 {"topic": "b", "partitions": [1]}]


def log_dirs_answer(version: int = 4):
    from kafka.protocol.admin import DescribeLogDirsResponse as R
    D = R.DescribeLogDirsResult
    T, P = D.DescribeLogDirsTopic, D.DescribeLogDirsTopic.DescribeLogDirsPartition

    def part(pid: int, size: int, future: bool = False):
        return P(partition_index=pid, partition_size=size, offset_lag=0, is_future_key=future)
    resp = R(throttle_time_ms=0, error_code=0, results=[
        D(error_code=0, log_dir="/data/a", total_bytes=-1, usable_bytes=-1,
          topics=[T(name="a", partitions=[part(0, 3_000_000), part(2, 700, True)])]),
        D(error_code=57, log_dir="/data/b", total_bytes=-1, usable_bytes=-1,  # offline
          topics=[T(name="a", partitions=[part(2, 9_999)])]),
        D(error_code=0, log_dir="/data/c", total_bytes=-1, usable_bytes=-1,
          topics=[T(name="a", partitions=[part(2, 1_500)])])])
    return type(resp).decode(resp.encode(version=version), version=version)


def test_log_sizes_are_the_current_logs_of_the_dirs_that_answered():
    assert k.log_sizes_from(log_dirs_answer()) == [("a", 0, 3_000_000), ("a", 2, 1_500)]


def test_replica_sizes_asks_each_broker_about_its_own_replicas(monkeypatch):
    gw = k.KafkaGateway(parse_kafka({"bootstrap_servers": ["k1:9092"]}, str))  # not connected
    sent = []

    def send(api, request, node_id=None, controller=False, read=False):
        sent.append((api, node_id, _wire(request, 4)["topics"], read))
        return log_dirs_answer()
    monkeypatch.setattr(gw, "_send", send)
    got = gw.replica_sizes({3: [("a", 0), ("a", 2)], 2: [("a", 0)], 1: []})
    assert sent == [
        ("DescribeLogDirs", 2, [{"topic": "a", "partitions": [0]}], True),
        ("DescribeLogDirs", 3, [{"topic": "a", "partitions": [0, 2]}], True)]
    assert got == {("a", 0, 2): 3_000_000, ("a", 2, 2): 1_500,
                   ("a", 0, 3): 3_000_000, ("a", 2, 3): 1_500}
    assert isinstance(gw, ReplicaSizeReader)
    refused = log_dirs_answer()
    refused.error_code = 31
    monkeypatch.setattr(gw, "_send", lambda *a, **kw: refused)
    with pytest.raises(Unavailable, match="DescribeLogDirs refused: "
                                          "CLUSTER_AUTHORIZATION_FAILED"):
        gw.replica_sizes({3: [("a", 0)]})


class ListsNothing(TwinGateway):
    """The twin's gateway as a kept read taken before the batch started: no move listed."""

    def list_reassignments(self) -> list[dict]:
        return []


UNLISTED = "Kafka listed none of the batch's partitions in flight when last read, a list kept 5 s"


def test_a_batch_kafka_does_not_list_yet_says_so_without_an_empty_broker_list(world,
                                                                               monkeypatch):
    """On the demo, batches of five partitions ended within the 5 s a cluster read is
    kept: the line read "copying now into broker : rate not known (Kafka lists none of the
    batch's partitions in flight)". It names no broker and says the list was last read,
    where the plan cannot name the batch's receivers either (its basis does not hold the
    batch's partitions; where it does, the next test)."""
    monkeypatch.setattr(execution, "_RECEIVERS", {})  # none kept from another test's plan
    monkeypatch.setattr(execution.plans, "basis_of", lambda _store, _id: {"partitions": {}})
    plan_id = world.executing(moves(A0), throttle=THROTTLE)
    copying_until(world, plan_id, 1)
    p = progress_through(world, plan_id, ListsNothing(world.twin))
    why = UNLISTED
    assert p["copy_rate"]["brokers"] == [] and p["copy_rate"]["why"] == why
    assert f"copying now: rate not known ({why})" in text_of(progress_view(p, "bar"))


def test_a_batch_kafka_does_not_list_yet_copies_at_the_same_rate_on_every_refresh(world):
    """On the twin, whose batches are shorter than the 5 s Kafka's list of moves is kept,
    the line flipped from refresh to refresh: "copying now at 9.87 MB/s into broker 4"
    when the kept list was read after the batch started, "rate not known (Kafka listed
    none ...)" when before. The brokers are then the batch's own receivers, as its plan
    says (a-0 to [3, 2] adds broker 3), and the rate the same Prometheus reading: the line
    is the same on every refresh. Only what the moves copied so far waits for the list;
    and without a rate from Prometheus there is still none."""
    plan_id = world.executing(moves(A0), throttle=THROTTLE)
    copying_until(world, plan_id, 1)
    answers = []
    for gw in (TwinGateway, ListsNothing, ListsNothing, TwinGateway, ListsNothing):
        answers.append(progress_through(world, plan_id, gw(world.twin)))
        world.cycle()  # the page's next refresh, on the twin's clock
        world.prom.scrape()
    lines = {copying_text(p["copy_rate"]) for p in answers}
    assert lines == {"copying now at 200 kB/s into broker 3 (Kafka's "
                     "ReassignmentBytesInPerSec, from Prometheus)"}, lines
    assert all(p["observed_eta_basis"] == execution.COPY_RATE for p in answers)
    unlisted = [p["copy_rate"] for p in answers[1:3] + answers[4:]]
    assert all(live_now["copied"] is None and live_now["copied_why"] == UNLISTED
               for live_now in unlisted)
    assert answers[0]["copy_rate"]["copied"] > 0 and answers[3]["copy_rate"]["copied"] > 0
    world.prom.empty = True  # never a rate Prometheus did not report
    p = progress_through(world, plan_id, ListsNothing(world.twin))
    assert p["copy_rate"]["bytes_per_second"] is None
    assert copying_text(p["copy_rate"]) == \
        "copying now into broker 3: rate not known (Prometheus has no reassignment bytes yet)"
