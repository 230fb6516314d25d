"""Banners: one line saying what is missing or wrong, never a stack trace."""

from __future__ import annotations

from dash import html


def banner(text: str, kind: str = "warning", role: str | None = None) -> html.Div:
    """A banner of ``kind`` (error, warning, info); an error is announced as an alert."""
    return html.Div(text, className=f"banner banner-{kind}",
                    role=role or ("alert" if kind == "error" else "status"))
