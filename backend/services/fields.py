"""Numbers typed into a form (or sent to the API), read once, here. The pages' number
fields are text: a browser's number field sends nothing for a value outside its min,
max or step, so "-5" and "2.5" arrived as "left empty" and the default was used in
silence. Here "left empty" is told from "not a number" and from "out of range", and a
refusal names the field and what it takes, in one line."""

from __future__ import annotations

import math
import re

from backend.errors import BadInput
from backend.model.bounds import parse_broker_id

# ASCII digits only: float() also takes "١٢", "1_000", "nan" and "inf"
NUMBER = re.compile(r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?", re.ASCII)


def number(value: object, where: str, *, low: float | None = None,
           high: float | None = None, above: float | None = None, whole: bool = False,
           limit: float | None = None, default: float | None = None,
           required: bool | str = False, unit: str = "",
           empty: str = "") -> float | int | None:
    """``value`` (text, a number or None) read as a number of the field ``where``.
    Empty gives ``default``, or is refused if ``required`` (which may say what to give).
    ``low``/``high`` (inclusive) and ``above`` (exclusive) are the field's range, said in
    every refusal; ``limit`` is the largest value (Kafka's LONG or INT, a bound of
    backend/model/bounds), said only to a value past it. ``whole`` asks for an integer
    (returned as int); ``unit`` follows the range, and ``empty`` says what leaving the
    field empty does ("retention.ms")."""
    wanted = _wanted(low, high, above, whole, unit) + (f", or leave it empty for {empty}"
                                                       if empty else "")
    text = _written(value)
    if not text:
        if required:
            raise BadInput(f"{where}: give {wanted if required is True else required}")
        return default
    if isinstance(value, bool) or not NUMBER.fullmatch(text):
        raise BadInput(f"{where}: give {wanted}, got '{_short(text)}'")
    x = float(text)
    if limit is not None and x > limit:
        raise BadInput(f"{where}: {_short(text)} is past the largest value, {_g(limit)} "
                       f"{unit}".rstrip())
    if not math.isfinite(x) or (whole and x != int(x)) or (low is not None and x < low) or (
            high is not None and x > high) or (above is not None and x <= above):
        raise BadInput(f"{where}: give {wanted}, got {_short(text)}")
    return int(x) if whole else x


class BrokerIdRefused(BadInput):
    """broker_ids' refusal, with what it refused for a caller that says it in its own
    words (`railyard reassign --brokers`): ``why``, parse_broker_id's words for a part
    that is not a broker id, or ``twice``, the broker named twice."""

    def __init__(self, message: str, *, why: str = "", twice: int | None = None) -> None:
        super().__init__(message)
        self.why, self.twice = why, twice


def broker_ids(text: str | None, where: str) -> list[int]:
    """'7, 8' -> [7, 8]: broker ids as typed (commas or spaces between them), each an id
    Kafka can have and each once; BrokerIdRefused naming the one that is not. Empty
    text is no broker ([]): the caller says whether it needs one."""
    out: list[int] = []
    for part in (text or "").replace(",", " ").split():
        try:
            broker = parse_broker_id(part)
        except BadInput as e:  # said as this field's help says it
            raise BrokerIdRefused(f"{where}: '{_short(part)}' is not a broker id (give ids "
                                  "separated by commas, e.g. 7,8)", why=str(e)) from None
        if broker in out:
            raise BrokerIdRefused(f"{where}: broker {broker} is named twice", twice=broker)
        out.append(broker)
    return out


def _wanted(low: float | None, high: float | None, above: float | None, whole: bool,
            unit: str) -> str:
    """'a whole number from 1 to 32', 'a number larger than 0 MB/s', ..."""
    kind = "a whole number" if whole else "a number"
    if low is not None and high is not None:
        text = f"{kind} from {_g(low)} to {_g(high)}"
    elif low is not None:
        text = f"{kind} of at least {_g(low)}"
    elif above is not None:
        text = f"{kind} larger than {_g(above)}" + (f" and at most {_g(high)}" if high else "")
    elif high is not None:
        text = f"{kind} of at most {_g(high)}"
    else:
        text = kind
    return f"{text} {unit}".rstrip()


def _g(x: float) -> str:
    return f"{x:,.0f}" if float(x).is_integer() or abs(x) >= 1e6 else f"{x:g}"


def _written(value: object) -> str:
    """A field's text; a number (a JSON body's) as a person writes it: 1e18, not Python's
    1e+18, so the API's refusal reads as the page's for the same input."""
    if value is None:
        return ""
    if isinstance(value, float):
        return repr(value).replace("e+", "e")
    return str(value).strip()


def _short(text: str) -> str:
    return text if len(text) <= 24 else text[:21] + "..."
