"""Precomputed meld templates: every set and run a deck allows, built once per variant.

A template is a set of natural faces (see :mod:`cards`): a *set* is one rank in 3 or 4
distinct suits, a *run* is 3+ consecutive positions of one suit. Run positions are
0 = ace low, 1..12 = ranks 2..K, 13 = ace high; with ``ace_high`` off position 13 is never
used, and nothing wraps (K-A-2 is never a run). Jokers are not part of a template: a meld is a template
whose missing faces are filled by jokers with that template face as their declared card.

The table is plain numpy (bitmasks, padded face lists, per-face credits) so the rules core
and the solver index it from compiled code without Python objects.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from itertools import combinations

import numpy as np

from .cards import NUM_FACES, NUM_RANKS, NUM_SUITS, face_of

SET = 1
RUN = 2
ACE_HIGH_POS = 13
MAX_MELD_LEN = 14  # a run may hold 13 positions; 14 slots leave room for a set's 4 suits too


@dataclass(frozen=True)
class MeldRules:
    """What counts as a meld, and what melded cards are worth (credit)."""

    ace_low: bool = True
    ace_high: bool = True
    # Credit of a melded card by rank index (A..K; the ace entry is its credit in a set).
    # In a run the ace earns ``ace_low_credit`` at the low end, ``ace_high_credit`` at the top.
    rank_credit: tuple[int, ...] = (14, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13)
    ace_low_credit: int = 1
    ace_high_credit: int = 14
    # A meld holding 2+ jokers needs at least this many natural cards (German GE-3: 2);
    # 0 adds nothing to the solver's own "one natural per meld".
    min_naturals_with_two_jokers: int = 0


@dataclass(frozen=True)
class MeldTable:
    """Every template of a variant.

    Arrays (``T`` templates): ``kind`` SET/RUN, ``suit`` (runs; -1 for sets), ``rank`` (sets;
    -1 for runs), ``lo``/``hi`` run positions, ``length``, ``faces[T, 14]`` faces in order
    (-1 padded), ``pos[T, 14]`` run position or set suit of each face, ``credit[T, 14]`` per
    face, ``mask`` uint64 face bitmask, ``by_face[52, K]`` the templates holding each face,
    and ``by_low[52, L]`` those whose lowest face (lowest bit of ``mask``) it is: a template
    made of faces from a set ``A`` lies in ``by_low[f]`` for some f in ``A``, so a search
    for such templates reads a few short lists instead of the whole table.
    """

    rules: MeldRules
    kind: np.ndarray
    suit: np.ndarray
    rank: np.ndarray
    lo: np.ndarray
    hi: np.ndarray
    length: np.ndarray
    faces: np.ndarray
    pos: np.ndarray
    credit: np.ndarray
    mask: np.ndarray
    by_face: np.ndarray
    by_face_count: np.ndarray
    by_low: np.ndarray
    by_low_count: np.ndarray

    @property
    def num_templates(self) -> int:
        return len(self.kind)

    def find(self, faces) -> int:
        """Template id holding exactly these natural faces, or -1. Where two templates hold
        the same faces (a 13-card run with the ace low or high), the face order decides."""
        faces = [int(f) for f in faces]
        bits = 0
        for f in faces:
            bits |= 1 << f
        hits = np.flatnonzero(self.mask == np.uint64(bits))
        for t in hits:
            if self.template_faces(t) == faces:
                return int(t)
        return int(hits[0]) if len(hits) else -1

    def template_faces(self, t: int) -> list[int]:
        return [int(f) for f in self.faces[t, : self.length[t]]]


def run_position_rank(position: int) -> int:
    """Rank index at a run position (0 and 13 are both the ace)."""
    return position % NUM_RANKS


def position_credit(rules: MeldRules, position: int) -> int:
    rank = run_position_rank(position)
    if rank == 0:
        return rules.ace_low_credit if position == 0 else rules.ace_high_credit
    return rules.rank_credit[rank]


def _run_position_lists(rules: MeldRules) -> list[list[int]]:
    lowest = 0 if rules.ace_low else 1
    highest = ACE_HIGH_POS if rules.ace_high else NUM_RANKS - 1
    runs = []
    for lo in range(lowest, highest + 1):
        for hi in range(lo + 2, highest + 1):
            if hi - lo + 1 <= NUM_RANKS:
                runs.append(list(range(lo, hi + 1)))
    return runs


@lru_cache(maxsize=None)
def build_meld_table(rules: MeldRules = MeldRules()) -> MeldTable:
    rows = []  # (kind, suit, rank, lo, hi, faces, positions, credits)
    for rank in range(NUM_RANKS):
        for size in (3, 4):
            for suits in combinations(range(NUM_SUITS), size):
                faces = [face_of(rank, s) for s in suits]
                credit = rules.rank_credit[rank]
                rows.append((SET, -1, rank, -1, -1, faces, list(suits), [credit] * size))
    for suit in range(NUM_SUITS):
        for positions in _run_position_lists(rules):
            faces = [face_of(run_position_rank(p), suit) for p in positions]
            credits = [position_credit(rules, p) for p in positions]
            rows.append((RUN, suit, -1, positions[0], positions[-1], faces, positions, credits))

    count = len(rows)
    kind = np.array([r[0] for r in rows], dtype=np.int8)
    suit = np.array([r[1] for r in rows], dtype=np.int8)
    rank = np.array([r[2] for r in rows], dtype=np.int8)
    lo = np.array([r[3] for r in rows], dtype=np.int8)
    hi = np.array([r[4] for r in rows], dtype=np.int8)
    length = np.array([len(r[5]) for r in rows], dtype=np.int8)
    faces = np.full((count, MAX_MELD_LEN), -1, dtype=np.int8)
    pos = np.full((count, MAX_MELD_LEN), -1, dtype=np.int8)
    credit = np.zeros((count, MAX_MELD_LEN), dtype=np.int16)
    mask = np.zeros(count, dtype=np.uint64)
    for t, row in enumerate(rows):
        n = len(row[5])
        faces[t, :n] = row[5]
        pos[t, :n] = row[6]
        credit[t, :n] = row[7]
        mask[t] = np.uint64(sum(1 << f for f in row[5]))
    by_face, by_face_count = _index_by_face(
        [[t for t in range(count) if f in rows[t][5]] for f in range(NUM_FACES)])
    by_low, by_low_count = _index_by_face(
        [[t for t in range(count) if min(rows[t][5]) == f] for f in range(NUM_FACES)])
    for array in (kind, suit, rank, lo, hi, length, faces, pos, credit, mask, by_face,
                  by_face_count, by_low, by_low_count):
        array.setflags(write=False)
    return MeldTable(rules, kind, suit, rank, lo, hi, length, faces, pos, credit, mask,
                     by_face, by_face_count, by_low, by_low_count)


def _index_by_face(lists: list[list[int]]) -> tuple[np.ndarray, np.ndarray]:
    """Template lists per face as a -1 padded ``(52, K)`` table and a ``(52,)`` count."""
    width = max(len(h) for h in lists)
    table = np.full((NUM_FACES, width), -1, dtype=np.int16)
    count = np.zeros(NUM_FACES, dtype=np.int16)
    for f, h in enumerate(lists):
        table[f, : len(h)] = h
        count[f] = len(h)
    return table, count
