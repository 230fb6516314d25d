"""Which addresses the twin's HTTP servers (its API, its exporters) answer to: the Host
header must name the address the server is bound to, with its port, and for a loopback
bind also localhost, 127.0.0.1 or [::1] with that port (what urllib, a browser or
Prometheus send when pointed at it).

Reads need no credentials, so the Host is what keeps another site out: a page on an
attacker's domain whose name it re-points at 127.0.0.1 (DNS rebinding) reaches the
server from a user's browser in the page's own origin, and could read the answers; its
requests carry the attacker's name in Host, which is refused here, reads and writes
alike, before the request is read further.
"""

from __future__ import annotations

import ipaddress
from http.server import BaseHTTPRequestHandler

LOOPBACK_NAMES = ("localhost", "127.0.0.1", "[::1]")
# 421 Misdirected Request: "the request was directed at a server that is unable or
# unwilling to produce an authoritative response for the target URI" (RFC 9110, section
# 15.5.20), which is what a Host naming another site is. Not 403: the API's 403 already
# means "writes are disabled on this twin", which its client raises as an authorization
# failure; a 421 reaches backend.gateways.twin_http as Unavailable with this message.
MISDIRECTED = 421


def served_hosts(host: str, port: int) -> frozenset[str]:
    """The Host header values (lower case) a server bound to ``host``:``port`` answers."""
    names = {f"[{host}]" if ":" in host else host.lower()}
    try:
        loopback = ipaddress.ip_address(host).is_loopback
    except ValueError:  # a name, not an address
        loopback = host.lower() == "localhost"
    if loopback:
        names.update(LOOPBACK_NAMES)
    served = {f"{name}:{port}" for name in names}
    if port == 80:  # a client leaves out the scheme's default port (RFC 9110, section 7.2)
        served |= names
    return frozenset(served)


def misdirected(given: list[str], served: frozenset[str], what: str) -> str | None:
    """Why a request whose Host headers are ``given`` is refused (one line), or None when
    it names one of the ``served`` addresses; ``what`` is the server, said in the line."""
    if len(given) == 1 and given[0].strip().lower() in served:
        return None
    answers = f"{what} answers only requests addressed to {', '.join(sorted(served))}"
    if not given:
        return f"no Host header: {answers}"
    if len(given) > 1:
        return f"{len(given)} Host headers: {answers}, in one"
    shown = repr(given[0] if len(given[0]) <= 80 else given[0][:77] + "...")
    return (f"Host {shown} refused: {answers} (a name another site re-pointed at this "
            "machine is refused: DNS rebinding)")


class ServedHostsOnly(BaseHTTPRequestHandler):
    """A request handler that answers only requests addressed to its server (above); a
    refused one is answered by ``refuse_host`` and not handled further."""

    served_what = "the twin"  # the server as a refusal names it

    def parse_request(self) -> bool:
        if not super().parse_request():
            return False
        host, port = self.server.server_address[:2]
        why = misdirected(self.headers.get_all("Host") or [], served_hosts(host, port),
                          self.served_what)
        if why is None:
            return True
        self.close_connection = True
        self.refuse_host(MISDIRECTED, why)
        return False

    def refuse_host(self, status: int, message: str) -> None:
        """Answer a refused request (a plain error page; the API answers JSON)."""
        self.send_error(status, message)
