"""What someone who can write the plan store, but not read the audit key, can do to the
audit log with SQL and the public formulas (the security probe of issue 27)."""

from __future__ import annotations

import hashlib

from sqlalchemy import select, update

from backend.store.audit import GENESIS, canonical_json
from backend.store.schema import audit


def public_digest(r) -> str:
    """What anyone can compute from a row: the digest formula is in the source."""
    body = canonical_json({"at": r["at"].isoformat(), "user": r["user"], "action": r["action"],
                           "plan": r["plan_id"], "before": r["before"], "after": r["after"],
                           "address": r["address"], "detail": r["detail"]})
    return hashlib.sha256(body.encode()).hexdigest()


def rechain_with_public_formulas(store, drop_key_ids: bool) -> None:
    """The probe's re-chain: every digest and hash recomputed as sha256 from the start
    (the only chain one can compute without the key), with or without the key ids."""
    with store.write() as conn:
        prev = GENESIS
        for r in conn.execute(select(audit).order_by(audit.c.id)).mappings().all():
            digest = public_digest(r)
            row_hash = hashlib.sha256((prev + digest).encode()).hexdigest()
            values = {"digest": digest, "prev_hash": prev, "hash": row_hash}
            if drop_key_ids:
                values["key_id"] = None
            conn.execute(update(audit).where(audit.c.id == r["id"]).values(**values))
            prev = row_hash


def append_forged_approval(store, plan_id: int, key_id: str | None) -> int:
    """An approval by mallory chained after the newest row as the public formula would
    chain it, signed with ``key_id`` in name only; its id. (On PostgreSQL the trigger
    numbers and links the INSERT; the UPDATE after it sets what the attacker wants.)"""
    with store.write() as conn:
        last = conn.execute(select(audit).order_by(audit.c.id.desc())).mappings().first()
        forged = {"at": last["at"], "user": "mallory", "action": "approve",
                  "plan_id": plan_id, "before": "proposed", "after": "approved",
                  "address": "10.6.6.6", "detail": None}
        digest = public_digest(forged)
        row_hash = hashlib.sha256((last["hash"] + digest).encode()).hexdigest()
        row_id = conn.execute(audit.insert().values(
            **forged, digest=digest, prev_hash=last["hash"], hash=row_hash,
            key_id=key_id or "x").returning(audit.c.id)).scalar_one()
        conn.execute(update(audit).where(audit.c.id == row_id).values(
            id=last["id"] + 1, prev_hash=last["hash"], hash=row_hash, key_id=key_id))
        return last["id"] + 1
