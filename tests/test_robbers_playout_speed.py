"""The Robber's search agent's playouts decide exactly as they did before they were made
faster (agents/robbers_playout.py): the margins of fixed starts, bit for bit, and the
actions of whole search-vs-greedy hands, against tests/data/robbers_playouts.json (written
by the code before the speed-ups; ``PYTHONPATH=. python tests/test_robbers_playout_speed.py``
rewrites it, which only a deliberate change of the search's decisions should do)."""

from __future__ import annotations

import hashlib
import json
import pathlib

import numpy as np
import pytest

from agents import make_agent
from experiments.play import play_hand
from mountain_rummy_env import Game, player_view

from german_helpers import robbers
from test_robbers_agents import greedy_positions

DATA = pathlib.Path(__file__).parent / "data" / "robbers_playouts.json"

# (seats, deal seed, every k-th turn start, starts kept, modes, re-deals)
STARTS = [
    (2, 7101, 3, 6, ("greedy", "hold", "no_draw"), 12),
    (2, 7102, 5, 4, ("hold", "greedy"), 24),
    (4, 7201, 4, 6, ("greedy", "hold", "no_draw"), 8),
    (4, 7202, 7, 4, ("no_draw", "greedy", "hold"), 6),
]
HANDS = [(2, "search:budget=32", 7301), (2, "search:budget=8", 7302),
         (4, "search:budget=8", 7401)]


def margins(seats, seed, every, keep, modes, n):
    """Rollout margins (as exact float reprs) of ``keep`` turn starts of a greedy hand."""
    from agents import robbers_playout as po
    from agents.robbers_playout import playout_start

    rows = []
    for j, (g, p) in enumerate(greedy_positions(seats, seed, hands=1)):
        if j % every or len(rows) >= keep:
            continue
        view = player_view(g, 0, p)
        start = playout_start(view, view.public_state()[0])
        m = start.rollouts([po.MODES[c] for c in modes], n, np.random.default_rng(seed + j))
        rows.append([float(x).hex() for x in m.ravel()])
    return rows


def hand_actions(seats, spec, seed):
    """The actions and points of one hand, ``spec`` in the even seats, greedy in the odd."""
    g, actions = Game(robbers(num_players=seats), 1), []
    agents = [make_agent(spec if q % 2 == 0 else "greedy", seed=q, variant="robbers")
              for q in range(seats)]
    r = play_hand(g, agents, seed=seed, actions=actions)
    return {"points": [int(x) for x in r.hand_points], "steps": len(actions),
            "actions": hashlib.sha256(json.dumps([int(a) for a in actions]).encode()).hexdigest()}


def record() -> dict:
    return {"margins": [margins(*case) for case in STARTS],
            "hands": [hand_actions(*case) for case in HANDS]}


@pytest.fixture(scope="module")
def expected():
    return json.loads(DATA.read_text())


@pytest.mark.parametrize("case", range(len(STARTS)))
def test_rollout_margins_are_bit_identical(expected, case):
    assert margins(*STARTS[case]) == expected["margins"][case]


@pytest.mark.parametrize("case", range(len(HANDS)))
def test_search_hands_play_the_same_actions(expected, case):
    assert hand_actions(*HANDS[case]) == expected["hands"][case]


if __name__ == "__main__":
    DATA.write_text(json.dumps(record(), indent=1) + "\n")
