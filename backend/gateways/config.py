"""How a cluster's gateway is configured: the twin's URL (and the file holding its write
token), or a Kafka cluster's bootstrap servers with TLS and SASL.

Secrets (SASL passwords, a TLS key's password, the twin's token) are never written in the
config itself: the config names a file or an environment variable, read only when a
connection opens.
Their repr is redacted so a config printed in a log or an error shows no secret.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from backend.errors import BadInput
from backend.gateways.base import RAILYARD_CLIENT_ID

GATEWAY_TYPES = ("twin", "kafka")
SASL_MECHANISMS = ("PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512")
SECURITY_PROTOCOLS = ("PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL")


@dataclass(frozen=True)
class Secret:
    """Where a secret lives: ``file`` (its first line) or ``env`` (a variable's name)."""

    file: str | None = None
    env: str | None = None
    where: str = "secret"  # the config path, for errors

    def __repr__(self) -> str:
        return f"Secret({'file=' + repr(self.file) if self.file else 'env=' + repr(self.env)}, " \
               "value=<redacted>)"

    __str__ = __repr__

    def read(self) -> str:
        """The secret's value; BadInput naming the file or variable when it is missing."""
        if self.env is not None:
            value = os.environ.get(self.env)
            if not value:
                raise BadInput(f"{self.where}: environment variable {self.env} is not set")
            return value
        try:
            lines = Path(self.file).read_text(encoding="utf-8").splitlines()
        except OSError as e:
            raise BadInput(f"{self.where}: cannot read {self.file} "
                           f"({e.strerror or type(e).__name__})") from None
        if not lines or not lines[0]:
            raise BadInput(f"{self.where}: {self.file} is empty")
        return lines[0]


@dataclass(frozen=True)
class TlsSettings:
    ca_file: str | None = None  # None: the system's trusted CAs
    cert_file: str | None = None  # client certificate (mutual TLS)
    key_file: str | None = None
    key_password: Secret | None = None
    check_hostname: bool = True


@dataclass(frozen=True)
class SaslSettings:
    mechanism: str
    username: str
    password: Secret


@dataclass(frozen=True)
class KafkaConnection:
    """A Kafka cluster's address and credentials (what KafkaAdminClient needs)."""

    bootstrap_servers: tuple[str, ...]
    security_protocol: str = "PLAINTEXT"
    tls: TlsSettings | None = None
    sasl: SaslSettings | None = None
    client_id: str = RAILYARD_CLIENT_ID
    timeout_seconds: float = 10.0

    @property
    def servers(self) -> str:
        """The bootstrap servers as shown in banners and errors."""
        return ",".join(self.bootstrap_servers)

    def admin_kwargs(self) -> dict[str, Any]:
        """KafkaAdminClient keyword arguments, secrets read now (BadInput when missing)."""
        ms = int(self.timeout_seconds * 1000)
        kw: dict[str, Any] = {
            "bootstrap_servers": list(self.bootstrap_servers), "client_id": self.client_id,
            "security_protocol": self.security_protocol, "request_timeout_ms": ms,
            "bootstrap_timeout_ms": ms, "reconnect_backoff_max_ms": 1000}
        if self.tls is not None:
            kw.update(ssl_cafile=self.tls.ca_file, ssl_certfile=self.tls.cert_file,
                      ssl_keyfile=self.tls.key_file, ssl_check_hostname=self.tls.check_hostname,
                      ssl_password=self.tls.key_password.read() if self.tls.key_password
                      else None)
        if self.sasl is not None:
            kw.update(sasl_mechanism=self.sasl.mechanism,
                      sasl_plain_username=self.sasl.username,
                      sasl_plain_password=self.sasl.password.read())
        return kw


@dataclass(frozen=True)
class GatewayConfig:
    """How Railyard reads a cluster: the twin's admin URL or a Kafka connection."""

    type: str
    url: str | None = None  # twin; None: a twin in the dashboard's process (railyard demo)
    kafka: KafkaConnection | None = None
    token: Secret | None = None  # twin: its write token (`twin serve --api-token-file`)

    @property
    def bootstrap_servers(self) -> tuple[str, ...]:
        return self.kafka.bootstrap_servers if self.kafka else ()


def parse_gateway(value: Any, where: Callable[[str], str],
                  url: Callable[[str], str | None]) -> GatewayConfig:
    """A validated gateway from its YAML mapping. ``where(key)`` names a key's place in
    the config for one-line errors; ``url(key)`` validates the twin's http(s) URL."""
    kind = value.get("type")
    if kind is None:
        raise BadInput(f"{where('type')}: required")
    if kind not in GATEWAY_TYPES:
        raise BadInput(f"{where('type')}: expected one of {', '.join(GATEWAY_TYPES)}, "
                       f"got {kind!r}")
    if kind == "twin":
        _only(value, where, "type", "url", "token_file")
        token = _file(value, "token_file", where)
        return GatewayConfig("twin", url=url("url"),
                             token=None if token is None else Secret(file=token,
                                                                     where=where("token_file")))
    return GatewayConfig("kafka", kafka=parse_kafka(value, where))


def parse_kafka(value: dict, where: Callable[[str], str]) -> KafkaConnection:
    _only(value, where, "type", "bootstrap_servers", "security_protocol", "tls", "sasl",
          "client_id", "timeout_seconds")
    servers = value.get("bootstrap_servers")
    if isinstance(servers, str):
        servers = [s.strip() for s in servers.split(",") if s.strip()]
    if not servers or not all(isinstance(s, str) and _host_port(s) for s in servers):
        raise BadInput(f"{where('bootstrap_servers')}: expected host:port entries, "
                       f"e.g. [\"kafka-1:9092\", \"kafka-2:9092\"]")
    tls = _tls(value.get("tls"), _sub(where, "tls"))
    sasl = _sasl(value.get("sasl"), _sub(where, "sasl"))
    derived = ("SASL_" if sasl else "") + ("SSL" if tls else "PLAINTEXT")
    protocol = value.get("security_protocol", derived)
    if protocol not in SECURITY_PROTOCOLS:
        raise BadInput(f"{where('security_protocol')}: expected one of "
                       f"{', '.join(SECURITY_PROTOCOLS)}, got {protocol!r}")
    if protocol.startswith("SASL") != (sasl is not None):
        raise BadInput(f"{where('security_protocol')}: {protocol} "
                       f"{'needs a sasl section' if sasl is None else 'takes no sasl section'}")
    if protocol.endswith("SSL") and tls is None:
        tls = TlsSettings()  # system CAs, hostname checked
    if protocol.endswith("PLAINTEXT") and tls is not None:
        raise BadInput(f"{where('security_protocol')}: {protocol} takes no tls section")
    timeout = value.get("timeout_seconds", 10)
    if isinstance(timeout, bool) or not isinstance(timeout, int | float) or not 0 < timeout <= 600:
        raise BadInput(f"{where('timeout_seconds')}: expected seconds in (0, 600], "
                       f"got {timeout!r}")
    client_id = value.get("client_id", RAILYARD_CLIENT_ID)
    if not isinstance(client_id, str) or not client_id:
        raise BadInput(f"{where('client_id')}: expected a non-empty string")
    return KafkaConnection(tuple(servers), protocol, tls, sasl, client_id, float(timeout))


def _host_port(text: str) -> bool:
    host, _, port = text.rpartition(":")
    return bool(host) and port.isdigit() and 0 < int(port) < 65536


def _sub(where: Callable[[str], str], section: str) -> Callable[[str], str]:
    return lambda key: where(f"{section}.{key}")


def _only(value: dict, where: Callable[[str], str], *keys: str) -> None:
    unknown = sorted(str(k) for k in set(value) - set(keys))
    if unknown:
        raise BadInput(f"{where(unknown[0])}: unknown key (known: {', '.join(keys)})")


def _mapping(value: Any, where: Callable[[str], str]) -> dict:
    if not isinstance(value, dict):
        raise BadInput(f"{where('')[:-1]}: expected a mapping of keys")
    return value


def _file(value: dict, key: str, where: Callable[[str], str]) -> str | None:
    path = value.get(key)
    if path is None:
        return None
    if not isinstance(path, str) or not path:
        raise BadInput(f"{where(key)}: expected a file path")
    return path


def parse_secret(value: Any, where: str) -> Secret:
    """``{file: path}`` or ``{env: VARIABLE}``; a secret written in the config is refused."""
    if isinstance(value, str):
        raise BadInput(f"{where}: never write a secret in the config; give "
                       "{file: /path/to/secret} or {env: VARIABLE}")
    if not isinstance(value, dict) or len(value) != 1 or not (
            (isinstance(value.get("file"), str) and value["file"])
            or (isinstance(value.get("env"), str) and value["env"])):
        raise BadInput(f"{where}: expected {{file: /path/to/secret}} or {{env: VARIABLE}}")
    return Secret(file=value.get("file"), env=value.get("env"), where=where)


def _tls(value: Any, where: Callable[[str], str]) -> TlsSettings | None:
    if value is None or value is False:
        return None
    if value is True:
        return TlsSettings()
    value = _mapping(value, where)
    _only(value, where, "ca_file", "cert_file", "key_file", "key_password", "check_hostname")
    check = value.get("check_hostname", True)
    if not isinstance(check, bool):
        raise BadInput(f"{where('check_hostname')}: expected true or false")
    cert, key = _file(value, "cert_file", where), _file(value, "key_file", where)
    if (cert is None) != (key is None):
        raise BadInput(f"{where('cert_file' if cert is None else 'key_file')}: a client "
                       "certificate needs both cert_file and key_file")
    password = value.get("key_password")
    return TlsSettings(_file(value, "ca_file", where), cert, key,
                       None if password is None else parse_secret(password, where("key_password")),
                       check)


def _sasl(value: Any, where: Callable[[str], str]) -> SaslSettings | None:
    if value is None:
        return None
    value = _mapping(value, where)
    _only(value, where, "mechanism", "username", "password")
    mechanism = value.get("mechanism")
    if mechanism not in SASL_MECHANISMS:
        raise BadInput(f"{where('mechanism')}: expected one of {', '.join(SASL_MECHANISMS)}, "
                       f"got {mechanism!r}")
    user = value.get("username")
    if not isinstance(user, str) or not user:
        raise BadInput(f"{where('username')}: required")
    if value.get("password") is None:
        raise BadInput(f"{where('password')}: required ({{file: ...}} or {{env: ...}})")
    return SaslSettings(mechanism, user, parse_secret(value["password"], where("password")))
