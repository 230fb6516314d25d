"""The plan store: an open database plus the queries the plan services need.

Services (backend/services/plans.py) hold every rule; this module only reads and writes
rows. A state change is one conditional UPDATE on (id, state, version), so of two
concurrent decisions on one plan exactly one changes a row; the caller refuses the other.
"""

from __future__ import annotations

import fcntl
import logging
import os
import threading
from collections import deque
from collections.abc import Callable, Iterator, Mapping
from contextlib import ExitStack, contextmanager
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import Connection, Engine, bindparam, func, select, text
from sqlalchemy.engine import make_url
from sqlalchemy.exc import DatabaseError, OperationalError, SQLAlchemyError

from backend.errors import BadInput, Unavailable, shown_url
from backend.store.approvals import Policies, Progress, Requirement
from backend.store.audit import (
    CHECKPOINTS_ACTION,
    HEAD,
    KEYS_OPTION,
    SEAL_ACTION,
    UNSEALED,
    append,
    linked,
    needs_seal,
    row_digest,
    seal_committed,
    verify_audit,
)
from backend.store.audit_checkpoints import append_checkpoint, read_checkpoints
from backend.store.audit_keys import DEFAULT_KEY_FILE, AuditKeys, load_keys
from backend.store.engine import DEFAULT_URL, json_dumps, make_engine, migrate, writer
from backend.store.schema import audit, decisions, plans

DEFAULT_EXPIRY_HOURS = 24.0
# a decision's comment as its audit row keeps it: the service refuses a longer one before
# it reaches the decision row (backend/services/plans.py MAX_COMMENT_CHARS is this)
AUDIT_COMMENT_CHARS = 2000
log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Decision:
    user: str
    decision: str  # approve | reject
    comment: str
    sha256: str | None
    at: datetime
    role: str | None = None  # the user's role when deciding (None: decided before 0007)

    def to_dict(self) -> dict:
        return {**asdict(self), "at": self.at.isoformat()}


@dataclass(frozen=True)
class Plan:
    """One stored plan. In lists (``query_plans``) content and basis are None: get it."""

    id: int
    kind: str
    cluster: str
    title: str
    author: str
    created_at: datetime
    expires_at: datetime
    updated_at: datetime
    state: str
    content: dict | None
    sha256: str
    basis: dict | None
    preview: dict
    throttle: int | None
    cancel_requested_at: datetime | None
    version: int
    throttle_mode: dict | None = None  # {"mode": "adaptive", "floor"}; None: fixed
    decisions: tuple[Decision, ...] = field(default=())
    # the approval requirement stored at proposal (backend/store/approvals.py
    # Requirement.to_dict); None: proposed before policies, one approval as always
    approval: dict | None = None

    def to_dict(self) -> dict:
        """JSON-ready, times as ISO 8601 UTC."""
        out = {k: getattr(self, k) for k in (
            "id", "kind", "cluster", "title", "author", "state", "content", "sha256", "basis",
            "preview", "throttle", "throttle_mode", "version", "approval")}
        for k in ("created_at", "expires_at", "updated_at", "cancel_requested_at"):
            value = getattr(self, k)
            out[k] = None if value is None else value.isoformat()
        out["decisions"] = [d.to_dict() for d in self.decisions]
        return out

    def progress(self) -> Progress:
        """Its stored approval requirement and its approvals so far (approvals.py)."""
        approvals = [d for d in self.decisions if d.decision == "approve"]
        return Progress(Requirement.from_dict(self.approval), tuple(d.user for d in approvals),
                        tuple(d.role or "" for d in approvals))


@dataclass(frozen=True)
class AuditEntry:
    id: int
    at: datetime
    user: str
    action: str
    plan_id: int | None
    before: str | None
    after: str | None
    address: str | None
    detail: Any
    digest: str
    prev_hash: str
    hash: str
    key_id: str | None  # the audit key that signed it; None: written before the keys
    seal: str | None = None  # HMAC of id and hash (audit.seal_of); None: 0005's rows

    def to_dict(self) -> dict:
        return {**asdict(self), "at": self.at.isoformat()}


class WriterQueue:
    """A lock taken in arrival order: each writer waits for those ahead of it only (a
    plain lock lets the thread that just released it take it again before a woken
    waiter runs, so some writers would wait many turns)."""

    def __init__(self) -> None:
        self._mutex = threading.Lock()
        self._waiting: deque[threading.Lock] = deque()
        self._held = False

    def __enter__(self) -> WriterQueue:
        with self._mutex:
            if not self._held:
                self._held = True
                return self
            turn = threading.Lock()
            turn.acquire()
            self._waiting.append(turn)
        turn.acquire()  # the holder hands the queue over by releasing it
        return self

    def __exit__(self, *_exc: object) -> None:
        with self._mutex:
            if self._waiting:
                self._waiting.popleft().release()  # still held: now by the next in line
            else:
                self._held = False


class FileLock:
    """An exclusive flock on a file: the kernel wakes the next process the moment it is
    released. Held by one thread of a process at a time (a WriterQueue in front)."""

    def __init__(self, path: str) -> None:
        self._fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)

    def __enter__(self) -> FileLock:
        fcntl.flock(self._fd, fcntl.LOCK_EX)
        return self

    def __exit__(self, *_exc: object) -> None:
        fcntl.flock(self._fd, fcntl.LOCK_UN)

    def close(self) -> None:
        os.close(self._fd)


class Store:
    """An open plan store (thread-safe: share one per process), with the plan settings
    its plans are stored under: their expiry and the approval policy of each cluster."""

    def __init__(self, engine: Engine, keys: AuditKeys,
                 expiry_hours: float = DEFAULT_EXPIRY_HOURS,
                 checkpoints: str | None = None, approval: Policies | None = None) -> None:
        self.engine = engine
        self.expiry_hours = expiry_hours
        self.approval = approval or Policies()
        self.keys, self.checkpoints = keys, checkpoints  # audit keys; checkpoint file
        self._writer = writer(engine).execution_options(**{KEYS_OPTION: keys})
        self._locks: tuple = ()
        if engine.dialect.name == "sqlite":
            # SQLite has one writer at a time: writers queue here, in turn within this
            # process and on a lock file across `railyard serve`'s worker processes,
            # instead of sleeping in SQLite's busy handler, whose back-off (up to 100 ms
            # a try) was the tail latency of concurrent approvals
            self._locks = (WriterQueue(),)
            db = engine.url.database
            if db and db != ":memory:":
                self._locks += (FileLock(f"{db}.writer-lock"),)
        # PostgreSQL at READ COMMITTED gives each statement its own snapshot inside a
        # transaction too, so reads (and writes that are one statement) skip BEGIN and
        # COMMIT: two round trips fewer
        self.postgres = engine.dialect.name == "postgresql"
        self._autocommit = engine.execution_options(isolation_level="AUTOCOMMIT") \
            if self.postgres else None
        self._one_statement = self._writer.execution_options(isolation_level="AUTOCOMMIT") \
            if self.postgres else None

    @contextmanager
    def read(self) -> Iterator[Connection]:
        """Reads that never take SQLite's write lock (one transaction on SQLite, one
        snapshot per statement on PostgreSQL, as at its READ COMMITTED)."""
        if self._autocommit is not None:
            with self._autocommit.connect() as conn:
                yield conn
            return
        with self.engine.begin() as conn:
            yield conn

    @contextmanager
    def write(self, one_statement: bool = False) -> Iterator[Connection]:
        """Every write to the store, of plans, audit rows and executions alike: on SQLite
        the writers queue in turn (in this process and across processes), then a write
        transaction (BEGIN IMMEDIATE), committed on exit and rolled back on an exception;
        once committed, the audit chain's new end goes to the checkpoint file.
        ``one_statement``: the caller runs a single statement, which PostgreSQL runs as a
        transaction of its own, so it is sent without BEGIN and COMMIT (two round trips
        fewer; on SQLite nothing changes)."""
        engine = self._one_statement if one_statement and self._one_statement else None
        with ExitStack() as held:
            for lock in self._locks:
                held.enter_context(lock)
            with (engine.connect() if engine is not None else self._writer.begin()) as conn:
                conn.info.pop(HEAD, None)
                conn.info.pop(UNSEALED, None)
                yield conn
                head = conn.info.pop(HEAD, None)
                unsealed = conn.info.pop(UNSEALED, None)
        if unsealed:  # committed, the chain's lock released: seal the rows it linked
            try:
                seal_committed(self._autocommit, self.keys, unsealed)
            except SQLAlchemyError as e:  # the write stands; verify names the rows
                log.error("audit rows %s committed but not sealed: %s", sorted(unsealed),
                          str(e).splitlines()[0])
        if head is not None and self.checkpoints:  # committed: the chain's new end
            try:
                append_checkpoint(self.checkpoints, self.keys, *head)
            except OSError as e:  # the write stands; the next checkpoint covers it too
                log.error("audit checkpoint for row %s not written to %s: %s", head[0],
                          self.checkpoints, e.strerror or e)

    def record(self, at: datetime, audit_row: dict,
               also: Callable[[Connection], bool] | None = None) -> bool:
        """An event that changes no plan's state (an executor step, a throttle set), and
        with ``also`` the change it records, in one transaction: no change stands without
        its audit row, nor the row without its change (a full or locked store, a crash
        between two writes). The row is written only when ``also`` returns True (its
        conditional update matched); whether it was."""
        with self.write() as conn:
            if also is not None and not also(conn):
                return False
            append(conn, at=at, **audit_row)
            return True

    def transition(self, plan_id: int, expect_state: str, expect_version: int, *,
                   state: str, at: datetime, audit_row: dict,
                   decision: dict | None = None, cancel_requested: bool = False,
                   expires_at: datetime | None = None,
                   also: Callable[[Connection], None] | None = None) -> bool:
        """Every change of a plan's state (and a cancel request, which keeps the state):
        the conditional update, its decision and audit rows, all or nothing; False when
        the plan is no longer at (``expect_state``, ``expect_version``). ``expires_at``:
        the plan's new expiry (an approval restarts it). ``also``: writes that stand or
        fall with the change, in its transaction (an execution's end beside its plan's,
        so no reader sees one ended without the other). On PostgreSQL the change is one
        statement, and the audit row's seal follows the commit (``write``). A decision's
        comment (approve, reject) is in its audit row's detail too (``with_comment``)."""
        audit_row = with_comment(audit_row, decision)
        extra = {"cancel_requested_at": at} if cancel_requested else {}
        if expires_at is not None:
            extra["expires_at"] = expires_at
        with self.write(one_statement=also is None) as conn:
            if self.postgres:
                params = _pg_transition_params(plan_id, expect_state, expect_version, state,
                                               at, audit_row, decision, cancel_requested,
                                               self.keys.current, expires_at)
                row = conn.execute(_PG_TRANSITION, params).first()
                if row is None:
                    return False
                linked(conn, row.id, row.hash, at)
            else:
                if not update_plan(conn, plan_id, expect_state, expect_version, state=state,
                                   updated_at=at, **extra):
                    return False
                if decision is not None:
                    insert_decision(conn, plan_id, at=at, **decision)
                append(conn, at=at, plan_id=plan_id, **audit_row)
            if also is not None:
                also(conn)
            return True

    def verify_audit(self, checkpoints: str | None = None) -> dict:
        """The chain checked with the key ring, and against the checkpoints in
        ``checkpoints`` (a file or a log sink's export), else in the store's own file. A
        log with rows and a checkpoints file that holds none (missing, or empty) is not
        intact: its newest rows could be gone, and nothing would show it."""
        path = checkpoints or self.checkpoints
        marks, problem = read_checkpoints(path, self.keys) if path else (None, None)
        result = verify_audit(self.engine, self.keys, marks)
        if path and not marks and not problem and result["rows"]:
            what = "is empty" if os.path.exists(path) else "does not exist"
            rows = result["rows"]
            problem = (f"{path} {what}, but the log has {rows} row{'s' * (rows != 1)}: "
                       f"nothing shows its newest rows were not deleted (a checkpoint is "
                       f"written after each audit row once store.audit_checkpoints is set)")
        if problem and result["intact"]:
            result.update(intact=False, reason=problem)
        return result

    def seal_legacy(self, now: datetime) -> None:
        """Chain a keyed row after rows written before the keys (`railyard serve` does at
        start): its HMAC covers their last hash, so none of them can change unseen, and
        verify_audit refuses a log of unkeyed rows that nothing seals."""
        with self.write() as conn:
            if needs_seal(conn):
                append(conn, at=now, user="railyard", action=SEAL_ACTION,
                       detail={"signed_by": self.keys.current})

    def start_checkpoints(self, now: datetime) -> bool:
        """When ``audit_checkpoints`` names a file without a checkpoint in a store that has
        audit rows (set after the first start, or a new file after rotation), one audit
        row says checkpoints start here, and its write the first checkpoint: without it
        `audit verify` reads "not intact" until someone's next write. The row keeps the
        start visible in the log itself (a second one means the file was replaced). A
        file holding a line that is not a genuine checkpoint is left for verify to
        report. True when the row was written."""
        if not self.checkpoints:
            return False
        try:
            marks, problem = read_checkpoints(self.checkpoints, self.keys)
        except BadInput as e:  # unreadable: verify and the next write's log say so
            log.error("%s", e)
            return False
        if marks or problem:
            return False
        with self.write() as conn:
            if conn.execute(select(audit.c.id).limit(1)).first() is None:
                return False  # an empty log needs no checkpoint yet
            append(conn, at=now, user="railyard", action=CHECKPOINTS_ACTION,
                   detail={"file": self.checkpoints})
        return True

    def close(self) -> None:
        self.engine.dispose()
        for lock in self._locks:
            if isinstance(lock, FileLock):
                lock.close()


def open_store(url: str = DEFAULT_URL, expiry_hours: float = DEFAULT_EXPIRY_HOURS, *,
               key_file: str = DEFAULT_KEY_FILE, checkpoints: str | None = None,
               keys: AuditKeys | None = None, approval: Policies | None = None) -> Store:
    """Open (creating and migrating as needed) the store at ``url``, its audit rows signed
    with ``keys`` (else RAILYARD_AUDIT_KEYS or ``key_file``, created if missing) and
    checkpointed to the file ``checkpoints``, new plans' approval requirements from
    ``approval`` (else one approval by someone other than the author); Unavailable when
    the database does not answer or refuses, BadInput when a SQLite file is not a
    database."""
    keys = keys or load_keys(key_file)
    engine = make_engine(url)
    try:
        migrate(engine)
    except DatabaseError as e:
        engine.dispose()
        detail = str(e.orig).strip().splitlines()[0] if e.orig else str(e)
        if engine.dialect.name == "sqlite" and not isinstance(e, OperationalError):
            raise BadInput(f"{_safe(url)}: not a SQLite database ({detail})") from None
        raise Unavailable("Plan store", f"{_safe(url)}: {detail}") from None
    return Store(engine, keys, expiry_hours, checkpoints, approval)


def _safe(url: str) -> str:
    """The URL without its password, in its user part or a query parameter such as
    ``?password=`` (never in logs or messages)."""
    return shown_url(make_url(url).render_as_string(hide_password=True))


_LIST_COLUMNS = [c for c in plans.c if c.name not in ("content", "basis")]


def insert_plan(conn: Connection, **values: Any) -> int:
    return conn.execute(plans.insert().values(**values)).inserted_primary_key[0]


# built once: statement construction costs more than running them on the approve path
_PLAN_BY_ID = {  # (with content, with basis): the plan's row
    (content, basis): select(*[c for c in plans.c if (content or c.name != "content")
                               and (basis or c.name != "basis")])
    .where(plans.c.id == bindparam("plan_id"))
    for content, basis in ((True, True), (False, True), (False, False))}
_DECISIONS_OF = select(decisions).where(decisions.c.plan_id == bindparam("plan_id")) \
    .order_by(decisions.c.id)
_DECISIONS_OF_PLANS = select(decisions).where(
    decisions.c.plan_id.in_(bindparam("plan_ids", expanding=True))).order_by(decisions.c.id)
_INSERT_DECISION = decisions.insert()


def load_plan(conn: Connection, plan_id: int, content: bool = True,
              basis: bool = True) -> Plan | None:
    """The plan with its decisions, or None. Without ``content`` (or ``basis``) that
    column is None and not read: a 100k-move plan's is megabytes of JSON to decode."""
    row = conn.execute(_PLAN_BY_ID[content, basis], {"plan_id": plan_id}).mappings().first()
    if row is None:
        return None
    row = {"content": None, "basis": None, **row}
    if not _decided(row):
        return Plan(**row)
    ds = conn.execute(_DECISIONS_OF, {"plan_id": plan_id}).mappings().all()
    return Plan(**row, decisions=tuple(_decision(d) for d in ds))


def _decided(row: Mapping[str, Any]) -> bool:
    """Whether the plan may have decisions: a proposed plan at its first version has none
    (each decision bumps the version: an approval that leaves it proposed too)."""
    return row["state"] != "proposed" or row["version"] > 1


def _decision(d: Mapping[str, Any]) -> Decision:
    return Decision(d["user"], d["decision"], d["comment"], d["sha256"], d["at"], d["role"])


def plan_start_terms(conn: Connection, plan_id: int) -> tuple[float | None, bool]:
    """A reassignment's start time and whether it may run outside the execution windows,
    from its content (two fields: a 100k-move plan's content is megabytes of JSON)."""
    start, outside = conn.execute(select(plans.c.content["not_before"].as_float(),
                                         plans.c.content["outside_windows"].as_boolean())
                                  .where(plans.c.id == plan_id)).one()
    return (None if start is None else float(start)), outside is True


def query_plans(conn: Connection, cluster: str | None = None, state: str | None = None,
                limit: int = 500) -> list[Plan]:
    """Newest first, without content and basis; a proposed plan with its approvals so far
    (what its approval status counts), in one more query when any has some."""
    q = select(*_LIST_COLUMNS).order_by(plans.c.id.desc()).limit(limit)
    if cluster is not None:
        q = q.where(plans.c.cluster == cluster)
    if state is not None:
        q = q.where(plans.c.state == state)
    rows = conn.execute(q).mappings().all()
    partly = [r["id"] for r in rows if r["state"] == "proposed" and _decided(r)]
    made: dict[int, tuple[Decision, ...]] = {}
    if partly:
        for d in conn.execute(_DECISIONS_OF_PLANS, {"plan_ids": partly}).mappings():
            made[d["plan_id"]] = (*made.get(d["plan_id"], ()), _decision(d))
    return [Plan(**r, content=None, basis=None, decisions=made.get(r["id"], ()))
            for r in rows]


def plan_titles(conn: Connection, ids: set[int]) -> dict[int, str]:
    """The title of each plan in ``ids`` (however old)."""
    q = select(plans.c.id, plans.c.title).where(plans.c.id.in_(sorted(ids)))
    return {row.id: row.title for row in conn.execute(q)}


def due_plans(conn: Connection, states: frozenset[str],
              now: datetime) -> list[tuple[int, str, int]]:
    """(id, state, version) of plans in ``states`` whose expiry has passed."""
    q = select(plans.c.id, plans.c.state, plans.c.version).where(
        plans.c.state.in_(sorted(states)), plans.c.expires_at <= now).order_by(plans.c.id)
    return [tuple(r) for r in conn.execute(q)]


def with_comment(audit_row: dict, decision: dict | None) -> dict:
    """``audit_row`` with the decision's comment in its detail (``{"comment": ...}`` beside
    what the detail held): who reads the audit log sees why someone approved or rejected,
    not only the decision row. Only the comment, the user's own text as the decision row
    stores it (a longer one, which the service refuses, cut to AUDIT_COMMENT_CHARS); no
    comment, the row as it was."""
    comment = (decision or {}).get("comment")
    if not comment:
        return audit_row
    if len(comment) > AUDIT_COMMENT_CHARS:
        comment = comment[:AUDIT_COMMENT_CHARS - 1] + "…"
    detail = audit_row.get("detail")
    detail = {} if detail is None else detail if isinstance(detail, dict) else {"detail": detail}
    return {**audit_row, "detail": {**detail, "comment": comment}}


# the audit trigger (migration 0006) numbers and links the row inside the statement, and
# Store.write seals it after the commit; decisions and audit rows are written only when
# the update matched (they select from it)
_PG_TRANSITION = text("""
WITH u AS (
    UPDATE plans SET state = :state, version = :version, updated_at = :at,
        cancel_requested_at = CASE WHEN :cancel THEN :at ELSE cancel_requested_at END,
        expires_at = CASE WHEN :renew THEN :expires ELSE expires_at END
    WHERE id = :p_id AND state = :p_state AND version = :p_version RETURNING id),
d AS (
    INSERT INTO decisions (plan_id, "user", decision, comment, sha256, at, role)
    SELECT id, :d_user, :d_decision, :d_comment, :d_sha256, :at, :d_role FROM u
    WHERE :decided),
a AS (
    INSERT INTO audit (at, "user", action, plan_id, before, after, address, detail, digest,
                       prev_hash, hash, key_id)
    SELECT :at, :a_user, :a_action, id, :a_before, :a_after, :a_address,
           CAST(:a_detail AS json), :a_digest, '', '', :a_key_id FROM u
    RETURNING id, hash)
SELECT id, hash FROM a
""")


def _pg_transition_params(plan_id: int, expect_state: str, expect_version: int, state: str,
                          at: datetime, audit_row: dict, decision: dict | None,
                          cancel_requested: bool, key_id: str,
                          expires_at: datetime | None = None) -> dict:
    """_PG_TRANSITION's parameters, each stored as the two-statement path stores it."""
    a, d = audit_row, decision or {}
    at = at.astimezone(UTC)
    return {"p_id": plan_id, "p_state": expect_state, "p_version": expect_version,
            "state": state, "version": expect_version + 1, "at": at,
            "renew": expires_at is not None,
            "expires": at if expires_at is None else expires_at.astimezone(UTC),
            "cancel": cancel_requested, "decided": decision is not None, "d_user": d.get("user"),
            "d_decision": d.get("decision"), "d_comment": d.get("comment"),
            "d_sha256": d.get("sha256"), "d_role": d.get("role"), "a_user": a["user"],
            "a_action": a["action"],
            "a_before": a.get("before"), "a_after": a.get("after"),
            "a_address": a.get("address"), "a_detail": json_dumps(a.get("detail")),
            "a_key_id": key_id,
            "a_digest": row_digest(at, a["user"], a["action"], plan_id, a.get("before"),
                                   a.get("after"), a.get("address"), a.get("detail"))}


_UPDATE_IF_UNCHANGED = plans.update().where(
    plans.c.id == bindparam("p_id"), plans.c.state == bindparam("p_state"),
    plans.c.version == bindparam("p_version"))


def update_plan(conn: Connection, plan_id: int, expect_state: str, expect_version: int,
                **values: Any) -> bool:
    """Change the plan only if it is still in ``expect_state`` at ``expect_version`` (and
    bump the version); False when someone else changed it first."""
    result = conn.execute(_UPDATE_IF_UNCHANGED, {
        "p_id": plan_id, "p_state": expect_state, "p_version": expect_version,
        "version": expect_version + 1, **values})
    return result.rowcount == 1


def insert_decision(conn: Connection, plan_id: int, user: str, decision: str, comment: str,
                    sha256: str | None, at: datetime, role: str | None = None) -> None:
    conn.execute(_INSERT_DECISION, {"plan_id": plan_id, "user": user, "decision": decision,
                                    "comment": comment, "sha256": sha256, "at": at,
                                    "role": role})


def query_audit(conn: Connection, plan: int | None = None, user: str | None = None,
                since: datetime | None = None, limit: int = 1000) -> list[AuditEntry]:
    """Oldest first among the newest ``limit`` matching rows."""
    q = select(audit).order_by(audit.c.id.desc()).limit(limit)
    if plan is not None:
        q = q.where(audit.c.plan_id == plan)
    if user is not None:
        q = q.where(audit.c.user == user)
    if since is not None:
        q = q.where(audit.c.at >= since)
    return [AuditEntry(**r) for r in reversed(conn.execute(q).mappings().all())]


@dataclass(frozen=True)
class AuditPage:
    """One page of the audit log: ``entries`` in the asked order, ``total`` rows that
    match the filters, and ``next``, the id to continue after (None: this was the last)."""

    entries: list[AuditEntry]
    total: int
    next: int | None


def audit_page(conn: Connection, *, plan: int | None = None, user: str | None = None,
               since: datetime | None = None, until: datetime | None = None,
               cluster: str | None = None, actions: tuple[str, ...] | None = None,
               after: int | None = None, newest_first: bool = False,
               limit: int = 1000) -> AuditPage:
    """Rows in id order (the chain's, so stable), oldest or newest first, from just past
    the row ``after``; every matching row is reachable page by page. ``since`` and
    ``until`` bound the time (both included), ``cluster`` keeps the rows of its plans."""
    where = []
    if plan is not None:
        where.append(audit.c.plan_id == plan)
    if user is not None:
        where.append(audit.c.user == user)
    if since is not None:
        where.append(audit.c.at >= since)
    if until is not None:
        where.append(audit.c.at <= until)
    if cluster is not None:
        where.append(audit.c.plan_id.in_(select(plans.c.id).where(plans.c.cluster == cluster)))
    if actions is not None:
        where.append(audit.c.action.in_(actions))
    total = conn.execute(select(func.count()).select_from(audit).where(*where)).scalar_one()
    if after is not None:
        where.append(audit.c.id < after if newest_first else audit.c.id > after)
    order = audit.c.id.desc() if newest_first else audit.c.id
    rows = conn.execute(select(audit).where(*where).order_by(order).limit(limit + 1)) \
        .mappings().all()
    entries = [AuditEntry(**r) for r in rows[:limit]]
    return AuditPage(entries, total, entries[-1].id if len(rows) > limit else None)


__all__ = ["AuditEntry", "AuditPage", "Decision", "Plan", "Store", "append", "audit_page",
           "due_plans", "insert_decision", "insert_plan", "load_plan", "open_store",
           "plan_titles", "query_audit", "query_plans", "update_plan"]
