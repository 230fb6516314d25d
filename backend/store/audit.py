"""The append-only audit log: every row carries the hash of the row before it.

A row's ``digest`` is the sha256 of its own fields (canonical JSON); its ``hash`` is the
sha256 of the previous row's hash followed by its digest. Editing a row breaks it at
itself, deleting or inserting one breaks the chain at the row after it, and
``verify_audit`` says where. Appends are serialised so the chain never forks: on SQLite
every write transaction already holds the database lock (BEGIN IMMEDIATE) and the hash is
chained here; on PostgreSQL a trigger (migration 0001) takes an advisory transaction lock,
reads the last hash, assigns the id and chains the row inside the INSERT itself, so the
lock is held for one statement and the commit, not for client round trips.
"""

from __future__ import annotations

import hashlib
import json
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import Connection, Engine, select

from backend.store.schema import audit

GENESIS = "0" * 64
AUDIT_LOCK = 7_351_812  # pg_advisory_xact_lock key the PostgreSQL trigger takes
_LAST_HASH = select(audit.c.hash).order_by(audit.c.id.desc()).limit(1)
_INSERT = audit.insert()


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


def chain_hash(prev_hash: str, digest: str) -> str:
    """A row's hash: the previous row's hash followed by this row's digest (the
    PostgreSQL trigger computes the same: sha256(prev_hash || digest) in hex)."""
    return hashlib.sha256((prev_hash + digest).encode()).hexdigest()


def append(conn: Connection, *, at: datetime, user: str, action: str,
           plan_id: int | None = None, before: str | None = None, after: str | None = None,
           address: str | None = None, detail: Any = None) -> int:
    """Append one row inside the caller's write transaction; returns its id."""
    digest = row_digest(at, user, action, plan_id, before, after, address, detail)
    row = {"at": at, "user": user, "action": action, "plan_id": plan_id, "before": before,
           "after": after, "address": address, "detail": detail, "digest": digest}
    if conn.dialect.name == "postgresql":  # the trigger chains it
        row["prev_hash"] = row["hash"] = ""
    else:
        prev = conn.execute(_LAST_HASH).scalar() or GENESIS
        row["prev_hash"], row["hash"] = prev, chain_hash(prev, digest)
    return conn.execute(_INSERT, row).inserted_primary_key[0]


def verify_audit(engine: Engine, batch: int = 5000) -> dict:
    """Walk the chain in id order: {"intact", "rows", "broken_at", "reason"}."""
    prev, rows, last_id = GENESIS, 0, 0
    with engine.connect() as conn:
        while True:
            chunk = conn.execute(select(audit).where(audit.c.id > last_id)
                                 .order_by(audit.c.id).limit(batch)).mappings().all()
            if not chunk:
                return {"intact": True, "rows": rows, "broken_at": None, "reason": None}
            for r in chunk:
                rows += 1
                if r["prev_hash"] != prev:
                    return _broken(rows, r["id"], "its prev_hash is not the hash of the row "
                                   "before it (a row was deleted, inserted or reordered)")
                digest = row_digest(r["at"], r["user"], r["action"], r["plan_id"],
                                    r["before"], r["after"], r["address"], r["detail"])
                if r["digest"] != digest or r["hash"] != chain_hash(prev, digest):
                    return _broken(rows, r["id"], "its content does not match its hash "
                                   "(the row was edited)")
                prev, last_id = r["hash"], r["id"]


def _broken(rows: int, row_id: int, reason: str) -> dict:
    return {"intact": False, "rows": rows, "broken_at": row_id,
            "reason": f"audit row {row_id}: {reason}"}
