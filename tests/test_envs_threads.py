"""taluva_ai.envs.threads: a batch kernel run on slices of the batch on several threads."""

from __future__ import annotations

import threading

import numpy as np
import pytest

from taluva_ai.envs import threads


def test_over_games_cuts_the_per_game_arguments_into_contiguous_slices() -> None:
    calls: list[tuple[list[int], int, int]] = []
    lock = threading.Lock()

    def kernel(ids: np.ndarray, shared: int, out: np.ndarray) -> None:
        with lock:
            calls.append((ids.tolist(), shared, threading.get_ident()))
        out[:] = ids * shared  # a view: written in place

    ids = np.arange(10)
    out = np.zeros(10, dtype=np.int64)
    threads.over_games(kernel, (ids, 3, out), (0, 2), threads=3)
    assert sorted(c[0] for c in calls) == [[0, 1, 2], [3, 4, 5], [6, 7, 8, 9]]
    assert {c[1] for c in calls} == {3}
    # the first slice runs on the calling thread, the others on the pool's
    assert [c[2] for c in calls if c[0] == [0, 1, 2]] == [threading.get_ident()]
    np.testing.assert_array_equal(out, np.arange(10) * 3)


def test_over_games_runs_small_batches_in_one_call_and_raises_the_kernels_error() -> None:
    calls: list[int] = []

    def kernel(ids: np.ndarray) -> None:
        calls.append(len(ids))
        if 7 in ids:
            raise ValueError("game 7")

    threads.over_games(kernel, (np.arange(1),), (0,), threads=4)
    assert calls == [1]  # one game: one call
    with pytest.raises(ValueError, match="game 7"):
        threads.over_games(kernel, (np.arange(8),), (0,), threads=2)  # 7 is on the pool's slice
    assert threads.num_threads() >= 1
