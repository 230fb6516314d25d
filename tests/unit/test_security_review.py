"""Findings of a security review, one test group each: secrets in URLs stay out of
messages, whatever order their parts come in."""

from __future__ import annotations

import pytest

from backend.errors import shown_url


@pytest.mark.parametrize(("url", "shown"), [
    ("postgresql+psycopg://railyard:s3cr;et@db:5432/railyard",
     "postgresql+psycopg://railyard:***@db:5432/railyard"),
    ("redis://:hunter2;x@redis:6379/0", "redis://:***@redis:6379/0"),
    ("sc://spark:15002/;token=SparkT0ken;user_id=a", "sc://spark:15002/;..."),
    ("sc://u:pw@spark:15002/;token=SparkT0ken", "sc://u:***@spark:15002/;..."),
])
def test_a_password_holding_a_semicolon_is_masked_whole(url, shown):
    """shown_url cut the URL at ';' before it masked the user part, so a password with
    ';' in it was shown up to there ('railyard:s3cr;...')."""
    assert shown_url(url) == shown
