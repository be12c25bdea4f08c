"""Compiled German and Crazy Rummy policies (docs/german_rummy.md, docs/crazy_rummy.md): the
``greedy`` and ``rules`` players of :mod:`agents.german`, and the playouts of its ``search``.

One function, :func:`german_action`, plays both; a parameter vector switches the rules
player's judgement on (:data:`GREEDY`, :func:`rules_params`). It reads only what the player
to move may know: its own hand, the table, the top discard, who has opened, hand sizes and
the cards known to be in the next seat's hand (taken from the pile). So it plays on a
``PlayerView.public_state()`` record and on a determinised sample alike.

It needs no legal-action mask: every move it makes is checked with the engine's own
predicates (``opening_reachable``, ``meld_offered``, ``layoff_offered``, ``swap_offered``),
so a playout costs a fraction of a masked one (the full German mask costs about 0.4 ms a
step). :func:`play_out` can check every choice against the mask (``verify``); the tests do.

Greedy: takes the top discard when it may and the card joins a meld (before opening the
engine allows the take only for an opening with it); melds the legal meld of largest
credit (Crazy, where melds earn nothing: the longest), lays off, swaps, all as soon as
legal (the first legal layoff and swap by action id); discards the highest card in no
partial meld (a pair, or two cards next to each other in a suit). A card of Crazy's wild
rank is a joker to both players (``card_face_now``), and neither ever discards one.

Rules, on top: holds its jokers (no joker melds or layoffs, never discards one) until it
cashes in, when its hand is small or an opponent's is (then a joker lays off where it
earns most); takes a natural discard only if it lays off or completes a meld of naturals,
a joker unless an opponent may go out soon; scores each discard as its hand value (before
opening negatively: keep the high cards an opening of 40 needs; weighed up when an
opponent may go out, GE-9) less what it is worth keeping (partners in hand) less the risk
of feeding the next seat (a card it could lay off once opened, a card next to one it took
from the pile). Options its Crazy defaults switch on (:data:`RULES_DEFAULTS`): ``arrange``
melds first the melds of the hand's least-deadwood arrangement (the solver's), and
``swap_first`` takes a table wild back for its natural before melding, so the wild can
join a meld in the same turn; ``cash`` 99 plays wilds at once (a wild caught in hand
costs 25, CR-5).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from mountain_rummy_env.core.german import apply_action, hand_layers, legal_mask, opening_reachable
from mountain_rummy_env.core.spec import spec_of
from mountain_rummy_env.core.state import EVENT_NONE, LOC_HAND, LOC_STOCK
from mountain_rummy_env.solver import make_workspace

# The decisions themselves live in the env package (mountain_rummy_env/german_player.py), so
# the observation's solver features can ask the rules player's questions too.
from mountain_rummy_env.german_player import JOKER_FACE, discard_scores, german_action


@njit(cache=True)
def choose(states, spec, params, work, order):
    """:func:`german_action` for ``states[0]`` (a view's public state); ``spec`` the record
    or ``Variant.spec_ref`` (cheaper from Python at every decision: core.spec.spec_of)."""
    spec = spec_of(spec)
    ws = make_workspace(spec.num_templates)
    return german_action(states[0], spec, params, work, ws, order)


@njit(cache=True)
def discard_scores_of(states, spec, params):
    """:func:`discard_scores` of ``states[0]`` as a new array (``spec`` as :func:`choose`)."""
    spec = spec_of(spec)
    out = np.empty(JOKER_FACE + 1, np.float64)
    discard_scores(states[0], spec, params, out)
    return out


@njit(cache=True)
def play_out(states, spec, first, params, work, order, verify, mask, out, me):
    """Play each game in ``states`` to the end of its hand: ``first[b]`` (if >= 0, a legal
    action) then every seat ``q`` by :func:`german_action` under ``params[q]``.
    ``out[b]`` = hand points of seat ``me``. With ``verify`` every choice is checked
    against the legal mask (``mask``: one int8 row); returns the first game where a
    choice was illegal, else -1."""
    ws = make_workspace(spec.num_templates)
    for b in range(states.shape[0]):
        s = states[b]
        event = EVENT_NONE
        if first[b] >= 0:
            event = apply_action(s, spec, first[b])
        while event == EVENT_NONE:
            a = german_action(s, spec, params[s.current], work, ws, order)
            if verify:
                legal_mask(s, spec, mask, work)
                if a < 0 or mask[a] == 0:
                    return b
            event = apply_action(s, spec, a)
        out[b] = s.h_points[me]
    return -1


# --------------------------------------------------------------------------------------
# determinisation


@njit(cache=True)
def _should_have_placed(s, spec, q, ws):
    """Whether seat ``q``'s hand holds what the greedy or rules player would have put on
    the table on its last turn: a meld of naturals once opened, else an opening (GE-5)."""
    once, twice, nj = hand_layers(s, spec, q)
    if s.placed_before[q] == 0:
        return opening_reachable(spec, ws, once, twice, nj, 0, -1)
    for t in range(spec.num_templates):
        if np.uint64(spec.t_mask[t]) & ~once == 0:
            return True
    return False


@njit(cache=True)
def settle_hands(states, spec, me, rounds, seed):
    """In place, in each sampled state: every seat other than ``me`` that has had a turn
    this hand holds what the greedy or rules player leaves in hand (see
    :func:`_should_have_placed`). Up to ``rounds`` times per seat, a random hidden card of
    a hand that does not trades places with a random stock card."""
    np.random.seed(seed)
    ws = make_workspace(spec.num_templates)
    hidden = np.empty(spec.num_cards, np.int64)
    for b in range(states.shape[0]):
        s = states[b]
        n_stock = s.stock_len - s.stock_ptr
        first = (s.dealer + 1) % spec.num_players
        for q in range(spec.num_players):
            if q == me or n_stock == 0 or (q - first) % spec.num_players >= s.turn:
                continue
            for _ in range(rounds):
                if not _should_have_placed(s, spec, q, ws):
                    break
                n = 0
                for c in range(spec.num_cards):
                    if s.loc[c] == LOC_HAND + q and s.public[c] == 0:
                        hidden[n] = c
                        n += 1
                if n == 0:
                    break
                out = hidden[np.random.randint(n)]
                i = s.stock_ptr + np.random.randint(n_stock)
                s.loc[s.stock[i]] = LOC_HAND + q
                s.loc[out] = LOC_STOCK
                s.stock[i] = out
