"""Browser sessions on the server (backend/store/schema.py: sessions).

A signed cookie alone cannot be taken back: sign-out only dropped it from the browser, and
a copy of it stayed valid for its whole lifetime. Here a session is a row keyed by the
sha256 of the random id the cookie carries; deleting the row ends it for every server
process at once. ``seen_at`` is written at most once a minute per session, so a page's
callbacks do not queue on the store's write lock.

Looking the row up costs about 0.15 ms on SQLite (a transaction through the pool), on
every request of every page. On a SQLite store, whose servers share one machine, a
process keeps the rows it looked up (``Lookups``) until the file beside the database
that every ending of a session rewrites (``ENDED_SUFFIX``) changes: reading a few bytes
of it per request instead of a query, and a session ended by any process, or by
`railyard auth revoke`, fails at the next request everywhere. On PostgreSQL, which
servers on several machines share, every request reads the row.
"""

from __future__ import annotations

import hashlib
import os
import secrets
import threading
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from sqlalchemy import delete, func, insert, select, update

from backend.store.audit import append
from backend.store.schema import sessions as s
from backend.store.store import Store

ENDED_SUFFIX = ".sessions-ended"  # beside a SQLite store's file
LOOKUPS_KEPT = 10_000  # rows a process keeps at most (then it starts again)


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
    """A new signed-in session, audited; sessions idle for longer than ``idle_seconds``
    go too."""
    with store.write() as conn:
        conn.execute(delete(s).where(s.c.seen_at < now - idle_seconds))
        conn.execute(insert(s).values(id_hash=id_hash(session_id), user=user,
                                      password_mark=password_mark, address=address,
                                      created_at=now, seen_at=now))
        append(conn, at=_utc(now), user=user, action="sign_in", address=address)


def sign_in_failed(store: Store, user: str, address: str | None, now: float, *,
                   via: str, locked_out: bool) -> None:
    """A wrong password, audited (``via``: the sign-in page or the API; ``locked_out``:
    this failure made the address wait). The rate limit bounds how many a flood writes."""
    with store.write() as conn:
        append(conn, at=_utc(now), user=user, action="sign_in_failed", address=address,
               detail={"via": via, "locked_out": locked_out})


def lookup(store: Store, session_id: str) -> SessionRow | None:
    """The session's row, or None when it was ended (or never existed)."""
    with store.read() as conn:
        row = conn.execute(select(s.c.user, s.c.password_mark, s.c.address, s.c.created_at,
                                  s.c.seen_at).where(s.c.id_hash == id_hash(session_id))).first()
    return SessionRow(*row) if row else None


class Lookups:
    """Session rows this process looked up, kept while no session ended anywhere (only
    on a SQLite store: elsewhere every call reads the store)."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self._signal = ended_signal(store)
        self._rows: dict[str, SessionRow | None] = {}
        self._seen = b""  # the signal's content the kept rows are valid for
        self._lock = threading.Lock()

    def lookup(self, session_id: str, fresh: bool = False) -> SessionRow | None:
        """The session's row (None: ended); ``fresh`` reads the store in any case."""
        if self._signal is None:
            return lookup(self.store, session_id)
        now_seen = _read(self._signal)
        with self._lock:
            if now_seen != self._seen:
                self._rows.clear()
                self._seen = now_seen
            if not fresh and session_id in self._rows:
                return self._rows[session_id]
        row = lookup(self.store, session_id)
        with self._lock:
            # kept only if no session ended since the signal was read: a row read just
            # before another process ended it must not outlive the change
            if self._seen == now_seen:
                if len(self._rows) >= LOOKUPS_KEPT:
                    self._rows.clear()
                self._rows[session_id] = row
        return row

    def touched(self, session_id: str, row: SessionRow) -> None:
        """This process wrote the session's last use (its kept row says so too)."""
        with self._lock:
            if session_id in self._rows:
                self._rows[session_id] = row


def ended_signal(store: Store) -> Path | None:
    """The file every ending of a session rewrites, for a SQLite store in a file."""
    database = store.engine.url.database
    if store.engine.dialect.name != "sqlite" or not database or database == ":memory:":
        return None
    return Path(f"{database}{ENDED_SUFFIX}")


def _signal_ended(store: Store) -> None:
    """Sessions ended (after the commit): processes drop the rows they kept."""
    path = ended_signal(store)
    if path is None:
        return
    temporary = path.with_name(f"{path.name}.{os.getpid()}.{threading.get_ident()}")
    temporary.write_bytes(secrets.token_bytes(16))
    os.replace(temporary, path)


def _read(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except FileNotFoundError:
        return b""


def touch(store: Store, session_id: str, now: float) -> None:
    """The session was used ``now`` (it is idle from here)."""
    with store.write() as conn:
        conn.execute(update(s).where(s.c.id_hash == id_hash(session_id)).values(seen_at=now))


def end(store: Store, session_id: str) -> bool:
    """End one session found expired; False if it had ended already."""
    with store.write() as conn:
        ended = conn.execute(delete(s).where(s.c.id_hash == id_hash(session_id))).rowcount
    _signal_ended(store)
    return ended > 0


def sign_out(store: Store, session_id: str, address: str | None, now: float) -> bool:
    """End the session its user signed out of, audited; False if it had ended already."""
    with store.write() as conn:
        user = conn.execute(delete(s).where(s.c.id_hash == id_hash(session_id))
                            .returning(s.c.user)).scalar()
        if user is not None:
            append(conn, at=_utc(now), user=user, action="sign_out", address=address)
    _signal_ended(store)
    return user is not None


def _utc(epoch: float) -> datetime:
    return datetime.fromtimestamp(epoch, UTC)


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


def has_sessions(store: Store, user: str) -> bool:
    """Whether ``user`` holds a session now."""
    with store.read() as conn:
        return conn.execute(select(s.c.user).where(s.c.user == user).limit(1)).first() \
            is not None


def revoke_user(store: Store, user: str, *, by: str, address: str | None, reason: str,
                now_at: datetime) -> int:
    """End every session of ``user``, with an audit row naming who did it and why
    (``now_at``: the aware UTC datetime the audit log records). Returns how many ended."""
    with store.write() as conn:
        ended = conn.execute(delete(s).where(s.c.user == user)).rowcount
        append(conn, at=now_at, user=by, action="revoke_sessions", address=address,
               detail={"of": user, "sessions": ended, "reason": reason})
    _signal_ended(store)
    return ended
