"""Errors a user can act on.

BadInput is the one exception the CLI and the pages turn into a one-line message
(exit code 2 on the CLI): it says what was wrong and where, and is raised before
anything is written or changed. Unavailable is a source that does not answer (a
cluster's gateway, Prometheus, Spark): pages show it as a banner and render the rest.
"""


class BadInput(ValueError):
    """Input that Railyard refuses: the message names what was wrong and where."""

    def __init__(self, message: str) -> None:
        super().__init__(" ".join(str(message).split()))


class Unavailable(RuntimeError):
    """A source the page needs is unreachable: ``what`` is shown in the banner."""

    def __init__(self, what: str, detail: str) -> None:
        super().__init__(f"{what}: {' '.join(detail.split())}")
        self.what = what
