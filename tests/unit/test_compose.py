"""docker-compose.yml, checked offline (no Docker engine runs here): every reference
resolves (Railyard's config names services that exist, on the ports they listen on; each
scrape target is a broker's JMX exporter with that broker's id), ports are published on
127.0.0.1 only, state lives in named volumes, services have health checks and start in
order, and Prometheus's config and rules pass promtool."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from urllib.parse import urlsplit

import pytest
import yaml

from backend.metrics.dialects import STRIMZI
from dashboard.config import load_config

ROOT = Path(__file__).resolve().parents[2]
COMPOSE = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
SERVICES = COMPOSE["services"]
KAFKA = sorted(s for s in SERVICES if s.startswith("kafka-"))
PROMETHEUS_YML = ROOT / "deploy" / "prometheus" / "prometheus.yml"
RULES = sorted((ROOT / "deploy" / "prometheus" / "rules").glob("*.yml"))
PROMTOOL = shutil.which("promtool") or "/usr/bin/promtool"


@pytest.fixture(scope="module")
def rendered(tmp_path_factory) -> Path:
    """The config compose mounts, as scripts/compose_secrets.sh writes it."""
    railyard = Path(sys.executable).parent / "railyard"
    if not railyard.exists():
        pytest.skip("the railyard command is not installed in this environment")
    out = tmp_path_factory.mktemp("secrets")
    out.chmod(0o755)  # as `mkdir -p` makes it under the usual umask 022
    env = {**os.environ, "RAILYARD_SECRETS_DIR": str(out), "RAILYARD": str(railyard)}
    subprocess.run(["bash", str(ROOT / "scripts" / "compose_secrets.sh")], env=env,
                   check=True, capture_output=True, timeout=120)
    return out


def test_compose_secrets_writes_users_and_the_config(rendered, tmp_path):
    users = [line.split() for line in (rendered / "users").read_text().splitlines()]
    roles = {role for _, role, _ in users}
    assert {"operator", "approver"} <= roles and all(len(p) >= 20 for *_, p in users)
    assert oct((rendered / "users").stat().st_mode & 0o777) == "0o600"
    # the 0644 database password and config are out of reach of the host's other users
    assert oct(rendered.stat().st_mode & 0o777) == "0o700"
    assert oct((rendered / "postgres-password").stat().st_mode & 0o777) == "0o644"
    config = _as_mounted(rendered, tmp_path)
    assert [u.name for u in config.auth.users] == [name for name, _, _ in users]
    text = (rendered / "railyard.yaml").read_text()
    assert not any(p in text for *_, p in users)  # hashes only
    assert ("./deploy/secrets/railyard.yaml", "/etc/railyard/railyard.yaml") in \
        _mounts("railyard")


def _as_mounted(rendered: Path, tmp_path: Path):
    """The config compose mounts, loaded with each /run/secrets/NAME it names read from the
    file compose mounts there (the secret's file, as compose_secrets.sh wrote it)."""
    text = (rendered / "railyard.yaml").read_text()
    for name, spec in COMPOSE["secrets"].items():
        text = text.replace(f"/run/secrets/{name}", str(rendered / Path(spec["file"]).name))
    (tmp_path / "railyard.yaml").write_text(text)
    return load_config(tmp_path / "railyard.yaml")


def _env(service: str) -> dict:
    return {k: str(v) for k, v in SERVICES[service].get("environment", {}).items()}


def _mounts(service: str) -> list[tuple[str, str]]:
    return [tuple(v.split(":")[:2]) for v in SERVICES[service].get("volumes", [])]


def _javaagent(service: str) -> tuple[int, str]:
    m = re.search(r"-javaagent:\S+\.jar=(\d+):(\S+)", _env(service)["KAFKA_OPTS"])
    assert m, f"{service}: no JMX exporter agent in KAFKA_OPTS"
    return int(m.group(1)), m.group(2)


def test_the_stack_has_every_part():
    assert KAFKA == ["kafka-1", "kafka-2", "kafka-3"]
    assert {"prometheus", "spark-master", "spark-worker", "redis", "postgres", "railyard",
            "railyard-worker"} <= set(SERVICES)


def test_brokers_are_a_kraft_quorum_with_one_rack_each():
    ids = {s: _env(s)["KAFKA_NODE_ID"] for s in KAFKA}
    assert len(set(ids.values())) == 3
    assert len({_env(s)["KAFKA_BROKER_RACK"] for s in KAFKA}) == 3
    for s in KAFKA:
        env = _env(s)
        assert env["KAFKA_PROCESS_ROLES"] == "broker,controller"
        voters = dict(v.split("@") for v in env["KAFKA_CONTROLLER_QUORUM_VOTERS"].split(","))
        assert {host.split(":")[0]: nid for nid, host in voters.items()} == {
            svc: nid for svc, nid in ids.items()}
        assert env["KAFKA_ADVERTISED_LISTENERS"] == f"PLAINTEXT://{s}:9092"
        assert SERVICES[s]["hostname"] == s


def test_each_broker_runs_the_jmx_exporter_with_railyards_rules():
    for s in KAFKA:
        rules = _javaagent(s)[1]
        mounts = dict((dst, src) for src, dst in _mounts(s))
        folder = Path(rules).parent.as_posix()
        assert folder in mounts, f"{s}: {rules} is not mounted"
        local = ROOT / mounts[folder].removeprefix("./") / Path(rules).name
        assert local == ROOT / "deploy" / "jmx-exporter" / "kafka-broker.yaml" and local.exists()
    dockerfile = (ROOT / SERVICES["kafka-1"]["build"] / "Dockerfile").read_text()
    assert re.search(r"^FROM apache/kafka:", dockerfile, re.M)
    assert "jmx_prometheus_javaagent.jar" in dockerfile


def test_scrape_targets_are_the_brokers_exporters(rendered, tmp_path):
    prom = yaml.safe_load(PROMETHEUS_YML.read_text())
    cluster = _as_mounted(rendered, tmp_path).clusters[0].name
    seen = {}
    for job in prom["scrape_configs"]:
        for group in job["static_configs"]:
            for target in group["targets"]:
                host, port = target.split(":")
                assert host in KAFKA, f"scrape target {target} is not a broker service"
                assert int(port) == _javaagent(host)[0]
                assert group["labels"] == {"broker": _env(host)["KAFKA_NODE_ID"],
                                           "cluster": cluster}
                seen[host] = target
    assert sorted(seen) == KAFKA


def test_railyards_config_names_services_that_exist(rendered, tmp_path):
    config = _as_mounted(rendered, tmp_path)
    (cluster,) = config.clusters
    for server in cluster.gateway.bootstrap_servers:
        host = server.split(":")[0]
        assert host in KAFKA and f"PLAINTEXT://{server}" == _env(host)[
            "KAFKA_ADVERTISED_LISTENERS"]
    assert sorted(s.split(":")[0] for s in cluster.gateway.bootstrap_servers) == KAFKA
    prom = urlsplit(cluster.prometheus.url)
    assert prom.hostname == "prometheus" and prom.port == 9090
    assert "--config.file=/etc/prometheus/prometheus.yml" in SERVICES["prometheus"]["command"]
    redis = urlsplit(config.cache.redis_url)
    assert config.cache.type == "redis" and redis.hostname == "redis" and redis.port == 6379
    master = urlsplit(config.spark["master"])
    cmd = SERVICES["spark-master"]["command"]
    assert master.hostname == cmd[cmd.index("--host") + 1] == "spark-master"
    assert master.port == int(cmd[cmd.index("--port") + 1])
    assert config.spark["master"] in SERVICES["spark-worker"]["command"]
    assert config.server.port == 8050
    store = urlsplit(config.store.url)
    assert store.hostname == "postgres" and store.port == 5432 and store.password is None
    assert store.username == _env("postgres")["POSTGRES_USER"]
    assert store.path == "/" + _env("postgres")["POSTGRES_DB"]
    for svc in ("railyard", "railyard-worker"):
        assert ("./deploy/secrets/railyard.yaml", "/etc/railyard/railyard.yaml") in \
            _mounts(svc)
        assert "/etc/railyard/railyard.yaml" in SERVICES[svc]["command"]


def test_redis_asks_for_the_password_railyard_gives(rendered, tmp_path):
    """Redis is reached by every container of the stack's network: it asks for a password
    (requirepass, from a config file, not its command line), the one Railyard's config
    reads from the same secret. Checked on a real redis-server with the files as written."""
    from tests.servers import free_port, stop, wait_port

    redis_cmd = SERVICES["redis"]["command"]
    assert redis_cmd[:2] == ["redis-server", "/run/secrets/redis_conf"]
    assert {"redis_conf", "redis_password"} <= set(SERVICES["redis"]["secrets"])
    assert "/run/secrets/redis_password" in SERVICES["redis"]["healthcheck"]["test"][1]
    for svc in ("railyard", "railyard-worker"):
        assert "redis_password" in SERVICES[svc]["secrets"]
    password = (rendered / "redis-password").read_text().strip()
    assert len(password) >= 20
    assert oct((rendered / "redis.conf").stat().st_mode & 0o777) == "0o644"
    config = _as_mounted(rendered, tmp_path)
    assert password not in config.cache.redis_url
    if not shutil.which("redis-server"):
        pytest.skip("redis-server is not installed (make test installs it)")
    import redis

    port, log = free_port(), tmp_path / "redis.log"
    proc = subprocess.Popen(["redis-server", str(rendered / "redis.conf"), "--port", str(port),
                             "--bind", "127.0.0.1", "--save", "", "--dir", str(tmp_path)],
                            stdout=log.open("w"), stderr=subprocess.STDOUT)
    try:
        wait_port(port, proc, log)
        with pytest.raises(redis.AuthenticationError):
            redis.Redis(port=port).ping()
        client = config.cache.client_url()  # the stack's, pointed at this server
        assert urlsplit(client).hostname == "redis" and urlsplit(client).password == password
        assert redis.Redis.from_url(client.replace("@redis:6379", f"@127.0.0.1:{port}")).ping()
    finally:
        stop(proc)


def test_only_loopback_ports_are_published():
    published = {s: v["ports"] for s, v in SERVICES.items() if v.get("ports")}
    assert set(published) == {"railyard", "prometheus", "spark-master"}
    for ports in published.values():
        for p in ports:
            assert str(p).startswith("127.0.0.1:"), p


def test_state_lives_in_named_volumes():
    declared = set(COMPOSE["volumes"])
    used = set()
    for s in SERVICES:
        for src, _ in _mounts(s):
            if src.startswith("./deploy/secrets/"):
                name = Path(src).name  # written by scripts/compose_secrets.sh
                assert name in (ROOT / "scripts" / "compose_secrets.sh").read_text(), src
            elif src.startswith("."):
                assert (ROOT / src).exists(), f"{s}: {src} does not exist"
            else:
                used.add(src)
    assert used == declared
    for s, where in [*[(k, "/var/lib/kafka/data") for k in KAFKA],
                     ("prometheus", "/prometheus"), ("redis", "/data"),
                     ("postgres", "/var/lib/postgresql/data")]:
        assert any(dst == where and src in declared for src, dst in _mounts(s)), s
    for k in KAFKA:
        assert _env(k)["KAFKA_LOG_DIRS"] == "/var/lib/kafka/data"


def test_health_checks_and_start_order():
    for s, v in SERVICES.items():
        if s != "railyard-worker":  # a Celery worker: its dashboard and Spark are checked
            assert v.get("healthcheck", {}).get("test"), f"{s} has no health check"
        for dep, cond in v.get("depends_on", {}).items():
            assert dep in SERVICES
            assert cond == {"condition": "service_healthy"}
            assert SERVICES[dep].get("healthcheck"), f"{s} waits on {dep}, which has none"
    waits = set(SERVICES["railyard"]["depends_on"])
    assert {*KAFKA, "prometheus", "spark-master", "redis", "postgres"} <= waits


def test_secrets_come_from_files_never_the_compose_file():
    for name, spec in COMPOSE["secrets"].items():
        assert spec["file"].startswith("./deploy/secrets/"), name
        assert Path(spec["file"]).name in (ROOT / "scripts" / "compose_secrets.sh").read_text()
    assert _env("postgres")["POSTGRES_PASSWORD_FILE"] == "/run/secrets/postgres_password"
    ignored = (ROOT / "deploy" / "secrets" / ".gitignore").read_text().split()
    assert "*" in ignored
    text = (ROOT / "docker-compose.yml").read_text().lower()
    for secret in COMPOSE["secrets"]:  # the secrets' names, not passwords
        text = text.replace(f"{secret}:", "")
    assert "password:" not in text


def test_dockerfile_is_slim_non_root_with_java_and_the_make_install():
    text = (ROOT / "Dockerfile").read_text()
    assert re.search(r"^FROM python:3\.11-slim", text, re.M)
    assert re.search(r"^USER railyard$", text, re.M)
    assert "scripts/install.sh" in text and "RAILYARD_IMAGE=1" in text
    install = (ROOT / "scripts" / "install.sh").read_text()
    assert 'RAILYARD_IMAGE:-}" = 1' in install and "openjdk-17-jre-headless" in install
    for src in re.findall(r"^COPY (\S+) ", text, re.M):
        assert (ROOT / src).exists(), f"COPY {src}: no such path"
    assert SERVICES["railyard"]["build"] == "." and SERVICES["spark-worker"]["image"] == \
        SERVICES["railyard"]["image"]


@pytest.mark.skipif(not Path(PROMTOOL).exists(), reason="promtool is not installed")
def test_promtool_checks_config_and_rules(tmp_path):
    """Prometheus's config (its rule_files pointed at the repository's rules) and rules."""
    prom = yaml.safe_load(PROMETHEUS_YML.read_text())
    assert prom["rule_files"] == ["/etc/prometheus/rules/*.yml"]
    assert ("./deploy/prometheus/rules", "/etc/prometheus/rules") in _mounts("prometheus")
    prom["rule_files"] = [str(p) for p in RULES]
    local = tmp_path / "prometheus.yml"
    local.write_text(yaml.safe_dump(prom))
    for args in (["check", "config", str(local)], ["check", "rules", *map(str, RULES)]):
        out = subprocess.run([PROMTOOL, *args], capture_output=True, text=True, timeout=60)
        assert out.returncode == 0, out.stdout + out.stderr


def test_alert_rules_query_series_the_exporter_rules_make():
    exported = {v for v in vars(STRIMZI).values() if isinstance(v, str)}
    for path in RULES:
        for group in yaml.safe_load(path.read_text())["groups"]:
            for rule in group["rules"]:
                names = set(re.findall(r"\b(kafka_[a-z0-9_]+)", rule["expr"]))
                assert names, rule["alert"]
                for name in names:
                    assert name.removesuffix("_total") in exported or name in exported, \
                        f"{rule['alert']}: {name} is not a series Railyard's rules export"


# Java regex constructs Python's re reads differently (or not at all)
JAVA_ONLY = [r"\(\?<[A-Za-z]", r"\\p\{", r"\\Q", r"\\E", r"[*+?}]\+", r"\\z", r"\\G",
             r"\(\?[a-z]*x", r"\[[^\]]*&&"]


def test_exporter_patterns_mean_the_same_in_java_and_python():
    """The JMX exporter compiles each pattern as a Java regex; tests/unit/
    test_twin_jmx_rules.py applies them with Python's re. They agree only because the
    patterns use constructs both engines read alike, which this keeps true."""
    for path in sorted((ROOT / "deploy" / "jmx-exporter").glob("*.yaml")):
        for rule in yaml.safe_load(path.read_text())["rules"]:
            pattern = rule["pattern"]
            re.compile(pattern)
            for construct in JAVA_ONLY:
                assert not re.search(construct, pattern), (path.name, pattern, construct)
