"""SVG drawings of states (every variant, any seat's view) and the HTML replay page."""

from __future__ import annotations

import json
import re

import numpy as np
import pytest

from agents import make_agent
from experiments.cli import main
from mountain_rummy_env import Game, player_view
from mountain_rummy_env.drawing import draw, replay_html
from mountain_rummy_env.records import GameRecord, RecordError, Recorder
from mountain_rummy_env.registry import make_variant

CASES = [("mountain", {}), ("gin", {}), ("german", {"num_players": 4}),
         ("german", {"num_players": 6})]


def play(variant, seed, steps, recorder=False):
    """A game of ``greedy`` players after ``steps`` actions (or at its end)."""
    rec = Recorder(variant, seed, players=["greedy"] * variant.num_players) if recorder else None
    game = rec.game if rec else Game(variant, 1)
    if not rec:
        game.reset(seed=seed)
    agents = [make_agent("greedy", seed=p, variant=variant.name) for p in range(variant.num_players)]
    for _ in range(steps):
        if game.done(0):
            break
        p = game.current_player(0)
        a = int(agents[p].act(player_view(game, 0, p), game.masks[0]))
        (rec.play if rec else lambda a: game.step_one(0, a))(a)
    return rec if rec else game


def faces_drawn(svg: str) -> list[str]:
    return re.findall(r'<use href="#c(\w\w)"', svg)


@pytest.mark.parametrize("name, options", CASES)
def test_a_seats_drawing_holds_only_what_it_may_know(name, options):
    """Re-dealing every card the seat cannot see (the view's public state) leaves its
    drawing unchanged, at every tenth position of a game: no hidden card leaks."""
    variant = make_variant(name, **options)
    for seed in (1, 2):
        for steps in range(0, 80, 10):
            game = play(variant, seed, steps)
            for seat in range(variant.num_players):
                other = game.clone()
                other.states[0] = player_view(game, 0, seat).public_state()[0]
                assert draw(game, 0, seat) == draw(other, 0, seat)


@pytest.mark.parametrize("name, options", CASES)
def test_the_full_drawing_shows_every_hand_and_pile_card(name, options):
    variant = make_variant(name, **options)
    game = play(variant, 3, 25)
    svg = draw(game, 0, last_move="discard 7H")
    shown = faces_drawn(svg)
    hands = sum(len(game.hand(0, p)) for p in range(variant.num_players))
    assert len(shown) >= hands + len(game.discard_pile(0))
    assert "cBK" in svg and "last move: discard 7H" in svg and svg.startswith("<svg")
    seat_view = draw(game, 0, 1)
    assert seat_view.count('href="#cBK"') >= 1 + sum(       # the stock and hidden hands
        len(game.hand(0, p)) - len(player_view(game, 0, 1).known[p])
        for p in range(variant.num_players) if p != 1)


def test_jupyter_shows_games_and_views():
    game = play(make_variant("gin"), 4, 10)
    assert game._repr_svg_().startswith("<svg")
    view = player_view(game, 0, 1)
    assert view._repr_svg_() == draw(game, 0, 1)


def test_replay_page_steps_through_a_record(tmp_path, capsys):
    variant = make_variant("german", num_players=3)
    rec = play(variant, 7, 400, recorder=True)
    path = tmp_path / "game.json"
    rec.record.save(path)
    page = replay_html(GameRecord.load(path))
    data = json.loads(re.search(r"const D = (\{.*?\});\n", page, re.S).group(1)
                      .replace("<\\/", "</"))
    actions = len(rec.record.actions)
    assert set(data["frames"]) == {"None", "0", "1", "2"} and len(data["moves"]) == actions
    assert all(len(frames) == actions + 1 for frames in data["frames"].values())
    assert "ArrowLeft" in page and 'type="range"' in page and "http" not in page.split("<svg")[0]
    assert data["result"].startswith("Hand ends")
    out = tmp_path / "game.html"
    assert main(["replay", str(path), "--html", str(out), "--view", "1"]) == 0
    assert "written:" in capsys.readouterr().out and '"1": [' in out.read_text()


def test_replay_page_refuses_bad_input(tmp_path):
    variant = make_variant("gin")
    rec = play(variant, 8, 6, recorder=True)
    rec.stop()
    path = tmp_path / "gin.json"
    rec.record.save(path)
    with pytest.raises(SystemExit, match="view seat 5 is not a seat"):
        main(["replay", str(path), "--html", str(tmp_path / "x.html"), "--view", "5"])
    with pytest.raises(SystemExit, match="--view needs --html"):
        main(["replay", str(path), "--view", "0"])
    broken = GameRecord.load(path)
    broken.actions = broken.actions[:2] + ["meld 2C 3C 4C"] + broken.actions[2:]
    with pytest.raises(RecordError, match="does not replay"):
        replay_html(broken)
    assert "stops before the game ends" in replay_html(GameRecord.load(path))
