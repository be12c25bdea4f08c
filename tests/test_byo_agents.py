"""Bring-your-own agents (docs/your_agent.md): specs naming a class by module path or an
installed package's entry point, programs speaking JSON lines (``proc:``) that see only
their seat's knowledge, the referee's time limits and forfeits, decision times in the
reports, search at equal time, and ``simple_gin``, the EAAI challenge's baseline."""

from __future__ import annotations

import re
import shlex
import sys
from dataclasses import asdict
from pathlib import Path

import numpy as np
import pytest

import agents.proc as proc
from agents import Agent, AgentSpecError, make_agent, parse_spec
from agents.base import read_spec
from agents.search import GinSearchAgent
from agents.simple_gin import SimpleGinAgent
from experiments.cli import main
from experiments.play import Limits, Referee, play_hand
from experiments.tournament import (
    TournamentConfig, play_table, report_run, run_tournament, time_summary)
from mountain_rummy_env import Game, gin_variant, player_view
from mountain_rummy_env.core import gin as K
from test_agents_gin import deal
from test_fair_agents import redeal_hidden

ROOT = Path(__file__).resolve().parents[1]
PYTHON = shlex.quote(sys.executable)
CLIENT = f"proc:{PYTHON} {shlex.quote(str(ROOT / 'examples' / 'proc_random_agent.py'))}"


# -- spec strings ---------------------------------------------------------------------------

@pytest.mark.parametrize("spec, kind, target, params", [
    ("random", "name", "random", {}),
    ("Search:budget=200,z=1", "name", "search", {"budget": "200", "z": "1"}),
    ("ppo:policy=mountain", "name", "ppo", {"policy": "mountain"}),
    ("mypkg.agents:Mine", "object", "mypkg.agents:Mine", {}),
    ("mypkg.agents:Mine:depth=3,name=x", "object", "mypkg.agents:Mine",
     {"depth": "3", "name": "x"}),
    ("mod:Outer.Inner", "object", "mod:Outer.Inner", {}),
    ("proc:python my agent.py --depth=3 x:y", "proc", "python my agent.py --depth=3 x:y", {}),
])
def test_specs_read_as_a_name_an_object_or_a_program(spec, kind, target, params):
    """A part after the first colon with ``=`` is parameters (the registered form as it
    always was); without ``=`` it names an object in the module before the colon."""
    read = read_spec(spec)
    assert (read.kind, read.target, read.params) == (kind, target, params)
    assert parse_spec(spec) == ("proc" if kind == "proc" else target, params)


@pytest.mark.parametrize("spec, message", [
    ("no_such_module_xyz:Mine", "cannot import module 'no_such_module_xyz' .*ModuleNotFoundError"),
    ("json:NoSuchThing", "json has no attribute 'NoSuchThing'"),
    ("collections:OrderedDict", "made a OrderedDict, which has no act\\(view, mask\\) method"),
    ("json:dumps", "json:dumps: TypeError"),
    ("test_byo_agents:Lowest:depth=2", "has no parameter 'depth' \\(parameters: none\\)"),
    ("test_byo_agents:Deep:depth=deep", "depth='deep' of test_byo_agents:Deep must be int"),
    ("test_byo_agents:AN_AGENT", "is an agent object, not a class or factory"),
    ("my-agents:Mine", "'my-agents' is not a module path"),
    ("nosuch", "unknown agent 'nosuch'.*module.path:Name.*proc:COMMAND"),
    ("search:budget", "bad parameter 'budget'"),      # a registered name is never a module
    ("proc:", "names no command"),
    ("proc:no-such-program-xyz --x", "cannot start 'no-such-program-xyz': no such program"),
    ("proc:python 'unclosed", "cannot read the command line"),
])
def test_bad_specs_say_what_is_wrong(spec, message):
    with pytest.raises(AgentSpecError, match=message):
        make_agent(spec)


class Lowest:
    """The smallest protocol: ``act`` only (not an :class:`Agent`)."""

    def act(self, view, mask):
        return int(np.flatnonzero(mask)[0])


class Deep:
    made: list = []

    def __init__(self, depth: int = 1, seed=None):
        self.depth, self.resets = depth, 0
        Deep.made.append(self)

    def reset(self):
        self.resets += 1

    def act(self, view, mask):
        legal = np.flatnonzero(mask)
        return int(legal[min(self.depth, len(legal)) - 1])


AN_AGENT = Lowest()


def test_an_object_by_module_path_plays_with_its_parameters_and_resets():
    agent = make_agent("test_byo_agents:Deep:depth=2", seed=1, variant="gin")
    assert agent.name == "test_byo_agents:Deep:depth=2" and agent.inner.depth == 2
    g = Game(gin_variant(), 1)
    play_hand(g, [agent, make_agent("greedy", seed=1)], seed=3)
    assert agent.inner.resets == 1
    plain = make_agent("test_byo_agents:Lowest")
    assert isinstance(plain, Agent) and not plain.use_time_per_move(0.1)


# -- an installed package's agents ------------------------------------------------------------

PACKAGE = '''
"""A throw-away package with one agent: the legal action ``depth`` from the lowest."""
import numpy as np

MADE = []


class Mine:
    def __init__(self, depth: int = 1, seed=None):
        self.depth, self.seed, self.hands = depth, seed, 0
        MADE.append(self)

    def reset(self):
        self.hands += 1

    def act(self, view, mask):
        legal = np.flatnonzero(mask)
        return int(legal[min(self.depth, len(legal)) - 1])
'''


@pytest.fixture
def installed(tmp_path, monkeypatch):
    """``byo_throwaway`` installed as a distribution would be: its code and a dist-info
    folder whose entry_points.txt declares ``mine`` in the group the registry reads."""
    (tmp_path / "byo_throwaway").mkdir()
    (tmp_path / "byo_throwaway" / "__init__.py").write_text(PACKAGE)
    info = tmp_path / "byo_throwaway-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: byo-throwaway\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text("[mountain_rummy_env.agents]\nmine = byo_throwaway:Mine\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    yield tmp_path
    sys.modules.pop("byo_throwaway", None)


def test_an_installed_packages_agent_is_listed_and_enters_a_tournament(installed, capsys):
    assert main(["agents"]) == 0
    listed = capsys.readouterr().out
    assert "mine       from package byo-throwaway: byo_throwaway:Mine" in listed
    cfg = TournamentConfig(agents=["mine:depth=2", "greedy"], deals=2, slow_deals=None,
                           seed=4, workers=1, variant="gin")
    rows = run_tournament(cfg, installed / "run", progress=False)
    assert len(rows) == 2 and all("forfeits" not in r for r in rows)
    made = sys.modules["byo_throwaway"].MADE
    assert len(made) == 1 + 2 * 2        # the worker's warm-up hand, then 2 deals of 2 plays
    assert {m.depth for m in made} == {2} and all(m.hands == 1 for m in made)
    assert all(r["decision_ms"]["mine:depth=2"] for r in rows)
    report = report_run(rows, installed / "run", n_boot=50)["report"].read_text()
    assert "| mine:depth=2 | greedy | 2 |" in report
    # the same class by its module path, and the CLI takes both
    assert make_agent("byo_throwaway:Mine:depth=3").inner.depth == 3
    assert main(["tournament", "--variant", "gin", "--agents", "mine", "byo_throwaway:Mine",
                 "--deals", "1", "--workers", "1", "--no-progress",
                 "--out", str(installed / "cli")]) == 0


def test_the_documented_example_enters_a_tournament(tmp_path, monkeypatch):
    """The agent of docs/your_agent.md, saved as the module it says, plays as it says."""
    page = (ROOT / "docs" / "your_agent.md").read_text()
    (tmp_path / "my_agents.py").write_text(re.search(r"```python\n(.*?)```", page, re.S).group(1))
    monkeypatch.syspath_prepend(str(tmp_path))
    try:
        assert main(["tournament", "--variant", "gin", "--agents", "my_agents:Lowest:skip=1",
                     "rules", "--deals", "1", "--workers", "1", "--no-progress",
                     "--out", str(tmp_path / "run")]) == 0
    finally:
        sys.modules.pop("my_agents", None)
    assert "| my_agents:Lowest:skip=1 | rules | 1 |" in (tmp_path / "run" / "report.md").read_text()


def test_a_builtin_name_shadows_an_installed_one(installed):
    info = installed / "byo_throwaway-0.1.dist-info" / "entry_points.txt"
    info.write_text("[mountain_rummy_env.agents]\ngreedy = byo_throwaway:Mine\n")
    from agents import registered
    listed = registered()
    assert "shadowed by the built-in" in listed["greedy (byo_throwaway:Mine)"]
    assert type(make_agent("greedy")).__name__ == "ByVariant"


# -- programs: the protocol, and only the seat's knowledge --------------------------------------

CARD_FIELDS = ("hand", "discard", "taken")


def _cards_in(message) -> set[int]:
    v = message["view"]
    cards = {c for key in CARD_FIELDS for c in v[key]} | {c for k in v["known"] for c in k}
    cards |= {c for m in v["melds"] for c in m["cards"]}
    return cards | ({v["obligation"]} if v["obligation"] >= 0 else set())


@pytest.fixture
def checked_messages(monkeypatch):
    """Every message a program is sent, recorded, and each ``act`` message checked when
    made: no card hidden from the seat is in it, and dealing the hidden cards anew (another
    stock order, other cards in the other hands) leaves it unchanged. A check that fails
    is listed in ``leaks`` (an error here would only forfeit the hand)."""
    sent, leaks, checked = [], [], set()
    rng = np.random.default_rng(0)
    make, send = proc.ProcAgent.request, proc.ProcAgent._send

    def request(self, view, mask):
        message = make(self, view, mask)
        hidden = _cards_in(message) & set(view.hidden_cards().tolist())
        other = redeal_hidden(view.game, view.player, rng)
        if hidden or make(self, player_view(other, 0, view.player), mask) != message:
            leaks.append((view.turn, view.player, sorted(hidden)))
        if message["legal"] != np.flatnonzero(mask).tolist():
            leaks.append("legal actions")
        checked.add(id(message))
        return message

    def record(self, message):
        if message["type"] == "act" and id(message) not in checked:
            leaks.append("an act message not made by request")
        sent.append(message)
        return send(self, message)

    monkeypatch.setattr(proc.ProcAgent, "request", request)
    monkeypatch.setattr(proc.ProcAgent, "_send", record)
    return sent, leaks


@pytest.mark.parametrize("variant, options, table", [
    ("gin", {}, [CLIENT, "greedy"]),
    ("mountain", {}, [CLIENT, "greedy"]),
    ("german", {"num_players": 3}, [CLIENT, "greedy", "random"]),
])
def test_a_program_plays_a_tournament_seeing_only_its_seats_knowledge(
        variant, options, table, checked_messages, tmp_path):
    cfg = TournamentConfig(agents=table, deals=2, slow_deals=None, seed=1, workers=1,
                           variant=variant, variant_options=options, move_limit=5.0)
    rows = run_tournament(cfg, tmp_path, progress=False)
    sent, leaks = checked_messages
    assert not leaks
    assert len(rows) == 2 and all("forfeits" not in r for r in rows)
    acts = [m for m in sent if m["type"] == "act"]
    hellos = [m for m in sent if m["type"] == "hello"]
    assert len(acts) == sum(len(r["decision_ms"][CLIENT]) for r in rows)
    plays = sum(len(r["hands"]) for r in rows)
    assert len(hellos) == plays                       # a fresh process for every play
    assert {h["seat"] for h in hellos} == set(range(len(table)))
    for h in hellos:
        assert (h["protocol"], h["variant"], h["limits"]) == (1, variant, {"move": 5.0, "hand": None})
        assert {k: v for k, v in h.items() if k not in ("seat", "seed")} == \
            {k: v for k, v in hellos[0].items() if k not in ("seat", "seed")}


def test_the_reference_client_is_checked_at_once_for_a_variant():
    agent = make_agent(CLIENT, variant="gin")     # started, answered the hello, stopped
    assert agent._proc is None and agent.use_time_per_move(0.5)
    with pytest.raises(AgentSpecError, match="answered 'hi' to the hello, not a JSON line"):
        make_agent(f"proc:{PYTHON} -c \"print('hi')\"", variant="gin")
    with pytest.raises(AgentSpecError, match="exited with code 2 .*no_such_client.py"):
        make_agent(f"proc:{PYTHON} no_such_client.py", variant="gin")


MISBEHAVING = '''
import json, sys, time
mode, moves = sys.argv[1], 0
for line in sys.stdin:
    message = json.loads(line)
    if message["type"] == "hello":
        if mode == "mute":
            time.sleep(30)
        print(json.dumps({"type": "ready"}), flush=True)
        continue
    moves += 1
    if moves < 3:
        print(json.dumps({"action": message["legal"][0]}), flush=True)
    elif mode == "crash":
        sys.stderr.write("boom: out of ideas\\n")
        sys.exit(3)
    elif mode == "garbage":
        print("let me think", flush=True)
    elif mode == "illegal":
        print(json.dumps({"action": message["legal"][-1] + 1000}), flush=True)
    elif mode == "slow":
        time.sleep(5)
'''


GIN_ENDS = ("knock", "gin", "undercut", "exhausted")


@pytest.fixture
def misbehaving(tmp_path):
    path = tmp_path / "misbehaving.py"
    path.write_text(MISBEHAVING)
    return lambda mode: f"proc:{PYTHON} {shlex.quote(str(path))} {mode}"


@pytest.mark.parametrize("mode, kind, reason", [
    ("crash", "crash", "exited with code 3 before answering its action: boom: out of ideas"),
    ("garbage", "garbage", "answered 'let me think' to its action, not a JSON line"),
    ("illegal", "illegal", "played action \\d+, not legal here"),
    ("slow", "timeout", "no answer within 0.3 s to its action"),
])
def test_a_program_that_breaks_the_rules_forfeits_and_the_tournament_goes_on(
        misbehaving, mode, kind, reason, tmp_path):
    """The offending move is not played; a random stand-in plays the seat to the hand's end
    (every play has real points), the row says who, when and why, and the next deal is
    played as usual."""
    spec = misbehaving(mode)
    cfg = TournamentConfig(agents=[spec, "greedy"], deals=2, slow_deals=None, seed=2,
                           workers=1, variant="gin", move_limit=0.3)
    rows = run_tournament(cfg, tmp_path, progress=False)
    assert sorted(r["deal"] for r in rows) == [2, 3]
    forfeits = [f for r in rows for f in r.get("forfeits", ())]
    assert forfeits and all(f["agent"] == spec and f["kind"] == kind for f in forfeits)
    assert all(f["decision"] == 2 for f in forfeits)            # its third decision
    assert all(re.fullmatch(reason, f["reason"]) for f in forfeits), forfeits[0]["reason"]
    for r in rows:
        assert all(h["end"] in GIN_ENDS for h in r["hands"])   # played out by the stand-in
        assert len(r["decision_ms"][spec]) <= 3 * len(r["hands"])   # no call after a forfeit
    report = report_run(rows, tmp_path, n_boot=50)["report"].read_text()
    assert f"{len(forfeits)} {kind}" in report and "Forfeits:" in report
    assert (tmp_path / "times.csv").read_text().startswith("agent,decisions,mean_ms,p95_ms,")


def test_a_program_that_does_not_answer_the_hello_forfeits_at_its_first_decision(misbehaving):
    spec = misbehaving("mute")
    agent = proc.ProcAgent(spec[len("proc:"):], start_seconds=0.3)
    referee = Referee(Limits(move=1.0), seed=[1])
    r = play_hand(Game(gin_variant(), 1), [agent, make_agent("greedy")], seed=5,
                  referee=referee)
    assert [(f.seat, f.decision, f.kind) for f in r.forfeits] == [(0, 0, "start")]
    assert r.forfeits[0].reason == "no answer within 0.3 s to the hello"
    assert r.decision_seconds[0] == [] and sum(r.hand_points) > 0


class Raises(Agent):
    def act(self, view, mask):
        if view.turn >= 2:
            raise RuntimeError("lost my place")
        return int(np.flatnonzero(mask)[0])


class Sleeps(Agent):
    def act(self, view, mask):
        import time
        time.sleep(0.05)
        return int(np.flatnonzero(mask)[0])


class Illegal(Agent):
    def act(self, view, mask):
        return int(np.flatnonzero(mask == 0)[0])


@pytest.mark.parametrize("spec, kind, reason", [
    ("test_byo_agents:Raises", "crash", "RuntimeError: lost my place"),
    ("test_byo_agents:Sleeps", "timeout", "took [\\d.]+ s, over the move limit of 0.02 s"),
    ("test_byo_agents:Illegal", "illegal", "played action \\d+, not legal here"),
])
def test_agents_in_this_process_are_refereed_alike(spec, kind, reason):
    cfg = asdict(TournamentConfig(agents=[spec, "random"], deals=1, slow_deals=None,
                                  workers=1, variant="gin", move_limit=0.02))
    row = play_table(cfg, (spec, "random"), 0)
    assert row["forfeits"] and {f["kind"] for f in row["forfeits"]} == {kind}
    assert all(re.fullmatch(reason, f["reason"]) for f in row["forfeits"])
    again = play_table(cfg, (spec, "random"), 0)
    if kind != "timeout":    # the stand-in is seeded: the deal replays as it was
        assert [h["points"] for h in again["hands"]] == [h["points"] for h in row["hands"]]


def test_the_hand_limit_counts_the_seats_decisions_in_the_hand():
    referee = Referee(Limits(hand=0.12), seed=[2])
    r = play_hand(Game(gin_variant(), 1), [make_agent("test_byo_agents:Sleeps"),
                                           make_agent("random", seed=1)], seed=5, referee=referee)
    (f,) = r.forfeits
    assert (f.seat, f.kind) == (0, "timeout") and "over the hand limit of 0.12 s" in f.reason
    assert f.decision == len(r.decision_seconds[0]) - 1 >= 1


# -- decision times in the report; equal time for search -------------------------------------

def test_time_summary_gives_mean_and_95th_percentile_per_agent():
    rows = [{"decision_ms": {"a": list(range(1, 101)), "b": [5.0]}},
            {"decision_ms": {"a": [], "b": [7.0]},
             "forfeits": [{"agent": "b", "kind": "timeout"}, {"agent": "b", "kind": "crash"}]}]
    a, b = time_summary(rows, ["a", "b"])
    assert (a.decisions, a.mean_ms, a.p95_ms, a.max_ms) == (100, 50.5, pytest.approx(95.05), 100)
    assert (b.decisions, b.mean_ms, b.forfeits) == (2, 6.0, {"timeout": 1, "crash": 1})
    assert time_summary([{"hands": []}], ["a"]) == []      # rows of older versions: no times


def test_time_per_move_is_a_setting_of_the_run_and_reaches_the_search(tmp_path, capsys):
    cfg = TournamentConfig(agents=["search", "rules"], deals=1, slow_deals=None, workers=1,
                           variant="gin", time_per_move=0.02, move_limit=3.0)
    assert "--move-limit 3 --time-per-move 0.02" in cfg.command(tmp_path)
    assert cfg.default_out() != TournamentConfig(agents=["search", "rules"], variant="gin",
                                                 deals=1, workers=1).default_out()
    with pytest.raises(ValueError, match="time_per_move must be a positive number"):
        TournamentConfig(time_per_move=0)
    assert make_agent("search", variant="gin").use_time_per_move(0.02)
    assert make_agent("search").use_time_per_move(0.02)          # every variant's strategy
    assert not make_agent("rules").use_time_per_move(0.02)
    with pytest.raises(SystemExit):
        main(["tournament", "--move-limit", "0"])
    assert "expected a positive number of seconds" in capsys.readouterr().err


def test_a_timed_search_spends_its_time_on_as_many_samples_as_fit(monkeypatch):
    """On a clock that advances 1 ms a sample and candidate, 0.1 s screens 3 candidates
    for half of it (about 50 ms / 3 ms = 16 samples) and duels for the rest."""
    import agents.search as search
    clock = [0.0]
    sizes = []

    def rollouts(self, view, mask, cands, n):
        sizes.append((len(cands), n))
        clock[0] += 0.001 * n * len(cands)
        return np.tile(np.arange(len(cands), dtype=float), (n, 1))   # the last one is best

    monkeypatch.setattr(search, "perf_counter", lambda: clock[0])
    monkeypatch.setattr(GinSearchAgent, "rollouts", rollouts)
    agent = GinSearchAgent(seed=0, seconds=0.1)
    g = Game(gin_variant(), 1)
    g.reset(seed=1)
    assert agent.search(player_view(g, 0, 0), g.masks[0], [10, 11, 12]) == 12
    # 2 samples timed (6 ms), then the 44 ms left of the screen's half; the duel likewise
    assert [s[0] for s in sizes] == [3, 3, 2, 2] and sizes[0][1] == sizes[2][1] == 2
    assert sizes[1][1] in (14, 15) and sizes[3][1] in (23, 24)
    assert clock[0] == pytest.approx(0.1, abs=0.003)
    sizes.clear()
    GinSearchAgent(seed=0, budget=40).search(player_view(g, 0, 0), g.masks[0], [10, 11, 12])
    assert sizes == [(3, 6), (2, 10)]                    # by budget, as it always was


# -- simple_gin ----------------------------------------------------------------------------

JUNK = "2C 9D KS 4C JD QC 8S 3D"          # no two of these meld together
OPP = "5C 6C TC 5D 6D TD 3H 4H 5H TS"    # none of the cards below


@pytest.mark.parametrize("hand, up, takes", [
    ("7H 8H " + JUNK, "9H", True),       # completes a run
    ("7H 7D " + JUNK, "7S", True),       # completes a set
    ("7H 9H " + JUNK, "8H", True),       # fills a run's gap
    ("7H 8D " + JUNK, "9H", False),      # a near miss melds nothing
    ("AH 2H " + JUNK, "KH", False),      # ace low only: K-A-2 is no run
])
def test_simple_gin_takes_the_upcard_iff_it_joins_a_meld_gr1(hand, up, takes):
    g = deal(hand, OPP, up)
    view = player_view(g, 0, 0)
    assert view.step == K.OFFER
    a = SimpleGinAgent(seed=0).act(view, g.masks[0])
    assert g.variant.action_text(a) == (f"take {up}" if takes else "pass")


def test_simple_gin_knocks_as_soon_as_its_deadwood_allows_gr3():
    opponent = "2C 3C 9D TD 3H 4H KS QS 8C 6D"
    # taking 9H leaves 7H 8H 9H, 4S 5S 6S, JC QC KC and AD: discard KD, deadwood 1: knock
    g = deal("7H 8H 4S 5S 6S JC QC KC AD KD", opponent, "9H")
    agent = SimpleGinAgent(seed=0)
    assert _turn(agent, g) == ["take 9H", "knock KD"]
    # 3D up melds nothing; after the passes it draws TC (9C TC JC QC) and is left with
    # 7H 8H 2D KD: the least deadwood drops KD (17), too much to knock
    g = deal("7H 8H 4S 5S 6S JC QC 2D 9C KD", opponent, "3D", stock="TC")
    assert _turn(agent, g) == ["pass"]
    g.step_one(0, "pass")
    assert _turn(agent, g) == ["draw stock", "discard KD"]


def _turn(agent, g) -> list[str]:
    """The agent's moves in seat 0 until the seat's turn passes (or it discards or knocks)."""
    out = []
    while g.current_player(0) == 0 and not (out and out[-1].split()[0] in ("discard", "knock")):
        a = agent.act(player_view(g, 0, 0), g.masks[0])
        out.append(g.variant.action_text(a))
        g.step_one(0, a)
    return out


def test_simple_gin_plays_its_published_policy_at_every_decision():
    """Over whole hands against rules: it takes iff the card melds, its discard or knock
    leaves the least deadwood of its candidates and is never the card just taken (GR-2),
    it knocks iff that deadwood is within the knock limit, and it is never refereed off."""
    from agents.common import deadwood
    v = gin_variant()
    g = Game(v, 1)
    checked = 0
    for hand in range(6):
        me, other = SimpleGinAgent(seed=hand), make_agent("rules", seed=hand)
        g.reset(seed=100 + hand)
        me.reset()
        other.reset()
        while not g.done(0):
            p = g.current_player(0)
            view, mask = player_view(g, 0, p), g.masks[0]
            if p == 1:
                g.step_one(0, other.act(view, mask))
                continue
            legal = np.flatnonzero(mask)
            cards = me._candidates(view, [c for c in view.hand if mask[v.layout.discard + c]])
            a = me.act(view, mask)
            family = v.action_family(a)
            if view.step in (K.OFFER, K.DRAW) and len(legal) > 1:
                assert (family == "take") == _joins_a_meld(view.hand, view.discard[-1])
                checked += 1
            if view.step == K.DISCARD:
                left = {c: deadwood(view, [x for x in view.hand if x != c]) for c in cards}
                card = a - (v.layout.knock if family == "knock" else v.layout.discard)
                assert card not in view.taken and left[card] == min(left.values())
                assert (family == "knock") == (left[card] <= v.config.knock_card)
                checked += 1
            g.step_one(0, a)
    assert checked > 50


def _joins_a_meld(hand, card) -> bool:
    """Whether ``card`` makes a set (two more of its rank) or a run (ace low, three in a
    row of its suit through it) with ``hand``: counted out, not from the meld table."""
    rank, suit = card % 13, card // 13
    if sum(c % 13 == rank for c in hand) >= 2:
        return True
    have = {c % 13 for c in hand if c // 13 == suit} | {rank}
    low, high = rank, rank
    while low - 1 in have:
        low -= 1
    while high + 1 in have:
        high += 1
    return high - low >= 2


def test_simple_gin_plays_gin_only():
    with pytest.raises(AgentSpecError, match="no strategy for variant 'mountain'"):
        make_agent("simple_gin", variant="mountain")
