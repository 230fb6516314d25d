"""View state in the URL query string, so a link shows a colleague the same view."""

from __future__ import annotations

from collections.abc import Sequence
from urllib.parse import parse_qsl, urlencode

SHARED_KEYS = ("cluster", "range", "from", "to")  # carried from page to page


def parse(search: str | None) -> dict[str, str]:
    return dict(parse_qsl((search or "").lstrip("?"), keep_blank_values=False))


def build(state: dict[str, str | None]) -> str:
    """'?k=v&...' without empty values ('' when nothing is left)."""
    kept = {k: v for k, v in state.items() if v not in (None, "")}
    return f"?{urlencode(kept)}" if kept else ""


def updated(search: str | None, **changes: str | None) -> str:
    return build({**parse(search), **changes})


def shared(search: str | None) -> str:
    """The part of the query every page understands (cluster and time range)."""
    state = parse(search)
    return build({k: state.get(k) for k in SHARED_KEYS})


def unknown(key: str, value: str | None, choices: Sequence[str], instead: str) -> str | None:
    """What a page says of a link's ``key`` it does not know (it shows ``instead``); None
    for no value or a known one. A typo in a shared link showed everything, unsaid."""
    if not value or value in choices:
        return None
    return (f"The link's {key}={value[:60]!r} is not one of {', '.join(choices)}: showing "
            f"{instead}.")
