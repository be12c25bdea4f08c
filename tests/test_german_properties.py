"""Differential and property tests of German Rummy (docs/german_rummy.md) in random play.

(a) The engine's mask equals the plain-Python reference (tests/german_reference.py) in every
    position reached: the GE-5 opening search, D4 takes, D18 dead ends, GE-6 swaps and the
    D17 freed joker included. Play prefers placements, deals are often rich in melds and
    jokers, so openings, swaps and freed jokers come up often.
(b) Every one of the 108 cards is in exactly one place after every step (GE-1).
(c) Scores (GE-9): each hand's points are the seat's table credit (tracked here, card by
    card, from who moved it to the table, D7) less its hand value; totals are the sums.
(d) Whole games for 2 .. 6 seats end, and the mask is never empty before they do (D18).

The default run takes about half a minute. ``GERMAN_SLOW=1`` draws many more examples in the
same tests, and ``pytest -m slow tests/test_german_properties.py`` adds a run of 100 whole
games.
"""

from __future__ import annotations

import os
import random
from collections import Counter
from functools import lru_cache

import pytest
from hypothesis import Phase, given, settings
from hypothesis import strategies as st

from mountain_rummy_env.core.state import check_invariants
from mountain_rummy_env.game import Game
from mountain_rummy_env.variants.german import german_variant

from german_reference import (
    JOKER, LOC_HAND, LOC_TABLE, NATURALS, OPENING, SET, face_of_card,
    hand_value, position_credit, RANK_VALUE, rank, reference_for, reference_legal, suit,
)

NUM_CARDS = 108
PHASE_DRAW, PHASE_PLAY, PHASE_GAME_OVER = 0, 1, 4
EVENT_HAND_OVER, EVENT_GAME_OVER = 1, 2
SLOW = bool(os.environ.get("GERMAN_SLOW"))
NO_SHRINK = (Phase.explicit, Phase.reuse, Phase.generate)   # a failure prints its draw
MAX_STEPS = 20_000      # a whole game of six 500-turn hands stays far below this


@lru_cache(maxsize=None)
def variant(seats: int, episode: str = "hand"):
    return german_variant(num_players=seats, episode=episode)


# --------------------------------------------------------------------------------------
# deals and play that reach the interesting positions


def rich_deck(rng: random.Random, seats: int, dealer: int) -> list[int]:
    """A deck order (top first) dealing every seat runs, sets and near-melds of both packs,
    runs with a hole a joker can fill and most of the jokers; the faces those holes miss go
    to the other seats, so jokers reach the table and swaps are frequent."""
    pool = list(range(NUM_CARDS))
    rng.shuffle(pool)
    by_face: dict[int, list[int]] = {}
    for c in pool:
        by_face.setdefault(face_of_card(c), []).append(c)
    hands: list[list[int]] = [[] for _ in range(seats)]
    holes: list[int] = []

    def give(hand: list[int], faces) -> None:
        for f in faces:
            if len(hand) < 13 and by_face[f]:
                hand.append(by_face[f].pop())

    for hand in hands:
        give(hand, [JOKER] * rng.choice((0, 1, 2, 2, 3, 4)))
        while len(hand) < 13:
            s, r, n = rng.randrange(4), rng.randrange(13), rng.randint(2, 5)
            shape = rng.random()
            if shape < 0.35:            # part of a run
                give(hand, [s * 13 + (r + i) % 13 for i in range(n)])
            elif shape < 0.6:           # a run with a hole
                faces = [s * 13 + (r + i) % 13 for i in range(n + 1)]
                holes.append(faces.pop(rng.randrange(1, n)))
                give(hand, faces)
            elif shape < 0.85:          # part of a set
                give(hand, [q * 13 + r for q in rng.sample(range(4), min(n, 4))])
            else:                       # someone's hole
                give(hand, [holes.pop(rng.randrange(len(holes)))] if holes else [])
    dealt = {c for h in hands for c in h}
    rest = [c for c in pool if c not in dealt]
    # GE-1: deck[i] goes to seat (dealer + 1 + i) % seats, one card at a time
    order = [hands[(dealer + 1 + i) % seats][i // seats] for i in range(13 * seats)]
    return order + rest


def connected(face: int, faces: Counter) -> bool:
    """Whether a card may still join a meld: a joker, or a card of its rank or of its suit
    within two ranks in the hand."""
    if face == JOKER:
        return True
    for g in faces:
        if g == face or g == JOKER:
            continue
        if rank(g) == rank(face) or suit(g) == suit(face) and min(
                (rank(g) - rank(face)) % 13, (rank(face) - rank(g)) % 13) <= 2:
            return True
    return False


def choose(game: Game, rng: random.Random, appetite: float) -> int:
    """A legal action: with probability ``appetite`` a swap, a meld (one that uses a joker
    first), a layoff or a take when one is legal, else a draw or a discard of a card unlikely
    to meld. Layoffs and takes are played less often, so hands last and jokers stay out."""
    v = game.variant
    legal = game.legal_actions(0)
    families: dict[str, list[int]] = {}
    for a in legal:
        families.setdefault(v.action_family(a), []).append(a)
    s = game.states[0]
    hand = Counter(face_of_card(c) for c in game.hand(0, int(s["current"])))
    if rng.random() < appetite:
        for family, chance in (("swap", 1.0), ("meld", 1.0), ("layoff", 0.4), ("take", 0.6)):
            if families.get(family) and rng.random() < chance:
                options = families[family]
                if family == "meld":
                    wild = [a for a in options if any(
                        hand[f] == 0 for f in v.table.template_faces(a - v.layout.meld))]
                    options = wild if wild and rng.random() < 0.7 else options
                return rng.choice(options)
    if "draw" in families:
        return families["draw"][0]
    if "discard" in families:
        loose = [a for a in families["discard"] if not connected(a - v.layout.discard, hand)]
        return rng.choice(loose or families["discard"])
    return rng.choice(legal)


# --------------------------------------------------------------------------------------
# the referee: what the rules say must hold after every step


def table_credit(s, card: int) -> int:
    """GE-2 credit of a table card: a set card its rank's value, a run card its position's."""
    m = int(s["meld_of"][card])
    if s["m_kind"][m] == SET:
        return RANK_VALUE[rank(int(s["shown"][card]))]
    k = list(s["m_cards"][m]).index(card)
    return position_credit(k)


class Referee:
    """Plays a game, checks (a) .. (d) after every step and counts what it saw."""

    def __init__(self, game: Game):
        self.game = game
        self.seats = game.variant.num_players
        self.seen: Counter = Counter()
        self.totals = [0] * self.seats
        self.start_hand()

    def start_hand(self) -> None:
        self.owner: dict[int, int] = {}
        self.opened = [False] * self.seats
        self.turn_credit = 0

    def check_position(self) -> None:
        g, s = self.game, self.game.states[0]
        check_invariants(s, self.seats)
        places = list(s["stock"][s["stock_ptr"]: s["stock_len"]])
        places += list(s["discard"][: s["discard_len"]])
        places += [c for row in s["m_cards"] for c in row if c >= 0]
        for p in range(self.seats):
            places += g.hand(0, p)
        assert sorted(int(c) for c in places) == list(range(NUM_CARDS)), "GE-1: each card once"
        for c in range(NUM_CARDS):
            if s["loc"][c] == LOC_TABLE:
                assert s["owner"][c] == self.owner[c], f"D7: card {c} credited to the placer"
        if s["phase"] in (PHASE_DRAW, PHASE_PLAY):
            legal = set(g.legal_actions(0))
            assert legal, "D18: the mask is never empty before the hand ends"
            p = int(s["current"])
            assert [bool(v) for v in s["placed_before"][: self.seats]] == self.opened, "GE-5"
            if not self.opened[p]:
                assert s["open_total"] == self.turn_credit
            reference = reference_for(g.variant)
            refused = reference.refused.copy()
            expected = reference.legal(s)
            self.seen.update(reference.refused - refused)
            if legal != expected:
                text = g.variant.action_text
                raise AssertionError(
                    f"mask differs from the reference: engine only "
                    f"{sorted(text(a) for a in legal - expected)}, reference only "
                    f"{sorted(text(a) for a in expected - legal)}; hand "
                    f"{g.variant.deck.cards_text(g.hand(0, p))}, record {s!r}")
            self.seen["positions compared"] += 1
            self.count(s, legal)

    def count(self, s, legal: set[int]) -> None:
        """Tally the interesting cases, so a test can show they were exercised."""
        v = self.game.variant
        p = int(s["current"])
        families = {v.action_family(a) for a in legal}
        if s["phase"] == PHASE_DRAW and not self.opened[p] and "take" in families:
            self.seen["take before opening"] += 1
        if s["phase"] == PHASE_PLAY and not self.opened[p] and s["open_total"] > 0:
            self.seen["opening staged"] += 1
        if s["phase"] == PHASE_PLAY and not self.opened[p] and s["taken"].any():
            self.seen["taken card pending"] += 1
        if self.opened[p] and s["obligation"] >= 0:
            self.seen["freed joker pending"] += 1
        if "swap" in families:
            self.seen["swap legal"] += 1

    def step(self, action: int) -> int:
        g = self.game
        before = g.states[0].copy()
        p = int(before["current"])
        family = g.variant.action_family(action)
        self.seen["played " + family] += 1
        event = g.step_one(0, action)
        s = g.states[0]
        for c in range(NUM_CARDS):
            if s["loc"][c] == LOC_TABLE and before["loc"][c] == LOC_HAND + p:
                self.owner[c] = p
            elif before["loc"][c] == LOC_TABLE and s["loc"][c] != LOC_TABLE:
                assert c >= NATURALS and family == "swap", "only a swap takes a card off the table"
                del self.owner[c]
        if family == "meld" and not self.opened[p]:
            melded = [c for c in range(NUM_CARDS)
                      if s["loc"][c] == LOC_TABLE and before["loc"][c] == LOC_HAND + p]
            self.turn_credit += sum(table_credit(s, c) for c in melded)
            taken = [c for c in range(NUM_CARDS) if before["taken"][c]]
            if self.turn_credit >= OPENING and all(s["loc"][c] == LOC_TABLE for c in taken):
                self.opened[p] = True
        if family == "discard":
            self.turn_credit = 0
        if event in (EVENT_HAND_OVER, EVENT_GAME_OVER):
            self.check_scores(s)
        return event

    def check_scores(self, s) -> None:
        """GE-9 from the final table and hands."""
        g = self.game
        self.seen["hands"] += 1
        empty = [p for p in range(self.seats) if not g.hand(0, p)]
        assert len(empty) <= 1 and int(s["h_winner"]) == (empty[0] if empty else -1)
        self.seen["went out" if empty else "no winner"] += 1
        for p in range(self.seats):
            credit = sum(table_credit(s, c) for c, q in self.owner.items() if q == p)
            held = sum(hand_value(face_of_card(c)) for c in g.hand(0, p))
            assert s["h_points"][p] == credit - held, ("GE-9 hand points", p)
            self.totals[p] += credit - held
        assert list(s["scores"][: self.seats]) == self.totals, "GE-9: totals are the sums"
        if s["phase"] == PHASE_GAME_OVER:
            best = max(self.totals)
            leaders = [p for p in range(self.seats) if self.totals[p] == best]
            assert s["game_winner"] == (leaders[0] if len(leaders) == 1 else -1), "D1"

    def play(self, rng: random.Random, appetite: float, whole_game: bool) -> None:
        g = self.game
        self.check_position()
        for _ in range(MAX_STEPS):
            event = self.step(choose(g, rng, appetite))
            if event == EVENT_GAME_OVER:
                assert g.states[0]["hand_no"] == self.seats - 1, "D1: one hand per seat"
                return
            if event == EVENT_HAND_OVER:
                if not whole_game:
                    return
                g.next_hand(0)
                self.start_hand()
            self.check_position()
        raise AssertionError("the game did not end")


def new_game(seats: int, seed: int, rich: bool) -> Game:
    g = Game(variant(seats), 1)
    if rich:
        rng = random.Random(seed)
        dealer = rng.randrange(seats)
        g.reset(seed=seed, deck=rich_deck(rng, seats, dealer), dealer=dealer)
    else:
        g.reset(seed=seed)
    return g


# --------------------------------------------------------------------------------------
# the tests


@settings(max_examples=400 if SLOW else 12, phases=NO_SHRINK)
@given(seats=st.sampled_from([2, 3, 4, 6]), seed=st.integers(0, 2**31 - 1), rich=st.booleans(),
       appetite=st.sampled_from([0.5, 0.8, 0.95]), choice_seed=st.integers(0, 2**31 - 1))
def test_mask_equals_reference(seats, seed, rich, appetite, choice_seed):
    """(a)-(c): one hand of random play, the mask compared with the reference at every
    position (GE-3 .. GE-7, D3 .. D19)."""
    referee = Referee(new_game(seats, seed, rich))
    referee.play(random.Random(choice_seed), appetite, whole_game=False)


@pytest.mark.parametrize("seats", [2, 3, 4, 5, 6])
def test_whole_games_end(seats):
    """(d) GE-9 / D1 / D18: a whole game of one hand per seat ends, the mask never empty."""
    for seed in range(6 if SLOW else 1):
        ref = Referee(new_game(seats, 1000 * seats + seed, rich=seed % 2 == 0))
        ref.play(random.Random(seed), appetite=0.8, whole_game=True)
        assert ref.seen["hands"] == seats


def test_empty_stock_ends_hands_without_winner():
    """GE-8 / D9: with nobody placing, the stock is rebuilt once and then the hand ends with
    no winner, every seat scoring minus its hand (GE-9)."""
    ref = Referee(new_game(6, 7, rich=False))
    ref.play(random.Random(7), appetite=0.0, whole_game=False)
    s = ref.game.states[0]
    assert s["rebuilt"] == 1 and s["h_winner"] == -1 and ref.seen["no winner"] == 1


def test_interesting_cases_are_compared():
    """The differential test is not vacuous: fixed rich deals reach takes before opening,
    staged openings, swaps and freed jokers, and positions where each rule of the mask takes
    a candidate out (D3 opening melds, D4 takes, D6 swaps, D18 dead ends); the reference
    agrees with the engine on all of them."""
    seen: Counter = Counter()
    for seed in range(12):
        ref = Referee(new_game(2 + seed % 5, seed, rich=True))
        ref.play(random.Random(seed), appetite=0.95, whole_game=False)
        seen += ref.seen
    for case in ("take before opening", "opening staged", "taken card pending", "swap legal",
                 "freed joker pending", "played swap", "D3 opening meld", "D4 take", "D6 swap",
                 "D18 placement"):
        assert seen[case] > 0, (case, seen)


def test_reference_template_credits_follow_ge2():
    """GE-2: the reference's own credits (a set card its rank, a run card its position, the
    ace 1 only at the low end) agree with the variant's template table."""
    v = variant(4)
    for tpl in reference_for(v).templates:
        assert tpl.credit == int(v.table.credit[tpl.tid].sum()), v.table.template_faces(tpl.tid)


def two_seats(hand0: str, hand1: str, upcard: str, stock: str) -> Game:
    """A two-seat game: seat 0 (after dealer seat 1) plays first with ``hand0``, seat 1
    holds ``hand1`` (filled up with unnamed cards), ``upcard`` starts the discard pile and
    the stock begins with ``stock`` (top first), GE-1."""
    v = variant(2)
    named = v.deck.parse_cards(" ".join((hand0, hand1, upcard, stock)))
    n0, n1 = len(hand0.split()), len(hand1.split())
    mine, theirs, up, top = named[:n0], named[n0:n0 + n1], named[n0 + n1], named[n0 + n1 + 1:]
    rest = [c for c in range(NUM_CARDS) if c not in set(named)]
    theirs = theirs + rest[: 13 - n1]
    order = [c for pair in zip(mine, theirs) for c in pair] + [up] + top + rest[13 - n1:]
    g = Game(v, 1)
    g.reset(seed=0, deck=order, dealer=1)
    assert g.hand(0, 0) == sorted(mine, key=lambda c: (face_of_card(c), c))
    return g


def first_turn(hand: str, upcard: str, stock_top: str) -> Game:
    return two_seats(hand, "", upcard, stock_top)


def legal_texts(g: Game, family: str) -> set[str]:
    """The legal actions of ``family`` as text, after checking engine == reference."""
    legal = set(g.legal_actions(0))
    assert legal == reference_legal(g.variant, g.states[0])
    return {g.variant.action_text(a) for a in legal if g.variant.action_family(a) == family}


def test_r9_opening_that_cannot_reach_40():
    """R9 (GE-5, D3): with 3H drawn no meld is offered; with a joker drawn exactly three."""
    dealt = "TS JS QS 2C 2D 2H 4S 5C 6H 7D 8C 9H KD"
    g = first_turn(dealt, "5D", "3H")
    g.step_one(0, "draw stock")
    assert legal_texts(g, "meld") == set()
    assert len(legal_texts(g, "discard")) == 14
    g = first_turn(dealt, "5D", "XX")
    g.step_one(0, "draw stock")
    assert legal_texts(g, "meld") == {"meld TS JS QS KS", "meld 9S TS JS QS", "meld 2C 2D 2H"}


def test_r10_taking_the_top_discard_before_opening():
    """R10 (GE-5, D4, D5): 7H may not be taken (34 < 40), KS may; after taking it both
    melds that open with it are offered and no discard until the opening is down."""
    dealt = "8H 9H TH KC KD 3S 4S 5C 7D 9C JS AD 2D"
    g = first_turn(dealt, "7H", "6C")
    assert legal_texts(g, "take") == set()
    g = first_turn(dealt, "KS", "6C")
    assert legal_texts(g, "take") == {"take KS"}
    g.step_one(0, "take KS")
    assert legal_texts(g, "meld") == {"meld KC KD KS", "meld 8H 9H TH"}
    assert legal_texts(g, "discard") == set()
    g.step_one(0, "meld 8H 9H TH")
    assert legal_texts(g, "meld") == {"meld KC KD KS"} and legal_texts(g, "discard") == set()
    g.step_one(0, "meld KC KD KS")
    assert g.states[0]["placed_before"][0] == 1
    assert "discard KS" not in legal_texts(g, "discard")


def test_r8_opening_of_several_melds():
    """R8 (GE-5): melds offered only while 40 stays reachable; once opened, layoffs too."""
    g = first_turn("2H 3H 4H 5H 7C 7D 7S 8S 9S KC 4D 6C JD", "5D", "XX")
    g.step_one(0, "draw stock")
    melds = legal_texts(g, "meld")
    assert {"meld 2H 3H 4H", "meld 7C 7D 7S", "meld 8S 9S TS"} <= melds
    assert not {"meld 4H 5H 6H", "meld 6S 7S 8S"} & melds
    g.step_one(0, "meld 2H 3H 4H")
    g.step_one(0, "meld 7C 7D 7S")
    assert legal_texts(g, "discard") == set() and legal_texts(g, "layoff") == set()
    g.step_one(0, "meld 8S 9S TS")
    assert g.states[0]["open_total"] == 57 and g.states[0]["placed_before"][0] == 1
    assert "layoff 5H m0" in legal_texts(g, "layoff") and "discard KC" in legal_texts(g, "discard")


def test_r11_joker_exchange():
    """R11 (GE-6, D6, D7, D17): the swap is offered because a meld for the freed joker
    exists; until that meld nothing else is; the natural is credited to the swapper."""
    g = two_seats("3H 4H 5H 6H 7H 8H 9H TH 5S 9C 9D JH 2D", "3S 4S XX 6S QC QD QH",
                  "8C", "KC 7D 4C")
    for action in ("draw stock", "meld 3H 4H 5H 6H 7H 8H 9H TH", "discard KC",
                   "draw stock", "meld 3S 4S 5S 6S", "meld QC QD QH"):
        g.step_one(0, action)
    discard = sorted(legal_texts(g, "discard"))[0]
    g.step_one(0, discard)
    g.step_one(0, "draw stock")
    assert legal_texts(g, "swap") == {"swap 5S m1"}
    g.step_one(0, "swap 5S m1")
    assert legal_texts(g, "meld") == {"meld 9C 9D 9H", "meld 9C 9D 9S"}
    assert not legal_texts(g, "discard") | legal_texts(g, "layoff") | legal_texts(g, "swap")
    s = g.states[0]
    assert [s["owner"][c] for c in s["m_cards"][1] if c >= 0] == [1, 1, 0, 1]
    g.step_one(0, "meld 9C 9D 9H")
    assert "discard JH" in legal_texts(g, "discard")


def test_r11_no_exchange_without_a_meld_for_the_joker():
    """R11's variation (D6): with no two naturals to meld the freed joker with, no swap."""
    g = two_seats("3H 4H 5H 6H 7H 8H 9H TH 5S JH 2D KS 8C", "3S 4S XX 6S QC QD QH",
                  "8D", "KC 7D 4C")
    for action in ("draw stock", "meld 3H 4H 5H 6H 7H 8H 9H TH", "discard KC",
                   "draw stock", "meld 3S 4S 5S 6S", "meld QC QD QH"):
        g.step_one(0, action)
    g.step_one(0, sorted(legal_texts(g, "discard"))[0])
    g.step_one(0, "draw stock")
    assert legal_texts(g, "swap") == set()


def test_d18_no_layoff_that_strands_the_taken_card():
    """D18 / D5: holding AH and the 9S just taken, laying AH off would leave only 9S, which
    may not be discarded and fits no meld: only ``discard AH`` is legal."""
    g = two_seats("2H 3H 4H 5H 6H 7H 8H 9H TH JH QH KH AH", "9S", "8C", "5D 7D")
    for action in ("draw stock", "meld 2H 3H 4H 5H 6H 7H 8H 9H TH JH QH KH", "discard 5D",
                   "draw stock", "discard 9S", "take 9S"):
        g.step_one(0, action)
    assert set(g.legal_actions(0)) == reference_legal(g.variant, g.states[0]) \
        == {g.variant.parse_action("discard AH")}


@pytest.mark.slow
def test_mask_equals_reference_many_hands():
    """The big run: many whole games of every table size, compared at every position."""
    seen: Counter = Counter()
    for seed in range(100):
        seats = 2 + seed % 5
        ref = Referee(new_game(seats, seed, rich=seed % 3 != 0))
        ref.play(random.Random(seed), appetite=(0.5, 0.8, 0.95)[seed % 3], whole_game=True)
        seen += ref.seen
    print(dict(seen))
