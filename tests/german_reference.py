"""A slow, plain-Python reference of German Rummy's legal actions (docs/german_rummy.md),
and by its options (:class:`Rules`) of Crazy Rummy's (docs/crazy_rummy.md).

``reference_legal(variant, record)`` is the set of legal action ids of a German or Crazy
game record, computed from the record alone and from the rules page, without the compiled
engine's search: the differential tests (tests/test_german_properties.py,
tests/test_rules_crazy.py) compare it with the engine's mask. It reads ``variant.table``
only for template ids and faces, ``variant.layout`` only for action offsets and
``variant.name`` to pick the rules; credits, meld shapes, which copy a move uses and every
legality rule are written here from GE-2 .. GE-7 and decisions D3 .. D24 (German), CR-1 ..
CR-5 and decisions D1 .. D11 (Crazy).

* GE-5 / D3 / D4: the opening is a plain depth-first search over SEQUENCES of template-fill
  melds (naturals where held, jokers for the faces not held, D14), memoised on the remaining
  hand, its missing credit and the card still to be used.
* D18: after opening, a placement is legal when the turn can still end afterwards, decided
  by a plain search over the placements that follow (it only goes deeper while no card may
  be discarded: a freed joker is pending, or only the card taken this turn is left).
* Crazy: the cards of the record's ``wild_rank`` are jokers (D1); no opening, so a seat
  melds as it likes and may always take the top discard but with one card in hand (CR-4);
  a swapped-out wild is a free hand card (D5); no placement empties the hand (CR-4); no face
  shows twice on the table (D3); the ace is low only (CR-2).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, replace
from typing import Iterator, NamedTuple

JOKER = 52                       # the joker's face
NUM_FACES = 52
NATURALS = 104                   # card ids 0..103 are naturals, 104..107 jokers
LOC_STOCK, LOC_DISCARD, LOC_TABLE, LOC_HAND = 0, 1, 2, 4
PHASE_DRAW, PHASE_PLAY = 0, 1
SET, RUN = 1, 2
ACE_HIGH = 13                    # run position of a high ace (0 is the low ace)
OPENING = 40                     # GE-5
# GE-2 credit of a rank on the table (ace 11 except at the low end of a run) and in hand
RANK_VALUE = (11, 2, 3, 4, 5, 6, 7, 8, 9, 10, 10, 10, 10)
JOKER_HAND_VALUE = 20
JOKER_MAX_CREDIT = 11            # the most a joker can earn (a high ace)
KING = 12                        # run position of the king


class Rules(NamedTuple):
    """The rules a variant of the German family plays by, as far as its legal actions go."""

    naturals: int                # card ids below this are naturals, the rest jokers
    opening: int                 # GE-5's minimum; 0: no opening, the first meld opens (CR-3)
    min_naturals: int            # GE-3's naturals in a meld with two jokers; 0: any (CR-2)
    ace_high: bool               # GE-3: Q-K-A; CR-2: the ace is low only
    freed_joker_melds: bool      # GE-6 / D6: a freed joker must go into a new meld
    out_by_discard: bool         # CR-4: no placement empties the hand
    lone_card_draws: bool        # CR-4: a seat holding one card may not take
    faces_once: bool             # Crazy D3: no face shows twice on the table


GERMAN = Rules(NATURALS, OPENING, 2, True, True, False, False, False)
CRAZY = Rules(NUM_FACES, 0, 0, False, False, True, True, True)
RULES_OF_VARIANT = {"german": GERMAN, "crazy": CRAZY}


def face_of_card(card: int) -> int:
    """Card id -> face (design notes: id = deck * 52 + face, jokers 104..107)."""
    return JOKER if card >= NATURALS else card % NUM_FACES


def rank(face: int) -> int:
    return face % 13


def suit(face: int) -> int:
    return face // 13


def position_credit(position: int) -> int:
    """GE-2 credit of a run card at ``position`` (0 = low ace .. 13 = high ace)."""
    if position == 0:
        return 1
    return RANK_VALUE[position % 13]


def hand_value(face: int) -> int:
    """GE-2 value of a card left in hand."""
    return JOKER_HAND_VALUE if face == JOKER else RANK_VALUE[rank(face)]


# --------------------------------------------------------------------------------------
# table melds


@dataclass(frozen=True)
class Meld:
    """A table meld as GE-3 shapes it: a set (rank, suits present) or a run (suit, lo..hi)."""

    kind: int
    key: int                     # set: rank; run: suit
    lo: int = 0                  # run positions
    hi: int = 0
    suits: frozenset = frozenset()

    def addable_faces(self, top: int = ACE_HIGH) -> set[int]:
        """Faces a layoff may add (GE-5: a run's next card at either end, a set's missing
        suit; D11: at most 13 run cards, no ace at both ends, sets of at most 4); runs reach
        position ``top`` at most (KING where the ace is low only, CR-2)."""
        if self.kind == SET:
            if len(self.suits) >= 4:
                return set()
            return {s * 13 + self.key for s in range(4) if s not in self.suits}
        if self.hi - self.lo + 1 >= 13:
            return set()
        out = set()
        if self.lo > 0:
            out.add(self.key * 13 + rank(self.lo - 1))
        if self.hi < top:
            out.add(self.key * 13 + rank(self.hi + 1))
        return out

    def extended(self, face: int, top: int = ACE_HIGH) -> "Meld":
        """This meld with ``face`` laid off (D15: an ace fitting both ends goes high)."""
        if self.kind == SET:
            return replace(self, suits=self.suits | {suit(face)})
        if self.hi < top and rank(self.hi + 1) == rank(face):
            return replace(self, hi=self.hi + 1)
        return replace(self, lo=self.lo - 1)

    def faces(self) -> set[int]:
        """The faces this meld shows (a joker's declared face included)."""
        if self.kind == SET:
            return {s * 13 + self.key for s in self.suits}
        return {self.key * 13 + rank(q) for q in range(self.lo, self.hi + 1)}


def meld_from_faces(faces: list[int]) -> Meld:
    """The meld shape of faces listed low to high (a run) or of one rank (a set)."""
    ranks = [rank(f) for f in faces]
    if len(set(ranks)) == 1:
        return Meld(SET, ranks[0], suits=frozenset(suit(f) for f in faces))
    lo = 0 if ranks[0] == 0 else ranks[0]
    return Meld(RUN, suit(faces[0]), lo=lo, hi=lo + len(faces) - 1)


class Template(NamedTuple):
    tid: int
    faces: tuple
    credit: int                  # GE-2 credit of the whole meld (a joker counts its face)
    shape: Meld


def build_templates(table) -> list[Template]:
    """The variant's templates with GE-2 credits and GE-3 shapes worked out here."""
    out = []
    for t in range(table.num_templates):
        faces = tuple(table.template_faces(t))
        shape = meld_from_faces(list(faces))
        if shape.kind == SET:
            credit = RANK_VALUE[shape.key] * len(faces)
        else:
            credit = sum(position_credit(q) for q in range(shape.lo, shape.hi + 1))
        out.append(Template(t, faces, credit, shape))
    return out


def fill(template: Template, counts: Counter, min_naturals: int = 2) -> tuple[tuple, int] | None:
    """GE-3 / D14 template fill from a hand's face counts: (natural faces used, jokers
    needed), or None when the hand cannot make it (a meld needs a natural, jokers for the
    missing faces, and two naturals when it holds two or more jokers; with
    ``min_naturals`` 0 wilds meld in any number, even alone, CR-2)."""
    naturals = tuple(f for f in template.faces if counts[f] > 0)
    missing = len(template.faces) - len(naturals)
    if missing > counts[JOKER] or len(naturals) < min_naturals and (not naturals or missing >= 2):
        return None
    return naturals, missing


# --------------------------------------------------------------------------------------
# the reference


@dataclass(frozen=True)
class Turn:
    """What the player to move can do after opening: hand faces, the face of the card taken
    this turn if still held (it may not be discarded, D5), whether a freed joker waits to be
    melded (D6, D17), the table melds and the table jokers (slot, declared face)."""

    hand: tuple                  # sorted faces (JOKER for a joker)
    taken: int | None
    freed: bool
    table: tuple                 # (slot, Meld) pairs
    jokers: tuple = ()           # (slot, face) of every joker on the table

    def shown(self) -> set[int]:
        """The faces shown on the table."""
        return set().union(*(meld.faces() for _, meld in self.table))

    def without(self, faces, jokers: int) -> "Turn":
        """The turn after the hand gives up ``faces`` and ``jokers`` jokers, choosing copies
        as D19 does: the taken card first; jokers: the freed one, then a taken one."""
        counts = Counter(self.hand)
        taken, freed = self.taken, self.freed
        for f in faces:
            counts[f] -= 1
            if taken == f:
                taken = None
        for _ in range(jokers):
            counts[JOKER] -= 1
            if freed:
                freed = False
            elif taken == JOKER:
                taken = None
        return replace(self, hand=tuple(sorted(counts.elements())), taken=taken, freed=freed)


class Reference:
    """Legal actions of German-family records for one template table and :class:`Rules`
    (see module doc)."""

    def __init__(self, table, layout, rules: Rules = GERMAN):
        self.layout = layout
        self.rules = rules
        self.top = ACE_HIGH if rules.ace_high else KING
        self.templates = build_templates(table)
        self.by_face: dict[int, list[int]] = {f: [] for f in range(NUM_FACES)}
        for tpl in self.templates:
            for f in tpl.faces:
                self.by_face[f].append(tpl.tid)
        self.opening_memo: dict = {}
        self.refused: Counter = Counter()    # candidate actions a rule took out, by rule

    # ---- template fills ----------------------------------------------------------------

    def fills(self, hand: tuple) -> Iterator[tuple[Template, tuple, int]]:
        """Every (template, naturals used, jokers needed) the hand can meld now. A legal
        German meld holds at least two naturals, so only templates with two held faces
        qualify; Crazy's may hold none (CR-2), so every template is tried."""
        counts = Counter(hand)
        held_in = Counter()
        for f in set(hand):
            if f != JOKER:
                held_in.update(self.by_face[f])
        least = min(2, self.rules.min_naturals)
        tids = range(len(self.templates)) if least == 0 else \
            sorted(tid for tid, n in held_in.items() if n >= least)
        for tid in tids:
            tpl = self.templates[tid]
            made = fill(tpl, counts, self.rules.min_naturals)
            if made is not None:
                yield tpl, made[0], made[1]

    # ---- GE-5 opening ------------------------------------------------------------------

    def can_open(self, hand: tuple, need: int, pending: int | None) -> bool:
        """GE-5 / D3 / D4: can some sequence of template-fill melds from ``hand`` add
        ``need`` more credit, one of them using the ``pending`` face (the card taken from the
        discard pile; JOKER for a taken joker, which D19 makes the first joker used)?"""
        need = max(need, 0)
        if pending is None and need == 0:
            return True
        key = (hand, need, pending)
        hit = self.opening_memo.get(key)
        if hit is not None:
            return hit
        options = list(self.fills(hand))
        usable = {f for _, naturals, _ in options for f in naturals}
        # the credit still to come is at most what every usable card can earn
        most = sum(RANK_VALUE[rank(f)] for f in hand if f in usable)
        most += JOKER_MAX_CREDIT * hand.count(JOKER)
        result = False
        if most >= need:
            for tpl, naturals, jokers in options:
                uses = pending is not None and (pending in naturals or pending == JOKER and jokers)
                rest = list(hand)
                for f in naturals + (JOKER,) * jokers:
                    rest.remove(f)
                if self.can_open(tuple(rest), need - tpl.credit, None if uses else pending):
                    result = True
                    break
        if len(self.opening_memo) > 2_000_000:
            self.opening_memo.clear()
        self.opening_memo[key] = result
        return result

    # ---- after opening -----------------------------------------------------------------

    def placements(self, turn: Turn, melds_only: bool = False) -> Iterator[tuple[int, Turn]]:
        """Every (action id, turn after it) that GE-3, GE-5, GE-6 and D16/D17 allow after
        opening (``melds_only``: Crazy before a seat's first meld, CR-3), before the D18
        dead-end filter. While a freed joker waits, only melds that use it (D17, D19: a
        meld's first joker is the freed one). Crazy: no face twice on the table (D3), no
        placement that empties the hand (CR-4), a swapped-out wild is free (D5)."""
        lay, rules = self.layout, self.rules
        shown = turn.shown() if rules.faces_once else set()
        slot = 1 + max((m for m, _ in turn.table), default=-1)
        for tpl, naturals, jokers in self.fills(turn.hand):
            if turn.freed and jokers == 0 or shown & set(tpl.faces):
                continue
            after = turn.without(naturals, jokers)
            if rules.out_by_discard and not after.hand:
                self.refused["CR-4 placement"] += 1
                continue
            declared = tuple((slot, f) for f in tpl.faces if f not in naturals)
            yield lay.meld + tpl.tid, replace(after, table=turn.table + ((slot, tpl.shape),),
                                              jokers=turn.jokers + declared)
        if turn.freed or melds_only:
            return
        held = set(turn.hand)
        for i, (m, meld) in enumerate(turn.table):
            for f in sorted(meld.addable_faces(self.top) - shown):
                if f in held:                         # D14: the natural if held
                    after, declared = turn.without((f,), 0), ()
                elif JOKER in held:
                    after, declared = turn.without((), 1), ((m, f),)
                else:
                    continue
                if rules.out_by_discard and not after.hand:
                    self.refused["CR-4 placement"] += 1
                    continue
                table = turn.table[:i] + ((m, meld.extended(f, self.top)),) + turn.table[i + 1:]
                yield lay.layoff + m * NUM_FACES + f, replace(after, table=table,
                                                              jokers=turn.jokers + declared)
        for m, f in sorted(set(turn.jokers)):         # GE-6 / D21: any seat's table joker
            if f in held:
                after = turn.without((f,), 0)
                jokers = list(turn.jokers)
                jokers.remove((m, f))
                yield lay.swap + m * NUM_FACES + f, replace(
                    after, hand=tuple(sorted(after.hand + (JOKER,))),
                    freed=rules.freed_joker_melds, jokers=tuple(jokers))

    def can_end(self, turn: Turn) -> bool:
        """D18: can this turn still end, by a discard (a card not taken this turn, and no
        freed joker pending) or by placing the whole hand?"""
        if not turn.freed:
            if not turn.hand:
                return True
            if len(turn.hand) > (turn.taken is not None):
                return True
        return any(self.can_end(after) for _, after in self.placements(turn))

    # ---- cards ------------------------------------------------------------------------

    def printed(self, card: int) -> int:
        """The face printed on a card (what ``discard`` names); JOKER for a joker."""
        return JOKER if card >= self.rules.naturals else card % NUM_FACES

    def plays_as(self, card: int, wild_rank: int) -> int:
        """The face a card plays as this hand: JOKER for a joker or a card of the wild rank
        (Crazy D1), else its printed face."""
        f = self.printed(card)
        return JOKER if f != JOKER and rank(f) == wild_rank else f

    # ---- the mask ----------------------------------------------------------------------

    def legal(self, s) -> set[int]:
        """The legal action ids of record ``s``: GE-4's draw or take, then before opening
        only opening melds (and a plain discard), after it melds, layoffs, swaps and
        discards under D5, D6, D16 .. D18. Crazy: a take unless the seat holds one card
        (CR-4), no opening (CR-3)."""
        phase = int(s["phase"])
        if phase not in (PHASE_DRAW, PHASE_PLAY):
            return set()
        lay, rules = self.layout, self.rules
        wild = int(s["wild_rank"])
        p = int(s["current"])
        loc = s["loc"]
        cards = [c for c in range(len(loc)) if loc[c] == LOC_HAND + p]
        hand = tuple(sorted(self.plays_as(c, wild) for c in cards))
        taken_cards = [c for c in cards if s["taken"][c]]
        assert len(taken_cards) <= 1, "one card at most is taken per turn"
        taken = self.plays_as(taken_cards[0], wild) if taken_cards else None
        is_open = bool(s["placed_before"][p])
        legal: set[int] = set()

        if phase == PHASE_DRAW:
            if s["stock_ptr"] < s["stock_len"]:
                legal.add(lay.draw)
            if s["discard_len"] > 0:
                top = int(s["discard"][s["discard_len"] - 1])
                f = self.plays_as(top, wild)
                if rules.lone_card_draws and len(hand) == 1:
                    self.refused["CR-4 take"] += 1
                elif is_open or not rules.opening or \
                        self.can_open(tuple(sorted(hand + (f,))), rules.opening, f):
                    legal.add(lay.take + top)
                else:
                    self.refused["D4 take"] += 1
            return legal

        discardable = sorted({self.printed(c) for c in cards if not s["taken"][c]})
        if not is_open and rules.opening:             # GE-5 / D3 / D4
            need = rules.opening - int(s["open_total"])
            for tpl, naturals, jokers in self.fills(hand):
                uses = taken is not None and (taken in naturals or taken == JOKER and jokers)
                rest = list(hand)
                for f in naturals + (JOKER,) * jokers:
                    rest.remove(f)
                if self.can_open(tuple(rest), need - tpl.credit, None if uses else taken):
                    legal.add(lay.meld + tpl.tid)
                else:
                    self.refused["D3 opening meld"] += 1
            if int(s["open_total"]) == 0 and not s["taken"].any():
                legal.update(lay.discard + f for f in discardable)
            return legal

        freed = int(s["obligation"]) >= 0
        if freed:
            joker = int(s["obligation"])
            assert self.plays_as(joker, wild) == JOKER and loc[joker] == LOC_HAND + p, \
                "after opening the obligation is a freed joker in hand"
        table, jokers = self.read_table(s)
        turn = Turn(hand, taken, freed, table, jokers)
        for action, after in self.placements(turn, melds_only=not is_open):
            if self.can_end(after):                   # D18 (for a swap: D6)
                legal.add(action)
            else:
                self.refused["D6 swap" if action >= lay.swap else "D18 placement"] += 1
        if not freed:
            legal.update(lay.discard + f for f in discardable)
        return legal

    def read_table(self, s) -> tuple[tuple, tuple]:
        """The record's table melds as (slot, Meld) pairs, and its jokers and wilds as
        (slot, face)."""
        wild = int(s["wild_rank"])
        melds, jokers = [], []
        for m in range(len(s["m_kind"])):
            kind = int(s["m_kind"][m])
            if kind == 0:
                continue
            shown = {k: int(s["shown"][c]) for k, c in enumerate(s["m_cards"][m]) if c >= 0}
            for k, c in enumerate(s["m_cards"][m]):
                if c < 0:
                    continue
                if self.plays_as(c, wild) == JOKER:
                    jokers.append((m, shown[k]))
                else:
                    assert shown[k] == self.printed(c), "a natural shows its own face"
            if kind == SET:
                ranks = {rank(f) for f in shown.values()}
                assert len(ranks) == 1 and all(suit(f) == k for k, f in shown.items())
                melds.append((m, Meld(SET, ranks.pop(), suits=frozenset(shown))))
            else:
                lo, hi = min(shown), max(shown)
                suits = {suit(f) for f in shown.values()}
                assert len(suits) == 1 and sorted(shown) == list(range(lo, hi + 1))
                assert all(rank(f) == k % 13 for k, f in shown.items()), "run faces by position"
                melds.append((m, Meld(RUN, suits.pop(), lo=lo, hi=hi)))
        return tuple(melds), tuple(jokers)


_REFERENCES: dict[tuple, Reference] = {}


def reference_for(variant) -> Reference:
    """One :class:`Reference` (and its opening memo) per variant's rules, template table and
    action layout."""
    key = (variant.name, id(variant.table), variant.layout)
    if key not in _REFERENCES:
        _REFERENCES[key] = Reference(variant.table, variant.layout, RULES_OF_VARIANT[variant.name])
    return _REFERENCES[key]


def reference_legal(variant, state_record) -> set[int]:
    """The legal action ids of ``state_record`` by its rules page (see module doc)."""
    return reference_for(variant).legal(state_record)
