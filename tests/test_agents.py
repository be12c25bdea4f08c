"""Agents: the interface and registry, and each baseline on explicit deals."""

from __future__ import annotations

import io

import numpy as np
import pytest

from agents import AgentSpecError, make_agent, parse_spec, registered
from mountain_rummy_env import Game, mountain_variant, player_view
from helpers import agent_move


@pytest.fixture(scope="module")
def variant():
    return mountain_variant()


def deal(variant, *, p0, p1, up, stock_top=(), dealer=1):
    """A game whose deal gives seat 0 and seat 1 these cards (card strings), the up-card
    and the first stock cards; the rest of the stock follows in id order."""
    d = variant.deck
    h0, h1 = d.parse_cards(p0), d.parse_cards(p1)
    up_id = d.parse_cards(up)
    top = d.parse_cards(list(stock_top))
    assert len(h0) == len(h1) == 13
    used = set(h0 + h1 + up_id + top)
    assert len(used) == 27 + len(top)
    first, second = (h0, h1) if dealer == 1 else (h1, h0)
    order = [c for pair in zip(first, second) for c in pair] + up_id + top
    order += [c for c in range(d.num_cards) if c not in used]
    g = Game(variant, 1)
    g.reset(seed=0, deck=order, dealer=dealer)
    assert sorted(g.hand(0, 0)) == sorted(h0)
    return g


JUNK0 = "2C 9D KS 4C JD QC 8S 3D TC AD"
P1 = "2S 3H 4S 6D 8D TD AH KH 6S 9C JS QH 7C"


def rules_self_play(variant, seeds):
    """Every decision of Mountain hands of ``rules`` against ``rules`` dealt by ``seeds``:
    yields ``(game, seat, view, move)`` before the move is played."""
    for seed in seeds:
        g = Game(variant, 1)
        g.reset(seed=seed)
        players = [make_agent("rules", seed=seed, variant="mountain") for _ in range(2)]
        while not g.done(0):
            p = g.current_player(0)
            view = player_view(g, 0, p)
            a = players[p].act(view, g.masks[0])
            yield g, p, view, a
            g.step_one(0, a)


def test_spec_parsing_and_errors():
    assert parse_spec("search:budget=200,discards=3") == ("search", {"budget": "200", "discards": "3"})
    assert make_agent("search:budget=7", variant="mountain").budget == 7
    assert make_agent("rules").name == "rules"
    assert set(registered()) >= {"random", "greedy", "rules", "search", "human"}
    with pytest.raises(AgentSpecError, match="unknown agent"):
        make_agent("nosuch")
    with pytest.raises(AgentSpecError, match="no parameter"):
        make_agent("greedy:budget=3")
    with pytest.raises(AgentSpecError, match="must be int"):
        make_agent("search:budget=lots")
    with pytest.raises(AgentSpecError, match="budget must be"):
        make_agent("search:budget=0")
    with pytest.raises(AgentSpecError, match="bad parameter"):
        make_agent("search:budget")


def test_one_name_plays_every_variant_with_its_own_strategy():
    from agents.greedy import GinGreedyAgent, GreedyAgent
    from experiments.play import play_hand
    from mountain_rummy_env import gin_variant

    agent = make_agent("greedy", seed=0)
    assert isinstance(agent.strategy_for("gin"), GinGreedyAgent)
    assert isinstance(agent.strategy_for("mountain"), GreedyAgent)
    assert "gin" in registered()["greedy"] and "mountain" in registered()["search"]
    for v in (gin_variant(), mountain_variant()):
        result = play_hand(Game(v, 1), [agent, make_agent("random", seed=1)], seed=2)
        assert result.steps > 0
    assert isinstance(make_agent("greedy", variant="gin"), GinGreedyAgent)
    assert make_agent("rules:hold=0").name == "rules:hold=0"      # a Mountain option
    with pytest.raises(AgentSpecError, match="do not apply to 'gin'"):
        make_agent("rules:hold=0", variant="gin")
    with pytest.raises(AgentSpecError, match="no strategy .* 'canasta'"):
        make_agent("greedy", variant="canasta")


def test_random_is_uniform_over_the_mask(variant):
    g = Game(variant, 1)
    g.reset(seed=3)
    agent = make_agent("random", seed=0)
    view = player_view(g, 0, g.current_player(0))
    probs = agent.action_probabilities(view, g.masks[0])
    assert np.isclose(probs.sum(), 1) and (probs[g.masks[0] == 0] == 0).all()
    seen = {agent.act(view, g.masks[0]) for _ in range(50)}
    assert seen == set(g.legal_actions(0))


def test_greedy_takes_the_discard_that_completes_a_meld_and_melds_it(variant):
    g = deal(variant, p0="5H 6H 7H " + JUNK0, p1=P1, up="8H", stock_top=["5C"])
    greedy = make_agent("greedy")
    assert agent_move(greedy, g) == "take 8H"
    g.step_one(0, "take 8H")
    assert agent_move(greedy, g) == "meld 5H 6H 7H 8H"


def test_greedy_melds_after_drawing_and_discards_its_worst_deadwood(variant):
    g = deal(variant, p0="5H 6H 7H " + JUNK0, p1=P1, up="5D", stock_top=["5C"])
    greedy = make_agent("greedy")
    assert agent_move(greedy, g) == "draw stock"
    g.step_one(0, "draw stock")
    assert agent_move(greedy, g) == "meld 5H 6H 7H"
    g.step_one(0, "meld 5H 6H 7H")
    # deadwood left: 2C 9D KS 4C JD QC 8S 3D TC AD 5C -> the ace (14) goes
    assert agent_move(greedy, g) == "discard AD"


LOOSE0 = "2C 4C 6C 3D 5D 7S 2H 4H 6H 3S 5S"


def test_rules_avoids_feeding_a_known_meld(variant):
    # dealer 0: P1 plays first, takes the up-card 9C (now known), discards KH
    g = deal(variant, p0=LOOSE0 + " 9S 8D", p1="9D JS QS KH 2D AC 3H TH 7C JD QD 8H AS",
             up="9C", stock_top=["7H"], dealer=0)
    rules, greedy = make_agent("rules"), make_agent("greedy")
    g.step_one(0, "take 9C")
    g.step_one(0, "discard KH")
    g.step_one(0, "draw stock")
    assert agent_move(greedy, g) == "discard 9S"          # highest deadwood
    assert agent_move(rules, g) == "discard 8D"           # 9S would feed the known 9C
    assert agent_move(make_agent("rules:outs=0"), g) == "discard 8D"   # the older discard too


def test_rules_holds_its_melds_until_it_can_end_the_hand(variant):
    """A held meld feeds no layoffs and costs nothing against a knock (the response melds
    it, MR-10): rules keeps 5H 6H 7H in hand while its deadwood is far from a knock."""
    g = deal(variant, p0="5H 6H 7H " + JUNK0, p1=P1, up="5D", stock_top=["5C"])
    g.step_one(0, "draw stock")
    assert agent_move(make_agent("rules"), g).startswith("discard")
    assert agent_move(make_agent("rules:hold=0"), g) == "meld 5H 6H 7H"
    # it places once the opponent is down to hold_opp cards or the stock to hold_stock
    assert agent_move(make_agent("rules:hold_opp=13"), g) == "meld 5H 6H 7H"
    assert agent_move(make_agent("rules:hold_stock=30"), g) == "meld 5H 6H 7H"


def test_rules_places_everything_when_that_lets_it_knock(variant):
    # after drawing 4C: melds 5H-8H, QQQ, 999 and loose 2C 3D KD 4C -> KD face down, 9 left
    g = deal(variant, p0="5H 6H 7H 8H QS QD QC 9S 9D 9H 2C 3D KD", p1=P1, up="5D",
             stock_top=["4C"])
    rules = make_agent("rules")
    g.step_one(0, "draw stock")
    while (text := agent_move(rules, g)).startswith("meld"):
        g.step_one(0, text)
    assert text == "knock KD"


def test_mountain_playouts_hold_melds_as_the_rules_player_does(variant):
    """The search's compiled playouts keep melds in hand until placing them lets the player
    knock (the rules player's policy), and their hold constants are its defaults (numba
    caches them, so they are copies)."""
    import inspect

    from numba import njit

    from agents import fastpolicy as fp
    from agents.rules import RulesAgent

    @njit
    def playout_action(states, spec, mask, tables):
        return fp.mountain_action(states[0], spec, mask, tables)

    def choice(g):
        return variant.action_text(playout_action(g.states.copy(), variant.spec,
                                                  g.masks[0].copy(), fp.rollout_tables(variant)))

    far = deal(variant, p0="5H 6H 7H " + JUNK0, p1=P1, up="5D", stock_top=["5C"])
    near = deal(variant, p0="5H 6H 7H 8H QS QD QC 9S 9D 9H 2C 3D KD", p1=P1, up="5D",
                stock_top=["4C"])
    for g in (far, near):
        g.step_one(0, "draw stock")
    assert choice(far).startswith("discard")
    assert choice(near).startswith("meld")
    d = {k: p.default for k, p in inspect.signature(RulesAgent.__init__).parameters.items()}
    from mountain_rummy_env import solver_features as sf

    assert (sf.MOUNTAIN_HOLD_OPP, sf.MOUNTAIN_HOLD_STOCK) == (d["hold_opp"], d["hold_stock"])


def test_mountain_playouts_see_the_ends_the_rules_player_sees(variant):
    """Wherever the rules player finds that placing its melds and layoffs lets it end the
    hand (a knock with at most 10 deadwood, Base Camp, or High Camp by melding every card,
    MR-7.3), the playouts' end test (``_end_deadwood``) finds it too: a card that lays off on
    the table may stay in a meld in hand instead, and a hand that melds entirely ends."""
    from numba import njit

    from agents.rules import RulesAgent
    from mountain_rummy_env import solver_features as sf
    from mountain_rummy_env.core.state import PHASE_PLAY

    @njit
    def end_deadwood(states, spec, p, tables):
        counts = np.zeros(sf.JOKER_FACE + 1, np.int64)
        sf._hand_of(states[0], spec, p, counts)
        return sf._end_deadwood(states[0], spec, counts, tables, spec.knock_limit)

    tables = sf.solver_tables(variant)
    judge = RulesAgent()
    ends = 0
    for g, p, view, _ in rules_self_play(variant, range(16)):
        if g.states[0]["phase"] == PHASE_PLAY and judge.could_end_after_placing(view):
            ends += 1
            assert end_deadwood(g.states, variant.spec, p, tables) <= variant.spec.knock_limit
    assert ends > 50


def test_mountain_playouts_place_as_the_rules_player_does(variant):
    """The playouts place the melds and layoffs of the hand's best arrangement (solver
    points), as the rules player does, not the longest meld first: over rules-vs-rules
    hands they agree on nearly every choice to hold or place, and on what is placed."""
    from numba import njit

    from agents import fastpolicy as fp
    from agents.common import PLACE, family_table

    @njit
    def playout_action(states, spec, mask, tables):
        return fp.mountain_action(states[0], spec, mask, tables)

    family = family_table(variant)
    same = total = 0
    for g, _, _, a in rules_self_play(variant, range(12)):
        legal = np.flatnonzero(g.masks[0])
        if len(legal) > 1 and any(family[b] in PLACE for b in legal):
            total += 1
            b = playout_action(g.states.copy(), variant.spec, g.masks[0].copy(),
                               fp.rollout_tables(variant))
            placing = family[a] in PLACE
            same += placing == (family[b] in PLACE) and (not placing or a == b)
    assert total > 50 and same / total > 0.9


def test_mountain_playouts_take_deep_discards_as_the_rules_player_does(variant):
    """The playouts weigh every legal take, deep ones with the cards above them, by the
    hand's solver points: 5D under 3S and 4H melds 5C 5D 5H (MR-7.1), as rules takes it."""
    from numba import njit

    from agents import fastpolicy as fp

    @njit
    def playout_action(states, spec, mask, tables):
        return fp.mountain_action(states[0], spec, mask, tables)

    g = deal(variant, p0="5H 5C 7D " + JUNK0, p1=P1, up="5D", stock_top=["3S", "4H"])
    for a in ("draw stock", "discard 3S", "draw stock", "discard 4H"):
        g.step_one(0, a)
    action = playout_action(g.states.copy(), variant.spec, g.masks[0].copy(),
                            fp.rollout_tables(variant))
    assert variant.action_text(action) == agent_move(make_agent("rules"), g) == "take 5D"


def test_mountain_outs_playouts_discard_as_the_rules_player_does(variant):
    """discard="outs": the compiled discard is the rules player's expected points (points
    kept + 2 x the mean gain of one more unseen card - the feeding risk, MR-12), with its
    default weights; over rules-vs-rules hands it picks rules' discard wherever rules'
    history (the opponent's past discards and takes, which the state does not keep) is
    left out, and the playout agent plays it."""
    import inspect

    from numba import njit

    from agents import fastpolicy as fp
    from agents.common import legal_by_family
    from agents.rules import RulesAgent
    from mountain_rummy_env import solver_features as sf

    d = {k: p.default for k, p in inspect.signature(RulesAgent.__init__).parameters.items()}
    assert list(sf.DISCARDS["outs"]) == [1.0, d["outs_weight"], d["feed_weight"]]

    @njit
    def outs_discard(states, spec, p, mask, tables, weights):
        counts = np.zeros(sf.JOKER_FACE + 1, np.int64)
        bits = sf._hand_of(states[0], spec, p, counts)
        return sf._outs_discard(states[0], spec, p, mask, counts, bits, tables, weights[1],
                                weights[2])

    tables = fp.rollout_tables(variant, "outs")
    memoryless = RulesAgent()
    same = total = 0
    for g, p, view, a in rules_self_play(variant, range(24)):
        if variant.action_text(a).startswith("discard"):
            memoryless.reset()
            values = memoryless.discard_values(view, legal_by_family(variant, g.masks[0]))
            b = outs_discard(view.public_state(), variant.spec, p, g.masks[0].copy(),
                             tables, sf.DISCARDS["outs"])
            total += 1
            same += b == max(values, key=values.get)
    assert total > 100 and same == total
    playout = make_agent("playout:discard=outs", variant="mountain")
    g = deal(variant, p0="5H 6H 7H 8H QS QD QC 9S 9D 9H 2C 3D KD", p1=P1, up="5D",
             stock_top=["4C"])
    g.step_one(0, "draw stock")
    assert agent_move(playout, g) == variant.action_text(
        fp.mountain_action(g.states[0], variant.spec, g.masks[0].copy(), tables))


def test_search_takes_the_card_that_completes_a_long_run(variant):
    g = deal(variant, p0="8H 9H JH " + JUNK0, p1=P1, up="TH", stock_top=["5C"])
    # enough playouts to tell the take from a draw (TH stays within reach of a deep take)
    search = make_agent("search:budget=1600", seed=1, variant="mountain")
    assert agent_move(search, g) == "take TH"
    assert search.last_values[g.variant.parse_action("take TH")] > \
        search.last_values[g.variant.parse_action("draw stock")]


def test_search_weighs_holding_against_placing_everything(variant):
    """Mountain search puts the rules player's hold decision to playouts: hold (the rules
    discard) against a plan that places every meld and then plays the rules discard. A
    chosen plan is played out over the turn's next moves."""
    g = deal(variant, p0="5H 6H 7H " + JUNK0, p1=P1, up="5D", stock_top=["5C"])
    g.step_one(0, "draw stock")
    search = make_agent("search:budget=16", seed=1, variant="mountain")
    view = player_view(g, 0, 0)
    plan = search.placing_plan(view, g.masks[0])
    assert [variant.action_text(a) for a in plan] == ["meld 5H 6H 7H", "discard KS"]
    seen = []

    def pick(which):
        def spy(view, mask, cands):
            seen.append(cands)
            return cands[which] if isinstance(cands[which], tuple) else cands[0]
        return spy

    search.search = pick(1)           # candidate 0 is the rules choice (hold), 1 the plan
    assert agent_move(search, g) == "meld 5H 6H 7H"
    assert seen[0] == [(variant.parse_action("discard KS"),), plan]
    g.step_one(0, "meld 5H 6H 7H")
    assert agent_move(search, g) == "discard KS"      # the plan goes on, unsearched
    assert len(seen) == 1
    plain = make_agent("search:search_hold=0", variant="mountain")
    seen.clear()
    plain.search = pick(0)
    g = deal(variant, p0="5H 6H 7H " + JUNK0, p1=P1, up="5D", stock_top=["5C"])
    g.step_one(0, "draw stock")
    assert agent_move(plain, g).startswith("discard")
    assert seen and not any(isinstance(c, tuple) for cands in seen for c in cands)


def test_search_plays_a_plan_in_its_rollouts(variant):
    """A one-move plan rolls out exactly as the move itself (same samples), and a longer
    plan is played move by move before the playout policy takes over."""
    g = deal(variant, p0="5H 6H 7H " + JUNK0, p1=P1, up="5D", stock_top=["5C"])
    g.step_one(0, "draw stock")
    view = player_view(g, 0, 0)
    search = make_agent("search:budget=16", seed=1, variant="mountain")
    a, meld = variant.parse_action("discard KS"), variant.parse_action("meld 5H 6H 7H")
    values = []
    for cand in (a, (a,)):
        search.rng = np.random.default_rng(7)
        values.append(search.rollouts(view, g.masks[0], [cand], 32))
    assert np.array_equal(values[0], values[1])
    search.rng = np.random.default_rng(7)
    both = search.rollouts(view, g.masks[0], [(a,), (meld, a)], 32)
    assert np.array_equal(both[:, 0], values[0][:, 0])
    assert np.isfinite(both).all() and not np.array_equal(both[:, 0], both[:, 1])


def test_gin_search_plays_legal_hands_and_searches_draws_and_discards():
    from experiments.play import play_hand
    from mountain_rummy_env import gin_variant

    v = gin_variant()
    search = make_agent("search:budget=24", seed=3, variant="gin")
    searched = []
    real = search.search

    def spy(view, mask, cands):
        a = real(view, mask, cands)
        assert a in cands and mask[a] and len(set(cands)) == len(cands) >= 2
        searched.append(v.action_family(a))
        return a

    search.search = spy
    for seed in range(3):   # play_hand's step_one raises on an illegal action
        play_hand(Game(v, 1), [search, make_agent("rules", seed=seed, variant="gin")], seed=seed)
    assert {"draw", "discard"} <= set(searched) or {"take", "discard"} <= set(searched)
    assert set(search.last_values) and all(np.isfinite(list(search.last_values.values())))


@pytest.mark.parametrize("hone,meld_free", [(0.0, False), (1.0, False), (0.5, True)])
def test_search_determinisation_is_consistent(variant, hone, meld_free):
    from agents.search import determinise

    g = Game(variant, 1)
    g.reset(seed=11)
    g.step_one(0, g.legal_actions(0)[0])  # draw stock
    me = g.current_player(0)
    view = player_view(g, 0, me)
    seen = set(view.hand) | set(view.discard) | set(view.opponent_known)
    seen |= {c for m in view.melds for c in m["cards"]}
    assert view.hidden_cards().tolist() == sorted(set(range(variant.deck.num_cards)) - seen)
    states = determinise(view, 16, np.random.default_rng(0), hone, meld_free)
    s0 = g.states[0]
    opp = 1 - me
    for s in states:
        assert (s["loc"] == 4 + me).sum() == len(view.hand)
        assert (s["loc"] == 4 + opp).sum() == view.opponent_hand_size
        assert sorted(s["stock"][s["stock_ptr"]: s["stock_len"]]) == \
            sorted(np.flatnonzero(s["loc"] == 0))
        assert (s["loc"][list(view.hand)] == s0["loc"][list(view.hand)]).all()
    # the hidden cards really are re-dealt
    assert len({bytes(s["loc"]) for s in states}) > 1


def _opponent_deadwood(variant, states, opp):
    """(least deadwood, total value) of ``opp``'s hand in each state record."""
    from agents.search import deadwood_batch

    face = variant.spec.card_face
    hands = [[int(face[c]) for c in np.flatnonzero(s["loc"] == 4 + opp)] for s in states]
    bits = [sum(1 << f for f in h if f < 52) for h in hands]
    jokers = [sum(f == 52 for f in h) for h in hands]
    dw = deadwood_batch(variant, np.array(bits, dtype=np.uint64), np.array(jokers))
    total = np.array([sum(int(variant.spec.hand_value[f]) for f in h) for h in hands])
    return dw, total


def test_search_hones_the_opponents_hidden_hand(variant):
    """Honing makes a re-dealt opponent hand look played (less deadwood); ``meld_free``
    leaves none of its hidden cards in a meld (every Mountain baseline melds at once)."""
    from agents.search import determinise

    g = Game(variant, 1)
    g.reset(seed=5)
    for _ in range(2):              # both players draw stock and discard: turn 2
        g.step_one(0, g.legal_actions(0)[0])
        g.step_one(0, next(a for a in g.legal_actions(0) if variant.action_family(a) == "discard"))
    me = g.current_player(0)
    view = player_view(g, 0, me)
    assert view.turn == 2
    rng = np.random.default_rng(1)
    plain, _ = _opponent_deadwood(variant, determinise(view, 200, rng), 1 - me)
    honed, _ = _opponent_deadwood(variant, determinise(view, 200, rng, hone=3.0), 1 - me)
    assert honed.mean() < plain.mean() - 5
    dw, total = _opponent_deadwood(variant, determinise(view, 200, rng, meld_free=True), 1 - me)
    assert (dw == total).mean() > 0.99


def test_search_overrides_only_when_fresh_samples_confirm(variant):
    """The screen's best challenger must beat the heuristic's choice again on fresh samples
    (the duel) before it is played: a lucky screen alone changes nothing."""
    search = make_agent("search:budget=40,z=1", seed=0, variant="mountain")
    screen = np.array([[0.0, 5.0, 1.0]] * 7 + [[0.0, 6.0, 0.0]] * 6)
    duels = {"noise": np.array([[0.0, 1.0], [0.0, -1.0]] * 5),
             "real": np.array([[0.0, 4.0], [0.0, 5.0]] * 5)}
    for kind, expected in (("noise", 10), ("real", 11)):
        calls = iter([screen, duels[kind]])
        search.rollouts = lambda view, mask, cands, n: next(calls)
        assert search.search(None, None, [10, 11, 12]) == expected
    calls = iter([-screen])                  # the heuristic's choice leads the screen: no duel
    search.rollouts = lambda view, mask, cands, n: next(calls)
    assert search.search(None, None, [10, 11, 12]) == 10


@pytest.mark.parametrize("spec,error", [("search:scope=deal", "scope must be one of"),
                                        ("search:hone=-1", "hone must be >= 0")])
def test_search_rejects_bad_parameters(spec, error):
    with pytest.raises(ValueError, match=error):
        make_agent(spec, variant="mountain")


def test_human_reads_moves_explains_errors_and_asks_again(variant):
    g = deal(variant, p0="5H 6H 7H " + JUNK0, p1=P1, up="8H")
    out = io.StringIO()
    human = make_agent("human", stdin=io.StringIO("bogus\nmeld 5H 6H 7H\n99\n-1\ntake 8h\n"),
                       stdout=out)
    assert agent_move(human, g) == "take 8H"
    text = out.getvalue()
    assert "your hand: " in text and "legal moves:" in text
    assert "cannot read 'bogus'" in text
    assert "'meld 5H 6H 7H' is not legal now" in text
    legal = text.split("legal moves: ")[1].splitlines()[0].count("; ") + 1
    for number in ("99", "-1"):
        assert f"no move number {number}: choose 0..{legal - 1}" in text


def test_human_accepts_a_move_number(variant):
    g = deal(variant, p0="5H 6H 7H " + JUNK0, p1=P1, up="8H")
    human = make_agent("human", stdin=io.StringIO("0\n"), stdout=io.StringIO())
    assert agent_move(human, g) == "draw stock"


# MR-7: hand 1222 of the tournament (a cloned policy in seat 0, `rules` in seat 1). Seat 1
# took 3H from deep in the pile with 6C and KH above it, melded four melds and laid off 7D:
# its last card, 6C, was taken this turn and may not be discarded, so the only legal moves
# are regroups that meld it (High Camp). The heuristic players once found no move here.
MR7_DECK = ("TD 5C 7H 7C JC 7D 4D 6H QS 2D 3H KD 7S 2S QC 6D 8C 4H JD 9D QD 4C 9C XX 5D KS 5H "
            "JS 3D TC 2H AS 9H AD 4S 2C 5S 6C TH 9S XX JH 3C KH QH TS 3S 8S KC AC AH 6S 8H 8D")
MR7_MOVES = (
    "draw stock | discard TD | take 5H | meld 4H 5H 6H | discard 7C | take 7C | "
    "meld 7C 7H 7S | discard 9C | draw stock | discard 5C | draw stock | discard 8C | "
    "draw stock | discard 4C | draw stock | discard AS | draw stock | discard 9H | "
    "draw stock | discard AD | draw stock | discard 4S | draw stock | discard 3H | "
    "draw stock | discard 5S | take 5C | meld 4C 4D 4S | meld 5C 5D 5S | discard 2C | "
    "take 2C | discard 3D | take 9C | meld 8C 9C TC JC QC | discard 9H | draw stock | "
    "discard 6C | draw stock | discard TH | draw stock | discard 9S | draw stock | "
    "discard 3D | take 9H | meld 9D 9H 9S | discard 6D | draw stock | discard 3H | "
    "draw stock | discard 6C | draw stock | discard KH | take 3H | meld 2C 2D 2H 2S | "
    "meld 3C 3D 3H | meld TD TH TS | meld KD KH KS | layoff 7D m1"
)


@pytest.mark.parametrize("spec", ["greedy", "rules", "search:budget=8"])
def test_mr7_a_last_card_that_may_not_be_discarded_is_melded_by_a_regroup(variant, spec):
    g = Game(variant, 1)
    g.reset(seed=1222, deck=variant.deck.parse_cards(MR7_DECK), dealer=0)
    for move in MR7_MOVES.split(" | "):
        g.step_one(0, move)
    legal = [variant.action_text(a) for a in np.flatnonzero(g.masks[0])]
    assert legal == ["regroup 6C 7C 8C", "regroup 6C 7C 8C 9C"]
    assert agent_move(make_agent(spec, seed=1), g) in legal


@pytest.mark.parametrize("spec", ["random", "greedy", "rules", "search:budget=8"])
def test_agents_finish_hands_with_legal_moves(variant, spec):
    from experiments.play import play_hand

    g = Game(variant, 1)
    agents = [make_agent(spec, seed=1), make_agent("greedy")]
    for seed in range(3):
        r = play_hand(g, agents, seed=seed)
        assert r.end in ("knock", "base camp", "high camp", "exhausted")


@pytest.mark.parametrize("name,discard", [("mountain", "points"), ("mountain", "outs"),
                                          ("gin", "points"), ("german", "points")])
def test_playout_agent_plays_the_compiled_policy_on_its_own_information(name, discard):
    """``playout`` is the search's compiled playout policy: on the seat's public state it
    picks the move :func:`agents.fastpolicy.act_batch` picks on the true state, legal, over
    whole hands (Mountain: with either discard); Robber's Rummy, which has no such policy,
    is refused by name, and so is a discard the variant's policy does not have."""
    from agents import AgentSpecError
    from agents.fastpolicy import act_batch, rollout_tables
    from mountain_rummy_env import make_variant

    v = make_variant(name)
    agent = make_agent(f"playout:discard={discard}", seed=0, variant=name)
    tables, out, games = rollout_tables(v, discard), np.zeros(1, np.int64), np.zeros(1, np.int64)
    g, moves = Game(v, 1), 0
    for seed in range(4):
        g.reset(seed=seed)
        while not g.done(0):
            a = agent.act(player_view(g, 0, g.current_player(0)), g.masks[0])
            act_batch(g.states, v.spec_ref, g.masks[:1], games, tables, out)
            assert a == out[0] and g.masks[0, a]
            g.step_one(0, a)
            moves += 1
    assert moves > 50
    with pytest.raises(AgentSpecError, match="no playout policy for variant 'robbers'"):
        make_agent("playout", variant="robbers")
    with pytest.raises(AgentSpecError, match="discard='outs' is not a playout discard of "
                                             "variant 'gin'; it has: points"):
        make_agent("playout:discard=outs", variant="gin")
    with pytest.raises(AgentSpecError, match="discard='least' is not a playout discard of "
                                             "variant 'mountain'; it has: points, outs"):
        make_agent("playout:discard=least", variant="mountain")
