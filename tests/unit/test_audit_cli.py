"""`railyard audit verify`: exit 0 on an intact chain, 1 naming where it breaks, 2 for bad
input, 3 when the store does not answer. The attacks are the security probe's (issue 27):
someone who can write the database, with SQL and the public formulas, but not the key."""

from __future__ import annotations

import json

import yaml
from sqlalchemy import select, update

from backend.services import plans
from backend.store.schema import audit
from backend.store.store import open_store
from tests.audit_attacks import append_forged_approval, rechain_with_public_formulas
from tests.plan_helpers import APPROVER, OPERATOR, T0, moves, orders_cluster
from tests.unit.helpers import run_cli

CLUSTERS = [{"name": "c1", "gateway": {"type": "twin", "url": "http://127.0.0.1:1"}}]
SNAP = orders_cluster()


def store_section(tmp_path, url):
    return {"url": url, "audit_key_file": str(tmp_path / "audit_keys"),
            "audit_checkpoints": str(tmp_path / "checkpoints.jsonl")}


def config(tmp_path, url, clusters=True, checkpoints=True):
    path = tmp_path / "railyard.yaml"
    doc = {"store": store_section(tmp_path, url)}
    if not checkpoints:  # the keyed chain alone
        del doc["store"]["audit_checkpoints"]
    path.write_text(yaml.safe_dump({"clusters": CLUSTERS, **doc} if clusters else doc))
    return path


def opened(tmp_path, url):
    s = store_section(tmp_path, url)
    return open_store(url, key_file=s["audit_key_file"], checkpoints=s["audit_checkpoints"])


def approved_plan(store):
    plan = plans.propose(store, OPERATOR, cluster="c1", kind="reassignment",
                         content=moves(("orders", 0, [3, 4])), preview={}, snapshot=SNAP,
                         now=T0)
    plans.approve(store, APPROVER, plan.id, sha256=plan.sha256, topics_of=lambda *_: SNAP,
                  now=T0)
    plans.record(store, OPERATOR, plan.id, "note", detail={"n": 1}, now=T0)
    return plan


def verify(capsys, tmp_path, url, checkpoints=True):
    code, out, err = run_cli(capsys, "audit", "verify", "--config",
                             config(tmp_path, url, checkpoints=checkpoints))
    return code, (json.loads(out) if out else None), err


def test_verify_intact_then_broken(tmp_path, capsys):
    url = f"sqlite:///{tmp_path}/r.db"
    store = opened(tmp_path, url)
    approved_plan(store)
    code, result, _ = verify(capsys, tmp_path, url)
    assert code == 0 and result == {"intact": True, "rows": 3, "broken_at": None,
                                    "reason": None, "legacy_rows": 0, "checkpoints": 3}
    with store.write() as conn:  # someone rewrites history: the approval was "bert"'s
        conn.execute(update(audit).where(audit.c.id == 2).values(user="bert"))
    store.close()
    code, result, _ = verify(capsys, tmp_path, url)
    assert code == 1 and result["broken_at"] == 2
    assert "audit row 2: its content does not match its hash" in result["reason"]


def test_changing_who_approved_is_found(tmp_path, capsys):
    url = f"sqlite:///{tmp_path}/r.db"
    store = opened(tmp_path, url)
    approved_plan(store)
    with store.write() as conn:
        conn.execute(update(audit).where(audit.c.action == "approve")
                     .values(user="mallory", address="10.6.6.6"))
    for drop_key_ids in (False, True):
        rechain_with_public_formulas(store, drop_key_ids)
        code, result, _ = verify(capsys, tmp_path, url, checkpoints=False)
        # re-linked with the key ids kept: the edited approval (row 2) is the first
        # row whose seal no longer matches; without them: no keyed row seals the log.
        # The links are the public sha256 chain, so the rows before an edit keep theirs
        # (and match their checkpoints): the first row found is the one changed
        assert code == 1 and result["broken_at"] == (3 if drop_key_ids else 2), result
        code, result, _ = verify(capsys, tmp_path, url)
        assert code == 1 and result["broken_at"] == 2, result  # row 2's checkpoint
    store.close()


def test_a_forged_approval_appended_is_found(tmp_path, capsys):
    url = f"sqlite:///{tmp_path}/r.db"
    store = opened(tmp_path, url)
    plan = approved_plan(store)
    for key_id in (store.keys.current, None):  # as its neighbours sign, or as an old row
        row_id = append_forged_approval(store, plan.id, key_id)
        code, result, _ = verify(capsys, tmp_path, url, checkpoints=False)
        assert (code, result["broken_at"]) == (1, row_id), result
        with store.write() as conn:
            conn.execute(audit.delete().where(audit.c.id == row_id))
    store.close()


def test_deleting_a_row_and_rechaining_is_found(tmp_path, capsys):
    url = f"sqlite:///{tmp_path}/r.db"
    store = opened(tmp_path, url)
    approved_plan(store)
    with store.write() as conn:
        conn.execute(audit.delete().where(audit.c.action == "approve"))
    code, result, _ = verify(capsys, tmp_path, url)
    assert (code, result["broken_at"]) == (1, 3)
    assert "prev_hash is not the hash of the row before it" in result["reason"]
    rechain_with_public_formulas(store, drop_key_ids=False)
    code, result, _ = verify(capsys, tmp_path, url, checkpoints=False)
    assert (code, result["broken_at"]) == (1, 3)  # its seal covers the link to row 1
    assert "its seal does not match its place in the chain" in result["reason"]
    rechain_with_public_formulas(store, drop_key_ids=True)  # the whole log made "old"
    code, result, _ = verify(capsys, tmp_path, url, checkpoints=False)
    assert code == 1 and "no keyed row follows them" in result["reason"]
    code, result, _ = verify(capsys, tmp_path, url)
    assert (code, result["broken_at"]) == (1, 3)  # row 1 is as its checkpoint names it
    assert "not the row the checkpoint written at" in result["reason"]
    store.close()


def test_deleting_the_newest_rows_is_found_by_the_checkpoints(tmp_path, capsys):
    url = f"sqlite:///{tmp_path}/r.db"
    store = opened(tmp_path, url)
    approved_plan(store)
    with store.write() as conn:  # the chain that is left still links up
        conn.execute(audit.delete().where(audit.c.id == 3))
    code, result, _ = verify(capsys, tmp_path, url)
    assert (code, result["broken_at"]) == (1, 3)
    assert "the log ends at row 2 (its newest rows were deleted)" in result["reason"]
    # a row appended in its place is not the one the checkpoint names
    plans.record(store, OPERATOR, None, "note", detail={"n": 2}, now=T0)
    code, result, _ = verify(capsys, tmp_path, url)
    assert (code, result["broken_at"]) == (1, 3)
    assert "not the row the checkpoint written at" in result["reason"]
    store.close()


def test_a_forged_checkpoint_line_is_found(tmp_path, capsys):
    url = f"sqlite:///{tmp_path}/r.db"
    store = opened(tmp_path, url)
    approved_plan(store)
    store.close()
    line = json.loads((tmp_path / "checkpoints.jsonl").read_text().splitlines()[0])
    with open(tmp_path / "checkpoints.jsonl", "a") as f:
        f.write(json.dumps({**line, "id": 9}) + "\n")
    code, result, _ = verify(capsys, tmp_path, url)
    assert code == 1 and "checkpoint line 4 of" in result["reason"]
    assert "not signed by a key in the ring" in result["reason"]


def test_old_keys_verify_old_rows_after_a_rotation(tmp_path, capsys):
    url = f"sqlite:///{tmp_path}/r.db"
    store = opened(tmp_path, url)
    approved_plan(store)
    store.close()
    code, out, _ = run_cli(capsys, "audit", "add-key", "--keys", tmp_path / "audit_keys")
    new_key = json.loads(out)["key_id"]
    store = opened(tmp_path, url)
    approved_plan(store)
    with store.read() as conn:
        signers = conn.execute(select(audit.c.key_id).order_by(audit.c.id)).scalars().all()
    store.close()
    assert len(set(signers[:3])) == 1 and signers[3:] == [new_key] * 3
    code, result, _ = verify(capsys, tmp_path, url)
    assert code == 0 and result["rows"] == 6, result
    lines = (tmp_path / "audit_keys").read_text().splitlines()  # the old key thrown away
    (tmp_path / "audit_keys").write_text("\n".join(lines[:-2] + lines[-1:]) + "\n")
    code, result, _ = verify(capsys, tmp_path, url)
    assert (code, result["broken_at"]) == (1, 1)
    assert f"signed with key {signers[0]!r}" in result["reason"]


def test_the_key_is_never_stored_in_the_database(tmp_path):
    url = f"sqlite:///{tmp_path}/r.db"
    opened(tmp_path, url).close()
    secret = (tmp_path / "audit_keys").read_text().splitlines()[-1].split(":")[1]
    store = opened(tmp_path, url)
    approved_plan(store)
    store.close()
    assert secret.encode() not in (tmp_path / "r.db").read_bytes()
    assert oct((tmp_path / "audit_keys").stat().st_mode & 0o777) == "0o600"


def test_store_only_config_store_path_and_demo(tmp_path, capsys, monkeypatch):
    url = f"sqlite:///{tmp_path}/r.db"
    store = opened(tmp_path, url)
    approved_plan(store)
    store.close()
    code, out, err = run_cli(capsys, "audit", "verify", "--config",
                             config(tmp_path, url, clusters=False))
    assert code == 0 and json.loads(out)["rows"] == 3, err
    code, out, err = run_cli(capsys, "audit", "verify", "--store", tmp_path / "r.db",
                             "--keys", tmp_path / "audit_keys", "--checkpoints",
                             tmp_path / "checkpoints.jsonl")
    assert code == 0 and json.loads(out)["checkpoints"] == 3, err
    home = tmp_path / "demo"  # what `railyard demo` keeps there
    from dashboard.demo_stack import demo_store

    s = demo_store(home)
    demo = open_store(s.url, key_file=s.audit_key_file, checkpoints=s.audit_checkpoints)
    approved_plan(demo)
    demo.close()
    monkeypatch.chdir(tmp_path)
    (tmp_path / "var").symlink_to(tmp_path)  # var/demo is the default home
    code, out, err = run_cli(capsys, "audit", "verify", "--demo")
    assert code == 0 and json.loads(out) == {"intact": True, "rows": 3, "broken_at": None,
                                             "reason": None, "legacy_rows": 0,
                                             "checkpoints": 3}, err


def test_bad_input_and_unreachable_store(tmp_path, capsys):
    code, _, err = run_cli(capsys, "audit", "verify", "--config", tmp_path / "none.yaml")
    assert code == 2 and "no such config file" in err
    code, _, err = run_cli(capsys, "audit", "verify", "--store", tmp_path / "none.db")
    assert code == 2 and err.strip().endswith(f"--store: no such SQLite file: "
                                              f"{tmp_path / 'none.db'}")
    code, _, err = run_cli(capsys, "audit", "verify", "--demo", tmp_path / "nothing")
    assert code == 2 and "no demo store in" in err
    url = f"sqlite:///{tmp_path}/r.db"
    opened(tmp_path, url).close()
    code, _, err = run_cli(capsys, "audit", "verify", "--store", tmp_path / "r.db",
                           "--keys", tmp_path / "no_keys")
    assert code == 2 and "no such audit key file" in err
    (tmp_path / "short").write_text("k1:tooshort\n")
    code, _, err = run_cli(capsys, "audit", "verify", "--store", tmp_path / "r.db",
                           "--keys", tmp_path / "short")
    assert code == 2 and "entry 1 (k1): the secret has 8 characters" in err
    url = "postgresql+psycopg://railyard:secret@127.0.0.1:1/railyard?connect_timeout=2"
    code, _, err = run_cli(capsys, "audit", "verify", "--config", config(tmp_path, url))
    assert code == 3 and err.startswith("railyard audit: unavailable: Plan store: ")
    assert "secret" not in err and len(err.strip().splitlines()) == 1


def test_keys_from_the_environment_win_over_the_file(tmp_path, capsys, monkeypatch):
    url = f"sqlite:///{tmp_path}/r.db"
    monkeypatch.setenv("RAILYARD_AUDIT_KEYS", f"old:{'a' * 32},\nnew:{'b' * 40}")
    store = opened(tmp_path, url)
    approved_plan(store)
    with store.read() as conn:
        assert set(conn.execute(select(audit.c.key_id)).scalars()) == {"new"}
    store.close()
    assert not (tmp_path / "audit_keys").exists()  # no file made when the variable is set
    code, result, _ = verify(capsys, tmp_path, url)
    assert code == 0 and result["rows"] == 3
    monkeypatch.delenv("RAILYARD_AUDIT_KEYS")
    opened(tmp_path, url).close()  # a key file of its own now: other keys
    code, result, _ = verify(capsys, tmp_path, url)
    assert code == 1 and "signed with key 'new'" in result["reason"]


def test_a_checkpoint_file_that_cannot_be_written_is_logged_not_fatal(tmp_path, caplog):
    url = f"sqlite:///{tmp_path}/r.db"
    (tmp_path / "checkpoints.jsonl").mkdir()  # a folder where the file should be
    store = opened(tmp_path, url)
    plan = approved_plan(store)  # each write still commits
    assert plans.get(store, plan.id).state == "approved"
    assert "audit checkpoint for row 3 not written to" in caplog.text
    store.close()


def test_checkpoints_named_but_missing_unreadable_or_holding_none(tmp_path, capsys):
    """`--checkpoints /nonexistent.jsonl` (or a file of garbage) answered intact with 0
    checkpoints: a named file that is not there is bad input; one with no checkpoint in it
    (garbage, empty, or the config's file gone) is not intact, naming why."""
    url = f"sqlite:///{tmp_path}/r.db"
    store = opened(tmp_path, url)
    approved_plan(store)
    store.close()
    base = ("audit", "verify", "--store", tmp_path / "r.db", "--keys", tmp_path / "audit_keys")
    code, out, err = run_cli(capsys, *base, "--checkpoints", tmp_path / "none.jsonl")
    assert (code, out) == (2, "")
    assert err == (f"railyard audit: error: --checkpoints: no such checkpoints file: "
                   f"{tmp_path / 'none.jsonl'}\n")
    code, out, err = run_cli(capsys, *base, "--checkpoints", tmp_path)
    assert (code, out) == (2, "") and "cannot read the checkpoints file" in err
    assert err.count("\n") == 1
    (tmp_path / "garbage.jsonl").write_text("garbage\nmore garbage\n")
    code, out, _ = run_cli(capsys, *base, "--checkpoints", tmp_path / "garbage.jsonl")
    result = json.loads(out)
    assert code == 1 and not result["intact"] and result["checkpoints"] == 0
    assert result["reason"].startswith(f"line 1 of {tmp_path / 'garbage.jsonl'} is not a "
                                       f"checkpoint, and no line of it is one")
    (tmp_path / "empty.jsonl").write_text("")
    code, out, _ = run_cli(capsys, *base, "--checkpoints", tmp_path / "empty.jsonl")
    assert code == 1 and json.loads(out)["reason"].startswith(
        f"{tmp_path / 'empty.jsonl'} is empty, but the log has 3 rows")
    (tmp_path / "checkpoints.jsonl").unlink()  # the config's own file, deleted
    code, result, _ = verify(capsys, tmp_path, url)
    assert code == 1 and result["reason"].startswith(
        f"{tmp_path / 'checkpoints.jsonl'} does not exist, but the log has 3 rows")
    # a store with no rows yet has nothing to checkpoint
    empty = f"sqlite:///{tmp_path}/empty.db"
    opened(tmp_path, empty).close()
    code, result, _ = verify(capsys, tmp_path, empty)
    assert code == 0 and result["intact"] and result["rows"] == 0


def test_verify_makes_no_store_and_says_what_a_bad_one_is(tmp_path, capsys):
    """`--store sqlite:////tmp/none.db` created an empty database and a lock file and
    answered intact; a text file given as the store was a DatabaseError traceback."""
    opened(tmp_path, f"sqlite:///{tmp_path}/r.db").close()
    keys = ("--keys", tmp_path / "audit_keys")
    code, out, err = run_cli(capsys, "audit", "verify", "--store",
                             f"sqlite:///{tmp_path}/none.db", *keys)
    assert (code, out) == (2, "")
    assert err == f"railyard audit: error: --store: no such SQLite file: {tmp_path}/none.db\n"
    code, out, err = run_cli(capsys, "audit", "verify", "--config",
                             config(tmp_path, f"sqlite:///{tmp_path}/gone.db"))
    assert (code, out) == (2, "") and err.strip().endswith(
        f"store.url: no such SQLite file: {tmp_path}/gone.db")
    assert not list(tmp_path.glob("none.db*")) and not list(tmp_path.glob("gone.db*"))
    (tmp_path / "notadb.db").write_text("hello\n")
    code, out, err = run_cli(capsys, "audit", "verify", "--store", tmp_path / "notadb.db",
                             *keys)
    assert (code, out) == (2, "")
    assert err == (f"railyard audit: error: sqlite:///{tmp_path}/notadb.db: not a SQLite "
                   f"database (file is not a database)\n")
    assert (tmp_path / "notadb.db").read_text() == "hello\n"


def test_add_key_refuses_a_missing_key_file_unless_told_to_create_it(tmp_path, capsys):
    """`add-key --keys typo` made a new key file and said restart (the key that signs
    would then be one no process reads); `--keys /proc/nokeys` was a traceback."""
    code, out, err = run_cli(capsys, "audit", "add-key", "--keys", tmp_path / "typo")
    assert (code, out) == (2, "") and not (tmp_path / "typo").exists()
    assert err == (f"railyard audit: error: --keys: no such audit key file: "
                   f"{tmp_path / 'typo'} (railyard serve creates it on first start; give "
                   f"--create to make a new one here)\n")
    code, out, err = run_cli(capsys, "audit", "add-key", "--keys", "/proc/nokeys",
                             "--create")
    assert (code, out) == (2, "")
    assert err == ("railyard audit: error: --keys: cannot write the audit key file "
                   "/proc/nokeys (No such file or directory)\n")
    code, out, _ = run_cli(capsys, "audit", "add-key", "--keys", tmp_path / "new", "--create")
    answer = json.loads(out)
    assert code == 0 and answer["created"] and "a new key file was created" in answer["note"]
    code, out, _ = run_cli(capsys, "audit", "add-key", "--keys", tmp_path / "new")
    again = json.loads(out)
    assert code == 0 and not again["created"]
    lines = (tmp_path / "new").read_text().splitlines()
    assert [ln.split(":")[0] for ln in lines[-2:]] == [answer["key_id"], again["key_id"]]


def test_a_postgresql_store_that_accepts_and_never_answers_is_unavailable(
        tmp_path, capsys, monkeypatch):
    """A listener that accepts the TCP connection and never answers held `audit verify`
    silent for minutes: the connection now has a connect timeout (the URL's
    ?connect_timeout= if it sets one), then exit 3 with one line naming the store."""
    import contextlib
    import socket
    import threading
    import time

    from backend.store import engine

    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(8)
    listener.settimeout(0.1)
    done = threading.Event()

    def accept_and_never_answer() -> None:
        held, until = [], time.monotonic() + 6  # then hang up: old code fails, not hangs
        while not done.is_set() and time.monotonic() < until:
            with contextlib.suppress(OSError):
                held.append(listener.accept()[0])
        for conn in held:
            conn.close()

    server = threading.Thread(target=accept_and_never_answer, daemon=True)
    server.start()
    port = listener.getsockname()[1]
    monkeypatch.setattr(engine, "CONNECT_TIMEOUT_SECONDS", 1, raising=False)  # 2 s at least
    (tmp_path / "keys").write_text(f"k1:{'a' * 32}\n")
    started = time.monotonic()
    try:
        code, out, err = run_cli(capsys, "audit", "verify", "--store",
                                 f"postgresql+psycopg://rail:Secr3t@127.0.0.1:{port}/db",
                                 "--keys", tmp_path / "keys")
    finally:
        done.set()
        server.join()
        listener.close()
    assert time.monotonic() - started < 5
    assert (code, out) == (3, "")
    assert err == (f"railyard audit: unavailable: Plan store: postgresql+psycopg://rail:***@"
                   f"127.0.0.1:{port}/db: connection timeout expired\n")


def test_checkpoints_set_after_rows_verify_once_the_dashboard_starts(tmp_path, capsys):
    """Set audit_checkpoints on a store with rows (docs/deploy.md's upgrade): verify read
    "not intact" until a user's next write; the dashboard's start writes the first one."""
    from dashboard.caches import make_cache
    from dashboard.config import load_config
    from dashboard.runtime import Runtime

    url = f"sqlite:///{tmp_path}/r.db"
    s = store_section(tmp_path, url)
    store = open_store(url, key_file=s["audit_key_file"])  # no checkpoints yet
    approved_plan(store)
    store.close()
    code, result, _ = verify(capsys, tmp_path, url)
    assert code == 1 and "does not exist, but the log has 3 rows" in result["reason"]
    runtime = Runtime(load_config(config(tmp_path, url)), make_cache())
    try:
        runtime.plan_store()  # what `railyard serve` opens at its first page or call
    finally:
        runtime.plan_store().close()
    code, result, _ = verify(capsys, tmp_path, url)
    assert code == 0 and (result["rows"], result["checkpoints"]) == (4, 1), result
