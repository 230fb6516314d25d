"""Quota principals as Kafka writes them into MBean tags (clients .../utils/Sanitizer.java,
.../metrics/JmxReporter.java), decoded before Railyard names them or matches them to
DescribeClientQuotas (KIP-599); KIP-73 throttles configured but idle read 0 bytes/s."""

from __future__ import annotations

import pytest

from backend.metrics.client import MetricsClient
from backend.metrics.tags import (
    client_label,
    desanitize,
    jmx_sanitize,
    jmx_unquote,
    principal_of,
    sanitize,
    user_label,
)
from backend.model.snapshot import Limits
from backend.services import monitoring
from backend.services.cluster import ClusterSource


def test_sanitize_is_javas_url_encoding():
    # a TLS DN, as the issue gives it; URLEncoder keeps .-*_ (then * -> %2A), not ~
    assert sanitize("CN=a,O=b") == "CN%3Da%2CO%3Db"
    assert sanitize("a b*c~d.e-f_g") == "a%20b%2Ac%7Ed.e-f_g"
    assert sanitize("ü") == "%C3%BC"
    assert desanitize("a%20b+c") == "a b c"


@pytest.mark.parametrize("name", ["app", "app-1.x", "tab\tand space", "50%"])
def test_jmx_safe_client_ids_are_left_alone(name):
    assert jmx_sanitize(name) == name


@pytest.mark.parametrize("name, quoted", [
    ("qt:odd/id", '"qt:odd/id"'), ('a"b', '"a\\"b"'), ("a*b?", '"a\\*b\\?"'),
    ("back\\slash", '"back\\\\slash"'), ("new\nline", '"new\\nline"'), ("k=v,x", '"k=v,x"')])
def test_other_client_ids_are_quoted_as_objectname_quote(name, quoted):
    assert jmx_sanitize(name) == quoted
    assert jmx_unquote(quoted) == name


@pytest.mark.parametrize("user, client", [
    ("CN=a,O=b", ""), ("", "qt:odd/id"), ("alice", "app 1"), ("User*?", 'c"*\n'),
    ("", "")])
def test_labels_decode_to_the_names_quota_apis_use(user, client):
    assert principal_of(user_label(user), client_label(client)) == (user, client)


def test_the_client_decodes_prometheus_labels_and_bursts_match_describe_quotas():
    """Before, a TLS user's bucket (user="CN%3Da%2CO%3Db") and a quoted client id
    (client_id="\\"qt:odd/id\\"") never matched DescribeClientQuotas' CN=a,O=b and
    qt:odd/id: the /quotas page showed no burst for them."""
    client = MetricsClient("http://127.0.0.1:9", ttl=0)
    raw = [{"metric": {"user": "CN%3Da%2CO%3Db", "broker": "3"}, "value": [1.0, "5"]},
           {"metric": {"client_id": '"qt:odd/id"', "broker": "3"}, "value": [1.0, "-2"]}]
    frame = client._frame("mutation_tokens", "q", raw, False)
    assert sorted(zip(frame["user"], frame["client_id"], strict=True)) == [
        ("", "qt:odd/id"), ("CN=a,O=b", "")]

    class Quotas:
        def describe_client_quotas(self) -> list[dict]:
            return [{"user": "CN=a,O=b", "client_id": None, "controller_mutation_rate": 3.0},
                    {"user": None, "client_id": "qt:odd/id", "controller_mutation_rate": 2.0}]
    source = ClusterSource("t", None, Limits(), gateway=Quotas())
    bursts = monitoring.principal_bursts(source, frame)
    assert dict(zip(frame["client_id"], bursts, strict=True)) == {"qt:odd/id": 22.0,
                                                                   "": 33.0}


def test_configured_but_idle_throttles_read_zero_not_no_data():
    """KIP-73: the byte-rate sensor exists only once a broker moved throttled bytes (and
    expires after an hour idle): a broker with a rate set and no series moves 0 bytes/s."""
    configured = {"1": {"leader": 1e6, "follower": 1e6}, "2": {"leader": None,
                                                               "follower": 5e5},
                  "3": {"leader": None, "follower": None}}
    idle = monitoring._idle_throttles(configured, leader={"1": 3e5}, follower={})
    assert idle == {"leader": [], "follower": ["1", "2"]}
    assert monitoring._idle_throttles(None, {}, {}) == {"leader": [], "follower": []}
