"""Helpers for the rules tests: deck orders built from the cards wanted, scripted play,
and an independent recomputation of hand scores (docs/mountain_rummy.md).

Seats: ``deck_for`` and ``start`` default to dealer = seat 1, so seat 0 is the non-dealer
who plays first (called P1 in the worked examples) and seat 1 is P2.
"""

from __future__ import annotations

import dataclasses
from functools import lru_cache

import numpy as np

from mountain_rummy_env import Deck, Game, mountain_variant
from mountain_rummy_env.cards import JOKER_FACE, NUM_RANKS
from mountain_rummy_env.core.spec import replace_spec
from mountain_rummy_env.core.state import LOC_HAND

FIRST, DEALER = 0, 1  # seats when the dealer is seat 1

# MR-2 values
HAND_VALUE = {r: (14 if r == 0 else r + 1) for r in range(NUM_RANKS)}
JOKER_VALUE = 15


@lru_cache(maxsize=None)
def variant(**options):
    """``mountain_variant(**options)``, built once per option set."""
    return mountain_variant(**options)


@lru_cache(maxsize=None)
def short_variant(hand_size: int, **options):
    """Mountain Rummy dealt ``hand_size`` cards each instead of 13 (everything else MR-1..14).

    The worked examples of docs/mountain_rummy.md list end positions whose card counts no
    13-card deal can reach (e.g. E1: P1 melds 7 cards and keeps 2, but 13 + 1 - 7 - 1 = 6
    cards remain), so they are replayed with the smallest deal that reaches them exactly.
    """
    v = mountain_variant(**options)
    return dataclasses.replace(v, spec=replace_spec(v.spec, hand_size=hand_size))


def _filler_order(deck: Deck) -> list[int]:
    """All card ids in an order whose runs of consecutive cards rarely form melds: ranks
    step by 5 (A 6 J 3 8 K 5 T 2 7 Q 4 9) and suits rotate; jokers last."""
    order = []
    for i in range(52):
        rank = (i % 13 * 5) % 13
        suit = (i % 13 + i // 13) % 4
        order.append(suit * 13 + rank)
    assert sorted(order) == list(range(52))
    return order + list(range(52, deck.num_cards))


def deck_for(p_first: str = "", p_dealer: str = "", upcard: str | None = None, stock: str = "",
             *, hand_size: int = 13, num_jokers: int = 2) -> list[int]:
    """A full deck order (card ids, top first) dealing ``p_first`` to the non-dealer (who
    plays first) and ``p_dealer`` to the dealer, then ``upcard``, then ``stock`` (top first).
    Hands given short are filled, and the stock continued, with the unused cards."""
    deck = Deck(1, num_jokers)
    # parse all together so a repeated name raises CardError; then split by position
    named = deck.parse_cards(" ".join([p_first, p_dealer, upcard or "", stock]))
    n1 = len(p_first.split())
    n2 = len(p_dealer.split())
    nu = 1 if upcard else 0
    first, dealer_hand = named[:n1], named[n1:n1 + n2]
    up = named[n1 + n2:n1 + n2 + nu]
    stock_ids = named[n1 + n2 + nu:]
    if len(first) > hand_size or len(dealer_hand) > hand_size:
        raise ValueError("a hand holds more cards than the deal")
    rest = [c for c in _filler_order(deck) if c not in set(named)]
    first = first + [rest.pop(0) for _ in range(hand_size - len(first))]
    dealer_hand = dealer_hand + [rest.pop(0) for _ in range(hand_size - len(dealer_hand))]
    if not up:
        up = [rest.pop(0)]
    order = []
    for a, b in zip(first, dealer_hand):
        order += [a, b]
    order += up + stock_ids + rest
    assert sorted(order) == list(range(deck.num_cards))
    return order


def start(p_first: str = "", p_dealer: str = "", upcard: str | None = None, stock: str = "",
          *, v=None, dealer: int = DEALER, seed: int = 0) -> Game:
    """A one-game batch dealt from ``deck_for(...)`` with ``dealer`` dealing (``p_first`` goes
    to the non-dealer, whichever seat that is)."""
    v = v or variant()
    order = deck_for(p_first, p_dealer, upcard, stock, hand_size=v.spec.hand_size,
                     num_jokers=v.deck.num_jokers)
    g = Game(v, 1)
    g.reset(seed=seed, deck=order, dealer=dealer)
    return g


def play(g: Game, *actions: str, index: int = 0) -> int:
    """Play action texts in order; returns the last event. Fails naming the action."""
    event = 0
    for text in actions:
        try:
            event = g.step_one(index, text)
        except Exception as err:  # pragma: no cover - message for a failing script
            raise AssertionError(f"scripted action {text!r} failed: {err}") from err
    return event


def hand_text(g: Game, player: int, index: int = 0) -> str:
    return g.variant.deck.cards_text(g.hand(index, player))


def hand_is(g: Game, player: int, cards: str, index: int = 0) -> bool:
    """Does ``player`` hold exactly these cards (any order)?"""
    return sorted(hand_text(g, player, index).split()) == sorted(cards.split())


class LegalTexts(set):
    """The canonical texts of the legal actions; membership and comparisons accept any
    spelling the parser takes (``'meld 8S 8H 8D'`` is the canonical ``'meld 8D 8H 8S'``)."""

    def __init__(self, variant, texts):
        super().__init__(texts)
        self.variant = variant

    def canon(self, text: str) -> str:
        return self.variant.action_text(self.variant.parse_action(text))

    def _canon_all(self, other):
        return {self.canon(t) for t in other}

    def __contains__(self, text) -> bool:
        return set.__contains__(self, self.canon(text))

    def __eq__(self, other):
        return set(self) == self._canon_all(other)

    __hash__ = None

    def __le__(self, other):
        return set(self) <= self._canon_all(other)

    def __ge__(self, other):
        return set(self) >= self._canon_all(other)

    def __and__(self, other):
        return set(self) & self._canon_all(other)

    __rand__ = __and__


def legal_texts(g: Game, index: int = 0) -> LegalTexts:
    return LegalTexts(g.variant, [g.variant.action_text(a) for a in g.legal_actions(index)])


def is_legal(g: Game, text: str, index: int = 0) -> bool:
    return bool(g.masks[index, g.variant.parse_action(text)])


def card_value(face: int) -> int:
    return JOKER_VALUE if face == JOKER_FACE else HAND_VALUE[face % NUM_RANKS]


def recompute_credit_deadwood(g: Game, index: int = 0) -> tuple[list[int], list[int]]:
    """MR-2/MR-8/MR-12 recomputed from ``Game.melds`` and the hands, independently of the core:
    a run's ace shown at the low end (next to a 2) earns 1, any other melded ace 14; a joker
    earns the credit of its declared card; deadwood is the hand value of every card in hand."""
    P = g.variant.num_players
    credit = [0] * P
    for meld in g.melds(index):
        faces = [g.variant.deck.card_text(c) if not t.startswith("XX=") else t[3:]
                 for c, t in zip(meld["cards"], meld["text"])]
        ranks = ["A23456789TJQK".index(f[0]) for f in faces]
        for k, (rank, owner) in enumerate(zip(ranks, meld["owners"])):
            if rank == 0:
                low = meld["kind"] == "run" and k == 0  # a run starting with its ace: A-2-3...
                value = 1 if low else 14
            else:
                value = rank + 1
            credit[owner] += value
    deadwood = [0] * P
    s = g.states[index]
    for c in range(g.variant.deck.num_cards):
        if s["loc"][c] >= LOC_HAND:
            deadwood[s["loc"][c] - LOC_HAND] += card_value(int(g.spec.card_face[c]))
    return credit, deadwood


def check_meld_shapes(g: Game, index: int = 0) -> None:
    """Every table meld is a valid set or run (MR-3, MR-4) with a natural card (MR-5); no
    two jokers show the same face (a joker is never declared as a face already face up; the
    real card may still be melded elsewhere later, so a natural may repeat a joker's face)."""
    seen = set()
    for meld in g.melds(index):
        faces = [t[3:] if t.startswith("XX=") else t for t in meld["text"]]
        assert len(faces) >= 3, meld
        assert any(not t.startswith("XX") for t in meld["text"]), meld
        assert len(set(faces)) == len(faces), meld
        for t in meld["text"]:
            if t.startswith("XX="):
                assert t not in seen, f"two jokers declared as {t[3:]}"
                seen.add(t)
        ranks = ["A23456789TJQK".index(f[0]) for f in faces]
        suits = [f[1] for f in faces]
        if meld["kind"] == "set":
            assert len(set(ranks)) == 1 and len(set(suits)) == len(suits) <= 4, meld
        else:
            assert len(set(suits)) == 1, meld
            pos = [13 if (r == 0 and k > 0) else r for k, r in enumerate(ranks)]
            assert pos == list(range(pos[0], pos[0] + len(pos))), meld


def snapshot(g: Game):
    return g.states.copy(), g.masks.copy()


def assert_unchanged(g: Game, snap) -> None:
    states, masks = snap
    assert g.states.tobytes() == states.tobytes(), "state changed"
    assert np.array_equal(g.masks, masks), "mask changed"


def agent_move(agent, g: Game, player: int | None = None) -> str:
    """The text of ``agent``'s choice for the player to move (or ``player``), asserted legal."""
    from mountain_rummy_env import player_view

    p = g.current_player(0) if player is None else player
    a = agent.act(player_view(g, 0, p), g.masks[0])
    assert g.masks[0, a], "the agent chose an illegal action"
    return g.variant.action_text(a)


def agent_turn(agent, g: Game) -> list[str]:
    """``agent``'s moves for the player to move until the turn passes (or the hand ends)."""
    player, out = g.current_player(0), []
    while not g.done(0) and g.current_player(0) == player:
        out.append(agent_move(agent, g))
        g.step_one(0, out[-1])
    return out
