"""A partition assignment {"first": [ids], "first+1": [ids], ...} kept as arrays.

A 1M-partition answer built as a dict of lists costs seconds (a million str keys, three
million ints, then a JSON encoder walking them); ``IndexedRows`` reads like that dict
but its JSON text is written straight from the arrays, digits and all, by numpy.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping

import numpy as np

_ASCII_0 = ord("0")


class IndexedRows(Mapping[str, list[int]]):
    """``{str(first + i): ids[positions[i]].tolist()}``, without building it."""

    def __init__(self, first: int, positions: np.ndarray, ids: np.ndarray):
        self.first = first
        self.positions = np.asarray(positions, dtype=np.int64)
        self.ids = np.asarray(ids, dtype=np.int64)

    def __len__(self) -> int:
        return len(self.positions)

    def __iter__(self) -> Iterator[str]:
        return map(str, range(self.first, self.first + len(self)))

    def __getitem__(self, key: str) -> list[int]:
        i = int(key) - self.first if isinstance(key, str) and key.isdigit() else -1
        if not 0 <= i < len(self) or str(i + self.first) != key:
            raise KeyError(key)
        return self.ids[self.positions[i]].tolist()

    def json_bytes(self) -> bytes:
        """The JSON object text, equal to ``orjson.dumps(dict(self))``."""
        n, k = self.positions.shape if self.positions.ndim == 2 else (len(self), 0)
        if n == 0 or k == 0 or self.first < 0 or len(self.ids) == 0 or self.ids.min() < 0:
            import orjson  # the rare shapes: no partitions, no replicas, negative ids

            return orjson.dumps(dict(self))
        # one column of bytes per character of the widest row; a row is
        # "KEY":[ID,ID,...], with the numbers right-aligned in their columns and the
        # unused leading columns masked out
        key_w = len(str(self.first + n - 1))
        id_digits, id_used = _digit_table(self.ids)
        id_w = id_digits.shape[0]
        width = 1 + key_w + 3 + k * (id_w + 1) + 1
        out = np.empty((width, n), dtype=np.uint8)
        used = np.ones((width, n), dtype=bool)
        out[0] = ord('"')
        _write_digits(np.arange(self.first, self.first + n, dtype=np.int64), out[1:1 + key_w],
                      used[1:1 + key_w])
        col = 1 + key_w
        out[col:col + 3] = np.frombuffer(b'":[', dtype=np.uint8)[:, None]
        col += 3
        for r in range(k):
            pos = self.positions[:, r]
            np.take(id_digits, pos, axis=1, mode="clip", out=out[col:col + id_w])
            np.take(id_used, pos, axis=1, mode="clip", out=used[col:col + id_w])
            col += id_w
            out[col] = ord(",") if r < k - 1 else ord("]")
            col += 1
        out[col] = ord(",")
        used[col, -1] = False
        return b"{" + out.T[used.T].tobytes() + b"}"


def _digit_table(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Right-aligned decimal digits of non-negative ``values`` (one column each) and which
    of them are printed (no leading zeros)."""
    width = len(str(int(values.max())))
    digits = np.empty((width, len(values)), dtype=np.uint8)
    used = np.empty((width, len(values)), dtype=bool)
    _write_digits(values, digits, used)
    return digits, used


def _write_digits(values: np.ndarray, digits: np.ndarray, used: np.ndarray) -> None:
    rest = values.astype(np.uint32 if values.max() < 2**32 else np.uint64)
    width = len(digits)
    for j in range(width):
        row = width - 1 - j
        np.remainder(rest, 10, out=digits[row], casting="unsafe")
        digits[row] += _ASCII_0
        np.greater_equal(values, 10 ** j, out=used[row])
        rest //= 10
    used[width - 1] = True  # 0 prints as "0"
