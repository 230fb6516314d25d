"""Credentials in the config never reach a URL: Prometheus' basic auth or bearer token come
from a file or a variable and become one Authorization header; a URL with a user or
password is refused, and no message echoes a password (the store's, Spark Connect's
token). Messages reach pages, logs and reports."""

from __future__ import annotations

import base64

import pytest

from backend.errors import BadInput, shown_url
from dashboard.config import parse_config

PROM = "http://127.0.0.1:9090"


def doc(prometheus: dict | None = None, **top) -> dict:
    cluster = {"name": "a", "gateway": {"type": "twin", "url": "http://127.0.0.1:8070"}}
    return {"clusters": [{**cluster, "prometheus": {"url": PROM, **(prometheus or {})}}],
            **top}


def prometheus(d: dict):
    return parse_config(d, "cfg").clusters[0].prometheus


def test_basic_auth_and_bearer_token_become_the_authorization_header(tmp_path, monkeypatch):
    (tmp_path / "pw").write_text("s3cret:pw\n")
    p = prometheus(doc({"basic_auth": {"username": "railyard",
                                       "password": {"file": str(tmp_path / "pw")}}}))
    assert p.authorization == "Basic " + base64.b64encode(b"railyard:s3cret:pw").decode()
    assert "s3cret" not in repr(p) and p.url == PROM
    monkeypatch.setenv("PROM_TOKEN", "tok-123")
    assert prometheus(doc({"bearer_token": {"env": "PROM_TOKEN"}})).authorization \
        == "Bearer tok-123"
    assert prometheus(doc()).authorization is None


@pytest.mark.parametrize(("prom", "message"), [
    ({"url": "http://railyard:S3cret@127.0.0.1:9090"},
     "cfg: clusters[0].prometheus.url: no user or password in a URL (pages, logs and "
     "reports show it); give them as basic_auth: {username, password: {file|env}}"),
    ({"basic_auth": {"username": "u", "password": "S3cret"}},
     "cfg: clusters[0].prometheus.basic_auth.password: never write a secret in the config"),
    ({"basic_auth": {"username": "u:x", "password": {"env": "X"}}},
     "cfg: clusters[0].prometheus.basic_auth.username: a basic-auth user name has no ':'"),
    ({"basic_auth": {"username": "u", "password": {"env": "RAILYARD_TEST_UNSET"}}},
     "cfg: clusters[0].prometheus.basic_auth.password: environment variable "
     "RAILYARD_TEST_UNSET is not set"),
    ({"bearer_token": {"env": "X"}, "basic_auth": {"username": "u", "password": {"env": "X"}}},
     "cfg: clusters[0].prometheus.bearer_token: give basic_auth or bearer_token, not both"),
    ({"ca_file": "/nonexistent/ca.pem"},
     "cfg: clusters[0].prometheus.ca_file: no such file '/nonexistent/ca.pem'"),
])
def test_refused_credentials_say_where_in_one_line_and_never_echo_a_secret(prom, message):
    with pytest.raises(BadInput) as e:
        prometheus(doc(prom))
    assert str(e.value) == message or str(e.value).startswith(message)
    assert "S3cret" not in str(e.value)


def test_a_refused_url_is_shown_without_its_password():
    with pytest.raises(BadInput) as e:
        parse_config(doc(store={"url": "postgres://railyard:DbPassw0rd@db/railyard"}), "cfg")
    assert str(e.value) == ("cfg: store.url: expected sqlite:///path or "
                            "postgresql+psycopg://user@host/db, got "
                            "'postgres://railyard:***@db/railyard'")
    with pytest.raises(BadInput) as e:
        prometheus(doc({"url": "ftp://u:S3cret@p:9090"}))
    assert "S3cret" not in str(e.value) and "ftp://u:***@p:9090" in str(e.value)


@pytest.mark.parametrize(("url", "shown"), [
    ("http://u:p@h:9/x", "http://u:***@h:9/x"),
    ("postgres://railyard:Db/Pa@ss@db/r", "postgres://railyard:***@db/r"),
    ("sc://h:15002/;token=abc", "sc://h:15002/;..."),
    ("http://u@h/", "http://u@h/"),
    ("sqlite:///var/railyard.db", "sqlite:///var/railyard.db"),
    ("postgresql+psycopg://h:5432/db?password=QuerySecret",
     "postgresql+psycopg://h:5432/db?password=***"),
    ("postgresql://u:pw@h/db?sslmode=require&sslpassword=K3y&connect_timeout=3",
     "postgresql://u:***@h/db?sslmode=require&sslpassword=***&connect_timeout=3"),
    ("http://h:9090/?PassWd=x&api_key=y#access_token=z",
     "http://h:9090/?PassWd=***&api_key=***#access_token=***"),
])
def test_shown_url_masks_what_a_url_can_carry(url, shown):
    assert shown_url(url) == shown


def test_spark_connect_token_stays_out_of_its_messages():
    from backend.spark.session import check_reachable, settings_from

    with pytest.raises(BadInput) as e:
        check_reachable("sc://127.0.0.1:1/;token=SparkT0ken", timeout=0.5)
    assert "SparkT0ken" not in str(e.value) and "sc://127.0.0.1:1/;..." in str(e.value)
    with pytest.raises(BadInput) as e:
        settings_from(remote="http://x/;token=SparkT0ken", env={})
    assert "SparkT0ken" not in str(e.value)


def test_a_password_in_the_store_urls_query_is_not_shown(tmp_path, capsys):
    """`audit verify --store 'postgresql+psycopg://...?password=QuerySecret'` printed the
    password on stderr: user:pw@ was masked, a ?password= query parameter was not."""
    from tests.unit.helpers import run_cli

    (tmp_path / "keys").write_text(f"k1:{'a' * 32}\n")
    url = "postgresql+psycopg://rail@127.0.0.1:1/db?password=QuerySecret&connect_timeout=2"
    code, out, err = run_cli(capsys, "audit", "verify", "--store", url,
                             "--keys", tmp_path / "keys")
    assert (code, out) == (3, "") and err.count("\n") == 1
    assert "QuerySecret" not in err
    assert "postgresql+psycopg://rail@127.0.0.1:1/db?" in err and "password=***" in err
    code, out, err = run_cli(capsys, "audit", "verify", "--store",
                             "postgresql+psycopg://rail@127.0.0.1:x/db?password=QuerySecret",
                             "--keys", tmp_path / "keys")
    assert code == 2 and "QuerySecret" not in err and err.count("\n") == 1


def test_a_secret_in_a_prometheus_or_twin_urls_query_is_not_shown():
    from backend.errors import Unavailable
    from backend.gateways.twin_http import TwinHttpGateway
    from backend.metrics.client import MetricsClient, PrometheusUnavailable

    client = MetricsClient("http://127.0.0.1:1/?token=PromSecr3t", timeout=1)
    with pytest.raises(PrometheusUnavailable) as e:
        client.instant("partitions_per_broker")
    assert "PromSecr3t" not in str(e.value) and "token=***" in str(e.value)
    assert "PromSecr3t" not in client.url
    twin = TwinHttpGateway("http://127.0.0.1:1?token=TwinSecr3t", timeout=1)
    with pytest.raises(Unavailable) as e:
        twin.describe_cluster()
    assert "TwinSecr3t" not in str(e.value) and "TwinSecr3t" not in repr(twin)
