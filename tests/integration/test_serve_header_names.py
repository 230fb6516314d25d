"""`railyard serve` drops request headers whose names hold '_'. WSGI gives X_Forwarded_User
and X-Forwarded-User one key (PEP 3333: HTTP_, upper case, '-' made '_'), and Granian's
WSGI interface kept the one sent last: behind a single-sign-on proxy that sets
X-Forwarded-User but passes a client's X_Forwarded_User on (Apache's mod_proxy_http,
oauth2-proxy), any signed-in user could name themselves someone else, in any role. Found
by sending both to a running `railyard serve` (2026-11-29): the page named the
underscore's user."""

from __future__ import annotations

import asyncio

import pytest
import requests

from dashboard.server import without_underscore_headers
from tests.e2e.conftest import start_dashboard
from tests.servers import stop

pytestmark = pytest.mark.integration

PROXY = {"X-Forwarded-User": "sam", "X-Forwarded-Role": "viewer"}


@pytest.fixture(scope="module")
def dashboard(tmp_path_factory):
    """Single sign-on from this address (the proxy), on a cluster nobody reads."""
    tmp = tmp_path_factory.mktemp("sso")
    d = start_dashboard(tmp, {
        "clusters": [{"name": "demo", "gateway": {"type": "twin", "url": "http://127.0.0.1:9"}}],
        "auth": {"trusted_header": {"from": ["127.0.0.1"]},
                 "secret_key_file": str(tmp / "secret_key")}}, headers=PROXY)
    try:
        yield d
    finally:
        stop(d.proc)


def signed_in_as(url: str, headers: dict[str, str]) -> tuple[int, str | None]:
    """The status of the layout and the user it is drawn for (a quoted name in it)."""
    answer = requests.get(f"{url}/_dash-layout", headers=headers, timeout=30)
    text = answer.text
    return answer.status_code, next((n for n in ("sam", "ines") if f'"{n}"' in text), None)


def test_a_header_spelt_with_underscores_names_nobody(dashboard):
    assert signed_in_as(dashboard.url, PROXY) == (200, "sam")
    # the proxy's headers, then a client's passed on after them: the proxy's still count
    assert signed_in_as(dashboard.url, {**PROXY, "X_Forwarded_User": "ines",
                                        "X_Forwarded_Role": "admin"}) == (200, "sam")
    # only the client's: nobody is named, as without a proxy's header
    assert signed_in_as(dashboard.url, {"X_Forwarded_User": "ines",
                                        "X_Forwarded_Role": "admin"})[0] == 401


def test_the_filter_keeps_every_other_header():
    seen: list[dict] = []

    async def app(scope, _receive, _send):
        seen.append(scope)

    scope = {"type": "http", "path": "/", "headers": [
        (b"x-forwarded-user", b"sam"), (b"x_forwarded_user", b"ines"), (b"host", b"h"),
        (b"x-forwarded_for", b"10.0.0.1"), (b"accept", b"*/*")]}
    asyncio.run(without_underscore_headers(app)(scope, None, None))
    asyncio.run(without_underscore_headers(app)({"type": "lifespan"}, None, None))
    assert seen[0]["headers"] == [(b"x-forwarded-user", b"sam"), (b"host", b"h"),
                                  (b"accept", b"*/*")]
    assert seen[0]["path"] == "/" and scope["headers"][1] == (b"x_forwarded_user", b"ines")
    assert seen[1] == {"type": "lifespan"}
