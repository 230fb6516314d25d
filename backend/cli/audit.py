"""`railyard audit verify --config FILE`: is the audit log's hash chain intact?

Exit 0 when it is, 1 when it breaks (the answer names the first row that does not
match), 2 for a bad config, 3 when the store does not answer.
"""

from __future__ import annotations

import argparse

from backend.cli import emit, verb_parser


def register(sub: argparse._SubParsersAction) -> None:
    p = verb_parser(sub, "audit")
    verbs = p.add_subparsers(dest="audit_verb", required=True, parser_class=type(p))
    v = verbs.add_parser("verify", help="check the audit log's hash chain (exit 1 if broken)")
    v.add_argument("--config", required=True, metavar="FILE",
                   help="the YAML config naming the store (store.url)")
    v.set_defaults(func=_verify)


def _verify(a: argparse.Namespace) -> None:
    from backend.store.store import open_store
    from dashboard.config import load_config

    config = load_config(a.config)
    store = open_store(config.store.url, config.plans.expiry_hours)
    try:
        result = store.verify_audit()
    finally:
        store.close()
    emit(result)
    if not result["intact"]:
        raise SystemExit(1)
