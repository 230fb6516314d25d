"""`railyard audit verify`: is the audit log's chain intact? `railyard audit add-key`:
rotate the key that signs it.

verify takes the store from a config file (a full one, or one with only ``store:``), from
``--store URL|PATH``, or the demo's (``--demo``). It checks every row's HMAC with the key
ring and the chain against the checkpoints (the store's file, or ``--checkpoints FILE``, a
log sink's export). Exit 0 when intact, 1 when broken (the answer names the first row
that does not match), 2 for bad input, 3 when the store does not answer.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from backend.cli import emit, verb_parser
from backend.errors import BadInput

DEMO_HOME = "var/demo"


def register(sub: argparse._SubParsersAction) -> None:
    p = verb_parser(sub, "audit")
    verbs = p.add_subparsers(dest="audit_verb", required=True, parser_class=type(p))
    v = verbs.add_parser("verify", help="check the audit log's chain (exit 1 if broken)")
    where = v.add_mutually_exclusive_group(required=True)
    where.add_argument("--config", metavar="FILE",
                       help="a config file naming the store (only store: is read)")
    where.add_argument("--store", metavar="URL|PATH",
                       help="the store's URL, or a SQLite file's path")
    where.add_argument("--demo", nargs="?", const=DEMO_HOME, metavar="HOME",
                       help=f"the store `railyard demo` keeps in HOME (default {DEMO_HOME})")
    v.add_argument("--keys", metavar="FILE",
                   help="the audit key file (default: the config's store.audit_key_file; "
                        "RAILYARD_AUDIT_KEYS overrides both)")
    v.add_argument("--checkpoints", metavar="FILE",
                   help="checkpoints to check the chain against (default: the config's "
                        "store.audit_checkpoints); it must exist")
    v.set_defaults(func=_verify)
    k = verbs.add_parser("add-key", help="add a new audit key, which signs from the next "
                                         "start on (older keys stay to verify older rows)")
    k.add_argument("--keys", metavar="FILE", required=True,
                   help="the audit key file (railyard serve creates it on first start)")
    k.add_argument("--create", action="store_true",
                   help="make a new key file when FILE does not exist (else refused)")
    k.set_defaults(func=_add_key)


def _settings(a: argparse.Namespace):
    """The store settings the arguments name, with --keys and --checkpoints applied."""
    from dataclasses import replace

    from dashboard.config import StoreSettings, load_store_settings

    if a.config:
        settings = load_store_settings(a.config)
    elif a.demo:
        from dashboard.demo_stack import demo_store

        if not (Path(a.demo) / "railyard.db").exists():
            raise BadInput(f"--demo: no demo store in {a.demo} (start `railyard demo` once, "
                           f"or give its --home)")
        settings = demo_store(Path(a.demo))
    else:
        url = a.store if "://" in a.store else f"sqlite:///{Path(a.store).resolve()}"
        if "://" not in a.store and not Path(a.store).is_file():
            raise BadInput(f"--store: no such SQLite file: {a.store}")
        settings = StoreSettings(url)
    where = "--store" if a.store else f"{a.config}: store.url" if a.config else "--demo"
    _sqlite_file_exists(settings.url, where)
    if a.checkpoints:  # named to be checked against: a file that is not there is a typo
        _readable(a.checkpoints, "--checkpoints")
    elif settings.audit_checkpoints and Path(settings.audit_checkpoints).exists():
        _readable(settings.audit_checkpoints, "store.audit_checkpoints")
    return replace(settings, audit_key_file=a.keys or settings.audit_key_file,
                   audit_checkpoints=a.checkpoints or settings.audit_checkpoints)


def _sqlite_file_exists(url: str, where: str) -> None:
    """Verify reads a store, never makes one: a SQLite URL naming no file is refused
    (opening it would create an empty database and answer intact)."""
    from sqlalchemy.engine import make_url
    from sqlalchemy.exc import ArgumentError

    try:
        parsed = make_url(url)
    except (ArgumentError, ValueError):
        return  # make_engine says what is wrong with it
    db = parsed.database
    if parsed.get_backend_name() == "sqlite" and db and db != ":memory:" \
            and not db.startswith("file:") and not Path(db).is_file():
        raise BadInput(f"{where}: no such SQLite file: {db}")


def _readable(path: str, where: str) -> None:
    """The checkpoints file opens for reading (before the store is opened)."""
    try:
        with open(path, "rb"):
            pass
    except FileNotFoundError:
        raise BadInput(f"{where}: no such checkpoints file: {path}") from None
    except OSError as e:
        raise BadInput(f"{where}: cannot read the checkpoints file {path} "
                       f"({e.strerror})") from None


def _verify(a: argparse.Namespace) -> None:
    from backend.store.audit_keys import load_keys
    from backend.store.store import open_store

    settings = _settings(a)
    keys = load_keys(settings.audit_key_file, create=False)
    store = open_store(settings.url, keys=keys, checkpoints=settings.audit_checkpoints)
    try:
        result = store.verify_audit()
    finally:
        store.close()
    emit(result)
    if not result["intact"]:
        raise SystemExit(1)


def _add_key(a: argparse.Namespace) -> None:
    from backend.store.audit_keys import add_key

    created = not Path(a.keys).exists()
    if created and not a.create:
        raise BadInput(f"--keys: no such audit key file: {a.keys} (railyard serve creates "
                       f"it on first start; give --create to make a new one here)")
    try:
        key_id = add_key(a.keys)
    except OSError as e:
        raise BadInput(f"--keys: cannot write the audit key file {a.keys} "
                       f"({e.strerror or e})") from None
    note = "restart railyard serve (and workers) so the new key signs"
    if created:
        note = (f"a new key file was created with this one key; point store.audit_key_file "
                f"at it and {note}")
    emit({"key_id": key_id, "keys": a.keys, "created": created, "note": note})
