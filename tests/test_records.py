"""Game records: JSON round trip, exact replay across hands, and clear errors for bad records."""

import json

import numpy as np
import pytest

from mountain_rummy_env.records import GameRecord, Recorder, RecordError, replay
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


def test_given_deck_and_dealer_are_kept():
    variant = mountain_variant()
    deck = list(range(54))[::-1]
    rec = Recorder(variant, 5, deck=deck, dealer=1)
    assert rec.record.dealer == 1
    assert rec.record.deck.split()[0] == "XX"
    assert rec.log[0].startswith("Hand 1, dealer P1.")


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
