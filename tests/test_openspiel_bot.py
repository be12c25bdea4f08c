"""``openspiel_simple``: OpenSpiel's own SimpleGinRummyBot on a state rebuilt from its view.

* every game is mirrored in lock step into a real OpenSpiel ``gin_rummy`` game on the same
  deal: at every decision of the bot the rebuilt state gives it the same ObservationTensor and
  legal actions as the real game; every move is legal and the returns agree;
* the same holds for every seat at positions the bot never reaches (hands played to the
  wall, a take at the wall);
* re-dealing the cards the seat cannot see never changes the bot's choice;
* the differential: how often our ``simple_gin`` picks the bot's move (docs/agents.md).
"""

from __future__ import annotations

import collections
import os

import numpy as np
import pytest

if os.environ.get("CI"):
    import pyspiel  # CI installs the [dev] extra, which holds the peers: never skip there
else:
    pyspiel = pytest.importorskip("pyspiel", reason="open_spiel (pyspiel) is not installed; "
                                  'pip install -e ".[peers]" to test openspiel_simple')

from test_fair_agents import positions, redeal_hidden  # noqa: E402

from agents import make_agent  # noqa: E402
from agents.openspiel_bot import rebuild_state  # noqa: E402
from agents.simple_gin import SimpleGinAgent  # noqa: E402
from mountain_rummy_env import Game, player_view  # noqa: E402
from mountain_rummy_env.core import gin as K  # noqa: E402
from mountain_rummy_env.openspiel_gin import VARIANT, deal_order, os_moves, os_seat  # noqa: E402

OS_GAME = pyspiel.load_game("gin_rummy")
BOT = "openspiel_simple"


class NoKnockSimple(SimpleGinAgent):
    """simple_gin that never knocks from the discard step (so hands reach the wall, with low
    deadwood) and takes the up-card at the wall when it may (so the knock-only step comes)."""

    def wants_to_knock(self, view, by) -> bool:
        return False

    def wants_take(self, view, card) -> bool:
        return view.step == K.WALL or super().wants_take(view, card)


def lockstep(seed: int, agents, check, stats) -> None:
    """Play one hand of ``agents`` (one a seat) in ours and, on the same deal, in OpenSpiel;
    ``check(view, mask, real_state, os_player)`` at every decision with a choice. A move
    OpenSpiel refuses (its known missing-knock defect, tests/test_gin_openspiel.py) ends the
    mirroring of that hand (counted)."""
    dealer = seed % 2
    g = Game(VARIANT, 1)
    g.reset(seed=seed, dealer=dealer)
    order, k = deal_order(g.states[0]["deck"]), 0
    state = OS_GAME.new_initial_state()
    live = True
    while not g.done(0):
        p = g.current_player(0)
        view, mask = player_view(g, 0, p), g.masks[0]
        while live and state.is_chance_node():
            state.apply_action(order[k])
            k += 1
        if live:
            assert state.current_player() == os_seat(p, dealer)
            if mask.sum() > 1:
                check(agents[p], view, mask, state, os_seat(p, dealer))
        a = agents[p].act(view, mask)
        assert mask[a], (seed, VARIANT.action_text(a))
        stats["decisions"] += 1
        for x in os_moves(a, view.step) if live else ():
            while state.is_chance_node():
                state.apply_action(order[k])
                k += 1
            if x not in state.legal_actions():
                live = False
                stats["unmirrored"] += 1
                break
            state.apply_action(x)
        g.step_one(0, a)
    if live:
        pts = g.summary(0).hand_points
        assert state.is_terminal()
        lead = pts[1 - dealer] - pts[dealer]               # OpenSpiel's player 0: non-dealer
        assert list(state.returns()) == [lead, -lead]
    stats["games"] += 1


def _same_view(state, real, me, stats, step):
    assert state.observation_tensor(me) == real.observation_tensor(me), K.STEP_NAMES[step]
    assert state.legal_actions() == real.legal_actions(), K.STEP_NAMES[step]
    stats[K.STEP_NAMES[step]] += 1


@pytest.mark.parametrize("opponent", ["random", "simple_gin"])
def test_bot_sees_the_real_game_and_plays_legally(opponent):
    """Whole hands, the bot in both seats: at each of its decisions the rebuilt state (its
    plan after a knock replayed) shows it what the real OpenSpiel game shows it."""
    stats = collections.Counter()

    def check(agent, view, mask, real, me):
        if agent.name == BOT:
            state, _ = agent.rebuild(view, mask)
            _same_view(state, real, me, stats, view.step)

    for seed in range(12):
        specs = [BOT, opponent] if seed % 2 else [opponent, BOT]
        lockstep(seed, [make_agent(s, seed=seed, variant="gin") for s in specs], check, stats)
    print(f"vs {opponent}:", dict(stats))
    assert stats["games"] == 12 and stats["unmirrored"] == 0 and stats["knock melds"] > 0
    if opponent == "simple_gin":           # random hardly knocks: the bot knocks first
        assert stats["defender melds"] > 0 and stats["layoff"] > 0


def test_rebuilt_state_at_the_wall_and_any_seat():
    """Hands played to the wall: the rebuilt state of every decision of either seat
    (no bot acting) equals the real one, the take at the wall and the knock after it too."""
    stats = collections.Counter()

    def check(agent, view, mask, real, me):
        state, _, _ = rebuild_state(OS_GAME, view, mask)
        _same_view(state, real, me, stats, view.step)

    for seed in range(6):
        lockstep(seed, [NoKnockSimple(seed=seed), NoKnockSimple(seed=seed + 50)], check, stats)
    print(dict(stats))
    assert stats["wall"] > 0 and stats["knock only"] > 0 and stats["knock melds"] > 0


def test_bot_ignores_where_the_hidden_cards_really_are():
    rng = np.random.default_rng(0)
    checked = collections.Counter()
    for seed, other in ((21, "simple_gin"), (22, "random")):
        players = [make_agent(BOT, seed=1, variant="gin"), make_agent(other, seed=2, variant="gin")]
        for game, p in positions(VARIANT, 4, seed=seed, players=players):
            if p != 0:
                continue
            moved = redeal_hidden(game, p, rng)
            picks = [make_agent(BOT, seed=5, variant="gin").act(player_view(g, 0, p), g.masks[0])
                     for g in (game, moved)]
            assert picks[0] == picks[1], K.STEP_NAMES[player_view(game, 0, p).step]
            checked[K.STEP_NAMES[player_view(game, 0, p).step]] += 1
    print(dict(checked))
    assert sum(checked.values()) >= 50 and checked["knock melds"] + checked["defender melds"] > 0


def _disagreement(view, a, b) -> str:
    """The kind of a disagreement: bot's move ``a``, simple_gin's ``b``."""
    fa, fb = VARIANT.action_family(a), VARIANT.action_family(b)
    step = K.STEP_NAMES[view.step]
    if {fa, fb} <= {"discard", "knock"} and fa == fb:
        hand = list(view.hand)
        lay = VARIANT.layout
        dws = [int(K.deadwood(VARIANT.spec, np.int64(sum(1 << c for c in hand if c != x))))
               for x in (a - getattr(lay, fa), b - getattr(lay, fb))]
        if dws[0] == dws[1]:
            return f"{step}: {fa} another card, a tie"
        return f"{step}: {fa} another card, bot {'higher' if dws[0] > dws[1] else 'lower'} deadwood"
    if fa == fb == "meld":                 # a meld of a best arrangement: the order differs
        hand = sum(1 << c for c in view.hand)
        less = hand & ~int(VARIANT.table.mask[a - VARIANT.layout.meld])
        best = K.deadwood(VARIANT.spec, np.int64(less)) == K.deadwood(VARIANT.spec, np.int64(hand))
        return f"{step}: meld " + ("in order only" if best else "not of a best arrangement")
    gin = " after a gin" if view.step == K.DEF_MELD and view.opponent_hand_size == 0 else ""
    return f"{step}: bot {fa}, simple_gin {fb}{gin}"


def test_differential_simple_gin_against_openspiels_bot():
    """Our simple_gin, shadowing the bot's seat, picks the bot's move at most decisions; the
    disagreements are the kinds docs/agents.md explains (measured: 83.7% agreement over 400
    hands, seeds 1000-1399; 82.3% over these 40)."""
    agree, total, kinds = collections.Counter(), collections.Counter(), collections.Counter()
    for seed in range(40):
        g = Game(VARIANT, 1)
        g.reset(seed=seed, dealer=seed % 2)
        other = ["random", "simple_gin"][seed % 4 // 2]
        specs = [BOT, other] if seed % 2 == 0 else [other, BOT]
        agents = [make_agent(s, seed=seed, variant="gin") for s in specs]
        seat = specs.index(BOT)
        shadow = make_agent("simple_gin", seed=seed + 1, variant="gin")
        while not g.done(0):
            p = g.current_player(0)
            view, mask = player_view(g, 0, p), g.masks[0]
            a = agents[p].act(view, mask)
            if p == seat:
                b = shadow.act(view, mask)
                if mask.sum() > 1:
                    total[K.STEP_NAMES[view.step]] += 1
                    if a == b:
                        agree[K.STEP_NAMES[view.step]] += 1
                    else:
                        kinds[_disagreement(view, a, b)] += 1
            g.step_one(0, a)
    rate = sum(agree.values()) / sum(total.values())
    print(f"agreement {rate:.3f}", {s: f"{agree[s]}/{n}" for s, n in total.items()}, dict(kinds))
    assert rate > 0.78
    # discards: ties (the bot throws the highest rank, simple_gin a random one), or the bot
    # leaves more deadwood (it throws only cards outside one best grouping of the 11); never less
    assert not [k for k in kinds if k.endswith("lower deadwood")]
    # the bot passes its defender melds only after a gin (it passes first, as if laying off)
    assert not [k for k in kinds if k.startswith("defender melds: bot pass") and "gin" not in k]
    # melds: the bot lays a best arrangement too, in another order
    assert not [k for k in kinds if k.endswith("not of a best arrangement")]
    # the bot never lays off; simple_gin lays off every loose card that fits
    assert kinds["layoff: bot pass, simple_gin layoff"] > 0
    assert not [k for k in kinds if k.startswith("layoff") and "bot layoff" in k]


def test_tournament_refuses_gin_without_openspiel_rules():
    from experiments.cli import main

    with pytest.raises(SystemExit, match="openspiel_compatible=true only"):
        main(["tournament", "--variant", "gin", "--agents", BOT, "simple_gin", "--deals", "1"])
    make_agent(BOT, variant="gin").check_options(VARIANT)       # the OpenSpiel rules: fine


def test_without_open_spiel_the_error_says_how_to_install(monkeypatch):
    import sys

    from agents import AgentSpecError

    monkeypatch.setitem(sys.modules, "pyspiel", None)       # import pyspiel fails
    with pytest.raises(AgentSpecError, match=r'pip install -e "\.\[peers\]"'):
        make_agent(BOT, variant="gin")
