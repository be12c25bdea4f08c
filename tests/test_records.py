"""Game records: JSON round trip, exact replay across hands, and clear errors for bad records."""

import dataclasses
import json

import numpy as np
import pytest

from mountain_rummy_env.records import GameRecord, Recorder, RecordError, game_over_line, replay
from mountain_rummy_env.variants.german import german_variant
from mountain_rummy_env.variants.mountain import mountain_variant


def play_random(variant, seed, rng_seed=0):
    rec = Recorder(variant, seed)
    rng = np.random.default_rng(rng_seed)
    while not rec.game.done(0):
        rec.play(int(rng.choice(rec.game.legal_actions(0))))
    return rec


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_multi_hand_game_replays_to_identical_result(seed):
    variant = mountain_variant(episode="game", target_score=250)
    rec = play_random(variant, seed)
    loaded = GameRecord.from_json(rec.record.to_json())
    game, log = replay(loaded)
    assert (game.states == rec.game.states).all()
    assert log == rec.log
    assert loaded.result["scores"] == [int(v) for v in game.states[0]["scores"]]
    assert len(loaded.hand_decks) >= 1


def test_joker_copies_keep_their_ids_in_a_replay():
    """Seed 1 shuffles the second joker (id 53) above the first: the record's exact deck text
    (``XX#2``) replays to the identical state, not just the identical log."""
    rec = play_random(mountain_variant(), 1)
    deck = mountain_variant().deck.parse_cards(rec.record.deck)
    assert deck.index(53) < deck.index(52) and "XX#2" in rec.record.deck
    game, log = replay(GameRecord.from_json(rec.record.to_json()))
    assert game.states.tobytes() == rec.game.states.tobytes() and log == rec.log


def test_given_deck_and_dealer_are_kept():
    variant = mountain_variant()
    deck = list(range(54))[::-1]
    rec = Recorder(variant, 5, deck=deck, dealer=1)
    assert rec.record.dealer == 1
    assert rec.record.deck.split()[:2] == ["XX#2", "XX"]
    assert rec.log[0].startswith("Hand 1, dealer P1.")


def test_game_from_a_position_records_it_and_replays():
    """A game started part-way (totals, hand number, dealer, scripted decks of later hands)
    stores that position (format 2) and replays to the identical state."""
    # a hand pays at most 506 (docs/rewards.md), so two hands cannot reach the target: the
    # third hand is dealt whatever random play does, and the record stops there
    variant = mountain_variant(episode="game", target_score=2000)
    first, second = list(range(54)), list(range(52))[::-1] + [52, 53]
    rec = Recorder(variant, 9, deck=first, dealer=0, scores=[350, -20], hand_no=4,
                   next_decks=[second])
    rng = np.random.default_rng(2)
    while len(rec.record.hand_decks) < 3:
        rec.play(int(rng.choice(rec.game.legal_actions(0))))
    rec.stop()
    data = json.loads(rec.record.to_json())
    assert data["format"] == "mountain-rummy-record/2"
    assert data["start_scores"] == [350, -20] and data["start_hand_no"] == 4
    assert data["next_decks"] == [variant.deck.cards_text(second, exact=True)]
    assert rec.log[0].startswith("Hand 5, dealer P0.")
    assert len(rec.record.hand_decks) == 3 and rec.record.hand_decks[1] == data["next_decks"][0]
    game, log = replay(GameRecord.from_json(rec.record.to_json()))
    assert game.states.tobytes() == rec.game.states.tobytes() and log == rec.log


def test_format_1_record_still_replays():
    rec = play_random(mountain_variant(), 4)
    data = json.loads(rec.record.to_json())
    for name in ("start_scores", "start_hand_no", "next_decks"):
        del data[name]
    data["format"] = "mountain-rummy-record/1"
    game, log = replay(GameRecord.from_json(json.dumps(data)))
    assert log == rec.log


def play_greedy(variant, seed):
    """A game of ``variant`` recorded with greedy agents in every seat."""
    from agents import make_agent
    from experiments.play import play_recorded

    rec = Recorder(variant, seed)
    play_recorded(rec, [make_agent("greedy", seed=seat, variant=variant.name)
                        for seat in range(variant.num_players)], out=lambda line: None)
    return rec


def test_ge9_a_german_log_names_who_went_out_not_a_hand_winner():
    """GE-9: a German hand ends when a seat goes out, and every seat scores its own melds
    less its hand: the log names who went out; a hand nobody went out of (GE-8, here
    ``max_turns``) has no winner; the game's end sets the highest total against the others'
    (or names the seats that share it)."""
    rec = play_greedy(german_variant(), 1)
    h = rec.game.summary(0)
    assert h.end == "went out" and f"Hand ends by went out (P{h.ender})." in rec.log
    assert rec.log[-1] == f"  P{h.ender} went out."
    assert not any("Hand winner" in line for line in rec.log)

    rec = play_greedy(german_variant(max_turns=8), 1)
    assert "Hand ends by exhausted." in rec.log and rec.log[-1] == "  Hand winner: nobody."

    rec = play_greedy(german_variant(num_players=3, episode="game"), 2)
    h = rec.game.summary(0)
    assert h.game_winner >= 0 and max(h.totals) == h.totals[h.game_winner]
    others = ", ".join(str(t) for p, t in enumerate(h.totals) if p != h.game_winner)
    assert rec.log[-1] == f"Game over: P{h.game_winner} wins {h.totals[h.game_winner]} to {others}."
    shared = dataclasses.replace(h, totals=(90, 40, 90), game_winner=-1)
    assert game_over_line(shared) == "Game over: P0 and P2 share the highest total, 90."


def test_log_is_readable():
    rec = play_random(mountain_variant(), 11)
    text = "\n".join(rec.log)
    assert "Hand ends by" in text and "Hand winner" in text
    assert any(line.startswith("P0: ") for line in rec.log)


@pytest.mark.parametrize("mutate, message", [
    (lambda d: d.pop("deck"), "lacks field"),
    (lambda d: d.update(format="other"), "format"),
    (lambda d: d.update(variant="canasta"), "unknown variant"),
    (lambda d: d.update(config={"num_jokers": 7}), "num_jokers"),
    (lambda d: d.update(deck="AS AS"), "duplicate card"),
    (lambda d: d["actions"].insert(0, "knock 4D"), "does not replay"),
    (lambda d: d["actions"].insert(0, "fly away"), "cannot parse"),
    (lambda d: d["result"].update(scores=[1, 2]), "record says"),
    (lambda d: d.update(extra=1), "unknown field"),
    (lambda d: d.update(start_scores=[1]), "one total per seat"),
    (lambda d: d.update(next_decks=["AS KS"]), "next_decks"),
])
def test_corrupt_records_raise_clear_errors(mutate, message):
    rec = play_random(mountain_variant(), 3)
    data = json.loads(rec.record.to_json())
    mutate(data)
    with pytest.raises(RecordError, match=message):
        replay(GameRecord.from_json(json.dumps(data)))


def test_unreadable_record_file(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    with pytest.raises(RecordError, match="not a JSON game record"):
        GameRecord.load(bad)
    with pytest.raises(RecordError, match="cannot read"):
        GameRecord.load(tmp_path / "missing.json")


def test_an_unfinished_record_replays_and_says_where_it_stops():
    rec = Recorder(mountain_variant(), 4)
    for _ in range(6):
        rec.play(rec.game.legal_actions(0)[0])
    assert rec.stop() == "Hand 1 is unfinished after 6 actions."
    loaded = GameRecord.from_json(rec.record.to_json())
    assert loaded.unfinished
    game, log = replay(loaded)
    assert log == rec.log and log[-1] == "Hand 1 is unfinished after 6 actions."


@pytest.mark.parametrize("mutate, message", [
    (lambda d: d.update(unfinished="yes"), "must be true or false"),
    (lambda d: d.update(unfinished=True), "marked unfinished, yet its actions play the game"),
    (lambda d: d.update(actions=d["actions"][:3]), "cut short: hand 1 is unfinished after 3"),
])
def test_unfinished_and_cut_short_records(mutate, message):
    data = json.loads(play_random(mountain_variant(), 3).record.to_json())
    mutate(data)
    with pytest.raises(RecordError, match=message):
        replay(GameRecord.from_json(json.dumps(data)))


@pytest.mark.parametrize("seed", [2, 5])
def test_a_game_shows_each_hand_as_it_ended(seed):
    """In a game episode the step that ends a hand deals the next one; the log still shows
    the last move and the hands as they ended: as the same hand played alone shows them."""
    game = play_random(mountain_variant(episode="game", target_score=250), seed)
    end = next(k for k, line in enumerate(game.log) if line.startswith("Hand ends by"))
    alone = Recorder(mountain_variant(), seed)
    for action in game.record.actions[:end - 1]:
        alone.play(action)
    assert alone.game.done(0)
    assert game.log[:end + 2] == alone.log[:end + 2]      # moves, end, hands (and face down)
    assert game.log[end + 1].startswith("  Hands: P0 ")
