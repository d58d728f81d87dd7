"""The job ids of a file read in chunks: which ids of a new chunk appeared in an earlier one, and on which line.

Exact, and small: each id is kept once, as Arrow text (its bytes and an offset), with a 64-bit hash and its
position (16 bytes) in runs sorted by hash, merged two by two as they grow (as in a log-structured merge), so
that a file of n ids costs O(n log n) however many chunks it has. A chunk's ids are looked up by hash in
each run, and every hash match is confirmed by comparing the text, so a hash collision never makes a
duplicate.
"""
from __future__ import annotations

import numpy as np
import pandas as pd
import pyarrow as pa


class SeenIds:
    """Every job id seen so far with the line where it first appeared."""

    def __init__(self) -> None:
        self._runs: list[tuple[np.ndarray, np.ndarray]] = []   # (hashes sorted, position of each id)
        self._ids: list[pa.Array] = []
        self._lines: list[np.ndarray] = []
        self._starts = np.zeros(1, np.int64)    # position of the first id of each chunk, then the total

    def first_lines(self, ids: np.ndarray, lines: np.ndarray) -> np.ndarray:
        """For each of the distinct, non-missing `ids` (object array of str, first seen in this chunk on
        `lines`): the line where it appeared in an earlier chunk, or -1; the new ones are remembered."""
        found = np.full(len(ids), -1, np.int64)
        if not len(ids):
            return found
        hashes = pd.util.hash_array(ids, categorize=False)
        order = np.argsort(hashes, kind="stable")
        hashes, ids_sorted = hashes[order], ids[order]
        for run_hashes, run_where in self._runs:
            low = np.searchsorted(run_hashes, hashes, side="left")
            high = np.searchsorted(run_hashes, hashes, side="right")
            for k in np.flatnonzero(high > low):    # a hash match: compare the text (a collision is no match)
                for where in run_where[low[k]:high[k]]:
                    chunk = int(np.searchsorted(self._starts, where, side="right")) - 1
                    offset = int(where - self._starts[chunk])
                    if self._ids[chunk][offset].as_py() == ids_sorted[k]:
                        found[order[k]] = self._lines[chunk][offset]
                        break
        new = found < 0
        keep = new[order]                          # the new ids, in hash order
        self._remember(ids[new], np.asarray(lines, np.int64)[new], hashes[keep], (np.cumsum(new) - 1)[order[keep]])
        return found

    def _remember(self, ids: np.ndarray, lines: np.ndarray, hashes: np.ndarray, rank: np.ndarray) -> None:
        """Keep `ids` first seen on `lines`; `hashes` are theirs sorted and `rank` the index in `ids` of each."""
        if not len(ids):
            return
        self._runs.append((hashes, self._starts[-1] + rank))
        self._ids.append(pa.array(ids, pa.string()))
        self._lines.append(lines)
        self._starts = np.append(self._starts, self._starts[-1] + len(ids))
        while len(self._runs) > 1 and len(self._runs[-2][0]) <= 2 * len(self._runs[-1][0]):
            (h1, w1), (h2, w2) = self._runs.pop(), self._runs.pop()
            hashes, where = np.concatenate([h2, h1]), np.concatenate([w2, w1])
            merged = np.argsort(hashes, kind="stable")   # two sorted runs: a linear merge
            self._runs.append((hashes[merged], where[merged]))
