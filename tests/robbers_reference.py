"""A slow, plain-Python reference of Robber's Rummy's legal actions (docs/robbers_rummy.md).

``reference_legal(variant, record)`` is the set of legal action ids of a game record,
computed from the record and the rules page without the compiled engine: meld validity
(RR-3) is written here from the faces, the opening value (RR-2 / RR-5) from GE-2 with the
jokers as the record declares them (a declaration the reference checks: it must be a face
the meld is missing). ``variant.table`` is read only for template faces and
``variant.layout`` only for action offsets. tests/test_rules_robbers.py compares it with
the mask at every position of random games.
"""

from __future__ import annotations

from collections import Counter

JOKER = 52
NUM_RANKS = 13
WIDTH = 14                 # cards a meld slot holds
OPENING = 40               # RR-5
LOC_STOCK, LOC_TABLE, LOC_HAND = 0, 2, 4
PHASE_HAND_OVER = 3
RANK_VALUE = (11, 2, 3, 4, 5, 6, 7, 8, 9, 10, 10, 10, 10)      # GE-2, the ace 1 below a 2


def run_windows(ranks: set[int], n: int, around_the_corner: bool) -> list[list[int]]:
    """The ways n cards of one suit with natural ranks ``ranks`` lie in a run: each a list
    of the run's ranks from its low end (an ace low is rank 0 first, high is rank 0 last)."""
    if n > NUM_RANKS:
        return []
    starts = range(NUM_RANKS) if around_the_corner else range(NUM_RANKS + 2 - n)
    out = []
    for lo in starts:
        window = [(lo + k) % NUM_RANKS for k in range(n)]
        if ranks <= set(window):
            out.append(window)
    return out


def meld_kind(faces: list[int], around_the_corner: bool = False) -> str | None:
    """RR-3: "set" (3-4 cards, one rank, distinct suits), "run" (3+ of one suit in sequence,
    the ace low or high, wrapping only with the option), at most one joker; else None."""
    naturals = [f for f in faces if f != JOKER]
    if len(faces) < 3 or len(faces) - len(naturals) > 1 or len(set(naturals)) < len(naturals):
        return None
    if len({f % NUM_RANKS for f in naturals}) == 1:
        return "set" if len(faces) <= 4 else None
    if len({f // NUM_RANKS for f in naturals}) != 1:
        return None
    ranks = {f % NUM_RANKS for f in naturals}
    return "run" if run_windows(ranks, len(faces), around_the_corner) else None


def meld_value(shown: list[int], kind: str) -> int:
    """GE-2 points of a valid meld whose cards show ``shown`` in sequence order."""
    total = 0
    for k, f in enumerate(shown):
        low_ace = kind == "run" and f % NUM_RANKS == 0 and k + 1 < len(shown) \
            and shown[k + 1] % NUM_RANKS == 1
        total += 1 if low_ace else RANK_VALUE[f % NUM_RANKS]
    return total


def declaration_fits(faces: list[int], shown: list[int], kind: str, around_the_corner: bool) -> bool:
    """The record's joker declaration is a face the meld lacks, making it a set or run."""
    if JOKER not in faces:
        return shown == faces
    declared = shown[faces.index(JOKER)]
    naturals = [f for f in faces if f != JOKER]
    if not 0 <= declared < JOKER or declared in naturals:
        return False
    return meld_kind(naturals + [declared], around_the_corner) == kind


def reference_legal(variant, s) -> set[int]:
    """The legal action ids of record ``s`` from the rules page (RR-3 ... RR-7)."""
    if s["phase"] >= PHASE_HAND_OVER:
        return set()
    lay, spec = variant.layout, variant.spec
    corner = variant.config.around_the_corner
    p = int(s["current"])
    face = [int(f) for f in spec.card_face]
    slots = {m: [int(c) for c in s["m_cards"][m] if c >= 0] for m in range(spec.max_melds)}
    slots = {m: cards for m, cards in slots.items() if cards}
    new = min(m for m in range(spec.max_melds) if m not in slots)
    opened = bool(s["placed_before"][p])

    def reach(m: int) -> bool:                 # RR-5: before opening only this play's slots
        return m == new or (m in slots and (opened or bool(s["m_new"][m])))

    legal: set[int] = set()
    if s["obligation"] >= 0:                   # a lifted card goes into another slot
        src = int(s["meld_of"][s["obligation"]])
        legal |= {lay.put + m for m in range(spec.max_melds)
                  if m != src and reach(m) and len(slots.get(m, ())) < WIDTH}
        return legal | {lay.reset}
    stock = int(s["stock_len"] - s["stock_ptr"])
    if s["editing"]:
        legal.add(lay.reset)
        kinds = {m: meld_kind([face[c] for c in cards], corner) for m, cards in slots.items()}
        placed = any(s["taken"][c] for c in range(len(face)))
        opening = sum(meld_value([int(s["shown"][c]) for c in slots[m]], kinds[m])
                      for m in slots if s["m_new"][m] and kinds[m])
        if all(kinds.values()) and placed and (opened or opening >= OPENING):
            legal.add(lay.commit)
    else:
        if not s["drew"] and stock > 0:
            legal.add(lay.draw)                # RR-4: one draw a turn
        if s["placed_this_turn"]:
            legal.add(lay.end)
        elif stock == 0:
            legal.add(lay.pass_)
    if s["edits"] >= variant.config.max_edits:
        return legal
    hand = Counter(face[c] for c in range(len(face)) if s["loc"][c] == LOC_HAND + p)
    for t in range(spec.num_templates):
        missing = [f for f in variant.table.template_faces(t) if not hand[f]]
        if len(missing) <= min(1, hand[JOKER]):
            legal.add(lay.meld + t)
    stride = JOKER + 1
    for m in range(spec.max_melds):
        if not reach(m):
            continue
        cards = slots.get(m, [])
        if len(cards) < WIDTH:
            legal |= {lay.layoff + m * stride + f for f in hand}
        legal |= {lay.lift + m * stride + face[c] for c in cards}
    return legal


def check_table(variant, s) -> None:
    """Every slot's kind agrees with RR-3, a valid meld's cards lie in sequence order with its
    joker declared as a face it lacks; outside a play every meld is valid."""
    corner = variant.config.around_the_corner
    face = [int(f) for f in variant.spec.card_face]
    for m in range(variant.spec.max_melds):
        cards = [int(c) for c in s["m_cards"][m] if c >= 0]
        if not cards:
            assert s["m_kind"][m] == 0
            continue
        kind = meld_kind([face[c] for c in cards], corner)
        assert {1: "set", 2: "run", 3: None}[int(s["m_kind"][m])] == kind, (m, cards, kind)
        assert kind or s["editing"], f"slot {m} invalid outside a play"
        if kind:
            shown = [int(s["shown"][c]) for c in cards]
            assert declaration_fits([face[c] for c in cards], shown, kind, corner), (m, shown)
            if kind == "run":
                assert meld_kind(shown, corner) == "run" and [f % 13 for f in shown] in \
                    run_windows({f % 13 for f in shown}, len(shown), corner)
