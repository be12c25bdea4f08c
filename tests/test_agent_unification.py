"""The heuristic players (``greedy``, ``rules``; ``search`` and ``simple_gin``, which build
on them) are written once for Mountain and Gin (issue #19): a refactor of the shared skeleton must leave
every decision as it was. Fixed seeds are played and each hand's action ids hashed; the
expected digests in tests/data/agent_traces.json were recorded from the per-variant agents
before the merge (``python tests/test_agent_unification.py`` rewrites them: only do so for a
deliberate change of play)."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from agents import make_agent
from experiments.play import play_hand
from mountain_rummy_env import Game
from mountain_rummy_env.registry import make_variant

DATA = Path(__file__).parent / "data" / "agent_traces.json"
HANDS = 30
SEARCH_HANDS = 10     # the search's cases compare the first hands only (a hand costs 1-2 s)
MATCHUPS = [("greedy", "greedy"), ("rules", "greedy"), ("rules", "rules"),
            ("search:budget=8", "rules")]
GAMES = {"mountain": MATCHUPS, "gin": MATCHUPS + [("simple_gin", "greedy")],
         "gin openspiel": [("rules", "greedy"), ("rules", "rules")]}   # the wall steps
OPTIONS = {"gin openspiel": {"openspiel_compatible": True}}


def traces(game_name: str, a: str, b: str, hands: int = HANDS) -> list[str]:
    """Digest of each of the first ``hands`` hands' action ids, ``a`` and ``b`` swapping
    seats every hand (the agents carry on from hand to hand, so a prefix of the recorded
    hands is played the same)."""
    variant_name = game_name.split()[0]
    game = Game(make_variant(variant_name, **OPTIONS.get(game_name, {})), 1)
    agents = [make_agent(a, seed=1, variant=variant_name),
              make_agent(b, seed=2, variant=variant_name)]
    out = []
    for hand in range(hands):
        actions: list[int] = []
        seats = agents if hand % 2 == 0 else agents[::-1]
        play_hand(game, seats, seed=hand, actions=actions)
        out.append(hashlib.sha256(",".join(map(str, actions)).encode()).hexdigest()[:12])
    return out


CASES = [(v, a, b) for v, ms in GAMES.items() for a, b in ms]


@pytest.mark.parametrize("game_name,a,b", CASES, ids=[f"{v}-{a}-{b}" for v, a, b in CASES])
def test_agents_play_the_recorded_actions(game_name, a, b):
    expected = json.loads(DATA.read_text())[f"{game_name} {a} vs {b}"]
    got = traces(game_name, a, b, SEARCH_HANDS if a.startswith("search") else HANDS)
    first = next((k for k, (x, y) in enumerate(zip(got, expected)) if x != y), None)
    assert first is None, f"hand {first} (seed {first}) plays differently"


if __name__ == "__main__":   # record the expected digests
    DATA.write_text("{\n" + ",\n".join(f'"{v} {a} vs {b}": {json.dumps(traces(v, a, b))}'
                                         for v, a, b in CASES) + "\n}\n")
