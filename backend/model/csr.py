"""Helpers for CSR (offsets + values) ragged arrays: replica lists of many partitions."""

from __future__ import annotations

import numpy as np


def offsets_from_lengths(lengths: np.ndarray) -> np.ndarray:
    """Offsets (len n + 1, starting at 0) for rows of the given lengths."""
    return np.concatenate(([0], np.cumsum(lengths, dtype=np.int64))).astype(np.int64)


def gather_index(offsets: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """Indexes into the values array that lay out ``rows`` one after another."""
    rows = np.asarray(rows, dtype=np.int64)
    lengths = offsets[rows + 1] - offsets[rows]
    starts = np.repeat(offsets[rows], lengths)
    within = np.arange(int(lengths.sum()), dtype=np.int64) - np.repeat(
        np.cumsum(lengths) - lengths, lengths
    )
    return starts + within


def padded_rows(offsets: np.ndarray, values: np.ndarray, rows: np.ndarray,
                pad: int = -1) -> np.ndarray:
    """CSR rows as a (len(rows), longest) matrix, short rows padded with ``pad``."""
    lengths = offsets[rows + 1] - offsets[rows]
    k = np.arange(int(lengths.max()) if len(rows) else 0)
    valid = k[None, :] < lengths[:, None]
    cells = np.where(valid, offsets[rows][:, None] + k[None, :], 0)
    return np.where(valid, values[cells] if len(values) else pad, pad)
