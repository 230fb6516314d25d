"""The audit log's key ring: HMAC keys the database never holds, each with an id.

Keys come from RAILYARD_AUDIT_KEYS or a key file (created, mode 0600, on first start),
one ``ID:SECRET`` entry per line (or comma-separated in the variable). The last entry
signs new rows; every row records the id of the key that signed it, so after a rotation
(``railyard audit add-key``: a new last line) older rows still verify with older keys.
A key removed from the ring makes the rows it signed unverifiable: keep them all.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import re
import secrets
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from backend.errors import BadInput

KEYS_ENV = "RAILYARD_AUDIT_KEYS"
DEFAULT_KEY_FILE = "var/audit_keys"
MIN_SECRET_CHARS = 32
_KEY_ID = re.compile(r"[A-Za-z0-9._-]{1,32}")
_HEADER = ("# Railyard audit keys, ID:SECRET per line. The last line signs new audit rows;\n"
           "# keep the older lines: rows they signed verify only with them.\n")


@dataclass(frozen=True)
class AuditKeys:
    """The key ring: ``keys`` by id, in the order given; ``current`` signs."""

    keys: dict[str, bytes]
    source: str  # where they came from, for messages (never the secrets)

    @property
    def current(self) -> str:
        return next(reversed(self.keys))

    def sign(self, key_id: str, message: str) -> str:
        """HMAC-SHA256 of ``message`` under the key ``key_id`` names (KeyError if none)."""
        return hmac.new(self.keys[key_id], message.encode(), hashlib.sha256).hexdigest()


def parse_keys(text: str, source: str) -> AuditKeys:
    """Entries ``ID:SECRET`` split by newlines or commas; '#' starts a comment line."""
    keys: dict[str, bytes] = {}
    entries = [e.strip() for line in text.splitlines() if not line.lstrip().startswith("#")
               for e in line.split(",")]
    for n, entry in enumerate(e for e in entries if e):
        key_id, sep, secret = entry.partition(":")
        where = f"{source}: entry {n + 1}"
        if not sep or not _KEY_ID.fullmatch(key_id):
            raise BadInput(f"{where}: expected ID:SECRET with an ID of letters, digits, "
                           f"'.', '_' or '-' (at most 32)")
        if len(secret) < MIN_SECRET_CHARS:
            raise BadInput(f"{where} ({key_id}): the secret has {len(secret)} characters, "
                           f"fewer than the {MIN_SECRET_CHARS} required")
        if key_id in keys:
            raise BadInput(f"{where}: key id {key_id} is listed twice")
        keys[key_id] = secret.encode()
    if not keys:
        raise BadInput(f"{source}: no audit key in it")
    return AuditKeys(keys, source)


def load_keys(key_file: str = DEFAULT_KEY_FILE, create: bool = True) -> AuditKeys:
    """RAILYARD_AUDIT_KEYS, else the key file (created with one key when ``create``)."""
    if os.environ.get(KEYS_ENV):
        return parse_keys(os.environ[KEYS_ENV], KEYS_ENV)
    path = Path(key_file)
    if not path.exists():
        if not create:
            raise BadInput(f"{path}: no such audit key file (and {KEYS_ENV} is not set): "
                           f"the keys that signed the log are needed to verify it")
        _create(path)
    try:
        return parse_keys(path.read_text(encoding="utf-8"), str(path))
    except OSError as e:
        raise BadInput(f"{path}: cannot read the audit keys ({e.strerror})") from None


def add_key(key_file: str) -> str:
    """Rotate: append a new key, which signs from the next start on; its id."""
    path = Path(key_file)
    old = load_keys(key_file, create=False) if path.exists() else None
    key_id = _new_id()
    while old is not None and key_id in old.keys:
        key_id = _new_id()
    if old is None:
        _create(path, key_id)
    else:
        with open(path, "a", encoding="utf-8") as f:
            f.write(f"{key_id}:{secrets.token_hex(32)}\n")
    return key_id


def _new_id() -> str:
    return f"{datetime.now(UTC):%Y%m%d}-{secrets.token_hex(3)}"


def _create(path: Path, key_id: str | None = None) -> None:
    """Write a new key file whole, then link it into place: a process starting at the same
    moment reads either no file or the whole one, and one of two creators wins."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{secrets.token_hex(4)}")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        f.write(f"{_HEADER}{key_id or _new_id()}:{secrets.token_hex(32)}\n")
    try:
        os.link(tmp, path)
    except FileExistsError:
        pass
    finally:
        tmp.unlink()
