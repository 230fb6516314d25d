"""Banners: one line saying what is missing or wrong, never a stack trace."""

from __future__ import annotations

from dash import html

KINDS = ("error", "warning", "info")


def banner(text: str, kind: str = "warning", role: str | None = None) -> html.Div:
    return html.Div(text, className=f"banner banner-{kind}",
                    role=role or ("alert" if kind == "error" else "status"))


def banners(messages: list[tuple[str, str]]) -> list[html.Div]:
    """[(kind, text), ...] -> banner elements (an empty list when all is well)."""
    return [banner(text, kind) for kind, text in messages]


def error_line(text: str | None) -> str:
    """Text for an inline one-line error slot ('' hides it)."""
    return text or ""
