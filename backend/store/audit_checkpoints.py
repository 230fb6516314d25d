"""Checkpoints of the audit chain kept outside the database.

After each write transaction that appended audit rows, the store appends one line to a
file: the newest row's id and hash, when, and an HMAC of the three under the current
audit key. The database cannot vouch for its own end: someone who can write it can
delete its newest rows, or swap the whole log for one with no keyed rows, and the chain
that is left still links up. A checkpoint names a row the log must still hold, with the
hash it must still have; shipped to a log sink the database's writers cannot edit
(docs/deploy.md), it outlives anything done to the database. Lines are read back from
the file or from a sink's export: anything before a line's first '{' is ignored (a
syslog prefix), and lines without one are not checkpoints (a sink's other lines), but a
file with lines and no checkpoint at all is not what it was said to be: a finding.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from backend.errors import BadInput
from backend.store.audit_keys import AuditKeys

_FIELDS = ("at", "id", "hash", "key")


@dataclass(frozen=True)
class Checkpoint:
    line: int
    id: int
    hash: str
    at: str


def _message(fields: dict) -> str:
    body = json.dumps({k: fields[k] for k in _FIELDS}, sort_keys=True, separators=(",", ":"))
    return f"railyard-audit-checkpoint\n{body}"


def append_checkpoint(path: str, keys: AuditKeys, row_id: int, row_hash: str,
                      at: datetime) -> None:
    """One signed line; O_APPEND keeps lines from several processes whole."""
    fields = {"at": at.isoformat(), "id": row_id, "hash": row_hash, "key": keys.current}
    fields["mac"] = keys.sign(keys.current, _message(fields))
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    try:
        os.write(fd, (json.dumps(fields, separators=(",", ":")) + "\n").encode())
    finally:
        os.close(fd)


def read_checkpoints(path: str, keys: AuditKeys) -> tuple[list[Checkpoint], str | None]:
    """The file's checkpoints, and the first line that is not a genuine one (a line whose
    MAC does not match was forged or damaged: that is itself a finding)."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except FileNotFoundError:
        return [], None
    except (OSError, UnicodeDecodeError) as e:
        raise BadInput(f"{path}: cannot read the audit checkpoints ({e})") from None
    found, other = [], None  # other: the first line that is not one, if any
    for n, raw in enumerate(text.splitlines(), start=1):
        if "{" not in raw:
            other = other or (n if raw.strip() else None)
            continue
        try:
            fields = json.loads(raw[raw.index("{"):])
            genuine = fields["key"] in keys.keys and fields["mac"] == keys.sign(
                fields["key"], _message(fields))
            if not genuine:
                return found, (f"checkpoint line {n} of {path} is not signed by a key in "
                               f"the ring (forged or damaged)")
            found.append(Checkpoint(n, int(fields["id"]), str(fields["hash"]),
                                    str(fields["at"])))
        except (ValueError, KeyError, TypeError):
            return found, f"checkpoint line {n} of {path} is not a checkpoint (damaged)"
    if not found and other is not None:  # a sink's other lines, but no checkpoint at all
        return found, (f"line {other} of {path} is not a checkpoint, and no line of it is "
                       f"one (not a checkpoints file or a sink's export of one)")
    return found, None
