"""The append-only audit log: every row carries the hash of the row before it.

A row's hash covers its own fields and the previous row's hash, so editing or deleting
any row breaks the chain at the row after it, and ``verify_audit`` says where. Appends are
serialised so the chain never forks: on SQLite every write transaction already holds the
database lock (BEGIN IMMEDIATE); on PostgreSQL an advisory transaction lock is taken
before the last hash is read, and released at commit.
"""

from __future__ import annotations

import hashlib
import json
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import Connection, Engine, select, text

from backend.store.schema import audit

GENESIS = "0" * 64
_LAST_HASH = select(audit.c.hash).order_by(audit.c.id.desc()).limit(1)
_INSERT = audit.insert()
_AUDIT_LOCK = 7_351_812  # pg_advisory_xact_lock key for audit appends


def canonical_json(value: Any) -> str:
    """Sorted keys, no spaces, UTF-8 kept: the same bytes for the same value everywhere."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False,
                      allow_nan=False)


def row_hash(prev_hash: str, at: datetime, user: str, action: str, plan_id: int | None,
             before: str | None, after: str | None, address: str | None,
             detail: Any) -> str:
    """The hash a row must carry, given the hash of the row before it."""
    body = canonical_json({"prev": prev_hash, "at": at.astimezone(UTC).isoformat(), "user": user,
                           "action": action, "plan": plan_id, "before": before,
                           "after": after, "address": address, "detail": detail})
    return hashlib.sha256(body.encode()).hexdigest()


def append(conn: Connection, *, at: datetime, user: str, action: str,
           plan_id: int | None = None, before: str | None = None, after: str | None = None,
           address: str | None = None, detail: Any = None) -> int:
    """Append one row inside the caller's write transaction; returns its id."""
    if conn.dialect.name == "postgresql":
        conn.execute(text("SELECT pg_advisory_xact_lock(:k)"), {"k": _AUDIT_LOCK})
    prev = conn.execute(_LAST_HASH).scalar() or GENESIS
    digest = row_hash(prev, at, user, action, plan_id, before, after, address, detail)
    return conn.execute(_INSERT, {
        "at": at, "user": user, "action": action, "plan_id": plan_id, "before": before,
        "after": after, "address": address, "detail": detail, "prev_hash": prev,
        "hash": digest}).inserted_primary_key[0]


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
                expected = row_hash(prev, r["at"], r["user"], r["action"], r["plan_id"],
                                    r["before"], r["after"], r["address"], r["detail"])
                if r["hash"] != expected:
                    return _broken(rows, r["id"], "its content does not match its hash "
                                   "(the row was edited)")
                prev, last_id = r["hash"], r["id"]


def _broken(rows: int, row_id: int, reason: str) -> dict:
    return {"intact": False, "rows": rows, "broken_at": row_id,
            "reason": f"audit row {row_id}: {reason}"}
