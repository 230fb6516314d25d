"""What a trusted reverse proxy says about a request: the client's address and whether the
browser spoke https to it.

Each proxy appends the address it was reached from to X-Forwarded-For, so with
``auth.trusted_hops`` proxies in front of Railyard the client is that many entries from
the right; the entries to the left of it are whatever the client sent and are never
believed. The headers count only when the request comes from ``auth.trusted_proxies``.
"""

from __future__ import annotations

import functools
import ipaddress

from flask import request

from dashboard.config import AuthSettings

MAX_ADDRESS = 45  # characters in the longest textual IPv6 address (with an IPv4 tail)


def in_networks(address: str, networks: tuple[str, ...]) -> bool:
    """Whether ``address`` is one of the listed addresses or inside a listed network."""
    try:
        ip = ipaddress.ip_address(address)
    except ValueError:
        return False
    return any(ip in _network(n) for n in networks)


@functools.lru_cache(maxsize=256)
def _network(text: str) -> ipaddress.IPv4Network | ipaddress.IPv6Network:
    """A configured network, parsed once (every request asks whether it came through
    one, some twice)."""
    return ipaddress.ip_network(text, strict=False)


def from_trusted_proxy(auth: AuthSettings) -> bool:
    return in_networks(request.remote_addr or "", auth.trusted_proxies)


def client_address(auth: AuthSettings) -> str:
    """The browser's address as the audit log records it: the X-Forwarded-For entry the
    outermost trusted proxy added, when the request came through trusted proxies and that
    entry is an IP address; else the address that connected (always at most 45 characters)."""
    connected = request.remote_addr or ""
    forwarded = request.headers.get("X-Forwarded-For")
    if not forwarded or not from_trusted_proxy(auth):  # no entry to believe
        return connected
    hops = [h.strip() for h in forwarded.split(",")]
    if len(hops) < auth.trusted_hops:
        return connected
    added = hops[-auth.trusted_hops]
    if len(added) > MAX_ADDRESS:
        return connected
    try:
        return str(ipaddress.ip_address(added))
    except ValueError:
        return connected


def is_https(auth: AuthSettings) -> bool:
    """The browser reached us over https: directly, or through a trusted proxy that says
    so in X-Forwarded-Proto (its right-most entry: the one that proxy set)."""
    if request.is_secure:
        return True
    proto = request.headers.get("X-Forwarded-Proto", "").split(",")[-1].strip().lower()
    return proto == "https" and from_trusted_proxy(auth)
