"""JSON from outside (API bodies, uploaded plan files) read into plain values, or one
BadInput line: never a RecursionError, an int64 overflow or a NaN further down.

Python's parser accepts what JSON does not (NaN, Infinity), integers of any size and
nesting until the interpreter's recursion limit. Here a number past Kafka's long
(2^63-1: every id, count, size and rate Railyard stores fits one) or a non-finite
number is refused while parsing, and so is nesting past the recursion limit.
"""

from __future__ import annotations

import json
import math
from collections.abc import Collection
from typing import Any

from backend.errors import BadInput
from backend.model.bounds import MAX_LONG

SHOWN_DIGITS = 24  # a refused number is shown this long at most


class _Refused(Exception):
    """Raised inside the parser's hooks; not a ValueError, so the parser passes it up."""


def _integer(text: str) -> int:
    value = int(text)
    if not -MAX_LONG - 1 <= value <= MAX_LONG:
        shown = text if len(text) <= SHOWN_DIGITS else f"{text[:SHOWN_DIGITS]}..."
        raise _Refused(f"the integer {shown} is past Kafka's largest value (2^63-1)")
    return value


def _float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise _Refused(f"the number {text[:SHOWN_DIGITS]} is too large")
    return value


def _constant(name: str) -> float:
    raise _Refused(f"{name} is not a JSON number")


def _object(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """An object whose keys are given once: JSON parsers keep the last of a key given
    twice, so {"throttle": 1000000, "throttle": 2000000} read as 2000000 unseen."""
    obj = dict(pairs)
    if len(obj) != len(pairs):
        seen: set[str] = set()
        twice = next(k for k, _ in pairs if k in seen or seen.add(k))
        raise _Refused(f"the key {twice[:40]!r} is given twice in one object")
    return obj


def loads(data: bytes | str, where: str, invalid: str = "not valid JSON") -> Any:
    """``data`` parsed; BadInput naming ``where`` and what was wrong (``invalid``: for
    text that is not JSON at all)."""
    try:
        return json.loads(data, parse_int=_integer, parse_float=_float,
                          parse_constant=_constant, object_pairs_hook=_object)
    except _Refused as e:
        raise BadInput(f"{where}: {e}") from None
    except RecursionError:
        raise BadInput(f"{where}: nested too deeply (arrays and objects within each "
                       "other hundreds of levels deep)") from None
    except UnicodeDecodeError:
        raise BadInput(f"{where}: not UTF-8 text") from None
    except ValueError:  # json.JSONDecodeError, or int()'s digit limit
        raise BadInput(f"{where}: {invalid}") from None


def only_keys(obj: dict, known: Collection[str], where: str) -> None:
    """BadInput naming the first key of ``obj`` outside ``known``: a misspelt key (throtle,
    notbefore) was ignored, and the plan proposed without what it meant."""
    unknown = next((k for k in obj if k not in known), None)
    if unknown is not None:
        raise BadInput(f"{where}: unknown key {str(unknown)[:40]!r} (known: "
                       f"{', '.join(sorted(known))})")
