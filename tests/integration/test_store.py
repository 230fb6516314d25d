"""The plan store on SQLite and on a real PostgreSQL: round trips, concurrent decisions
(exactly one wins), an audit chain that never forks, and tampering found by the CLI."""

from __future__ import annotations

import hashlib
import json
import threading
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from datetime import timedelta

import pytest
import yaml
from alembic import command
from alembic.config import Config
from sqlalchemy import func, select, text, update

from backend.errors import Conflict
from backend.services import plans
from backend.services.plans import MAX_COMMENT_CHARS
from backend.store.audit import keyed_hash
from backend.store.audit_keys import load_keys
from backend.store.engine import MIGRATIONS, make_engine, writer
from backend.store.schema import audit, decisions
from backend.store.store import AUDIT_COMMENT_CHARS, load_plan, open_store, with_comment
from backend.store.workflow import SYSTEM, Actor
from tests.audit_attacks import (
    append_forged_approval,
    public_digest,
    rechain_with_public_formulas,
)
from tests.plan_helpers import OPERATOR, T0, moves, orders_cluster, shrink_content
from tests.unit.helpers import run_cli

SNAP = orders_cluster()
APPROVERS = [Actor(f"approver{i}", "approver", f"10.1.0.{i}") for i in range(10)]


def same(_cluster, _topics):
    return SNAP


def test_round_trip(store_url):
    store = open_store(store_url)
    try:
        content = moves(("orders", 0, [3, 4]), ("audit", 1, [1, 2]))
        content["partitions"][0]["note"] = "ünïcode ✓"
        plan = plans.propose(store, OPERATOR, cluster="c1", kind="reassignment",
                             content=content, preview={"eta_seconds": 12.5}, snapshot=SNAP,
                             title="drain 1", throttle=50_000_000, now=T0)
        again = plans.get(store, plan.id)
        assert again.content == content and again.created_at == T0
        assert again.sha256 == plans.plan_sha256("reassignment", "c1", content, 50_000_000)
        shrink = plans.propose(store, OPERATOR, cluster="c1", kind="shrink",
                               content=shrink_content(), preview={}, snapshot=SNAP, now=T0)
        assert [p.id for p in plans.list_plans(store, cluster="c1")] == [shrink.id, plan.id]
        plans.approve(store, APPROVERS[0], plan.id, sha256=plan.sha256, topics_of=same,
                      now=T0 + timedelta(seconds=1))
        # the proposal 24 h after proposing, the approved plan 24 h after its approval
        assert plans.expire_due(store, now=T0 + timedelta(hours=24)) == [shrink.id]
        assert plans.expire_due(store, now=T0 + timedelta(hours=24, seconds=1)) == [plan.id]
        assert [e.action for e in plans.audit_entries(store, since=T0 + timedelta(hours=1))] \
            == ["expire", "expire"]
        assert store.verify_audit()["intact"]
    finally:
        store.close()


def test_a_plan_loads_without_the_columns_a_caller_skips(store_url):
    """Approve reads the basis but not the moves; a summary reads neither. What is left
    out is None, never a stale or empty value; everything else is the whole plan's."""
    store = open_store(store_url)
    try:
        content = moves(("orders", 0, [3, 4]))
        plan = plans.propose(store, OPERATOR, cluster="c1", kind="reassignment",
                             content=content, preview={"eta_seconds": 1.0}, snapshot=SNAP,
                             now=T0)
        plans.reject(store, APPROVERS[0], plan.id, comment="later", now=T0)
        with store.read() as conn:
            whole = load_plan(conn, plan.id)
            no_moves = load_plan(conn, plan.id, content=False)
            head = load_plan(conn, plan.id, content=False, basis=False)
        assert whole.content == content and whole.basis is not None
        assert no_moves == replace(whole, content=None)
        assert head == replace(whole, content=None, basis=None)
        assert len(head.decisions) == 1 and head.decisions[0].comment == "later"
    finally:
        store.close()


def test_transitions_write_the_same_rows_on_both_stores(store_url):
    """A transition is one statement on PostgreSQL and three on SQLite: both store the
    decision and the audit rows exactly (times, unicode, a detail or none), and the chain
    verifies, so the digest the statement stored is the one its fields give."""
    store = open_store(store_url)
    try:
        first, second = (plans.propose(store, OPERATOR, cluster="c1", kind="reassignment",
                                       content=moves(("orders", p, [3, 4])), preview={},
                                       snapshot=SNAP, now=T0) for p in (0, 1))
        at = T0 + timedelta(seconds=1)
        plans.approve(store, APPROVERS[0], first.id, sha256=first.sha256, topics_of=same,
                      comment="ok ✓ «ünïcode»", now=at)
        plans.request_execute(store, OPERATOR, first.id, topics_of=same, now=at)
        detail = {"moved": 1, "note": "fin ✓", "brokers": [3, 4], "none": None}
        plans.finish(store, SYSTEM, first.id, "completed", detail=detail, now=at)
        plans.withdraw(store, OPERATOR, second.id, now=at)
        done = plans.get(store, first.id)
        assert (done.state, done.version, done.updated_at) == ("completed", 4, at)
        assert [(d.user, d.decision, d.comment, d.sha256, d.at) for d in done.decisions] == [
            ("approver0", "approve", "ok ✓ «ünïcode»", first.sha256, at)]
        rows = [(e.user, e.action, e.plan_id, e.before, e.after, e.address, e.detail, e.at)
                for e in plans.audit_entries(store) if e.action != "propose"]
        assert rows == [
            ("approver0", "approve", first.id, "proposed", "approved", "10.1.0.0",
             {"sha256": first.sha256, "role": "approver", "comment": "ok ✓ «ünïcode»"}, at),
            ("olga", "execute", first.id, "approved", "executing", "10.0.0.7", None, at),
            (SYSTEM.name, "complete", first.id, "executing", "completed", SYSTEM.address,
             detail, at),
            ("olga", "withdraw", second.id, "proposed", "withdrawn", "10.0.0.7", None, at)]
        assert plans.get(store, second.id).decisions == ()
        assert store.verify_audit() == {"intact": True, "rows": 6, "broken_at": None,
                                        "reason": None, "legacy_rows": 0,
                                        "checkpoints": None}
    finally:
        store.close()


def test_a_decisions_comment_is_in_its_audit_row(store_url):
    """Who reviews an incident reads the audit log: an approver's or a rejecter's reason
    is in the audit row's detail as the decision row keeps it (line breaks, unicode),
    beside what the detail held; a decision without a comment adds none; a comment
    longer than the service allows (a caller below the service) is cut to what it
    allows; and the chain verifies on both stores (the detail is in the digest)."""
    store = open_store(store_url)
    try:
        first, second, third = (plans.propose(
            store, OPERATOR, cluster="c1", kind="reassignment",
            content=moves(("orders", p, [3, 4])), preview={}, snapshot=SNAP, now=T0)
            for p in (0, 1, 2))
        at = T0 + timedelta(seconds=1)
        why = "wrong «topic»: see INC-42\n\tbrokers 3 and 4 are full"
        plans.reject(store, APPROVERS[1], first.id, comment=why, sha256=first.sha256, now=at)
        plans.approve(store, APPROVERS[2], second.id, sha256=second.sha256, topics_of=same,
                      now=at)
        assert plans.get(store, first.id).decisions[0].comment == why
        rows = {e.plan_id: (e.user, e.action, e.after, e.detail)
                for e in plans.audit_entries(store) if e.action != "propose"}
        assert rows == {first.id: ("approver1", "reject", "rejected", {"comment": why}),
                        second.id: ("approver2", "approve", "approved",
                                    {"sha256": second.sha256, "role": "approver"})}
        # the store merges it with a detail (an approval rule's) and caps it
        assert MAX_COMMENT_CHARS == AUDIT_COMMENT_CHARS
        long = "x" * (MAX_COMMENT_CHARS + 500)
        assert store.transition(
            third.id, "proposed", third.version, state="approved", at=at,
            decision={"user": "approver3", "decision": "approve", "comment": long,
                      "sha256": third.sha256, "role": "approver"},
            audit_row={"user": "approver3", "action": "approve", "before": "proposed",
                       "after": "approved", "detail": {"rule": "r", "approvals": 1}})
        detail = plans.audit_entries(store)[-1].detail
        assert detail == {"rule": "r", "approvals": 1,
                          "comment": "x" * (MAX_COMMENT_CHARS - 1) + "…"}
        assert plans.get(store, third.id).decisions[0].comment == long  # as given
        at_limit = "y" * MAX_COMMENT_CHARS  # what the service lets through is kept whole
        assert with_comment({"detail": None}, {"comment": at_limit}) == \
            {"detail": {"comment": at_limit}}
        assert store.verify_audit()["intact"]
    finally:
        store.close()


def test_a_transitions_other_writes_stand_or_fall_with_it(store_url):
    """``also`` (an execution's end beside its plan's) commits with the transition, and
    a failure in it leaves the plan, its audit and the chain as they were, on both
    stores (the PostgreSQL transition is one statement, ``also`` follows it)."""
    store = open_store(store_url)
    try:
        plan = plans.propose(store, OPERATOR, cluster="c1", kind="reassignment",
                             content=moves(("orders", 0, [3, 4])), preview={},
                             snapshot=SNAP, now=T0)
        at = T0 + timedelta(seconds=1)
        row = {"user": "railyard", "action": "withdraw", "before": "proposed",
               "after": "withdrawn", "detail": None}

        def lost(conn):
            conn.execute(text("SELECT 1"))
            raise Conflict("the execution row changed")
        with pytest.raises(Conflict):
            store.transition(plan.id, "proposed", plan.version, state="withdrawn", at=at,
                             audit_row=row, also=lost)
        assert plans.get(store, plan.id).state == "proposed"
        assert [e.action for e in plans.audit_entries(store)] == ["propose"]
        ran = []
        assert store.transition(plan.id, "proposed", plan.version, state="withdrawn", at=at,
                                audit_row=row, also=ran.append)
        assert plans.get(store, plan.id).state == "withdrawn" and len(ran) == 1
        assert not store.transition(plan.id, "proposed", plan.version, state="withdrawn",
                                    at=at, audit_row=row, also=ran.append)
        assert len(ran) == 1  # a transition that did not happen writes nothing else
        assert store.verify_audit()["intact"]
    finally:
        store.close()


def test_concurrent_decisions_exactly_one_wins(store_url):
    """Ten approvers and rejecters race on each of six plans; every plan is decided once,
    the losers get a clear refusal, and audit rows equal the successful transitions."""
    store = open_store(store_url)
    try:
        ids = [plans.propose(store, OPERATOR, cluster="c1", kind="reassignment",
                             content=moves(("orders", p % 4, [3, 4])), preview={},
                             snapshot=SNAP, now=T0).id for p in range(6)]
        outcomes: Counter = Counter()
        refusals: list[str] = []

        def race(plan_id: int) -> None:
            sha = plans.get(store, plan_id).sha256
            gate = threading.Barrier(len(APPROVERS))

            def decide(i: int) -> str:
                actor = APPROVERS[i]
                gate.wait()
                try:
                    if i % 2:
                        plans.reject(store, actor, plan_id, comment="race", now=T0)
                    else:
                        plans.approve(store, actor, plan_id, sha256=sha, topics_of=same,
                                      now=T0)
                    return "won"
                except Conflict as e:
                    refusals.append(str(e))
                    return "refused"

            with ThreadPoolExecutor(len(APPROVERS)) as pool:
                outcomes.update(pool.map(decide, range(len(APPROVERS))))

        for plan_id in ids:
            race(plan_id)
        assert outcomes == {"won": len(ids), "refused": len(ids) * (len(APPROVERS) - 1)}
        assert all("someone else decided first" in r or "it cannot be" in r
                   for r in refusals)
        with store.read() as conn:
            per_plan = dict(conn.execute(select(decisions.c.plan_id, func.count())
                                         .group_by(decisions.c.plan_id)).all())
        assert per_plan == dict.fromkeys(ids, 1)
        states = {p.id: p.state for p in plans.list_plans(store)}
        assert all(states[i] in ("approved", "rejected") for i in ids)
        assert all(plans.get(store, i).version == 2 for i in ids)
        entries = plans.audit_entries(store, limit=10_000)
        assert Counter(e.action for e in entries)["propose"] == len(ids)
        assert len(entries) == len(ids) * 2  # one proposal and one decision per plan
        assert store.verify_audit() == {"intact": True, "rows": len(ids) * 2,
                                        "broken_at": None, "reason": None,
                                        "legacy_rows": 0, "checkpoints": None}
    finally:
        store.close()


def test_concurrent_appends_never_fork_the_chain(store_url):
    store = open_store(store_url)
    try:
        def write(i: int) -> None:
            for j in range(10):
                plans.record(store, SYSTEM, None, "throttle-set", detail={"w": i, "j": j},
                             now=T0)

        with ThreadPoolExecutor(20) as pool:
            list(pool.map(write, range(20)))
        with store.read() as conn:
            prevs = conn.execute(select(audit.c.prev_hash)).scalars().all()
        assert len(prevs) == 200 and len(set(prevs)) == 200, "no two rows share a parent"
        assert store.verify_audit()["intact"]
    finally:
        store.close()


def test_concurrent_opens_migrate_once(store_url):
    with ThreadPoolExecutor(4) as pool:
        stores = list(pool.map(lambda _: open_store(store_url), range(4)))
    for s in stores:
        s.close()


def test_new_sqlite_files_opened_at_once_all_connect(tmp_path):
    """Eight connections racing to switch a new file to WAL: SQLite tells the losers
    "database is locked" at once, without waiting (in CI 1 run in 30 of the test above
    failed so). Each of 200 new files is opened by eight threads released together; about
    one file in 25 lost a connection before the switch was retried."""
    for i in range(200):
        engines = [make_engine(f"sqlite:///{tmp_path}/race{i}.db") for _ in range(8)]
        start = threading.Barrier(len(engines))

        def connect(engine, start=start):
            start.wait()
            with engine.connect() as conn:
                return conn.exec_driver_sql("PRAGMA journal_mode").scalar()

        try:
            with ThreadPoolExecutor(len(engines)) as pool:
                assert list(pool.map(connect, engines)) == ["wal"] * len(engines)
        finally:
            for e in engines:
                e.dispose()


def test_tampering_is_found_by_audit_verify(store_url, tmp_path, capsys):
    store = open_store(store_url)
    plan = plans.propose(store, OPERATOR, cluster="c1", kind="reassignment",
                         content=moves(("orders", 0, [3, 4])), preview={}, snapshot=SNAP,
                         now=T0)
    plans.approve(store, APPROVERS[0], plan.id, sha256=plan.sha256, topics_of=same, now=T0)
    plans.request_execute(store, OPERATOR, plan.id, topics_of=same, now=T0)
    config = tmp_path / "railyard.yaml"
    config.write_text(yaml.safe_dump({
        "clusters": [{"name": "c1", "gateway": {"type": "twin", "url": "http://127.0.0.1:1"}}],
        "store": {"url": store_url}}))
    code, out, _ = run_cli(capsys, "audit", "verify", "--config", config)
    assert (code, json.loads(out)["rows"]) == (0, 3)
    with store.write() as conn:  # hide who approved: delete the approval row
        conn.execute(audit.delete().where(audit.c.action == "approve"))
    code, out, _ = run_cli(capsys, "audit", "verify", "--config", config)
    result = json.loads(out)
    assert code == 1 and result["broken_at"] == 3
    assert "prev_hash is not the hash of the row before it" in result["reason"]
    store.close()


def test_checkpoints_set_on_a_store_with_rows_start_at_the_next_serve(store_url, tmp_path):
    """audit_checkpoints set after rows were written (an upgrade, a rotated file): verify
    read "not intact" until someone's next write. The start writes one row saying the
    checkpoints start there, and its checkpoint; a file that has one is left alone."""
    keys, checkpoints = str(tmp_path / "keys"), tmp_path / "checkpoints.jsonl"
    store = open_store(store_url, key_file=keys)
    try:
        assert store.start_checkpoints(T0) is False  # none configured
        plans.record(store, SYSTEM, None, "note", now=T0)
    finally:
        store.close()
    store = open_store(store_url, key_file=keys, checkpoints=str(checkpoints))
    try:
        assert "does not exist, but the log has 1 row" in store.verify_audit()["reason"]
        assert store.start_checkpoints(T0) is True
        result = store.verify_audit()
        assert (result["intact"], result["rows"], result["checkpoints"]) == (True, 2, 1)
        assert store.start_checkpoints(T0) is False  # the file has one now
        with store.read() as conn:
            rows = conn.execute(select(audit.c.action, audit.c.detail)
                                .order_by(audit.c.id)).all()
        assert [r.action for r in rows] == ["note", "audit-checkpoints-started"]
        assert rows[1].detail == {"file": str(checkpoints)}
        checkpoints.write_text("")  # rotated: the next start begins a new file
        assert store.start_checkpoints(T0) is True and store.verify_audit()["intact"]
        checkpoints.write_text("garbage\n")  # not a checkpoint: left for verify to say
        assert store.start_checkpoints(T0) is False
        assert not store.verify_audit()["intact"]
    finally:
        store.close()


def test_an_empty_log_needs_no_checkpoint_to_start(store_url, tmp_path):
    checkpoints = tmp_path / "checkpoints.jsonl"
    store = open_store(store_url, key_file=str(tmp_path / "keys"),
                       checkpoints=str(checkpoints))
    try:
        assert store.start_checkpoints(T0) is False and not checkpoints.exists()
        assert store.verify_audit()["intact"]
    finally:
        store.close()


def test_the_probes_rewrites_are_found_on_both_stores(store_url, tmp_path):
    """Who approved changed, a forged approval appended, a row deleted: each re-chained
    with the public formulas, each found; a log cut short is found by the checkpoints."""
    checkpoints = str(tmp_path / "checkpoints.jsonl")
    store = open_store(store_url, key_file=str(tmp_path / "keys"), checkpoints=checkpoints)
    try:
        plan = plans.propose(store, OPERATOR, cluster="c1", kind="reassignment",
                             content=moves(("orders", 0, [3, 4])), preview={},
                             snapshot=SNAP, now=T0)
        plans.approve(store, APPROVERS[0], plan.id, sha256=plan.sha256, topics_of=same,
                      now=T0)
        plans.request_execute(store, OPERATOR, plan.id, topics_of=same, now=T0)
        assert store.verify_audit()["intact"]
        with store.write() as conn:
            conn.execute(update(audit).where(audit.c.action == "approve")
                         .values(user="mallory", address="10.6.6.6"))
        rechain_with_public_formulas(store, drop_key_ids=False)
        assert store.verify_audit()["broken_at"] == 2  # the approval: its seal
        rechain_with_public_formulas(store, drop_key_ids=True)
        assert "no keyed row follows" in store.verify_audit(checkpoints=str(
            tmp_path / "none"))["reason"]
        assert store.verify_audit()["broken_at"] == 2  # the checkpoint of row 2
    finally:
        store.close()


def test_a_forged_approval_and_a_deleted_row_are_found(store_url, tmp_path):
    store = open_store(store_url, key_file=str(tmp_path / "keys"))
    try:
        plan = plans.propose(store, OPERATOR, cluster="c1", kind="reassignment",
                             content=moves(("orders", 0, [3, 4])), preview={},
                             snapshot=SNAP, now=T0)
        plans.record(store, OPERATOR, plan.id, "note", now=T0)
        forged = append_forged_approval(store, plan.id, store.keys.current)
        result = store.verify_audit()
        assert (result["broken_at"], result["rows"]) == (forged, 3)
        with store.write() as conn:
            conn.execute(audit.delete().where(audit.c.id >= 2))
        plans.record(store, OPERATOR, plan.id, "note", now=T0)
        plans.record(store, OPERATOR, plan.id, "note", now=T0)
        assert store.verify_audit()["intact"]
        with store.write() as conn:
            conn.execute(audit.delete().where(audit.c.id == 2))
        rechain_with_public_formulas(store, drop_key_ids=False)
        assert store.verify_audit()["broken_at"] == 3  # its seal covers the link to row 2
    finally:
        store.close()


def migrated_to(store_url: str, revision: str):
    """An engine on a store the migrations took to ``revision`` only (an older Railyard's)."""
    engine = make_engine(store_url)
    cfg = Config()
    cfg.set_main_option("script_location", str(MIGRATIONS))
    with writer(engine).begin() as conn:
        cfg.attributes["connection"] = conn
        command.upgrade(cfg, revision)
    return engine


def test_rows_from_before_the_keys_still_verify(store_url, tmp_path):
    """A store written by the unkeyed version (migrated to 0004 only, rows chained with
    sha256) still verifies once upgraded and sealed; its old rows cannot change after."""
    engine = migrated_to(store_url, "0004")
    old = [{"at": T0, "user": f"u{i}", "action": "note", "plan_id": None, "before": None,
            "after": None, "address": None, "detail": {"i": i}} for i in range(3)]
    with writer(engine).begin() as conn:
        prev = "0" * 64
        for row in old:  # as the old code wrote them (PostgreSQL's old trigger chains)
            digest = public_digest(row)
            row_hash = hashlib.sha256((prev + digest).encode()).hexdigest()
            conn.execute(text('INSERT INTO audit (at, "user", action, detail, digest, '
                              'prev_hash, hash) VALUES (:at, :user, :action, :detail, '
                              ':digest, :prev, :hash)'),
                         {**row, "at": T0.replace(tzinfo=None) if engine.dialect.name
                          == "sqlite" else T0, "detail": json.dumps(row["detail"]),
                          "digest": digest, "prev": prev, "hash": row_hash})
            prev = row_hash
    engine.dispose()
    store = open_store(store_url, key_file=str(tmp_path / "keys"))
    try:
        result = store.verify_audit()
        assert not result["intact"] and "no keyed row follows them" in result["reason"]
        store.seal_legacy(T0)  # what `railyard serve` does at start
        plans.record(store, SYSTEM, None, "note", now=T0)
        assert store.verify_audit() == {"intact": True, "rows": 5, "broken_at": None,
                                        "reason": None, "legacy_rows": 3,
                                        "checkpoints": None}
        with store.write() as conn:
            conn.execute(update(audit).where(audit.c.id == 2).values(user="mallory"))
        rechain_with_public_formulas(store, drop_key_ids=False)
        assert store.verify_audit()["broken_at"] == 4  # the seal no longer matches
    finally:
        store.close()


def test_rows_signed_by_the_keyed_chain_still_verify(store_url, tmp_path):
    """A store written by 0005's keyed chain (each hash an HMAC, no seal) verifies once
    upgraded to 0006, with sealed rows after it; its rows still cannot change unseen."""
    keys = load_keys(str(tmp_path / "keys"))
    engine = migrated_to(store_url, "0005")
    prev = "0" * 64
    for i in range(3):  # as 0005's code wrote them: the trigger links, an UPDATE signs
        row = {"at": T0, "user": f"u{i}", "action": "note", "plan_id": None, "before": None,
               "after": None, "address": None, "detail": {"i": i}}
        digest = public_digest(row)
        row_hash = keyed_hash(keys, keys.current, prev, digest)
        with writer(engine).begin() as conn:
            conn.execute(text('INSERT INTO audit (id, at, "user", action, detail, digest, '
                              'prev_hash, hash, key_id) VALUES (:id, :at, :user, :action, '
                              ':detail, :digest, :prev, :hash, :key)'),
                         {**row, "id": i + 1, "at": T0.replace(tzinfo=None) if
                          engine.dialect.name == "sqlite" else T0,
                          "detail": json.dumps(row["detail"]), "digest": digest,
                          "prev": prev, "hash": row_hash, "key": keys.current})
            conn.execute(update(audit).where(audit.c.id == i + 1).values(hash=row_hash))
        prev = row_hash
    engine.dispose()
    store = open_store(store_url, keys=keys)
    try:
        plans.record(store, SYSTEM, None, "note", now=T0)
        with store.read() as conn:
            newest = conn.execute(select(audit.c.id, audit.c.seal)
                                  .order_by(audit.c.id.desc())).first()
        assert newest.id == 4 and newest.seal is not None  # sealed after its commit
        assert store.verify_audit() == {"intact": True, "rows": 4, "broken_at": None,
                                        "reason": None, "legacy_rows": 0,
                                        "checkpoints": None}
        with store.write() as conn:
            conn.execute(update(audit).where(audit.c.id == 2).values(user="mallory"))
        rechain_with_public_formulas(store, drop_key_ids=False)
        assert store.verify_audit()["broken_at"] == 1  # an HMAC, not the public sha256
    finally:
        store.close()


def test_a_row_never_sealed_is_named(store_url, tmp_path):
    """Railyard stopped between a row's commit and its seal (or someone added it without
    the key): verify says which row and why, and the rows before it verify."""
    store = open_store(store_url, key_file=str(tmp_path / "keys"))
    try:
        plans.record(store, SYSTEM, None, "note", now=T0)
        plans.record(store, SYSTEM, None, "note", now=T0)
        with store.write() as conn:
            conn.execute(update(audit).where(audit.c.id == 2).values(seal=None))
        result = store.verify_audit()
        assert (result["intact"], result["broken_at"], result["rows"]) == (False, 2, 2)
        assert "it is not sealed" in result["reason"]
    finally:
        store.close()
