"""Property tests (hypothesis) and random play over the Mountain Rummy rules core.

After any sequence of legal actions: every card is in exactly one place, the table holds
valid melds, scores match a recomputation from the final table and hands (MR-2, MR-8,
MR-12, MR-13), the mask is never empty before the hand ends, the simple action families
match an independent oracle, and the mask is exact: every masked-out action raises
``IllegalActionError`` leaving the state unchanged, every unmasked one is accepted.
"""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest
from hypothesis import Phase, given, settings
from hypothesis import strategies as st

from mountain_rummy_env import Game, IllegalActionError
from mountain_rummy_env.cards import JOKER_FACE
from mountain_rummy_env.core.state import (
    LOC_HAND, PHASE_DRAW, PHASE_GAME_OVER, PHASE_HAND_OVER, PHASE_PLAY, PHASE_RESPONSE,
    check_invariants,
)

from helpers import (
    assert_unchanged, card_value, check_meld_shapes, recompute_credit_deadwood, snapshot,
    variant,
)

PLACEMENTS = ("meld", "regroup", "layoff")
# Shrinking 400-action games is slow and rarely helps; a failure prints its seed and choices.
NO_SHRINK = (Phase.explicit, Phase.reuse, Phase.generate)


def oracle_simple_families(g: Game) -> None:
    """Independent check of draw/take-top/discard/knock/base camp/done (MR-7, MR-10)."""
    v = g.variant
    s = g.states[0]
    mask = g.masks[0]
    lay = v.layout
    p = int(s["current"])
    phase = int(s["phase"])
    if phase == PHASE_DRAW:
        assert mask[lay.draw] == 1
        top = g.discard_pile()[-1]
        assert mask[lay.take + top] == 1
        assert not mask[lay.meld:].any()
        return
    assert mask[lay.draw] == 0 and not mask[lay.take:lay.meld].any()
    if phase == PHASE_RESPONSE:
        assert mask[lay.done] == 1
        assert not mask[lay.discard:lay.done].any()
        return
    assert phase == PHASE_PLAY
    assert mask[lay.done] == 0
    hand = [c for c in range(v.deck.num_cards) if s["loc"][c] == LOC_HAND + p]
    faces = {int(g.spec.card_face[c]) for c in hand if not s["taken"][c]}
    deadwood = sum(card_value(int(g.spec.card_face[c])) for c in hand)
    obligation = int(s["obligation"]) >= 0
    for f in range(JOKER_FACE + 1):
        may = not obligation and f in faces and len(hand) > 1
        assert mask[lay.discard + f] == may, ("discard", f)
        knock = may and deadwood - card_value(f) <= 10
        assert mask[lay.knock + f] == knock, ("knock", f)
    assert mask[lay.base_camp] == (not obligation and len(hand) == 1 and len(faces) == 1)


def check_mask_exact(g: Game) -> None:
    """Masked-out actions raise and change nothing; unmasked ones are accepted (on a clone)
    and leave a consistent state."""
    before = snapshot(g)
    legal = set(g.legal_actions(0))
    for a in range(g.variant.num_actions):
        if a in legal:
            continue
        with pytest.raises(IllegalActionError):
            g.step_one(0, a)
    assert_unchanged(g, before)
    for a in legal:
        other = g.clone()
        other.step_one(0, a)
        check_invariants(other.states[0], 2)
        if not other.done(0):
            assert other.masks[0].any()
    assert_unchanged(g, before)


def expected_summary(g: Game, placed_earlier: dict) -> dict:
    """MR-12/MR-13 recomputed from the final table and hands."""
    s = g.summary(0)
    credit, deadwood = recompute_credit_deadwood(g)
    sp = [c - d for c, d in zip(credit, deadwood)]
    best = max(sp)
    leaders = [p for p in range(2) if sp[p] == best]
    if len(leaders) == 1:
        winner = leaders[0]
    elif s.end == "exhausted":
        winner = -1
    else:
        winner = 1 - s.ender
    bonus = [0, 0]
    kinds = set()
    if s.end in ("base camp", "high camp"):
        amount = 10 if s.end == "base camp" else 20
        kinds.add(s.end)
        if not placed_earlier[s.ender]:
            amount += 40
            kinds.add("summit")
        bonus[winner] += amount
    elif s.end == "knock":
        other = 1 - s.ender
        if deadwood[other] <= deadwood[s.ender] and credit[other] >= credit[s.ender]:
            kinds.add("undercut")
            bonus[winner] += 30
    return dict(credit=tuple(credit), deadwood=tuple(deadwood), standard_points=tuple(sp),
                winner=winner, bonus=tuple(bonus), bonus_kinds=kinds,
                hand_points=tuple(a + b for a, b in zip(sp, bonus)))


def play_random(g: Game, choices, *, exact_every: int = 0, rng_oracle: bool = True):
    """Play legal actions picked by ``choices`` until the hand ends; check properties."""
    v = g.variant
    placed_earlier = {0: False, 1: False}
    placed_this_turn = False
    steps = 0
    for k, choice in enumerate(choices):
        if g.done(0):
            break
        legal = g.legal_actions(0)
        assert legal, "empty mask before the hand ended (dead end)"
        if rng_oracle:
            oracle_simple_families(g)
        if exact_every and k % exact_every == exact_every - 1:
            check_mask_exact(g)
        a = legal[choice % len(legal)]
        p = g.current_player(0)
        phase = int(g.states[0]["phase"])
        family = v.action_family(a)
        g.step_one(0, a)
        steps += 1
        check_invariants(g.states[0], 2)
        check_meld_shapes(g)
        if phase == PHASE_PLAY and family in PLACEMENTS:
            placed_this_turn = True
            # MR-7: a placement never leaves the player unable to end the turn
            assert g.done(0) or g.masks[0].any()
        if family == "discard" and placed_this_turn:
            placed_earlier[p] = True
        if family == "discard":
            placed_this_turn = False
    return placed_earlier, steps


def check_scores(g: Game, placed_earlier) -> None:
    s = g.summary(0)
    exp = expected_summary(g, placed_earlier)
    for key in ("credit", "deadwood", "standard_points", "winner", "bonus", "hand_points"):
        assert getattr(s, key) == exp[key], (key, getattr(s, key), exp[key], s)
    assert set(s.bonus_kinds) == exp["bonus_kinds"]
    assert s.totals == s.hand_points


@settings(deadline=None, phases=NO_SHRINK, max_examples=40)
@given(seed=st.integers(0, 2**32 - 1),
       choices=st.lists(st.integers(0, 10**6), min_size=400, max_size=400))
def test_props_random_sequences_keep_invariants_and_score_correctly(seed, choices):
    """MR-1..MR-13: invariants, no dead end, simple-family oracle and scoring recomputation
    along random legal play (hands that do not end within 400 actions are not scored)."""
    g = Game(variant(), 1)
    g.reset(seed=seed)
    placed_earlier, _ = play_random(g, choices)
    if g.done(0):
        check_scores(g, placed_earlier)


@settings(deadline=None, phases=NO_SHRINK, max_examples=8)
@given(seed=st.integers(0, 2**32 - 1),
       choices=st.lists(st.integers(0, 10**6), min_size=300, max_size=300))
def test_props_mask_is_exact(seed, choices):
    """The mask is exact at sampled positions: masked-out actions raise IllegalActionError
    with the state unchanged; unmasked ones are accepted."""
    g = Game(variant(), 1)
    g.reset(seed=seed)
    play_random(g, choices, exact_every=37)


@settings(deadline=None, phases=NO_SHRINK, max_examples=10)
@given(seed=st.integers(0, 2**32 - 1), jokers=st.sampled_from([0, 1]),
       respond=st.sampled_from(["none", "respond"]),
       recipient=st.sampled_from(["hand_winner", "earner"]),
       choices=st.lists(st.integers(0, 10**6), min_size=400, max_size=400))
def test_props_options(seed, jokers, respond, recipient, choices):
    """Invariants and the mask oracle hold for other configurations too."""
    g = Game(variant(num_jokers=jokers, camp_response=respond, bonus_recipient=recipient), 1)
    g.reset(seed=seed)
    placed_earlier, _ = play_random(g, choices)
    if g.done(0) and recipient == "hand_winner":
        check_scores(g, placed_earlier)


# ------------------------------------------------------------------------------------
# random play


def random_games(n: int, seed: int = 0, **options) -> Counter:
    v = variant(**options)
    g = Game(v, 1)
    rng = np.random.default_rng(seed)
    ends = Counter()
    for i in range(n):
        g.reset(seed=seed * 1_000_003 + i)
        while not g.done(0):
            legal = g.legal_actions(0)
            assert legal, f"dead end in game {i}"
            g.step_one(0, legal[rng.integers(len(legal))])
        check_invariants(g.states[0], 2)
        s = g.summary(0)
        assert s.hand_points == tuple(a + b for a, b in zip(s.standard_points, s.bonus))
        ends[s.end] += 1
    return ends


def test_random_play_500_games(capsys):
    """500 random games finish without error; prints how the hands ended."""
    ends = random_games(500, seed=1)
    assert sum(ends.values()) == 500
    assert set(ends) <= {"knock", "base camp", "high camp", "exhausted"}
    with capsys.disabled():
        print(f"\nrandom play, 500 hands: {dict(ends)}")


@pytest.mark.slow
def test_random_play_10000_games(capsys):
    """10,000 random games finish without error (slow)."""
    ends = random_games(10_000, seed=2)
    assert sum(ends.values()) == 10_000
    assert set(ends) == {"knock", "base camp", "high camp", "exhausted"}
    with capsys.disabled():
        print(f"\nrandom play, 10000 hands: {dict(ends)}")


def test_random_games_reach_target_score():
    """MR-14: in episode='game' mode random games end once a hand winner reaches target."""
    g = Game(variant(episode="game", target_score=150), 1)
    rng = np.random.default_rng(3)
    for i in range(10):
        g.reset(seed=100 + i)
        hands = 0
        while g.states[0]["phase"] != PHASE_GAME_OVER:
            assert g.states[0]["phase"] != PHASE_HAND_OVER
            legal = g.legal_actions(0)
            assert legal
            if g.step_one(0, legal[rng.integers(len(legal))]):
                hands += 1
            assert hands < 500
        s = g.summary(0)
        assert s.game_winner == s.winner >= 0
        assert s.totals[s.game_winner] >= 150
        assert g.legal_actions(0) == []
