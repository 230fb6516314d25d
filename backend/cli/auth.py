"""`railyard auth`: password hashes for the config, and the signed-in sessions.

`hash-password` reads the password from stdin (a prompt without echo on a terminal),
never from the command line, where it would land in the shell history and the process
list; it must be UTF-8 text of at least 8 characters. `sessions` lists who is signed in;
`revoke` ends every session of a user at once (a lost laptop, someone leaving), with a row
in the audit log naming the OS account that ran it. A new password_hash in the config ends
that user's sessions by itself.
"""

from __future__ import annotations

import argparse
import getpass
import sys
import time
from datetime import UTC, datetime

from backend.cli import emit, verb_parser
from backend.errors import BadInput


def register(sub: argparse._SubParsersAction) -> None:
    p = verb_parser(sub, "auth")
    verbs = p.add_subparsers(dest="auth_verb", required=True, parser_class=type(p))
    h = verbs.add_parser("hash-password", help="read a password on stdin, print "
                                               '{"password_hash": ...} for auth.users')
    h.set_defaults(func=_hash_password)
    s = verbs.add_parser("sessions", help="who is signed in: sessions per user")
    s.add_argument("--config", required=True, metavar="FILE",
                   help="the YAML config naming the store (store.url) and auth")
    s.set_defaults(func=_sessions)
    r = verbs.add_parser("revoke", help="end every session of a user (audited)")
    r.add_argument("--config", required=True, metavar="FILE",
                   help="the YAML config naming the store (store.url) and auth")
    r.add_argument("--user", required=True, help="whose sessions end")
    r.add_argument("--reason", default="", help="why, for the audit log")
    r.set_defaults(func=_revoke)


# the shortest password hash-password takes: NIST SP 800-63B, 5.1.1.1 (memorized
# secrets chosen by the user are at least 8 characters)
MIN_PASSWORD_CHARS = 8


def _hash_password(_: argparse.Namespace) -> dict:
    from werkzeug.security import generate_password_hash

    try:
        if sys.stdin.isatty():
            password = getpass.getpass("Password: ")
        else:
            password = sys.stdin.readline().removesuffix("\n").removesuffix("\r")
        password.encode("utf-8")  # bytes that were not UTF-8 come as surrogates
    except UnicodeError:
        raise BadInput("stdin: the password is not UTF-8 text (give one line with the "
                       "password)") from None
    if not password:
        raise BadInput("stdin: empty password (give one line with the password)")
    if len(password) < MIN_PASSWORD_CHARS:
        n = len(password)
        raise BadInput(f"stdin: the password has {n} character{'s' * (n != 1)}, fewer than "
                       f"the {MIN_PASSWORD_CHARS} required")
    return {"password_hash": generate_password_hash(password)}


def _sessions(a: argparse.Namespace) -> None:
    from backend.store import sessions

    config, store = _open(a.config)
    try:
        emit({"sessions": sessions.active(store, time.time(), config.auth.idle_minutes * 60,
                                          config.auth.session_hours * 3600)})
    finally:
        store.close()


def _revoke(a: argparse.Namespace) -> None:
    from backend.store import sessions
    from dashboard.config import normal_name

    user = normal_name(a.user)
    if not user:
        raise BadInput("--user: empty user name")
    config, store = _open(a.config)
    try:
        # a user taken out of the config may still hold sessions; a name that is neither
        # configured nor signed in is a typo, which "ended": 0 made look like success
        if config.auth.mode == "users" and config.auth.user(user) is None \
                and not sessions.has_sessions(store, user):
            raise BadInput(f"--user {a.user}: no such user in {a.config} and no session of "
                           f"theirs: nothing ended (check the name)")
        ended = sessions.revoke_user(store, user, by=f"cli:{getpass.getuser()}",
                                     address=None, reason=a.reason,
                                     now_at=datetime.now(UTC))
    finally:
        store.close()
    emit({"user": user, "ended": ended})


def _open(path: str):
    """The config and its plan store, opened as `railyard serve` opens it (its audit key
    file and checkpoints, not var/audit_keys under the current folder)."""
    from dashboard.config import load_config
    from dashboard.runtime import open_plan_store

    config = load_config(path)
    return config, open_plan_store(config)
