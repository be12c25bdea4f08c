"""The game state as one numpy record per game, batched along axis 0.

A batch of games is ``np.zeros(B, dtype=state_dtype(...))``: every field is fixed-shape, so
the compiled rules functions in :mod:`mountain_rummy_env.core.rules` index it without Python
objects, a single game is a batch of one, and cloning a game is copying a record.

Where a card is lives in ``loc[card]`` (one code per card), so "every card is in exactly one
place" holds by construction; the ordered containers (stock, discard pile, meld slots) are
checked against ``loc`` by :func:`check_invariants`.
"""

from __future__ import annotations

import numpy as np

# Card locations: loc[card] == LOC_HAND + p for a card in player p's hand.
LOC_STOCK, LOC_DISCARD, LOC_TABLE, LOC_FACEDOWN, LOC_HAND = 0, 1, 2, 3, 4

# Phases.
PHASE_DRAW, PHASE_PLAY, PHASE_RESPONSE, PHASE_HAND_OVER, PHASE_GAME_OVER = 0, 1, 2, 3, 4
PHASE_NAMES = ("draw", "play", "response", "hand over", "game over")

# How a hand ended.
END_NONE, END_KNOCK, END_BASE_CAMP, END_HIGH_CAMP, END_EXHAUSTED, END_WENT_OUT = 0, 1, 2, 3, 4, 5
END_NAMES = ("none", "knock", "base camp", "high camp", "exhausted", "went out")

# Meld kinds (same codes as melds.SET / melds.RUN, 1 and 2). MELD_WORK: a slot that a
# Robber's Rummy play in progress left invalid (core.robbers); never so outside a play.
MELD_EMPTY = 0
MELD_WORK = 3

# What a step reports for each game.
EVENT_NONE, EVENT_HAND_OVER, EVENT_GAME_OVER = 0, 1, 2

MELD_WIDTH = 14  # slots per meld: run positions 0..13 (0 = ace low, 13 = ace high) or set suits 0..3


def state_dtype(num_cards: int, max_melds: int, num_players: int) -> np.dtype:
    """Record layout for one game of ``num_cards`` cards, ``max_melds`` table melds, ``num_players`` seats."""
    c, m, p = num_cards, max_melds, num_players
    return np.dtype([
        # per card
        ("loc", np.int8, (c,)),        # LOC_* code
        ("meld_of", np.int8, (c,)),    # table slot of a card on the table, else -1
        ("shown", np.int8, (c,)),      # face a table card shows (a joker's declared face), else -1
        ("owner", np.int8, (c,)),      # player credited for a table card, else -1
        ("taken", np.int8, (c,)),      # taken from the discard pile this turn (may not be discarded)
        ("public", np.int8, (c,)),     # in a hand and known to all (from the discard pile or a swap)
        # ordered containers
        ("deck", np.int8, (c,)),       # this hand's deck order, top first (for records and replays)
        ("stock", np.int8, (c,)),
        ("stock_len", np.int16),
        ("stock_ptr", np.int16),       # next stock card is stock[stock_ptr]
        ("discard", np.int8, (c,)),    # bottom first; the top card is discard[discard_len - 1]
        ("discard_len", np.int16),
        # table melds
        ("m_kind", np.int8, (m,)),     # MELD_EMPTY, SET, RUN or MELD_WORK
        ("m_suit", np.int8, (m,)),
        ("m_rank", np.int8, (m,)),
        ("m_lo", np.int8, (m,)),
        ("m_hi", np.int8, (m,)),
        ("m_founder", np.int8, (m,)),
        ("m_cards", np.int8, (m, MELD_WIDTH)),  # card id by run position or set suit, -1 empty
        # turn and hand
        ("phase", np.int8),
        ("current", np.int8),
        ("dealer", np.int8),
        ("wild_rank", np.int8),        # rank whose cards are jokers this hand (Crazy Rummy), else -1
        ("turn", np.int16),            # completed turns this hand
        ("hand_no", np.int16),
        ("obligation", np.int8),       # card of a deep draw that must be placed this turn, else -1
        ("placed_this_turn", np.int8),
        ("placed_before", np.int8, (p,)),  # melded or laid off on an earlier turn of this hand
        ("end_kind", np.int8),
        ("ender", np.int8),
        # scores
        ("scores", np.int32, (p,)),    # game totals
        ("h_credit", np.int16, (p,)),  # last finished hand: meld credit, deadwood, standard points,
        ("h_deadwood", np.int16, (p,)),  # bonuses received and hand points (SP + bonuses)
        ("h_sp", np.int16, (p,)),
        ("h_bonus", np.int16, (p,)),
        ("h_points", np.int16, (p,)),
        ("h_bonus_kinds", np.int8),    # bit 0 base camp, 1 high camp, 2 undercut, 3 summit
        ("h_winner", np.int8),         # -1: no winner (exhausted tie)
        ("h_end_kind", np.int8),
        ("h_ender", np.int8),
        ("game_winner", np.int8),
        ("rng", np.uint64),            # per-game generator state (splitmix64): batch-independent
    ])


BONUS_BASE, BONUS_HIGH, BONUS_UNDERCUT, BONUS_SUMMIT = 1, 2, 4, 8
BONUS_GIN = 16  # Gin Rummy (core.gin)
BONUS_NAMES = {BONUS_BASE: "base camp", BONUS_HIGH: "high camp", BONUS_UNDERCUT: "undercut",
               BONUS_SUMMIT: "summit", BONUS_GIN: "gin"}


def check_invariants(s: np.void, num_players: int) -> None:
    """Raise AssertionError unless the ordered containers agree with ``loc`` card by card."""
    num_cards = len(s["loc"])
    seen = np.zeros(num_cards, dtype=np.int32)
    stock = s["stock"][s["stock_ptr"]: s["stock_len"]]
    discard = s["discard"][: s["discard_len"]]
    for c in stock:
        assert s["loc"][c] == LOC_STOCK, f"stock card {c} has loc {s['loc'][c]}"
        seen[c] += 1
    for c in discard:
        assert s["loc"][c] == LOC_DISCARD, f"discard card {c} has loc {s['loc'][c]}"
        seen[c] += 1
    for m in range(len(s["m_kind"])):
        for c in s["m_cards"][m]:
            if c >= 0:
                assert s["m_kind"][m] != MELD_EMPTY
                assert s["loc"][c] == LOC_TABLE and s["meld_of"][c] == m
                seen[c] += 1
    for c in range(num_cards):
        where = s["loc"][c]
        if where in (LOC_FACEDOWN,) or LOC_HAND <= where < LOC_HAND + num_players:
            seen[c] += 1
    assert (seen == 1).all(), f"cards not in exactly one place: {np.flatnonzero(seen != 1)}"
