"""`railyard auth hash-password`: the password_hash for a user in the config's auth.users.

The password is read from stdin (a prompt without echo on a terminal), never from the
command line, where it would land in the shell history and the process list.
"""

from __future__ import annotations

import argparse
import getpass
import sys

from backend.cli import verb_parser
from backend.errors import BadInput


def register(sub: argparse._SubParsersAction) -> None:
    p = verb_parser(sub, "auth")
    verbs = p.add_subparsers(dest="auth_verb", required=True)
    h = verbs.add_parser("hash-password", help="read a password on stdin, print "
                                               '{"password_hash": ...} for auth.users')
    h.set_defaults(func=_hash_password)


def _hash_password(_: argparse.Namespace) -> dict:
    from werkzeug.security import generate_password_hash

    if sys.stdin.isatty():
        password = getpass.getpass("Password: ")
    else:
        password = sys.stdin.readline().removesuffix("\n").removesuffix("\r")
    if not password:
        raise BadInput("stdin: empty password (give one line with the password)")
    return {"password_hash": generate_password_hash(password)}
