"""Robber's Rummy plays from the exact rearrangement solver (docs/robbers_rummy.md).

:func:`best_play` asks :func:`rearrange.best_rearrangement` for the most a seat can place
in one play now -- before opening (RR-5) new melds from the hand alone, after it the whole
table regrouped (RR-6) -- and :func:`play_actions` turns the answer into the engine's
actions (``lift``/``put``, ``layoff``, ``meld``, then ``commit``), checked step by step on
a copy of the game, so a plan that is returned is legal to the last action.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

import numpy as np

from .cards import JOKER_FACE, NUM_FACES
from .core.state import LOC_HAND, MELD_EMPTY
from .game import Game
from .rearrange import Rearrangement, best_rearrangement

STRIDE = NUM_FACES + 1


@dataclass(frozen=True)
class Play:
    """A play found by :func:`best_play`: the solver's table, the actions that make it (the
    last is ``commit``), the hand cards it places and their points (the in-hand values)."""

    rearrangement: Rearrangement
    actions: tuple[int, ...]
    cards: int
    points: int


def hand_counts(variant, state, player: int) -> np.ndarray:
    """Face counts (length 53, 52 = jokers) of ``player``'s hand in ``state``."""
    faces = variant.spec.card_face[state["loc"] == LOC_HAND + player]
    return np.bincount(faces, minlength=STRIDE)


def slot_faces(variant, state) -> dict[int, Counter]:
    """The faces in each occupied meld slot of ``state``: ``{slot: Counter(face)}``."""
    face = variant.spec.card_face
    out = {}
    for m in np.flatnonzero(state["m_kind"] != MELD_EMPTY).tolist():
        cards = state["m_cards"][m]
        out[m] = Counter(int(face[c]) for c in cards[cards >= 0])
    return out


def default_weights(variant, opened: bool) -> np.ndarray:
    """:func:`best_play`'s worth of placing a hand card of each face: after opening one a
    card, ties to the higher points; before it the points (RR-5 counts them)."""
    values = variant.spec.hand_value.astype(np.float64)
    return 1.0 + values / 1000.0 if opened else values + 0.01


PLAY_NODE_LIMIT = 100_000   # solver nodes a play may cost (about half a second at most)


def best_play(game: Game, index: int = 0, weights=None, method: str = "fast",
              node_limit: int = PLAY_NODE_LIMIT) -> Play | None:
    """The play placing the most hand cards (by ``weights``, default: one per card, ties to
    the higher points) that the seat to move in game ``index`` can make now, or None. Before
    the seat has opened only new melds from its hand count, and the play must reach RR-5's
    40 points: the solver then maximises points. ``game`` is not changed; pass a game built
    from what the seat may know (``PlayerView.public_state()``). Between plays the solver
    searches at most ``node_limit`` nodes (0: no limit, exact) and answers the best play
    found: on a few large tables with jokers, proving a play best takes minutes
    (docs/rearrangement.md)."""
    v = game.variant
    s = game.states[index]
    p = int(s["current"])
    hand = hand_counts(v, s, p)
    values = v.spec.hand_value.astype(np.float64)
    opened = bool(s["placed_before"][p])
    if weights is None:
        weights = default_weights(v, opened)
    on_table = np.zeros(STRIDE, np.int64)
    if opened:
        for faces in slot_faces(v, s).values():
            for f, n in faces.items():
                on_table[f] += n
    legal = not s["editing"]                 # committed tables are legal
    r = best_rearrangement(v.table, on_table, hand, weights, method=method,
                           around_the_corner=v.config.around_the_corner, table_is_legal=legal,
                           node_limit=node_limit if legal else 0)
    if r is None or r.cards_placed == 0:
        return None
    actions = play_actions(game, index, r)
    if actions is None:
        return None
    points = int(values[:NUM_FACES] @ r.used[:NUM_FACES] + values[JOKER_FACE] * r.used_jokers)
    return Play(r, tuple(actions), r.cards_placed, points)


def _assign_slots(slots: dict[int, Counter], targets: list[Counter]) -> dict[int, int]:
    """Target meld -> the existing slot that becomes it, matching the largest overlaps
    first, so that the fewest table cards move."""
    pairs = sorted(((sum((t & faces).values()), i, m) for i, t in enumerate(targets)
                    for m, faces in slots.items()), reverse=True)
    out, used = {}, set()
    for overlap, i, m in pairs:
        if overlap > 0 and i not in out and m not in used:
            out[i] = m
            used.add(m)
    return out


def play_actions(game: Game, index: int, r: Rearrangement) -> list[int] | None:
    """The actions that turn the table of game ``index`` into ``r``'s melds with the hand
    cards it uses, ending with ``commit``; None when they are not all legal (the seat's
    ``max_edits`` would run out, or the play does not reach its opening). Checked on a copy
    of the game: ``game`` is not changed."""
    v = game.variant
    lay = v.layout
    g = game.clone()
    s = g.states[index]
    targets = [Counter(m) for m in r.melds]
    slots = slot_faces(v, s) if s["placed_before"][s["current"]] else {}   # RR-5: hand only
    slot_of = _assign_slots(slots, targets)
    # what stays in each slot; the rest of its cards move to targets that need them
    need = [Counter(t) for t in targets]
    surplus = []                                   # (slot, face) of table cards to move
    for m, faces in slots.items():
        home = next((i for i, mm in slot_of.items() if mm == m), None)
        for f, n in faces.items():
            stay = min(n, need[home][f]) if home is not None else 0
            if home is not None:
                need[home][f] -= stay
            surplus.extend([(m, f)] * (n - stay))
    actions: list[int] = []

    def step(a: int) -> bool:
        if not g.masks[index, a]:
            return False
        actions.append(a)
        g.step_one(index, a)
        return True

    def destination(i: int) -> int:
        """Slot of target ``i``: its assigned one, else the first empty slot (a new meld)."""
        if i not in slot_of:
            slot_of[i] = int(np.flatnonzero(g.states[index]["m_kind"] == MELD_EMPTY)[0])
        return slot_of[i]

    def receiver(f: int) -> int:
        i = next(i for i, n in enumerate(need) if n[f] > 0)
        need[i][f] -= 1
        return i

    for m, f in surplus:
        i = receiver(f)
        if not (step(lay.lift + m * STRIDE + f) and step(lay.put + destination(i))):
            return None
    for i, rest in enumerate(need):
        if i not in slot_of and JOKER_FACE not in rest and sum(rest.values()) == sum(
                targets[i].values()):
            meld = v.table.find(sorted(rest.elements()))
            if meld >= 0 and step(lay.meld + meld):
                need[i] = Counter()
                continue
        for f in sorted(rest.elements()):
            if not step(lay.layoff + destination(i) * STRIDE + f):
                return None
            need[i][f] -= 1
    return actions if step(lay.commit) else None
