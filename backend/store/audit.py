"""The append-only audit log: every row is linked to the one before it and sealed with an
HMAC under a key the database does not hold.

A row's ``digest`` is the sha256 of its own fields (canonical JSON); its ``hash`` links it,
sha256 of the previous row's hash followed by its digest; its ``seal`` is HMAC-SHA256 of
its key id, its id and its hash, under the key its ``key_id`` names
(backend/store/audit_keys.py). Anyone can recompute links, nobody without the key can
seal: someone who can write the database can neither edit a row, nor add one, nor delete
one and re-link the rest (the next row's seal covers a link that changed) without
``verify_audit`` saying where. What the chain alone cannot show (its newest rows deleted)
the checkpoints kept outside the database do (backend/store/audit_checkpoints.py).

Appends are serialised so the chain never forks: on SQLite every write transaction holds
the database lock (BEGIN IMMEDIATE) and the row is linked and sealed here; on PostgreSQL a
trigger (migration 0006) takes an advisory transaction lock, numbers and links the row
inside the INSERT, so the lock is held for that statement and the commit only, and the
seal is written after the commit (``Store.write``), outside the lock. A row Railyard
stopped before sealing stays unsealed, and verify names it.

Two older formulas still verify: rows signed by migration 0005's keyed chain (``seal``
NULL, ``hash`` an HMAC of key id, previous hash and digest), and rows written before the
keys (``key_id`` NULL), which verify only as the log's prefix: the first keyed row covers
the last of them (``Store.seal_legacy`` writes one when `railyard serve` starts), and a log
of unkeyed rows that no keyed row follows does not verify.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import Connection, Engine, bindparam, select

from backend.store.audit_checkpoints import Checkpoint
from backend.store.audit_keys import AuditKeys
from backend.store.schema import audit

GENESIS = "0" * 64
AUDIT_LOCK = 7_351_812  # pg_advisory_xact_lock key the PostgreSQL trigger takes
KEYS_OPTION = "railyard_audit_keys"  # execution option of the store's write connections
HEAD = "railyard_audit_head"  # conn.info: (id, hash, at) of the row this transaction wrote
UNSEALED = "railyard_audit_unsealed"  # conn.info: {id: hash} to seal once committed
SEAL_ACTION = "audit-keyed"
CHECKPOINTS_ACTION = "audit-checkpoints-started"  # Store.start_checkpoints
_LAST = select(audit.c.id, audit.c.hash, audit.c.key_id).order_by(audit.c.id.desc()).limit(1)
_INSERT = audit.insert()
_SET_SEAL = audit.update().where(audit.c.id == bindparam("row_id"),
                                  audit.c.hash == bindparam("row_hash"),
                                  audit.c.seal.is_(None)).values(seal=bindparam("row_seal"))


def canonical_json(value: Any) -> str:
    """Sorted keys, no spaces, UTF-8 kept: the same bytes for the same value everywhere."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False,
                      allow_nan=False)


def row_digest(at: datetime, user: str, action: str, plan_id: int | None,
               before: str | None, after: str | None, address: str | None,
               detail: Any) -> str:
    """The sha256 of a row's own fields."""
    body = canonical_json({"at": at.astimezone(UTC).isoformat(), "user": user,
                           "action": action, "plan": plan_id, "before": before,
                           "after": after, "address": address, "detail": detail})
    return hashlib.sha256(body.encode()).hexdigest()


def seal_of(keys: AuditKeys, key_id: str, row_id: int, row_hash: str) -> str:
    """A row's seal: the HMAC that fixes its place (id) and its link (hash)."""
    return keys.sign(key_id, f"railyard-audit-seal\n{key_id}\n{row_id}\n{row_hash}")


def keyed_hash(keys: AuditKeys, key_id: str, prev_hash: str, digest: str) -> str:
    """The hash of a row signed by migration 0005's keyed chain (no seal)."""
    return keys.sign(key_id, f"railyard-audit-row\n{key_id}\n{prev_hash}\n{digest}")


def legacy_hash(prev_hash: str, digest: str) -> str:
    """The unkeyed hash of rows written before the keys: sha256(prev_hash || digest)."""
    return hashlib.sha256((prev_hash + digest).encode()).hexdigest()


def keys_of(conn: Connection) -> AuditKeys:
    keys = conn.get_execution_options().get(KEYS_OPTION)
    if keys is None:
        raise RuntimeError("audit rows are written in Store.write() transactions, which "
                           "carry the audit keys")
    return keys


def append(conn: Connection, *, at: datetime, user: str, action: str,
           plan_id: int | None = None, before: str | None = None, after: str | None = None,
           address: str | None = None, detail: Any = None) -> int:
    """Append one row inside the caller's write transaction; returns its id."""
    keys = keys_of(conn)
    digest = row_digest(at, user, action, plan_id, before, after, address, detail)
    row = {"at": at, "user": user, "action": action, "plan_id": plan_id, "before": before,
           "after": after, "address": address, "detail": detail, "digest": digest,
           "key_id": keys.current}
    if conn.dialect.name == "postgresql":  # the trigger numbers and links it
        row["prev_hash"] = row["hash"] = ""
        row_id, row_hash = conn.execute(_INSERT.returning(audit.c.id, audit.c.hash),
                                        row).one()
        linked(conn, row_id, row_hash, at)
        return row_id
    prev = conn.execute(_LAST).first()
    row["id"] = prev.id + 1 if prev else 1
    row["prev_hash"] = prev.hash if prev else GENESIS
    row["hash"] = legacy_hash(row["prev_hash"], digest)
    row["seal"] = seal_of(keys, keys.current, row["id"], row["hash"])
    conn.execute(_INSERT, row)
    conn.info[HEAD] = (row["id"], row["hash"], at)
    return row["id"]


def linked(conn: Connection, row_id: int, row_hash: str, at: datetime) -> None:
    """Note a row the PostgreSQL trigger numbered and linked: ``seal_committed`` seals it
    once the transaction has committed."""
    conn.info.setdefault(UNSEALED, {})[row_id] = row_hash
    conn.info[HEAD] = (row_id, row_hash, at)


def seal_committed(engine: Engine, keys: AuditKeys, rows: dict[int, str]) -> None:
    """Seal rows whose transaction committed (outside the chain's lock)."""
    with engine.begin() as conn:
        conn.execute(_SET_SEAL, [{"row_id": i, "row_hash": h,
                                  "row_seal": seal_of(keys, keys.current, i, h)}
                                 for i, h in rows.items()])


def needs_seal(conn: Connection) -> bool:
    """Whether the newest row is unkeyed (written before the keys)."""
    last = conn.execute(_LAST).first()
    return last is not None and last.key_id is None


def verify_audit(engine: Engine, keys: AuditKeys,
                 checkpoints: list[Checkpoint] | None = None, batch: int = 5000) -> dict:
    """Walk the chain in id order, then hold it against the checkpoints: {"intact",
    "rows", "broken_at", "reason", "legacy_rows", "checkpoints"} (checkpoints: how many
    were checked, None when none were given)."""
    walk = _Walk(keys, checkpoints)
    last_id = 0
    with engine.connect() as conn:
        while True:
            chunk = conn.execute(select(audit).where(audit.c.id > last_id)
                                 .order_by(audit.c.id).limit(batch)).mappings().all()
            if not chunk:
                break
            for r in chunk:
                problem = walk.check(r)
                if problem:
                    return walk.result(r["id"], f"audit row {r['id']}: {problem}")
                last_id = r["id"]
    if walk.rows and walk.legacy == walk.rows:
        return walk.result(last_id, f"audit rows up to {last_id} have no key id and no "
                           f"keyed row follows them: the log was rewritten without the "
                           f"key, or no Railyard with audit keys has started on it yet "
                           f"(`railyard serve` seals older rows at start)")
    gone = min((cs[0] for row_id, cs in walk.expected.items() if row_id > last_id),
               default=None, key=lambda c: c.id)
    if gone is not None:
        return walk.result(gone.id, f"audit row {gone.id}: the checkpoint written at "
                           f"{gone.at} names it but the log ends at row {last_id} (its "
                           f"newest rows were deleted)")
    return walk.result(None, None)


NOT_SEALED = "it is not sealed"  # row_alone's answer for a row no seal vouches for yet
EDITED = "its content does not match its hash (the row was edited)"


def row_alone(keys: AuditKeys, r: Mapping[str, Any]) -> str | None:
    """What is wrong with row ``r`` taken alone, or None: its digest is its fields', its
    hash the formula of its kind over its own ``prev_hash``, its seal (or 0005's keyed
    hash) the key's. Only Railyard, holding the key, writes a row that passes, so a plan's
    own rows are checked without walking the chain (the executor at each start); a row
    deleted is found only by ``verify_audit``. A row written before the keys vouches for
    nothing alone (only the keyed row after the last of them seals them)."""
    if r["key_id"] is None:
        return "it was written before the audit keys"
    return _keyed_fault(keys, r, r["prev_hash"])


def _keyed_fault(keys: AuditKeys, r: Mapping[str, Any], prev: str) -> str | None:
    """What is wrong with keyed row ``r`` after a row whose hash is ``prev``, or None."""
    if r["key_id"] not in keys.keys:
        return (f"it was signed with key {r['key_id']!r}, which {keys.source} does not hold "
                f"(keep every key that signed rows)")
    digest = row_digest(r["at"], r["user"], r["action"], r["plan_id"], r["before"],
                        r["after"], r["address"], r["detail"])
    if r["digest"] != digest:
        return EDITED
    if r["seal"] is None:  # migration 0005's keyed chain, or not (yet) sealed
        if r["hash"] == keyed_hash(keys, r["key_id"], prev, digest):
            return None
        return NOT_SEALED if r["hash"] == legacy_hash(prev, digest) else EDITED
    if r["hash"] != legacy_hash(prev, digest):
        return EDITED
    if r["seal"] != seal_of(keys, r["key_id"], r["id"], r["hash"]):
        return ("its seal does not match its place in the chain (it or a row before it was "
                "edited, moved or deleted, and the links recomputed)")
    return None


class _Walk:
    """The state of one walk along the chain."""

    def __init__(self, keys: AuditKeys, checkpoints: list[Checkpoint] | None) -> None:
        self.keys, self.prev, self.rows, self.legacy = keys, GENESIS, 0, 0
        self.given = checkpoints
        self.expected: dict[int, list[Checkpoint]] = {}
        for c in checkpoints or ():
            self.expected.setdefault(c.id, []).append(c)

    def check(self, r) -> str | None:
        """What is wrong with row ``r`` given the rows before it, or None."""
        self.rows += 1
        if r["prev_hash"] != self.prev:
            return ("its prev_hash is not the hash of the row before it (a row was "
                    "deleted, inserted or reordered)")
        if r["key_id"] is None:
            if self.rows > self.legacy + 1:
                return "it has no key id but keyed rows come before it (it was added)"
            self.legacy += 1
            digest = row_digest(r["at"], r["user"], r["action"], r["plan_id"], r["before"],
                                r["after"], r["address"], r["detail"])
            if r["digest"] != digest or r["hash"] != legacy_hash(self.prev, digest):
                return EDITED
        else:
            fault = _keyed_fault(self.keys, r, self.prev)
            if fault == NOT_SEALED:
                return (f"{NOT_SEALED} (Railyard stopped between writing and sealing it, or "
                        f"it was added without the key)")
            if fault is not None:
                return fault
        mark = next((c for c in self.expected.get(r["id"], ()) if c.hash != r["hash"]), None)
        if mark is not None:
            return (f"it is not the row the checkpoint written at {mark.at} names (the "
                    f"log was rewritten from here)")
        self.prev = r["hash"]
        return None

    def result(self, broken_at: int | None, reason: str | None) -> dict:
        return {"intact": reason is None, "rows": self.rows, "broken_at": broken_at,
                "reason": reason, "legacy_rows": self.legacy,
                "checkpoints": None if self.given is None else len(self.given)}
