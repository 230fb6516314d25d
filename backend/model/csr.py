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
