"""Table rearrangement (Robber's Rummy, RR-6): the most a play can add from the hand.

After opening, a Robber's Rummy play may take the table apart and regroup it, as long as at
the end every table card is still on the table, every meld is valid and at least one card
came from the hand. :func:`best_rearrangement` answers, exactly: which hand cards can join
the table in one play, at most, and in which melds?

Two exact methods give the same optimum (the melds may differ where several plays tie):

* ``"fast"`` (default): :mod:`rearrange_fast`, a compiled search bounded by the linear
  relaxation; about a millisecond a mid-game position, and callable from numba code.
* ``"milp"``: the integer program itself, solved by scipy's HiGHS -- the differential
  oracle. Let ``y[t]`` be the number of copies of template ``t`` (:mod:`melds`) laid with
  naturals only, ``z[t, i]`` the copies with a joker in place of the template's ``i``-th
  face (RR-3: at most one joker per meld), ``u[f]`` the hand's cards of face ``f`` used and
  ``v`` the hand's jokers used. Then for every face, the faces the melds hold equal the
  table's plus the hand's used cards; the jokers the melds hold equal the table's plus
  ``v``; and ``0 <= u <= hand``. Two 52-card decks keep every count at most 2, so the
  programs stay small (about 3,000 integer variables, 53 equalities). It has no
  wrap-around runs.

The objective weighs each hand card by ``weights`` (1 each: the most cards; the hand
values: the most points).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from .cards import JOKER_FACE, NUM_FACES, face_text
from .melds import MeldRules, MeldTable, build_meld_table


@dataclass(frozen=True)
class Rearrangement:
    """The table after a play: ``melds`` as tuples of faces, ``JOKER_FACE`` standing in for
    a joker's declared face given beside it in ``declared`` (-1 for naturals), and what the
    hand gave (``used[f]`` cards of face f, ``used_jokers``)."""

    melds: tuple[tuple[int, ...], ...]
    declared: tuple[tuple[int, ...], ...]
    used: np.ndarray
    used_jokers: int

    @property
    def cards_placed(self) -> int:
        return int(self.used.sum()) + self.used_jokers


@lru_cache(maxsize=8)
def _program(rules: MeldRules):
    """The meld columns of the program for the templates of ``rules``: each column's face
    counts (53 x columns; row 52 jokers) and its (template, joker slot or -1)."""
    table = build_meld_table(rules)
    columns = []
    for t in range(table.num_templates):
        columns.append((t, -1))
        columns.extend((t, i) for i in range(int(table.length[t])))
    counts = np.zeros((NUM_FACES + 1, len(columns)))
    for c, (t, slot) in enumerate(columns):
        for i in range(int(table.length[t])):
            counts[JOKER_FACE if i == slot else int(table.faces[t, i]), c] += 1
    return counts, tuple(columns)


MAX_JOKERS = 8


METHODS = ("fast", "milp")


def _checked(on_table, in_hand, weights):
    """The inputs as arrays, or a ValueError that says what is wrong."""
    arrays = []
    for name, counts in (("on_table", on_table), ("in_hand", in_hand)):
        raw = np.asarray(counts)
        if raw.shape != (NUM_FACES + 1,):
            raise ValueError(f"{name} is face counts of length 53 (52 = jokers), got shape "
                             f"{raw.shape}")
        if raw.dtype.kind not in "biuf":
            raise ValueError(f"{name} holds numbers (face counts), got dtype {raw.dtype}")
        if not np.isfinite(raw).all() or not np.array_equal(raw, np.rint(raw)):
            bad = int(np.flatnonzero(~np.isfinite(raw) | (raw != np.rint(raw)))[0])
            raise ValueError(f"{name} holds whole counts, got {raw[bad]} of {face_text(bad)}")
        if (raw < 0).any():
            bad = int(np.argmin(raw))
            raise ValueError(f"face counts must be >= 0, {name} has {raw[bad]} of "
                             f"{face_text(bad)}")
        arrays.append(raw.astype(np.int64))
    on_table, in_hand = arrays
    pool = on_table + in_hand
    if (pool[:NUM_FACES] > 2).any():
        face = int(np.argmax(pool[:NUM_FACES]))
        raise ValueError(f"two decks hold a face at most twice: table and hand hold "
                         f"{pool[face]} of {face_text(face)}")
    if pool[JOKER_FACE] > MAX_JOKERS:
        raise ValueError(f"at most {MAX_JOKERS} jokers, table and hand hold {pool[JOKER_FACE]}")
    if weights is None:
        w = np.ones(NUM_FACES + 1)
    else:
        try:
            w = np.ascontiguousarray(weights, dtype=np.float64)   # the solver needs it
        except (TypeError, ValueError) as err:
            raise ValueError(f"weights are numbers, one per face: {err}") from None
    if w.shape != (NUM_FACES + 1,):
        raise ValueError(f"weights are one per face and one for jokers (53), got shape {w.shape}")
    if not np.isfinite(w).all():
        raise ValueError("weights must be finite")
    return on_table, in_hand, w


def best_rearrangement(table: MeldTable, on_table, in_hand, weights=None, *, method="fast",
                       around_the_corner=False, table_is_legal=False,
                       node_limit=0) -> Rearrangement | None:
    """The arrangement of all of ``on_table`` plus the most valuable part of ``in_hand``
    into valid melds (face counts, length 53: index 52 counts jokers; ``table.rules`` says
    whether the ace is low and/or high), or None when the table cards alone cannot all be
    placed (not a legal table). ``weights[f]`` is the worth of placing a hand card of face f
    (default 1 each: the most cards). ``method`` is ``"fast"`` or ``"milp"`` (see the module
    docstring); ``around_the_corner`` allows K-A-2 runs (fast method only). Input that is
    not that (wrong shapes, fractional, negative or too many counts, an unknown method) is a
    ValueError that names it. ``table_is_legal`` promises that ``on_table`` alone is a legal
    table (as it is between plays): the answer is the same best play, found without proving
    the table legal, which on large tables with jokers can take the fast method minutes; a
    play placing nothing then comes back without melds. ``node_limit`` > 0 (fast method,
    with the promise) stops the search after that many nodes with the best play found: a
    legal play, perhaps not the best, in bounded time (proving a play best can take the
    search minutes where the cards almost fit)."""
    if not isinstance(method, str) or method not in METHODS:
        raise ValueError(f"method is 'fast' or 'milp', got {method!r}")
    on_table, in_hand, w = _checked(on_table, in_hand, weights)
    if method == "fast":
        return _fast(table.rules, on_table, in_hand, w, around_the_corner, bool(table_is_legal),
                     int(node_limit))
    if around_the_corner:
        raise ValueError("the MILP has no wrap-around runs; use method='fast'")
    r = _milp(table, on_table, in_hand, w)
    if r is None or (r.cards_placed and not table_is_legal
                     and _milp(table, on_table, np.zeros_like(in_hand), w) is None):
        return None
    return r


_WORKSPACES = {}


def _fast(rules: MeldRules, on_table, in_hand, w, around_the_corner, table_is_legal,
          node_limit) -> Rearrangement | None:
    """:func:`rearrange_fast.rearrange_ws` with one workspace per (promise, node limit)
    kept for the process (not thread-safe)."""
    from .rearrange_fast import (STATUS_OK, make_rearrange_output, make_rearrange_workspace,
                                 rearrange_ws)

    key = (table_is_legal, node_limit)
    if key not in _WORKSPACES:
        _WORKSPACES[key] = make_rearrange_workspace(node_limit=node_limit,
                                                    table_is_legal=table_is_legal)
    shown, declared, length, used = make_rearrange_output()
    status, _, n_melds = rearrange_ws(on_table, in_hand, w, rules.ace_low, rules.ace_high,
                                      around_the_corner, 1, _WORKSPACES[key], shown,
                                      declared, length, used)
    if status != STATUS_OK:
        return None
    return Rearrangement(tuple(tuple(int(f) for f in shown[k, :length[k]]) for k in range(n_melds)),
                         tuple(tuple(int(f) for f in declared[k, :length[k]]) for k in range(n_melds)),
                         used[:NUM_FACES].copy(), int(used[JOKER_FACE]))


def _milp(table: MeldTable, on_table, in_hand, w) -> Rearrangement | None:
    """The integer program solved by HiGHS; None when it is infeasible."""
    from scipy.optimize import Bounds, LinearConstraint, milp

    counts, columns = _program(table.rules)
    pool = (on_table + in_hand).astype(np.float64)
    # only melds the cards at hand can make; each as often as its scarcest card allows
    with np.errstate(divide="ignore", invalid="ignore"):
        cap = np.where(counts > 0, pool[:, None] // np.where(counts > 0, counts, 1),
                       np.inf).min(axis=0)
    live = np.flatnonzero(cap > 0)
    m = len(live)
    matrix = np.hstack([counts[:, live], -np.eye(NUM_FACES + 1)])
    res = milp(np.concatenate([np.zeros(m), -w]),
               constraints=LinearConstraint(matrix, on_table, on_table),
               integrality=np.ones(m + NUM_FACES + 1),
               bounds=Bounds(np.zeros(m + NUM_FACES + 1), np.concatenate([cap[live], in_hand])),
               options={"mip_rel_gap": 0.0, "presolve": False})   # presolve costs 10-30x here
    if res.status != 0:
        return None
    x = np.rint(res.x).astype(np.int64)
    melds, declared = [], []
    for c in np.flatnonzero(x[:m]):
        t, slot = columns[live[c]]
        faces = tuple(int(f) for f in table.faces[t, :table.length[t]])
        shown = tuple(JOKER_FACE if i == slot else f for i, f in enumerate(faces))
        decl = tuple(f if i == slot else -1 for i, f in enumerate(faces))
        melds.extend([shown] * int(x[c]))
        declared.extend([decl] * int(x[c]))
    return Rearrangement(tuple(melds), tuple(declared), x[m:m + NUM_FACES], int(x[m + NUM_FACES]))
