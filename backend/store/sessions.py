"""Browser sessions on the server (backend/store/schema.py: sessions).

A signed cookie alone cannot be taken back: sign-out only dropped it from the browser, and
a copy of it stayed valid for its whole lifetime. Here a session is a row keyed by the
sha256 of the random id the cookie carries; deleting the row ends it for every server
process at once, since each request looks its row up (one primary-key read).
``seen_at`` is written at most once a ``touch_seconds`` per session, so a page's
callbacks read the store but do not queue on its write lock.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import delete, func, insert, select, update

from backend.store.audit import append
from backend.store.schema import sessions as s
from backend.store.store import Store


@dataclass(frozen=True)
class SessionRow:
    user: str
    password_mark: str
    address: str | None
    created_at: float
    seen_at: float


def id_hash(session_id: str) -> str:
    """What the store keeps of a cookie's id (never the id itself)."""
    return hashlib.sha256(session_id.encode()).hexdigest()


def create(store: Store, session_id: str, user: str, password_mark: str,
           address: str | None, now: float, idle_seconds: float) -> None:
    """A new signed-in session; sessions idle for longer than ``idle_seconds`` go too."""
    with store.write() as conn:
        conn.execute(delete(s).where(s.c.seen_at < now - idle_seconds))
        conn.execute(insert(s).values(id_hash=id_hash(session_id), user=user,
                                      password_mark=password_mark, address=address,
                                      created_at=now, seen_at=now))


def lookup(store: Store, session_id: str) -> SessionRow | None:
    """The session's row, or None when it was ended (or never existed)."""
    with store.read() as conn:
        row = conn.execute(select(s.c.user, s.c.password_mark, s.c.address, s.c.created_at,
                                  s.c.seen_at).where(s.c.id_hash == id_hash(session_id))).first()
    return SessionRow(*row) if row else None


def touch(store: Store, session_id: str, now: float) -> None:
    """The session was used ``now`` (it is idle from here)."""
    with store.write() as conn:
        conn.execute(update(s).where(s.c.id_hash == id_hash(session_id)).values(seen_at=now))


def end(store: Store, session_id: str) -> bool:
    """End one session (sign-out, or found expired); False if it had ended already."""
    with store.write() as conn:
        return conn.execute(delete(s).where(s.c.id_hash == id_hash(session_id))).rowcount > 0


def active(store: Store, now: float, idle_seconds: float, lifetime_seconds: float) -> list[dict]:
    """Sessions still usable now, per user: how many, since when, last seen."""
    with store.read() as conn:
        rows = conn.execute(
            select(s.c.user, func.count(), func.min(s.c.created_at), func.max(s.c.seen_at))
            .where(s.c.seen_at >= now - idle_seconds,
                   s.c.created_at >= now - lifetime_seconds)
            .group_by(s.c.user).order_by(s.c.user)).all()
    return [{"user": user, "sessions": n, "oldest_created_at": first, "last_seen_at": last}
            for user, n, first, last in rows]


def revoke_user(store: Store, user: str, *, by: str, address: str | None, reason: str,
                now_at: datetime) -> int:
    """End every session of ``user``, with an audit row naming who did it and why
    (``now_at``: the aware UTC datetime the audit log records). Returns how many ended."""
    with store.write() as conn:
        ended = conn.execute(delete(s).where(s.c.user == user)).rowcount
        append(conn, at=now_at, user=by, action="revoke_sessions", address=address,
               detail={"of": user, "sessions": ended, "reason": reason})
    return ended
