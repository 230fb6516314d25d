"""View state in the URL query string, so a link shows a colleague the same view."""

from __future__ import annotations

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
