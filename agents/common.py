"""Helpers the heuristic agents share: action families, hands as faces, solver calls.

Everything is read from the variant (its action layout, card values and meld table), so
the helpers serve any variant built on the shared rules core.
"""

from __future__ import annotations

import numpy as np

from mountain_rummy_env.cards import JOKER_FACE, NUM_FACES, NUM_RANKS
from mountain_rummy_env.core.state import PHASE_DRAW, PHASE_PLAY, PHASE_RESPONSE  # noqa: F401  (re-exported)
from mountain_rummy_env.solver import best_arrangement, best_deadwood_batch, hand_mask_of

FAMILIES = ("draw", "take", "meld", "regroup", "layoff", "discard", "knock", "base_camp", "done",
            "pass")
DRAW, TAKE, MELD, REGROUP, LAYOFF, DISCARD, KNOCK, BASE_CAMP, DONE, PASS = range(len(FAMILIES))
PLACE = (MELD, REGROUP, LAYOFF)
TURN_ENDS = (DISCARD, KNOCK, BASE_CAMP, DONE)


_FAMILY_CACHE: dict = {}


def family_table(variant) -> np.ndarray:
    """``family_table(v)[a]``: family index (``DRAW`` ... ``PASS``) of action id ``a``, read
    from the names of the layout's fields (Gin's ``pass_`` is ``PASS``), so one table of
    families serves every variant whose actions the heuristic players know."""
    lay = variant.layout
    hit = _FAMILY_CACHE.get(lay)
    if hit is not None:
        return hit
    offsets = list(lay)
    fam = np.zeros(lay.num_actions, dtype=np.int8)
    for k, name in enumerate(type(lay)._fields[:-1]):
        fam[offsets[k]: offsets[k + 1]] = FAMILIES.index(name.rstrip("_"))
    _FAMILY_CACHE[lay] = fam
    return fam


def legal_by_family(variant, mask) -> dict[int, np.ndarray]:
    legal = np.flatnonzero(mask)
    fam = family_table(variant)[legal]
    return {k: legal[fam == k] for k in np.unique(fam).tolist()}


def first_of(by, families):
    """The first legal action of the first of ``families`` with one (``by``: the legal
    actions by family, :func:`legal_by_family`), None if none has."""
    for family in families:
        if family in by:
            return int(by[family][0])
    return None


def placing_forced(view, by) -> bool:
    """Whether the player must place now, whatever its strategy (MR-7): a deep-drawn card is
    still to be placed, or no move that ends the turn is legal (a last card taken this turn
    may not be discarded). ``by``: the legal actions by family (:func:`legal_by_family`)."""
    return view.obligation >= 0 or not any(f in by for f in TURN_ENDS)


def faces_of(variant, cards) -> list[int]:
    cf = variant.spec.card_face
    return [int(cf[c]) for c in cards]


def hand_value_of(variant, face: int) -> int:
    return int(variant.spec.hand_value[face])


def table_faces(view) -> int:
    """Bitmask of faces face up on the table (a joker may not be declared as one, MR-5)."""
    bits = 0
    for m in view.melds:
        for f in m["faces"]:
            bits |= 1 << f
    return bits


def arrange(view, faces, objective: str = "points"):
    """Best arrangement of a multiset of faces (jokers = 52) for ``view``'s variant."""
    v = view.variant
    nj = sum(1 for f in faces if f == JOKER_FACE)
    return best_arrangement(hand_mask_of(faces), nj, v.table, v.spec.hand_value,
                            objective=objective, forbidden_joker_faces=table_faces(view))


def deadwood_batch(variant, hands, jokers) -> np.ndarray:
    """Least deadwood of each hand (natural-face bitmasks, joker counts) in ``variant``."""
    return best_deadwood_batch(hands, jokers, variant.table, variant.spec.hand_value, "deadwood")


def hand_deadwoods(variant, hands) -> np.ndarray:
    """Least deadwood of each joker-free hand (an int bitmask of faces), as int64."""
    masks = np.fromiter((int(h) for h in hands), dtype=np.uint64, count=len(hands))
    return deadwood_batch(variant, masks, 0).astype(np.int64)


def cards_of(bits: int) -> list[int]:
    """The faces of a bitmask, lowest first."""
    out = []
    while bits:
        low = bits & -bits
        out.append(low.bit_length() - 1)
        bits ^= low
    return out


def unseen_faces(view) -> list[int]:
    """Faces of the cards this player has not seen (a face per card, jokers = 52)."""
    return view.variant.spec.card_face[view.hidden_cards()].tolist()


def draw_outlook(view, hands, jokers, objective: str, discard: bool = False):
    """The solver's ``objective`` of hands of the same size (face bitmasks and joker
    counts) as they are and after the next draw: ``(now[i], after[i, j], weights[j])`` with
    a column ``j`` per unseen natural card, then, where the variant deals jokers, one for a
    joker, weighted by how many are unseen. With ``discard`` (joker-free hands, Gin) the
    hand then drops the card that leaves the least ``objective``. The rules players' look
    one draw ahead, over the cards this player cannot see (:func:`unseen_faces`)."""
    v = view.variant
    unseen = unseen_faces(view)
    draws = [u for u in unseen if u != JOKER_FACE]
    joker_column = v.deck.num_cards > v.deck.num_naturals     # Mountain deals jokers
    weights = np.ones(len(draws) + joker_column)
    if joker_column:
        weights[-1] = len(unseen) - len(draws)
    batch, jok = [], []
    for h, nj in zip(hands, jokers):
        row = [h]
        for u in draws:
            e = h | (1 << u)
            row.extend([e & ~(1 << x) for x in cards_of(e)] if discard else [e])
        batch.extend(row)
        jok.extend([nj] * len(row))
        if joker_column:
            batch.append(h)
            jok.append(nj + 1)
    values = best_deadwood_batch(np.array(batch, dtype=np.uint64), np.array(jok), v.table,
                                 v.spec.hand_value, objective, table_faces(view))
    values = values.astype(np.int64).reshape(len(hands), -1)
    after = values[:, 1:].reshape(len(hands), len(weights), -1).min(axis=2)
    return values[:, 0], after, weights


def deadwood(view, faces) -> int:
    return arrange(view, faces, "deadwood").deadwood


def connectivity(face: int, faces) -> float:
    """How much ``face`` helps build melds with ``faces``: same rank or same suit within 2."""
    if face == JOKER_FACE:
        return 10.0
    r, s = face % NUM_RANKS, face // NUM_RANKS
    score = 0.0
    for g in faces:
        if g == face or g == JOKER_FACE:
            continue
        gr, gs = g % NUM_RANKS, g // NUM_RANKS
        if gr == r:
            score += 1.0
        elif gs == s:
            d = abs(gr - r)
            d = min(d, 13 - d) if {gr, r} & {0} else d  # ace sits next to 2 and to K
            if d == 1:
                score += 1.0
            elif d == 2:
                score += 0.5
    return score


def taken_cards(view, card: int) -> list[int]:
    """Cards taken from the discard pile together with ``card`` (it and all above it)."""
    pile = list(view.discard)
    return pile[pile.index(card):]


__all__ = [n for n in dir() if not n.startswith("_")] + ["NUM_FACES"]
