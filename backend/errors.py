"""Errors a user can act on.

BadInput is the one exception the CLI and the pages turn into a one-line message
(exit code 2 on the CLI): it says what was wrong and where, and is raised before
anything is written or changed. Unavailable is a source that does not answer (a
cluster's gateway, Prometheus, Spark): pages show it as a banner and render the rest.
Forbidden, Conflict and NotFound are the plan workflow's refusals (HTTP 403, 409, 404).
"""


class BadInput(ValueError):
    """Input that Railyard refuses: the message names what was wrong and where."""

    def __init__(self, message: str) -> None:
        super().__init__(" ".join(str(message).split()))


class Unavailable(RuntimeError):
    """A source the page needs is unreachable: ``what`` is shown in the banner."""

    def __init__(self, what: str, detail: str) -> None:
        self.what, self.detail = what, " ".join(detail.split())
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
    """A URL as a message may show it: the password of its user part masked, and what
    follows ';' (Spark Connect's ``;token=``) dropped. Messages reach pages, logs and
    reports; the secrets a URL can carry must not. Everything before the last '@' is
    taken as the user part (a password may hold '/'): masking too much is the safe side."""
    head, sep, _ = url.partition(";")
    scheme, slashes, rest = head.partition("://")
    user, at, tail = rest.rpartition("@")
    if slashes and at and ":" in user:
        head = f"{scheme}://{user.split(':', 1)[0]}:***@{tail}"
    return head + (";..." if sep else "")
