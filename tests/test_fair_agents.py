"""Fair agents decide only from what their seat may know (all a player view holds,
docs/observation.md): at positions of real hands, dealing the hidden cards anew (the
opponent's unknown cards, the stock order, face-down discards) never changes an agent's
choice. The ``clairvoyant`` measuring device is the one agent allowed to look (and is not
tested here)."""

from __future__ import annotations

import numpy as np
import pytest

from agents import make_agent
from mountain_rummy_env import Game, gin_variant, mountain_variant, player_view
from mountain_rummy_env.core.state import EVENT_NONE, LOC_STOCK

VARIANTS = {"mountain": mountain_variant(), "gin": gin_variant()}
SPECS = {"mountain": ["random", "greedy", "rules", "search:budget=8",
                      "ppo:policy=mountain"],
         "gin": ["random", "greedy", "rules", "search:budget=8"]}


def redeal_hidden(game: Game, player: int, rng) -> Game:
    """A clone of ``game`` with the cards ``player`` cannot see dealt anew (same places)."""
    g = game.clone()
    s = g.states[0]
    loc, stock = s["loc"].copy(), s["stock"].copy()
    hidden = player_view(game, 0, player).hidden_cards()
    loc[rng.permutation(hidden)] = loc[hidden]
    ptr, end = int(s["stock_ptr"]), int(s["stock_len"])
    stock[ptr:end] = rng.permutation(np.flatnonzero(loc == LOC_STOCK))
    g.states[0]["loc"], g.states[0]["stock"] = loc, stock
    return g


def positions(variant, n_hands: int, seed: int, players=None):
    """(game, player) at every decision with a choice, in hands of ``players`` (one agent a
    seat; default greedy vs random)."""
    g = Game(variant, 1)
    players = players or [make_agent("greedy", seed=seed), make_agent("random", seed=seed)]
    for hand in range(n_hands):
        g.reset(seed=seed + hand)
        event = EVENT_NONE
        while event == EVENT_NONE:
            p = g.current_player(0)
            if g.masks[0].sum() > 1:
                yield g.clone(), p
            event = g.step_one(0, int(players[p].act(player_view(g, 0, p), g.masks[0])))


@pytest.mark.parametrize("name", ["mountain", "gin"])
def test_agents_ignore_where_the_hidden_cards_really_are(name):
    variant = VARIANTS[name]
    rng = np.random.default_rng(0)
    checked = 0
    for k, (game, p) in enumerate(positions(variant, 3, seed=11)):
        if k % 3:
            continue
        other = redeal_hidden(game, p, rng)
        assert (other.states[0]["loc"] != game.states[0]["loc"]).any()
        for spec in SPECS[name]:
            picks = [make_agent(spec, seed=5, variant=name).act(player_view(g, 0, p), g.masks[0])
                     for g in (game, other)]
            assert picks[0] == picks[1], (spec, k)
        checked += 1
    assert checked >= 10


@pytest.mark.parametrize("name", sorted(VARIANTS))
def test_a_view_describes_the_position_it_was_made_at(name):
    """A view copies the record when made: after the game moves on, every field and the
    public state it hands to a search are still those of its own position."""
    g = Game(VARIANTS[name], 1)
    g.reset(seed=3)
    p = g.current_player(0)
    view = player_view(g, 0, p)
    fresh = player_view(g, 0, p)
    public, hidden = fresh.public_state(), fresh.hidden_cards()
    fields = (fresh.hand, fresh.discard, fresh.melds, fresh.known, fresh.hand_sizes,
              fresh.stock_size, fresh.phase, fresh.current, fresh.taken)
    rng = np.random.default_rng(0)
    for _ in range(6):                      # a few moves, the stock drawn from
        if g.done(0):
            break
        g.step_one(0, int(rng.choice(np.flatnonzero(g.masks[0]))))
    assert g.states[0].tobytes() != public[0].tobytes()
    assert (view.hand, view.discard, view.melds, view.known, view.hand_sizes, view.stock_size,
            view.phase, view.current, view.taken) == fields
    assert np.array_equal(view.hidden_cards(), hidden)
    assert view.public_state().tobytes() == public.tobytes()
