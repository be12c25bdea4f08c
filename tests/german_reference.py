"""A slow, plain-Python reference of German Rummy's legal actions (docs/german_rummy.md).

``reference_legal(variant, record)`` is the set of legal action ids of a German game record,
computed from the record alone and from the rules page, without the compiled engine's
search: the differential tests (tests/test_german_properties.py) compare it with the
engine's mask. It reads ``variant.table`` only for template ids and faces and
``variant.layout`` only for action offsets; credits, meld shapes, which copy a move uses and
every legality rule are written here from GE-2 .. GE-7 and decisions D3 .. D24.

* GE-5 / D3 / D4: the opening is a plain depth-first search over SEQUENCES of template-fill
  melds (naturals where held, jokers for the faces not held, D14), memoised on the remaining
  hand, its missing credit and the card still to be used.
* D18: after opening, a placement is legal when the turn can still end afterwards, decided
  by a plain search over the placements that follow (it only goes deeper while no card may
  be discarded: a freed joker is pending, or only the card taken this turn is left).
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

    def addable_faces(self) -> set[int]:
        """Faces a layoff may add (GE-5: a run's next card at either end, a set's missing
        suit; D11: at most 13 run cards, no ace at both ends, sets of at most 4)."""
        if self.kind == SET:
            if len(self.suits) >= 4:
                return set()
            return {s * 13 + self.key for s in range(4) if s not in self.suits}
        if self.hi - self.lo + 1 >= 13:
            return set()
        out = set()
        if self.lo > 0:
            out.add(self.key * 13 + rank(self.lo - 1))
        if self.hi < ACE_HIGH:
            out.add(self.key * 13 + rank(self.hi + 1))
        return out

    def extended(self, face: int) -> "Meld":
        """This meld with ``face`` laid off (D15: an ace fitting both ends goes high)."""
        if self.kind == SET:
            return replace(self, suits=self.suits | {suit(face)})
        if self.hi < ACE_HIGH and rank(self.hi + 1) == rank(face):
            return replace(self, hi=self.hi + 1)
        return replace(self, lo=self.lo - 1)


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


def fill(template: Template, counts: Counter) -> tuple[tuple, int] | None:
    """GE-3 / D14 template fill from a hand's face counts: (natural faces used, jokers
    needed), or None when the hand cannot make it (a meld needs a natural, jokers for the
    missing faces, and two naturals when it holds two or more jokers)."""
    naturals = tuple(f for f in template.faces if counts[f] > 0)
    missing = len(template.faces) - len(naturals)
    if not naturals or missing > counts[JOKER] or (missing >= 2 and len(naturals) < 2):
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
    """Legal actions of German Rummy records for one template table (see module doc)."""

    def __init__(self, table, layout):
        self.layout = layout
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
        meld holds at least two naturals, so only templates with two held faces qualify."""
        counts = Counter(hand)
        held_in = Counter()
        for f in set(hand):
            if f != JOKER:
                held_in.update(self.by_face[f])
        for tid, n in sorted(held_in.items()):
            if n < 2:
                continue
            tpl = self.templates[tid]
            made = fill(tpl, counts)
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

    def placements(self, turn: Turn) -> Iterator[tuple[int, Turn]]:
        """Every (action id, turn after it) that GE-3, GE-5, GE-6 and D16/D17 allow after
        opening, before the D18 dead-end filter. While a freed joker waits, only melds that
        use it (D17, D19: a meld's first joker is the freed one)."""
        lay = self.layout
        slot = 1 + max((m for m, _ in turn.table), default=-1)
        for tpl, naturals, jokers in self.fills(turn.hand):
            if turn.freed and jokers == 0:
                continue
            after = turn.without(naturals, jokers)
            declared = tuple((slot, f) for f in tpl.faces if f not in naturals)
            yield lay.meld + tpl.tid, replace(after, table=turn.table + ((slot, tpl.shape),),
                                              jokers=turn.jokers + declared)
        if turn.freed:
            return
        held = set(turn.hand)
        for i, (m, meld) in enumerate(turn.table):
            for f in sorted(meld.addable_faces()):
                if f in held:                         # D14: the natural if held
                    after, declared = turn.without((f,), 0), ()
                elif JOKER in held:
                    after, declared = turn.without((), 1), ((m, f),)
                else:
                    continue
                table = turn.table[:i] + ((m, meld.extended(f)),) + turn.table[i + 1:]
                yield lay.layoff + m * NUM_FACES + f, replace(after, table=table,
                                                              jokers=turn.jokers + declared)
        for m, f in sorted(set(turn.jokers)):         # GE-6 / D21: any seat's table joker
            if f in held:
                after = turn.without((f,), 0)
                jokers = list(turn.jokers)
                jokers.remove((m, f))
                yield lay.swap + m * NUM_FACES + f, replace(
                    after, hand=tuple(sorted(after.hand + (JOKER,))), freed=True,
                    jokers=tuple(jokers))

    def can_end(self, turn: Turn) -> bool:
        """D18: can this turn still end, by a discard (a card not taken this turn, and no
        freed joker pending) or by placing the whole hand?"""
        if not turn.freed:
            if not turn.hand:
                return True
            if len(turn.hand) > (turn.taken is not None):
                return True
        return any(self.can_end(after) for _, after in self.placements(turn))

    # ---- the mask ----------------------------------------------------------------------

    def legal(self, s) -> set[int]:
        """The legal action ids of record ``s``: GE-4's draw or take, then before opening
        only opening melds (and a plain discard), after it melds, layoffs, swaps and
        discards under D5, D6, D16 .. D18."""
        phase = int(s["phase"])
        if phase not in (PHASE_DRAW, PHASE_PLAY):
            return set()
        lay = self.layout
        p = int(s["current"])
        loc = s["loc"]
        cards = [c for c in range(len(loc)) if loc[c] == LOC_HAND + p]
        hand = tuple(sorted(face_of_card(c) for c in cards))
        taken_cards = [c for c in cards if s["taken"][c]]
        assert len(taken_cards) <= 1, "one card at most is taken per turn"
        taken = face_of_card(taken_cards[0]) if taken_cards else None
        is_open = bool(s["placed_before"][p])
        legal: set[int] = set()

        if phase == PHASE_DRAW:
            if s["stock_ptr"] < s["stock_len"]:
                legal.add(lay.draw)
            if s["discard_len"] > 0:
                top = int(s["discard"][s["discard_len"] - 1])
                f = face_of_card(top)
                if is_open or self.can_open(tuple(sorted(hand + (f,))), OPENING, f):
                    legal.add(lay.take + top)
                else:
                    self.refused["D4 take"] += 1
            return legal

        discardable = sorted({face_of_card(c) for c in cards if not s["taken"][c]})
        if not is_open:                               # GE-5 / D3 / D4
            need = OPENING - int(s["open_total"])
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
            assert face_of_card(joker) == JOKER and loc[joker] == LOC_HAND + p, \
                "after opening the obligation is a freed joker in hand"
        table, jokers = read_table(s)
        turn = Turn(hand, taken, freed, table, jokers)
        for action, after in self.placements(turn):
            if self.can_end(after):                   # D18 (for a swap: D6)
                legal.add(action)
            else:
                self.refused["D6 swap" if action >= lay.swap else "D18 placement"] += 1
        if not freed:
            legal.update(lay.discard + f for f in discardable)
        return legal


def read_table(s) -> tuple[tuple, tuple]:
    """The record's table melds as (slot, Meld) pairs, and its jokers as (slot, face)."""
    melds, jokers = [], []
    for m in range(len(s["m_kind"])):
        kind = int(s["m_kind"][m])
        if kind == 0:
            continue
        shown = {k: int(s["shown"][c]) for k, c in enumerate(s["m_cards"][m]) if c >= 0}
        jokers += [(m, int(s["shown"][c])) for c in s["m_cards"][m] if c >= NATURALS]
        for k, c in enumerate(s["m_cards"][m]):
            if 0 <= c < NATURALS:
                assert shown[k] == face_of_card(c), "a natural shows its own face"
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
    """One :class:`Reference` (and its opening memo) per template table and action layout."""
    key = (id(variant.table), variant.layout)
    if key not in _REFERENCES:
        _REFERENCES[key] = Reference(variant.table, variant.layout)
    return _REFERENCES[key]


def reference_legal(variant, state_record) -> set[int]:
    """The legal action ids of ``state_record`` by docs/german_rummy.md (see module doc)."""
    return reference_for(variant).legal(state_record)
