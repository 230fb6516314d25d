"""TLS and SASL client listeners for a loopback cluster (`railyard kafka up --secure`), so
Railyard's Kafka gateway can be proven against each kind of listener Apache Kafka offers.

Beside the PLAINTEXT listener the brokers use among themselves, every broker gets:
``SSL`` (server certificate from a CA made at start-up, with IP and DNS names 127.0.0.1 and
localhost), ``SASL_PLAINTEXT`` and ``SASL_SSL``, each SASL listener taking PLAIN,
SCRAM-SHA-256 and SCRAM-SHA-512. One user per mechanism: PLAIN users live in the listeners'
JAAS config, SCRAM users are written into the cluster's metadata by ``kafka-storage format
--add-scram`` (as a salted password, so no password is ever on a command line).

Everything lives under ``ROOT/security/``: ``ca.pem`` (what a client trusts), ``broker.pem``
(the brokers' key and certificate, PEM keystore) and ``passwords/USER`` (one password per
file, its first line: Railyard's ``password: {file: ...}``). The CA's key is discarded once
the certificate is signed. cluster.json names these files, never a password.
"""

from __future__ import annotations

import base64
import hashlib
import os
import secrets
import subprocess
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

from backend.errors import Unavailable

LISTENERS = ("SSL", "SASL_PLAINTEXT", "SASL_SSL")  # listener name = its security protocol
MECHANISMS = ("PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512")
SCRAM_ITERATIONS = 4096  # Kafka's minimum for both SCRAM mechanisms
PLAIN_MODULE = "org.apache.kafka.common.security.plain.PlainLoginModule"
SCRAM_MODULE = "org.apache.kafka.common.security.scram.ScramLoginModule"


@dataclass(frozen=True)
class User:
    """A SASL user of one mechanism; the password stays out of every repr."""

    mechanism: str
    username: str
    password: str = field(repr=False)


def _user(mechanism: str) -> User:
    name = "railyard_" + mechanism.lower().replace("-", "").replace("scramsha", "scram")
    return User(mechanism, name, secrets.token_urlsafe(18))


class Security:
    """The files, users and broker settings of the secure listeners under ``root``."""

    def __init__(self, root: Path) -> None:
        self.dir = root / "security"
        self.users = [_user(m) for m in MECHANISMS]

    @property
    def ca_file(self) -> Path:
        return self.dir / "ca.pem"

    @property
    def keystore(self) -> Path:
        return self.dir / "broker.pem"

    def password_file(self, user: User) -> Path:
        return self.dir / "passwords" / user.username

    # -- files --
    def write(self) -> None:
        """The CA, the brokers' PEM keystore and the password files (owner-only)."""
        (self.dir / "passwords").mkdir(parents=True, exist_ok=True)
        os.chmod(self.dir, 0o700)
        for user in self.users:
            _private(self.password_file(user), user.password + "\n")
        if not self.keystore.exists():
            self._certificates()

    def _certificates(self) -> None:
        """A throwaway CA (EC P-256: instant) signs one server certificate valid for
        127.0.0.1 and localhost; the CA's key is deleted once it has signed."""
        d = self.dir
        ca_key, key, csr, ext = d / "ca.key", d / "broker.key", d / "broker.csr", d / "ext.cnf"
        ext.write_text(
            "[req]\ndistinguished_name=dn\n[dn]\n"
            "[ca]\nbasicConstraints=critical,CA:TRUE\nkeyUsage=critical,keyCertSign,cRLSign\n"
            "subjectKeyIdentifier=hash\n"
            "[leaf]\nbasicConstraints=critical,CA:FALSE\n"
            "keyUsage=critical,digitalSignature,keyEncipherment\nextendedKeyUsage=serverAuth\n"
            "subjectAltName=IP:127.0.0.1,DNS:localhost\nsubjectKeyIdentifier=hash\n"
            "authorityKeyIdentifier=keyid\n")
        ec = ["-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256"]
        try:
            _openssl(["genpkey", *ec, "-out", str(ca_key)])
            _openssl(["req", "-x509", "-new", "-key", str(ca_key), "-subj",
                      "/O=Railyard/CN=Railyard local Kafka test CA", "-days", "30",
                      "-sha256", "-config", str(ext), "-extensions", "ca",
                      "-out", str(self.ca_file)])
            _openssl(["genpkey", *ec, "-out", str(key)])
            _openssl(["req", "-new", "-key", str(key), "-subj", "/O=Railyard/CN=127.0.0.1",
                      "-config", str(ext), "-out", str(csr)])
            cert = _openssl(["x509", "-req", "-in", str(csr), "-CA", str(self.ca_file),
                             "-CAkey", str(ca_key), "-CAcreateserial", "-days", "30",
                             "-sha256", "-extfile", str(ext), "-extensions", "leaf"])
            _private(self.keystore, key.read_text() + cert + self.ca_file.read_text())
        finally:
            for f in (ca_key, key, csr, ext, d / "ca.srl"):
                f.unlink(missing_ok=True)

    # -- what the brokers get --
    @cached_property
    def format_args(self) -> list[str]:
        """``kafka-storage format`` options adding the SCRAM users (salted, never the
        password itself); one salt per user, the same for every broker."""
        args = []
        for user in self.users:
            if not user.mechanism.startswith("SCRAM-"):
                continue
            digest = "sha" + user.mechanism.rsplit("-", 1)[1]
            salt = secrets.token_bytes(16)
            salted = hashlib.pbkdf2_hmac(digest, user.password.encode(), salt,
                                         SCRAM_ITERATIONS)
            args += ["--add-scram",
                     f"{user.mechanism}=[name={user.username},iterations={SCRAM_ITERATIONS},"
                     f'salt="{_b64(salt)}",saltedpassword="{_b64(salted)}"]']
        return args

    def properties(self, ports: dict[str, int]) -> dict[str, str]:
        """A broker's settings for its secure listeners (``ports`` by listener name):
        merged into its server.properties beside the PLAINTEXT and CONTROLLER ones."""
        plain = " ".join(f'user_{u.username}="{u.password}"' for u in self.users
                         if u.mechanism == "PLAIN")
        props = {"ssl.keystore.type": "PEM", "ssl.keystore.location": str(self.keystore),
                 "ssl.client.auth": "none"}
        for name in LISTENERS:
            if not name.startswith("SASL"):
                continue
            at = f"listener.name.{name.lower()}."
            props[at + "sasl.enabled.mechanisms"] = ",".join(MECHANISMS)
            props[at + "plain.sasl.jaas.config"] = f"{PLAIN_MODULE} required {plain};"
            for m in MECHANISMS[1:]:
                props[at + f"{m.lower()}.sasl.jaas.config"] = f"{SCRAM_MODULE} required;"
        return props

    def describe(self, addresses: dict[str, list[str]]) -> dict:
        """cluster.json's ``security``: each listener's address, protocol and mechanisms,
        the CA file and each user's password file (paths only)."""
        return {"ca_file": str(self.ca_file),
                "listeners": [{"name": name, "security_protocol": name,
                               "bootstrap_servers": addresses[name],
                               "sasl_mechanisms": list(MECHANISMS) if "SASL" in name else [],
                               "tls": name.endswith("SSL")}
                              for name in LISTENERS],
                "users": [{"mechanism": u.mechanism, "username": u.username,
                           "password_file": str(self.password_file(u))} for u in self.users]}


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def _private(path: Path, text: str) -> None:
    """Write a file only its owner can read (created so, never readable by others)."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as f:
        f.write(text)


def _openssl(args: list[str]) -> str:
    try:
        out = subprocess.run(["openssl", *args], capture_output=True, text=True, timeout=60)
    except FileNotFoundError:
        raise Unavailable("openssl", "not on PATH: --secure makes its test CA with it") from None
    if out.returncode != 0:
        last = out.stderr.strip().splitlines()[-1:] or ["no output"]
        raise Unavailable("openssl", f"`openssl {args[0]}` failed: {last[0]}")
    return out.stdout
