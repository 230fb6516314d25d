"""Quota principals' names as Kafka writes them into MBean tags, and back.

Kafka's metrics name a quota bucket by ``user`` and ``client-id`` tags (core
.../ClientQuotaManager.scala, DefaultQuotaCallback.quotaMetricTags), and JmxReporter turns
the tags into the MBean name (clients .../metrics/JmxReporter.java getMBeanName):

- ``user`` is the principal's name URL-encoded (Sanitizer.sanitize, clients
  .../common/utils/Sanitizer.java: URLEncoder, then ``*`` as ``%2A`` and ``+`` as ``%20``):
  a TLS DN ``CN=a,O=b`` is ``CN%3Da%2CO%3Db``;
- every tag value is then passed through Sanitizer.jmxSanitize: a value with a character
  outside ``[\\w-%. \\t]`` is quoted with javax.management.ObjectName.quote (wrapped in
  ``"``; ``\\``, ``"``, ``*``, ``?`` backslash-escaped, a newline as ``\\n``). A
  sanitized user never needs it; a client id like ``app:1`` becomes ``"app:1"``;
- an empty tag is left out of the MBean name (the label is then absent, i.e. "").

The JMX exporter copies those values into the labels unchanged, so Railyard decodes them
before naming a principal or matching it to DescribeClientQuotas' entity names (which are
the raw names). The twin encodes its principals the same way.
"""

from __future__ import annotations

import re
from urllib.parse import quote, unquote

_MBEAN_SAFE = re.compile(r"[\w\-%. \t]*", re.ASCII)
_QUOTE_ESCAPES = {"\\": "\\\\", '"': '\\"', "*": "\\*", "?": "\\?", "\n": "\\n"}
_UNQUOTE = {"\\": "\\", '"': '"', "*": "*", "?": "?", "n": "\n"}


def sanitize(name: str) -> str:
    """Sanitizer.sanitize: URL-encode (java.net.URLEncoder keeps letters, digits and
    ``.-*_``; Python's quote also keeps ``~``, which Java encodes), ``*`` as %2A."""
    return quote(name, safe="-_.*").replace("~", "%7E").replace("*", "%2A")


def desanitize(name: str) -> str:
    """Sanitizer.desanitize (URLDecoder.decode: %XX in UTF-8, ``+`` as a space)."""
    return unquote(name.replace("+", " "))


def jmx_sanitize(value: str) -> str:
    """Sanitizer.jmxSanitize: the value as is when JMX-safe, else ObjectName.quote(value)."""
    if _MBEAN_SAFE.fullmatch(value):
        return value
    return '"' + "".join(_QUOTE_ESCAPES.get(c, c) for c in value) + '"'


def jmx_unquote(value: str) -> str:
    """ObjectName.unquote of a quoted value; any other value is returned unchanged."""
    if len(value) < 2 or not (value.startswith('"') and value.endswith('"')):
        return value
    out, body, i = [], value[1:-1], 0
    while i < len(body):
        c = body[i]
        if c == "\\" and i + 1 < len(body):
            out.append(_UNQUOTE.get(body[i + 1], body[i + 1]))
            i += 2
        else:
            out.append(c)
            i += 1
    return "".join(out)


def user_label(user: str) -> str:
    """The ``user`` label Kafka's MBean gives a principal name ("" stays absent)."""
    return jmx_sanitize(sanitize(user)) if user else ""


def client_label(client_id: str) -> str:
    """The ``client_id`` label Kafka's MBean gives a client id."""
    return jmx_sanitize(client_id) if client_id else ""


def principal_of(user: str, client_id: str) -> tuple[str, str]:
    """(user, client id) as DescribeClientQuotas and clients name them, from the labels."""
    return desanitize(jmx_unquote(user)), jmx_unquote(client_id)
