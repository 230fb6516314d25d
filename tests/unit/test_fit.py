"""Level filling (the capacity placement's per-broker counts) against the obvious greedy
rule: one replica at a time to the emptiest broker with room, lowest position first."""

import numpy as np
import pytest

from backend.engines.fit import level_fill


def greedy(current: np.ndarray, cap: np.ndarray, total: int) -> np.ndarray:
    y = np.zeros_like(cap)
    for _ in range(max(total, 0)):
        room = np.flatnonzero(y < cap)
        if not len(room):
            break
        y[room[np.argmin((current + y)[room])]] += 1
    return y


@pytest.mark.parametrize("seed", range(200))
def test_level_fill_is_the_greedy_fill(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 12))
    current = rng.integers(-20, 20, n)
    cap = rng.integers(0, int(rng.integers(1, 15)), n)
    total = int(rng.integers(0, int(cap.sum()) + 1))
    assert level_fill(current, cap, total).tolist() == greedy(current, cap, total).tolist()
