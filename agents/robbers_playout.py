"""Compiled Robber's Rummy playouts on face counts, for the ``search`` agent's rollouts.

A Robber's position reduces to face counts when every seat plays the exact solver's plays:
the table is everyone's and may be regrouped whole after opening (RR-6), so only the
multiset of its faces matters, not its melds. A playout therefore keeps the table's and
each hand's face counts (int64[53], 52 = jokers), who has opened, the stock as a face
sequence, and plays every turn as ``greedy`` does in the engine (:mod:`agents.robbers`):
the solver's largest play, again while one exists (the first play opens, RR-5, and may
unlock the table), then one draw and the same again (RR-4), else a draw, else a pass. The
hand ends as :func:`mountain_rummy_env.core.robbers.score_hand` ends it (D11), winners'
shares as floats.

The differences from the engine: a play needing more than ``max_edits`` edits, which
``greedy`` cannot make there, is made here, and the solver stops at :data:`NODE_LIMIT`
nodes with the best play found. Both are rare: from 80 deals, a hand played here and by
``greedy`` in the engine ended with the same points 79 times (the node limit changed none).
Nothing here is drawn at random: a playout is fixed by its start.

The root seat's first turn may follow another *mode* (:data:`MODES`), which is what the
search compares.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numba import njit

from mountain_rummy_env.cards import JOKER_FACE, NUM_RANKS
from mountain_rummy_env.core.robbers import ACE_LOW_VALUE
from mountain_rummy_env.rearrange_fast import STATUS_OK, rearrange_ws

STRIDE = JOKER_FACE + 1

# the root seat's first turn
GREEDY = 0                     # greedy's turn
HOLD = 1                       # no play: draw (pass when the stock is out)
NO_DRAW = 2                    # greedy's plays, but no draw after them
MODES = {"greedy": GREEDY, "hold": HOLD, "no_draw": NO_DRAW}

OUT, ENDED, PASSED = 0, 1, 2   # how a turn ended


@njit(cache=True)
def opening_points(shown, declared, length, n_melds, rank_credit):
    """GE-2 points of the solver's melds (jokers as declared; a low ace in A-2-… is 1)."""
    total = 0
    for k in range(n_melds):
        n = length[k]
        faces = np.empty(n, np.int64)
        for i in range(n):
            faces[i] = declared[k, i] if shown[k, i] == JOKER_FACE else shown[k, i]
        run = n >= 2 and faces[0] // NUM_RANKS == faces[1] // NUM_RANKS
        for i in range(n):
            r = faces[i] % NUM_RANKS
            if r == 0 and run and i + 1 < n and faces[i + 1] % NUM_RANKS == 1:
                total += ACE_LOW_VALUE
            else:
                total += rank_credit[r]
    return total


@njit(cache=True)
def play_once(table, hand, is_open, weights, open_weights, ace_low, ace_high, wrap,
              open_min, rank_credit, ws, out):
    """The solver's best play for a hand (RR-5 before opening: new melds from the hand
    worth ``open_min``; RR-6 after it: the whole table), made on the counts. Returns the
    hand cards placed (0: no play)."""
    shown, declared, length, used = out
    on_table = table if is_open else ws[21]          # ws[21]: the workspace's empty hand
    w = weights if is_open else open_weights
    status, _, n_melds = rearrange_ws(on_table, hand, w, ace_low, ace_high, wrap, 1, ws,
                                      shown, declared, length, used)
    if status != STATUS_OK:
        return 0
    placed = used.sum()
    if placed == 0:
        return 0
    if not is_open and opening_points(shown, declared, length, n_melds, rank_credit) < open_min:
        return 0
    for f in range(STRIDE):
        table[f] += used[f]
        hand[f] -= used[f]
    return placed


MEMO_SLOTS = 1 << 13      # play_once answers a playout memo holds (kept while 3/4 full)
KEY_LEN = 2 * STRIDE + 1  # the table's counts (zeros before opening), the hand's, opened


@njit(cache=True)
def make_memo(slots=MEMO_SLOTS):
    """An empty memo of :func:`play_once` answers (:func:`play_once_memo`): each slot's
    input key, the hand cards the play placed, whether the slot is taken; the count kept."""
    return (np.empty((slots, KEY_LEN), np.int8), np.empty((slots, STRIDE), np.int8),
            np.zeros(slots, np.bool_), np.zeros(1, np.int64))


@njit(cache=True)
def play_once_memo(table, hand, is_open, weights, open_weights, ace_low, ace_high, wrap,
                   open_min, rank_credit, ws, out, memo):
    """:func:`play_once` remembered: its answer depends on nothing but the hand, whether
    the seat has opened and (after opening) the table, the rest being fixed for a memo's
    life (one :func:`rollouts` call: the same weights and rules), and the solver is
    deterministic (its workspace is reset or stamped per call). A playout meets the same
    hand and table again often: the other modes of the same re-deal replay the turns after
    the root's, and a seat without a play keeps its hand when the stock is out. The cards
    placed (the table and hand changed the same way); ``out`` is not written on a hit."""
    keys, used, taken, kept = memo
    h = np.uint64(1469598103934665603) if is_open else np.uint64(7809847782465536322)
    prime = np.uint64(1099511628211)
    if is_open:
        for f in range(STRIDE):
            h = (h ^ np.uint64(table[f])) * prime
    for f in range(STRIDE):
        h = (h ^ np.uint64(hand[f] + 3)) * prime
    h ^= h >> np.uint64(29)
    mask = keys.shape[0] - 1
    slot = np.int64(h & np.uint64(mask))
    while taken[slot]:
        key = keys[slot]
        same = key[2 * STRIDE] == is_open
        if same and is_open:
            for f in range(STRIDE):
                if key[f] != table[f]:
                    same = False
                    break
        if same:
            for f in range(STRIDE):
                if key[STRIDE + f] != hand[f]:
                    same = False
                    break
        if same:
            placed = 0
            row = used[slot]
            for f in range(STRIDE):
                table[f] += row[f]
                hand[f] -= row[f]
                placed += row[f]
            return placed
        slot = (slot + 1) & mask
    free = kept[0] < 3 * keys.shape[0] // 4
    if free:                                       # the key, before play_once changes them
        key = keys[slot]
        for f in range(STRIDE):
            key[f] = table[f] if is_open else 0
            key[STRIDE + f] = hand[f]
        key[2 * STRIDE] = is_open
    placed = play_once(table, hand, is_open, weights, open_weights, ace_low, ace_high, wrap,
                       open_min, rank_credit, ws, out)
    if free:
        row = used[slot]
        key = keys[slot]
        for f in range(STRIDE):
            row[f] = key[STRIDE + f] - hand[f]
        taken[slot] = True
        kept[0] += 1
    return placed


@njit(cache=True)
def play_all(table, hand, opened, p, weights, open_weights, ace_low, ace_high, wrap,
             open_min, rank_credit, ws, out, memo):
    """Play while a play exists (the opening may unlock the table); the cards placed."""
    placed = 0
    while True:
        k = play_once_memo(table, hand, opened[p], weights, open_weights, ace_low, ace_high,
                           wrap, open_min, rank_credit, ws, out, memo)
        if k == 0:
            return placed
        placed += k
        opened[p] = True
        if hand.sum() == 0:
            return placed


@njit(cache=True)
def take_turn(table, hands, opened, stock, ptr, p, mode, weights, open_weights, ace_low,
              ace_high, wrap, open_min, rank_credit, ws, out, memo):
    """Seat ``p``'s turn (``mode``, :data:`MODES`); returns (how it ended, new stock ptr)."""
    hand = hands[p]
    placed = 0
    if mode != HOLD:
        placed = play_all(table, hand, opened, p, weights, open_weights, ace_low, ace_high,
                          wrap, open_min, rank_credit, ws, out, memo)
        if hand.sum() == 0:
            return OUT, ptr
    if ptr >= stock.shape[0]:
        return (ENDED if placed else PASSED), ptr
    if placed and mode == NO_DRAW:
        return ENDED, ptr
    hand[stock[ptr]] += 1
    ptr += 1
    if placed:
        play_all(table, hand, opened, p, weights, open_weights, ace_low, ace_high, wrap,
                 open_min, rank_credit, ws, out, memo)
        if hand.sum() == 0:
            return OUT, ptr
    return ENDED, ptr


@njit(cache=True)
def result(hands, values, went_out):
    """Points per seat (D11): the seat that went out, else the fewest cards then the lowest
    hand value, wins what the others hold; each other seat loses its hand value."""
    P = hands.shape[0]
    size = np.zeros(P, np.int64)
    value = np.zeros(P, np.int64)
    for p in range(P):
        for f in range(STRIDE):
            size[p] += hands[p, f]
            value[p] += hands[p, f] * values[f]
    win = np.zeros(P, np.bool_)
    if went_out >= 0:
        win[went_out] = True
    else:
        best = 0
        for p in range(1, P):
            if size[p] < size[best] or size[p] == size[best] and value[p] < value[best]:
                best = p
        for p in range(P):
            win[p] = size[p] == size[best] and value[p] == value[best]
    lost = 0.0
    for p in range(P):
        if not win[p]:
            lost += value[p]
    points = np.zeros(P, np.float64)
    n_win = win.sum()
    for p in range(P):
        points[p] = lost / n_win if win[p] else -value[p]
    return points


@njit(cache=True)
def playout(table, hands, opened, stock, ptr, current, passes, turn, max_turns, mode,
            seat_modes, weights, open_weights, values, ace_low, ace_high, wrap, open_min,
            rank_credit, ws, out):
    """Play the hand to its end from the start of ``current``'s turn: that turn in ``mode``,
    every later one of seat ``q`` in ``seat_modes[q]`` (greedy's: :data:`GREEDY`). Changes
    the arrays; returns the points per seat."""
    return playout_memo(table, hands, opened, stock, ptr, current, passes, turn, max_turns,
                        mode, seat_modes, weights, open_weights, values, ace_low, ace_high,
                        wrap, open_min, rank_credit, ws, out, make_memo(MEMO_SLOTS))


@njit(cache=True)
def playout_memo(table, hands, opened, stock, ptr, current, passes, turn, max_turns, mode,
                 seat_modes, weights, open_weights, values, ace_low, ace_high, wrap, open_min,
                 rank_credit, ws, out, memo):
    """:func:`playout` with a caller's :func:`make_memo` (its weights and rules fixed)."""
    P = hands.shape[0]
    p = current
    first = True
    while True:
        how, ptr = take_turn(table, hands, opened, stock, ptr, p,
                             mode if first else seat_modes[p], weights, open_weights, ace_low,
                             ace_high, wrap, open_min, rank_credit, ws, out, memo)
        first = False
        if how == OUT:
            return result(hands, values, p)
        passes = passes + 1 if how == PASSED else 0
        turn += 1
        if passes >= P or turn >= max_turns:
            return result(hands, values, -1)
        p = (p + 1) % P


@njit(cache=True)
def rollouts(tables, hands, opened, stocks, stock_len, current, passes, turn, max_turns,
             modes, weights, open_weights, values, ace_low, ace_high, wrap, open_min,
             rank_credit, ws, out):
    """Every mode played out on every sampled start (rows: samples, the same deal for each
    mode: common random numbers); the root seat's points minus the other seats' mean."""
    n, P = hands.shape[0], hands.shape[1]
    seat_modes = np.zeros(P, np.int64)             # every later turn greedy's
    margins = np.zeros((n, modes.shape[0]), np.float64)
    memo = make_memo(MEMO_SLOTS)                   # one memo: the same weights and rules
    for i in range(n):
        for k in range(modes.shape[0]):
            pts = playout_memo(tables[i].copy(), hands[i].copy(), opened.copy(),
                               stocks[i, :stock_len], 0, current, passes, turn, max_turns,
                               modes[k], seat_modes, weights, open_weights, values, ace_low,
                               ace_high, wrap, open_min, rank_credit, ws, out, memo)
            margins[i, k] = pts[current] - (pts.sum() - pts[current]) / (P - 1)
    return margins


NODE_LIMIT = 5000     # solver nodes a play may cost in a playout (80 greedy hands: same results)
_SCRATCH = []


def scratch():
    """The solver's workspace and output arrays, one set for the process: every table of a
    playout is legal at the start of a play, and a play stops at :data:`NODE_LIMIT` nodes
    with the best found (a playout needs plausible plays, not proven-best ones)."""
    from mountain_rummy_env.rearrange_fast import make_rearrange_output, make_rearrange_workspace

    if not _SCRATCH:
        ws = make_rearrange_workspace(node_limit=NODE_LIMIT, table_is_legal=True)
        _SCRATCH.append((ws, make_rearrange_output()))
    return _SCRATCH[0]


@dataclass
class Start:
    """A playout's start seen by one seat at the start of its turn: the table and its own
    hand as face counts, the hidden faces (the other hands and the stock, in any order)
    and what is public; :meth:`rollouts` re-deals the hidden faces."""

    player: int
    table: np.ndarray          # int64[53]
    hands: np.ndarray          # int64[P, 53]: the seat's own hand, zeros for the others
    sizes: np.ndarray          # cards in each hand
    opened: np.ndarray         # bool[P]
    hidden: np.ndarray         # faces of the cards the seat cannot see
    stock_len: int
    passes: int
    turn: int
    max_turns: int
    weights: np.ndarray        # greedy's after opening
    open_weights: np.ndarray   # greedy's before opening
    values: np.ndarray
    rank_credit: np.ndarray
    ace_low: bool
    ace_high: bool
    wrap: bool
    open_min: int

    def solver_args(self):
        ws, out = scratch()
        return (self.ace_low, self.ace_high, self.wrap, self.open_min, self.rank_credit, ws, out)

    def deal(self, n: int, rng):
        """``n`` re-deals of the hidden faces: each other seat gets its hand size, the
        stock the rest in random order. Returns (tables, hands, stocks)."""
        P = self.hands.shape[0]
        perms = rng.permuted(np.broadcast_to(self.hidden, (n, len(self.hidden))), axis=1)
        hands = np.repeat(self.hands[None], n, axis=0)
        rows = np.arange(n)
        dealt = 0
        for q in range(P):
            if q == self.player:
                continue
            for j in range(dealt, dealt + self.sizes[q]):
                np.add.at(hands[:, q], (rows, perms[:, j]), 1)
            dealt += self.sizes[q]
        stocks = np.ascontiguousarray(perms[:, dealt:], dtype=np.int64)
        tables = np.repeat(self.table[None], n, axis=0)
        return tables, hands, stocks

    def rollouts(self, modes, n: int, rng) -> np.ndarray:
        """Margins (``n`` re-deals x ``modes``) of the seat's turn played in each mode."""
        tables, hands, stocks = self.deal(n, rng)
        return rollouts(tables, hands, self.opened, stocks, self.stock_len, self.player,
                        self.passes, self.turn, self.max_turns,
                        np.asarray(modes, dtype=np.int64), self.weights, self.open_weights,
                        self.values, *self.solver_args())


def playout_start(view, state) -> Start:
    """The :class:`Start` of ``view``'s seat from its public state record ``state``."""
    from mountain_rummy_env.core.state import LOC_HAND, LOC_TABLE
    from mountain_rummy_env.robbers_play import default_weights

    v = view.variant
    face = v.spec.card_face.astype(np.int64)
    loc = state["loc"]
    P = len(view.hand_sizes)
    hands = np.zeros((P, STRIDE), np.int64)
    hands[view.player] = np.bincount(face[list(view.hand)], minlength=STRIDE)
    table = np.bincount(face[loc == LOC_TABLE], minlength=STRIDE).astype(np.int64)
    hidden = face[view.hidden_cards()]
    sizes = np.asarray(view.hand_sizes, dtype=np.int64)
    if len(hidden) != sizes.sum() - sizes[view.player] + view.stock_size:
        raise AssertionError("hidden cards do not match the hand and stock sizes")
    rules = v.table.rules
    return Start(view.player, table, hands, sizes, state["placed_before"][:P].astype(np.bool_),
                 hidden, view.stock_size, int(state["passes"]), int(state["turn"]),
                 v.config.max_turns, default_weights(v, True), default_weights(v, False),
                 v.spec.hand_value.astype(np.int64), v.spec.rank_credit.astype(np.int64),
                 rules.ace_low, rules.ace_high, v.config.around_the_corner, v.spec.open_min)
