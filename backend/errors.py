"""Errors a user can act on.

BadInput is the one exception the CLI and the pages turn into a one-line message
(exit code 2 on the CLI): it says what was wrong and where, and is raised before
anything is written or changed. Unavailable is a source that does not answer (a
cluster's gateway, Prometheus, Spark): pages show it as a banner and render the rest.
Forbidden, Conflict and NotFound are the plan workflow's refusals (HTTP 403, 409, 404).
"""

import re
from urllib.parse import unquote_plus


class BadInput(ValueError):
    """Input that Railyard refuses: the message names what was wrong and where."""

    def __init__(self, message: str) -> None:
        super().__init__(" ".join(str(message).split()))


class Unavailable(RuntimeError):
    """A source the page needs is unreachable: ``what`` is shown in the banner.
    ``not_yet``: it answered but holds too little yet (a history scraped for hours), a
    caveat to wait out rather than a fault to fix."""

    def __init__(self, what: str, detail: str, not_yet: bool = False) -> None:
        self.what, self.detail, self.not_yet = what, " ".join(detail.split()), not_yet
        super().__init__(f"{what}: {self.detail}")


class Forbidden(PermissionError):
    """The user's role or relation to the plan does not allow the action (HTTP 403); the
    message names the rule that failed."""

    def __init__(self, message: str) -> None:
        super().__init__(" ".join(str(message).split()))


class Conflict(RuntimeError):
    """The action is allowed but the plan's state forbids it now (HTTP 409): already
    decided, expired, a stale sha256, or a cluster that moved since the proposal."""

    def __init__(self, message: str) -> None:
        super().__init__(" ".join(str(message).split()))


class NotFound(LookupError):
    """No such plan (HTTP 404)."""

    def __init__(self, message: str) -> None:
        super().__init__(" ".join(str(message).split()))


def shown_url(url: str) -> str:
    """A URL as a message may show it: the password of its user part masked, the values
    of password-like query parameters masked (libpq's ``password`` and ``sslpassword``,
    tokens, keys), and what follows ';' (Spark Connect's ``;token=``) dropped. Messages
    reach pages, logs and reports; the secrets a URL can carry must not. Everything before
    the last '@' is taken as the user part (a password may hold '/'), and a parameter
    whose name only looks like a secret's is masked too: masking too much is the safe
    side. The password is masked before ';' is looked for, as a password may hold ';'
    too: cut there first, its start was shown."""
    scheme, slashes, rest = url.partition("://")
    user, at, tail = rest.rpartition("@")
    if slashes and at and ":" in user:
        url = f"{scheme}://{user.split(':', 1)[0]}:***@{tail}"
    head, sep, _ = url.partition(";")
    return _masked_query(head) + (";..." if sep else "")


# names of query parameters whose values are secrets, or may be: libpq's connection
# parameters password and sslpassword (PostgreSQL docs, "Connection Strings"), and the
# usual spellings of tokens and keys
_SECRET_PARAM = re.compile(r"pass|pwd|secret|token|key|auth|credential|signature|^sig$",
                           re.IGNORECASE)


def _masked_query(url: str) -> str:
    """The URL with the values of its secret-like parameters, in the query or the
    fragment (``#access_token=``), masked."""
    rest, hash_, fragment = url.partition("#")
    base, mark, query = rest.partition("?")
    return f"{base}{mark}{_masked_params(query)}{hash_}{_masked_params(fragment)}"


def _masked_params(params: str) -> str:
    out = []
    for param in params.split("&"):
        name, eq, _ = param.partition("=")
        out.append(f"{name}=***" if eq and _SECRET_PARAM.search(unquote_plus(name))
                   else param)
    return "&".join(out)
