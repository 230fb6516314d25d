"""The twin's read-only HTTP API and its client answer exactly what the in-process gateway
answers; errors come back as BadInput (bad request) or Unavailable (no twin)."""

from __future__ import annotations

import numpy as np
import pytest

from backend.errors import BadInput, Unavailable
from backend.gateways import twin_http
from backend.gateways.base import ClusterGateway, ClusterReader, ReplicaSizeReader
from backend.gateways.twin_http import TwinHttpGateway
from backend.twin.api import TwinApi
from backend.twin.cluster import TwinCluster, TwinSettings
from backend.twin.gateway import TwinGateway
from backend.twin.generate import generate_snapshot


@pytest.fixture
def pair():
    local = TwinGateway(TwinCluster(generate_snapshot(4, 2, 3, 12, 3, seed=1),
                                    TwinSettings(traffic_noise=0.0)))
    api = TwinApi(local).start()
    try:
        yield local, TwinHttpGateway(api.url, timeout=5)
    finally:
        api.stop()


def test_reads_match_the_in_process_gateway(pair):
    local, remote = pair
    assert isinstance(remote, ClusterReader) and not isinstance(remote, ClusterGateway)
    topic = local.describe_topics()[0]
    p0 = topic["partitions"][0]
    spare = next(b for b in (1, 2, 3, 4) if b not in p0["replicas"])
    local.alter_reassignments({"version": 1, "partitions": [
        {"topic": topic["name"], "partition": 0, "replicas": [*p0["replicas"][:-1], spare]}]})
    local.alter_configs("broker", "1", {"leader.replication.throttled.rate": "1048576"})
    assert remote.describe_cluster() == local.describe_cluster()
    assert remote.describe_topics() == local.describe_topics()
    assert remote.describe_topics([topic["name"]]) == local.describe_topics([topic["name"]])
    assert remote.describe_configs("broker", "1") == local.describe_configs("broker", "1")
    assert remote.describe_configs("broker", "1")["configs"][
        "leader.replication.throttled.rate"] == "1048576"
    topic_list = {"follower.replication.throttled.replicas": "0:1"}
    local.alter_configs("topic", topic["name"], topic_list)
    rates = ["leader.replication.throttled.rate", "follower.replication.throttled.rate"]
    assert remote.find_configs("broker", rates) == local.find_configs("broker", rates) == {
        "1": {"leader.replication.throttled.rate": "1048576"}}
    assert remote.find_configs("topic", list(topic_list)) == {topic["name"]: topic_list}
    assert remote.find_configs("topic", rates) == {}
    assert remote.describe_client_quotas() == local.describe_client_quotas()
    assert remote.list_reassignments() == local.list_reassignments() != []
    a, b = remote.assignment(), local.assignment()
    assert a.cluster == b.cluster and a.limits == b.limits
    for column in ("broker_ids", "replica_broker", "replica_offsets", "part_topic",
                   "part_size", "part_rate"):
        assert np.array_equal(getattr(a, column), getattr(b, column)), column
    # the move in flight travels with the snapshot, as the Kafka gateway's does (KIP-455)
    assert a.in_flight == b.in_flight == tuple(local.list_reassignments())


def test_named_topics_come_in_batches_and_unknown_ones_are_left_out_with_missing_ok(
        pair, monkeypatch):
    """What a plan's re-check asks: its topics only, in as many requests as the URL limit
    needs, a deleted topic absent instead of an error."""
    local, remote = pair
    names = [t["name"] for t in local.describe_topics()][::-1]
    monkeypatch.setattr(twin_http, "MAX_QUERY", 30)  # two names per request
    sent = []
    ask = remote._json
    monkeypatch.setattr(remote, "_json", lambda path: sent.append(path) or ask(path))
    got = remote.describe_topics([*names, "gone"], missing_ok=True)
    assert got == local.describe_topics(names) and len(got) == 3
    assert len(sent) == 2 and all("missing_ok=true" in path for path in sent)
    assert remote.describe_topics([]) == [] and len(sent) == 2
    with pytest.raises(BadInput, match="gone"):
        remote.describe_topics(["gone"])


def test_topics_assignment_is_the_named_topics_alone_over_http(pair, monkeypatch):
    """One Parquet of those topics; the whole assignment, sliced, when the names would not
    fit in one URL; either way what the in-process gateway answers."""
    local, remote = pair
    names = [t["name"] for t in local.describe_topics()]
    asked = [names[2], "gone", names[0]]
    sent = []
    request = remote._request
    monkeypatch.setattr(remote, "_request", lambda path: sent.append(path) or request(path))
    for max_query in (twin_http.MAX_QUERY, 30):
        monkeypatch.setattr(twin_http, "MAX_QUERY", max_query)
        a, b = remote.topics_assignment(asked), local.topics_assignment(asked)
        assert list(a.topic_names) == list(b.topic_names) == [names[0], names[2]]
        for column in ("broker_ids", "replica_broker", "replica_offsets", "part_topic"):
            assert np.array_equal(getattr(a, column), getattr(b, column)), column
    assert [p.split("?")[0] for p in sent] == ["/v1/assignment"] * 2
    assert "topic=" in sent[0] and "?" not in sent[1]


def test_bad_requests_are_one_line_bad_input(pair):
    _, remote = pair
    with pytest.raises(BadInput, match="no-such-topic"):
        remote.describe_topics(["no-such-topic"])
    with pytest.raises(BadInput, match="entity type"):
        remote.describe_configs("cluster", "x")
    with pytest.raises(BadInput, match="entity type"):
        remote.find_configs("cluster", ["x"])


def test_a_stopped_twin_is_unavailable(pair):
    local, _ = pair
    api = TwinApi(local).start()
    url = api.url
    api.stop()
    with pytest.raises(Unavailable, match=f"Twin at {url}: unreachable"):
        TwinHttpGateway(url, timeout=2).describe_cluster()


def test_an_unanswering_twin_falls_back_to_the_snapshot_file_and_says_so(pair, tmp_path):
    from backend.model.io import save_snapshot
    from backend.model.snapshot import Limits
    from backend.services import cluster

    local, _ = pair
    save_snapshot(local.assignment(), tmp_path / "a.parquet")
    api = TwinApi(local).start()
    url = api.url
    api.stop()
    source = cluster.ClusterSource("fallback-test", str(tmp_path / "a.parquet"), Limits(),
                                 gateway=TwinHttpGateway(url, timeout=2))
    assert cluster.cluster_snapshot(source).n_partitions == local.assignment().n_partitions
    assert cluster.assignment_note(source) == (f"Twin at {url}: unreachable ([Errno 111] "
                                             f"Connection refused); showing the assignment "
                                             f"in {tmp_path / 'a.parquet'}")
    bare = cluster.ClusterSource("bare-test", None, Limits())
    with pytest.raises(Unavailable, match="Cluster 'bare-test': no snapshot file configured"):
        cluster.cluster_snapshot(bare)


def test_something_else_on_the_port_is_unavailable_not_a_crash(tmp_path):
    """A web server that is not a twin (here: a static file server) is reported as such."""
    import functools
    import threading
    from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer

    (tmp_path / "v1").mkdir()
    (tmp_path / "v1" / "cluster").write_text("<html>not a twin</html>")
    handler = functools.partial(SimpleHTTPRequestHandler, directory=str(tmp_path))
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}"
        with pytest.raises(Unavailable, match="did not answer with JSON"):
            TwinHttpGateway(url).describe_cluster()
        with pytest.raises(Unavailable, match="HTTP 404"):
            TwinHttpGateway(url).list_reassignments()
    finally:
        server.shutdown()
        server.server_close()


@pytest.mark.parametrize("path", [
    "/v1/configs/broker/..%2F..%2Fetc%2Fpasswd",
    "/v1/configs/broker/99999999999999999999",
    "/v1/configs/broker/-1",
    "/v1/configs/broker/%00",
    "/v1/configs/broker/%D9%A3",  # an Arabic-Indic digit: not an id Kafka knows
    "/v1/configs/topic/..%2F..%2Fetc%2Fpasswd",
    "/v1/configs/user/x",
])
def test_bad_entity_names_get_400_with_one_line(pair, path):
    import json
    import urllib.error
    import urllib.request

    local, remote = pair
    with pytest.raises(urllib.error.HTTPError) as e:
        urllib.request.urlopen(remote.url + path, timeout=5)
    assert e.value.code == 400
    error = json.loads(e.value.read())["error"]
    assert "\n" not in error and "Traceback" not in error
    assert remote.describe_cluster() == local.describe_cluster()  # still serving


def test_replica_sizes_over_http_are_the_in_process_gateways(pair):
    """The log sizes the live copy-rate ETA reads (a replica a move adds grows as it
    copies) come over the API as the in-process twin answers them, so `railyard serve`
    on a twin in another process subtracts them too."""
    local, remote = pair
    assert isinstance(remote, ReplicaSizeReader)
    topic = local.describe_topics()[0]
    p0 = topic["partitions"][0]
    spare = next(b for b in (1, 2, 3, 4) if b not in p0["replicas"])
    local.alter_reassignments({"version": 1, "partitions": [
        {"topic": topic["name"], "partition": 0, "replicas": [*p0["replicas"][:-1], spare]}]})
    local.twin.advance(2)
    wanted = {spare: [(topic["name"], 0), (topic["name"], 1), ("no-such-topic", 0)],
              p0["replicas"][0]: [(topic["name"], 0)]}
    sizes = remote.replica_sizes(wanted)
    assert sizes == local.replica_sizes(wanted)
    assert (topic["name"], 0, spare) in sizes and ("no-such-topic", 0, spare) not in sizes
    with pytest.raises(BadInput, match="replica: expected BROKER:TOPIC:PARTITION"):
        remote._json("/v1/replica-sizes?replica=1:a")
