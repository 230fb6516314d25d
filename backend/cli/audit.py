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
                        "store.audit_checkpoints)")
    v.set_defaults(func=_verify)
    k = verbs.add_parser("add-key", help="add a new audit key, which signs from the next "
                                         "start on (older keys stay to verify older rows)")
    k.add_argument("--keys", metavar="FILE", required=True, help="the audit key file")
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
    return replace(settings, audit_key_file=a.keys or settings.audit_key_file,
                   audit_checkpoints=a.checkpoints or settings.audit_checkpoints)


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

    emit({"key_id": add_key(a.keys), "keys": a.keys,
          "note": "restart railyard serve (and workers) so the new key signs"})
