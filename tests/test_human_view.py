"""What ``mountain-rummy play`` prints to a human seat names only cards that seat may know.

Whole hands are played through the loop the CLI uses (:func:`experiments.play.play_recorded`)
with human agents whose keyboards are scripted: a greedy or random player types each move as
its text or its number, with bad input now and then. Every text printed -- log lines and the
human's prompts -- is checked at the moment it is printed against the seat's observation
(``envs.observation``: a card is known unless it lies in the ``UNSEEN`` plane), up to the
end-of-hand reveal; with German's two decks a card's name stands for either copy, so a name
needs a known copy. The prompts' line per other seat is checked against that seat's hand
size. With two humans (hot seat) the log is checked against what both seats know and each
prompt against its own seat.
"""

from __future__ import annotations

import re

import numpy as np
import pytest

from agents import make_agent
from experiments.play import play_recorded
from mountain_rummy_env import german_variant, gin_variant, mountain_variant, player_view
from mountain_rummy_env.core.state import LOC_HAND, LOC_TABLE
from mountain_rummy_env.envs.observation import (
    P_OBLIGATION, P_UNSEEN, encode_observations, observation_size,
)
from mountain_rummy_env.records import PUBLIC, Recorder

# a card name: a natural card, a joker (``XX``, ``XX#2``) or a joker's declared face (``XX=7H``)
CARD = re.compile(r"(?<![\w=#])(XX=[A2-9TJQK][CDHS]|XX(?:#\d)?|[A2-9TJQK][CDHS])(?!\w)")


def card_names(text: str) -> list[str]:
    """The card names in ``text``; after bad input, the examples of the move forms that
    follow ``forms:`` are fixed texts, no real card."""
    return CARD.findall(text.split("; forms: ")[0])


SEAT_LINE = re.compile(r"P(\d): (\d+) card\(s\)")   # a prompt's line for another seat
HAND_SIZE = {"mountain": 13, "gin": 10, "german": 13}


def known_cards(game, seats) -> np.ndarray:
    """Per card id: whether every seat in ``seats`` knows it, by its observation: a card out
    of the ``UNSEEN`` plane, or the card the player to move must use next (the ``OBLIGATION``
    plane; GE-6: the joker a swap freed, which every seat saw leave the table)."""
    v = game.variant
    n = v.deck.num_cards
    obs = np.zeros((len(seats), observation_size(v)), np.float32)
    encode_observations(np.repeat(game.states[:1], len(seats)), v.spec,
                        np.array(seats, np.int64), obs)
    seen = obs[:, P_UNSEEN * n:(P_UNSEEN + 1) * n] == 0
    owed = obs[:, P_OBLIGATION * n:(P_OBLIGATION + 1) * n] == 1
    return (seen | owed).all(axis=0)


class Screen:
    """A terminal watched by ``seats``: each text written to it is checked against what those
    seats know at that moment, except the end-of-hand block (the reveal and the scores)."""

    def __init__(self, game, seats):
        self.game, self.seats = game, list(seats)
        self.revealing = False
        self.checked: list[str] = []

    def write(self, text: str) -> int:
        if text.startswith("Hand ends by"):
            self.revealing = True
        elif re.match(r"Hand \d+, dealer", text):
            self.revealing = False
        if not self.revealing and text.strip():
            self.check(text)
            self.checked.append(text)
        return len(text)

    def flush(self) -> None:
        pass

    def print(self, line: str) -> None:
        self.write(line)
        self.write("\n")

    def check(self, text: str) -> None:
        known = known_cards(self.game, self.seats)
        deck = self.game.variant.deck
        jokers = np.arange(deck.num_naturals, deck.num_cards)
        in_play = self.game.states[0]["loc"][jokers] != LOC_TABLE
        bare = 0
        for token in card_names(text):
            if token.startswith("XX="):        # a declared face: needs a joker the seats know
                assert known[jokers].any(), f"{token} in {text!r}: no joker known to {self.seats}"
            elif token.startswith("XX"):
                bare += 1
            else:
                faces = self.game.variant.spec.card_face
                face = faces[deck.parse_cards(token)[0]]
                assert known[faces == face].any(), \
                    f"{token} in {text!r} is hidden from seat(s) {self.seats}"
        # Robber's Rummy also prints table jokers bare: one in an unfinished meld (not yet
        # declared) and the one a ``lift XX m3`` picks up; table cards are public
        on_table = int((~in_play).sum()) if self.game.variant.lifts_table_cards else 0
        assert bare <= int((known[jokers] & in_play).sum()) + on_table, \
            f"{text!r} names {bare} joker(s) off the table; seat(s) {self.seats} know fewer"
        seat = SEAT_LINE.match(text)
        if seat:
            q, size = map(int, seat.groups())
            assert (self.game.states[0]["loc"] == LOC_HAND + q).sum() == size, text


class Keyboard:
    """A human's keyboard: ``brain`` chooses each move, typed as its text or its number in
    the list of legal moves; now and then a line of bad input or ``?`` comes first."""

    BAD = ["-1\n", "999\n", "fly away\n", "?\n", "\n"]

    def __init__(self, game, seat, brain, seed):
        self.game, self.seat, self.brain = game, seat, make_agent(brain, seed=seed)
        self.rng = np.random.default_rng(seed)

    def readline(self) -> str:
        if self.rng.random() < 0.1:
            return self.BAD[self.rng.integers(len(self.BAD))]
        mask = self.game.masks[0]
        action = int(self.brain.act(player_view(self.game, 0, self.seat), mask))
        if self.rng.random() < 0.3:
            return f"{np.flatnonzero(mask).tolist().index(action)}\n"
        return self.game.variant.action_text(action) + "\n"


def play_watched(variant, seed, specs, brains, viewer):
    """Play a game with ``specs`` (``human`` seats typed by ``brains[seat]``), the log written
    for ``viewer`` and watched by the humans; returns (recorder, log screen, {seat: the
    human's screen})."""
    rec = Recorder(variant, seed, players=specs, viewer=viewer)
    humans = [seat for seat, spec in enumerate(specs) if spec == "human"]
    log = Screen(rec.game, humans)
    screens, agents = {}, []
    for seat, spec in enumerate(specs):
        if spec == "human":
            screens[seat] = log if humans == [seat] else Screen(rec.game, [seat])
            agents.append(make_agent("human", stdout=screens[seat],
                                     stdin=Keyboard(rec.game, seat, brains[seat], seed + seat)))
        else:
            agents.append(make_agent(spec, seed=seed + seat))
    play_recorded(rec, agents, out=log.print)
    return rec, log, screens


def other_draws(texts, seat):
    """The lines of the other seats' stock draws."""
    return [t for t in texts if re.match(rf"P[^{seat}]: draw stock", t)]


def seat_lines(texts):
    """Per prompt, the seats it lists in its lines for the other seats, in printed order."""
    prompts, seats = [], []
    for t in texts:
        if t.startswith("--- P"):
            seats = []
        elif SEAT_LINE.match(t):
            seats.append(int(t[1]))
        elif t.startswith("your hand:"):
            prompts.append(seats)
    return prompts


@pytest.mark.parametrize("variant, seed, seat, opponent, brain", [
    (mountain_variant(), 1, 0, "greedy", "greedy"),
    (mountain_variant(), 2, 0, "greedy", "random"),
    (mountain_variant(), 3, 1, "rules", "greedy"),
    (mountain_variant(), 4, 1, "greedy", "greedy"),
    (mountain_variant(episode="game", target_score=250), 5, 0, "greedy", "greedy"),
    (gin_variant(), 1, 0, "greedy", "greedy"),
    (gin_variant(), 2, 1, "rules", "random"),
    (german_variant(), 1, 0, "greedy", "greedy"),
    (german_variant(), 2, 2, "rules", "greedy"),
    (german_variant(num_players=3), 3, 1, "greedy", "random"),
    (german_variant(num_players=6), 4, 5, "rules", "greedy"),
], ids=["mountain-1", "mountain-2", "mountain-3", "mountain-4", "mountain-game", "gin-1", "gin-2",
        "german4-1", "german4-2", "german3", "german6"])
def test_a_human_seat_sees_only_what_it_may_know(variant, seed, seat, opponent, brain):
    seats = variant.num_players
    specs = [opponent] * seats
    specs[seat] = "human"
    rec, log, _ = play_watched(variant, seed, specs, {seat: brain}, viewer=seat)
    assert rec.game.done(0)
    texts = log.checked
    assert any(t.startswith("legal moves:") for t in texts)          # the prompts were checked
    others = [(seat + k) % seats for k in range(1, seats)]
    for q in others:
        assert f"P{q}: {HAND_SIZE[variant.name]} cards" in texts[0]
    # every prompt lists every other seat, the next one first
    assert seat_lines(texts) and all(listed == others for listed in seat_lines(texts))
    # each stock draw of another seat is shown, without its card; the full log names it
    draws = other_draws(texts, seat)
    assert len(draws) == len(other_draws(rec.log, seat))
    assert all(re.fullmatch(r"P\d: draw stock", t) for t in draws)
    assert all(line.endswith(")") for line in other_draws(rec.log, seat))
    assert any(t.startswith(f"P{seat}: draw stock (") for t in texts)  # its own draws: named
    ends = [k for k, line in enumerate(rec.view_log) if line.startswith("Hand ends by")]
    assert all(rec.view_log[k + 1].startswith("  Hands: ") for k in ends)
    assert len(ends) > 1 if variant.config.episode == "game" else len(ends) == 1


def test_the_german_log_hides_every_card_another_seat_holds_unseen():
    """GE-1 .. GE-9 at 4 seats: the cards the other seats end the hand with, never taken from
    the pile, are not named to the human before the reveal (with two decks a name stands for
    both copies: checked for the faces whose two copies are such cards), though the full
    log names them."""
    variant = german_variant()
    deck, faces = variant.deck, variant.spec.card_face
    for seed in range(10, 30):
        rec, log, _ = play_watched(variant, seed, ["greedy", "human", "rules", "greedy"],
                                   {1: "random"}, viewer=1)
        s = rec.game.states[0]
        unseen = (s["loc"] >= LOC_HAND) & (s["loc"] != LOC_HAND + 1) & (s["public"] == 0)
        hidden = {deck.card_text(c) for c in range(deck.num_naturals)
                  if unseen[faces == faces[c]].all()}
        if hidden:
            break
    else:
        pytest.fail("no hand of seeds 10..29 ended with both copies of a face hidden")
    assert hidden.isdisjoint(name for text in log.checked for name in card_names(text))
    assert hidden <= set(card_names(" ".join(rec.log)))


def test_hot_seat_log_shows_only_public_cards():
    variant = mountain_variant()
    rec, log, screens = play_watched(variant, 6, ["human", "human"],
                                     {0: "greedy", 1: "random"}, viewer=PUBLIC)
    assert rec.game.done(0)
    assert "P0: 13 cards; P1: 13 cards" in log.checked[0]
    assert not any("draw stock (" in t for t in log.checked)
    for seat, screen in screens.items():
        assert any(t.startswith("your hand:") for t in screen.checked), seat


@pytest.mark.parametrize("variant, specs", [
    (mountain_variant(), ["human", "greedy"]),
    (german_variant(), ["greedy", "greedy", "human", "greedy"]),
], ids=["mountain", "german4"])
def test_the_check_catches_a_full_log(variant, specs):
    """The checker is not vacuous: the full log (``--reveal``) printed to a seat fails it."""
    seat = specs.index("human")
    with pytest.raises(AssertionError, match="hidden from seat"):
        play_watched(variant, 1, specs, {seat: "greedy"}, viewer=None)


def test_face_down_cards_stay_hidden_until_the_reveal():
    """Mountain knocks and base camps discard face down: the other seat reads only that."""
    variant = mountain_variant()
    for seed in range(20):
        rec, log, _ = play_watched(variant, seed, ["greedy", "human"], {1: "random"}, viewer=1)
        ender = rec.game.summary(0).ender
        if rec.game.summary(0).end in ("knock", "base camp") and ender == 0:
            break
    else:
        pytest.fail("no hand of seeds 0..19 ended by a face-down discard of P0")
    full = [line for line in rec.log if line.startswith("P0: knock") or line.startswith("P0: base camp")]
    seen = [line for line in rec.view_log if line.startswith("P0: knock") or line.startswith("P0: base camp")]
    assert len(full) == len(seen) == 1 and CARD.search(full[0]) and seen[0].endswith("(face down)")
    reveal = next(line for line in rec.view_log if line.startswith("  Hands: "))
    assert f"Face down: {CARD.findall(full[0])[-1]}." in reveal


def test_joker_faces_in_the_legal_moves_are_declarations():
    """A meld that a joker completes lists the joker's face as ``XX=7H``: the face may be a
    card the seat has never seen, so it is shown as a declaration, and reads back as the move."""
    from agents.human import HumanAgent
    from mountain_rummy_env import Game

    variant = mountain_variant()
    game = Game(variant, 1)
    for seed in range(50):
        game.reset(seed=seed)
        game.step_one(0, "draw stock")
        view = player_view(game, 0, game.current_player(0))
        held = {variant.deck.card_text(c) for c in view.hand}
        for action in game.legal_actions(0):
            verb, *faces = variant.action_text(action).split()
            if verb == "meld" and not set(faces) <= held:
                shown = HumanAgent.move_text(view, action)
                assert shown.split() == [verb] + [f if f in held else f"XX={f}" for f in faces]
                assert variant.parse_action(shown) == action
                return
    pytest.fail("no joker meld among the first moves of seeds 0..49")
