"""Helpers for the German Rummy rules tests (docs/german_rummy.md), Crazy Rummy's
(docs/crazy_rummy.md) and Robber's Rummy's (docs/robbers_rummy.md): a deck order built from the table position wanted, scripted turns,
and an independent recount of meld credit.

Seats: the worked examples' P1, P2, ... are seats 0, 1, ...; unless told otherwise the
last seat deals, so seat 0 (P1) plays first.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from mountain_rummy_env import Game
from mountain_rummy_env.cards import JOKER_FACE, NUM_RANKS, parse_face
from mountain_rummy_env.core.state import LOC_HAND, LOC_STOCK
from mountain_rummy_env.variants.crazy import crazy_variant
from mountain_rummy_env.variants.german import german_variant
from mountain_rummy_env.variants.robbers import robbers_variant

from helpers import play

NUM_CARDS = 108
# GE-2: hand value by rank (A 11, K Q J T 10, 2-9 face); a joker in hand costs 20
RANK_VALUE = (11, 2, 3, 4, 5, 6, 7, 8, 9, 10, 10, 10, 10)
JOKER_HAND_VALUE = 20


@lru_cache(maxsize=None)
def german(**options):
    """``german_variant(**options)``, built once per option set."""
    return german_variant(**options)


@lru_cache(maxsize=None)
def crazy(**options):
    """``crazy_variant(**options)``, built once per option set."""
    return crazy_variant(**options)


@lru_cache(maxsize=None)
def robbers(**options):
    """``robbers_variant(**options)``, built once per option set."""
    return robbers_variant(**options)


def _filler_order() -> list[int]:
    """All 108 card ids in an order whose stretches of 13 rarely form melds: ranks step by
    5 (A 6 J 3 8 K 5 T 2 7 Q 4 9) so 13 in a row are 13 ranks, suits rotate; the second
    copies follow the first, the jokers come last."""
    order = []
    for copy in range(2):
        for i in range(52):
            rank = (i % 13 * 5) % 13
            suit = (i % 13 + i // 13 + copy) % 4
            order.append(copy * 52 + suit * 13 + rank)
    assert sorted(order) == list(range(104))
    return order + list(range(104, NUM_CARDS))


FILLER = _filler_order()


def german_deck(hands, upcard: str | None = None, stock: str = "", *,
                dealer: int | None = None) -> list[int]:
    """A full 108-card order (card ids, top first) for a GE-1 deal (:func:`deck_order`)."""
    return deck_order(german(), hands, upcard, stock, dealer)


def crazy_deck(hands, stock: str = "", *, dealer: int | None = None) -> list[int]:
    """A full 52-card order (card ids, top first) for a CR-1 deal: ``hands[p]`` is dealt to
    seat p, 7 cards, 8 to the seat after the dealer, whose eighth card is dealt last,
    where German's up-card lies (:func:`deck_order`)."""
    n = len(hands)
    first = 0 if dealer is None else (dealer + 1) % n
    cards = hands[first].split()
    hands = list(hands)
    hands[first] = " ".join(cards[:7])
    return deck_order(crazy(), hands, " ".join(cards[7:]) or None, stock, dealer)


def robbers_deck(hands, stock: str = "", *, dealer: int | None = None, **options) -> list[int]:
    """A full card order (card ids, top first) for an RR-1 deal: 11 cards to each seat,
    ``stock`` on top of the stock (the shared deal's up-card is the stock's top card)."""
    first, _, rest = stock.partition(" ")
    up = None if first in ("", "?") else first
    return deck_order(robbers(num_players=len(hands), **options), hands, up,
                      rest if up else stock, dealer)


def deck_order(variant, hands, upcard: str | None, stock: str, dealer: int | None) -> list[int]:
    """A full deck order (card ids, top first) of ``variant`` for its deal.

    ``hands[p]`` (card text) is dealt to seat p, ``upcard`` starts the discard pile and
    ``stock`` lies on top of the stock, top first; a ``?`` in ``stock`` is any card not
    named. Hands given short are filled, the up-card and the rest of the stock taken, from
    the unnamed cards in :data:`FILLER` order. The deal goes one card at a time from the
    seat after ``dealer`` (default: the last seat, so seat 0 gets the first card)."""
    n = len(hands)
    size, num_cards = variant.spec.hand_size, variant.deck.num_cards
    dealer = n - 1 if dealer is None else dealer
    tokens = [t for t in stock.split() if t != "?"]
    named = variant.deck.parse_cards(" ".join([*hands, upcard or "", *tokens]))  # one parse: copies counted
    unused = iter(c for c in FILLER if c < num_cards and c not in set(named))
    dealt, at = [], 0
    for text in hands:
        k = len(text.split())
        if k > size:
            raise ValueError(f"a hand of {k} cards: {text}")
        dealt.append(named[at:at + k] + [next(unused) for _ in range(size - k)])
        at += k
    up = named[at:at + 1] if upcard else [next(unused)]
    top = iter(named[at + 1:] if upcard else named[at:])
    stock_ids = [next(unused) if t == "?" else next(top) for t in stock.split()]
    order = [dealt[(dealer + 1 + k) % n][r] for r in range(size) for k in range(n)]
    order += up + stock_ids + list(unused)
    assert sorted(order) == list(range(num_cards))
    return order


def start(hands, upcard: str | None = None, stock: str = "", *, dealer: int | None = None,
          seed: int = 0, **options) -> Game:
    """A one-game batch of ``german(num_players=len(hands), **options)`` dealt from
    :func:`german_deck`."""
    g = Game(german(num_players=len(hands), **options), 1)
    g.reset(seed=seed, deck=german_deck(hands, upcard, stock, dealer=dealer),
            dealer=len(hands) - 1 if dealer is None else dealer)
    return g


def crazy_start(hands, stock: str = "", *, dealer: int | None = None, seed: int = 0,
                **options) -> Game:
    """A one-game batch of ``crazy(num_players=len(hands), **options)`` dealt from
    :func:`crazy_deck`; the seat after the dealer (seat 0 by default) is to play."""
    g = Game(crazy(num_players=len(hands), **options), 1)
    g.reset(seed=seed, deck=crazy_deck(hands, stock, dealer=dealer),
            dealer=len(hands) - 1 if dealer is None else dealer)
    return g


def robbers_start(hands, stock: str = "", *, dealer: int | None = None, seed: int = 0,
                  **options) -> Game:
    """A one-game batch of ``robbers(num_players=len(hands), **options)`` dealt from
    :func:`robbers_deck`; seat 0 plays first unless ``dealer`` says otherwise."""
    g = Game(robbers(num_players=len(hands), **options), 1)
    g.reset(seed=seed, deck=robbers_deck(hands, stock, dealer=dealer, **options),
            dealer=len(hands) - 1 if dealer is None else dealer)
    return g


def play_turn(g: Game, *placements: str) -> None:
    """One turn: draw the stock's top card, play ``placements``, discard the card drawn."""
    s = g.states[0]
    drawn = g.variant.deck.card_text(int(s["stock"][s["stock_ptr"]]))
    play(g, "draw stock", *placements, f"discard {drawn}")


def pass_turns(g: Game, turns: int = 1) -> None:
    """``turns`` turns of drawing a card and discarding it (the hands stay as they were)."""
    for _ in range(turns):
        play_turn(g)


def credit_of(face: int, low_ace: bool) -> int:
    """GE-2 meld credit of a face on the table (``low_ace``: the ace at the bottom of a run)."""
    rank = face % NUM_RANKS
    return 1 if rank == 0 and low_ace else RANK_VALUE[rank]


def table_credit(g: Game) -> list[int]:
    """GE-9 meld credit per seat recounted from ``Game.melds`` (independent of the core):
    each table card counts for the seat credited with it, a joker as its declared card,
    an ace 1 when it starts a run and 11 everywhere else."""
    credit = [0] * g.variant.num_players
    for meld in g.melds():
        for k, (card, text, owner) in enumerate(zip(meld["cards"], meld["text"], meld["owners"])):
            face = parse_face(text[3:]) if text.startswith("XX=") else card % 52
            credit[owner] += credit_of(face, meld["kind"] == "run" and k == 0)
    return credit


def hand_value(g: Game) -> list[int]:
    """GE-2 hand value per seat recounted from the record (A 11, pictures 10, joker 20)."""
    s = g.states[0]
    value = [0] * g.variant.num_players
    for c in np.flatnonzero(s["loc"] >= LOC_HAND):
        face = int(g.spec.card_face[c])
        value[s["loc"][c] - LOC_HAND] += JOKER_HAND_VALUE if face == JOKER_FACE else RANK_VALUE[face % NUM_RANKS]
    return value


def stock_size(g: Game) -> int:
    return int((g.states[0]["loc"] == LOC_STOCK).sum())
