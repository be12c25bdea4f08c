"""Game records (JSON) that replay to the identical result, and readable hand logs.

A record holds the variant and its options, the seed, the starting position (the first
deal's deck order and dealer; for a game started part-way, the totals, the hand number and
any scripted decks of the following hands: see ``Game.reset``), every action in canonical
text and the result; ``unfinished`` marks a record saved before the game ended (the player's
input ended or play was interrupted). Later hands of a multi-hand game are dealt from the
scripted decks, then by the game's own seeded generator, so the seed and the starting
position fix every deal; each hand's deck order is stored too, for readers. Format 2 added
the position fields; a format-1 record (without them) still replays. :func:`replay` re-plays the actions and
raises :class:`RecordError` if anything -- a field, an action, the result -- does not fit.

Logs come in two kinds: the full log (every card, what a record replays to) and a seat's log
(``viewer``), which names only the cards that seat may know -- the same knowledge its
observation holds -- until the end-of-hand reveal shows the hands, as at a real table.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np

from . import registry
from .cards import CardError
from .config import ConfigError
from .core.state import EVENT_NONE, LOC_FACEDOWN, PHASE_GAME_OVER
from .game import Game, IllegalActionError
from .registry import variant_names  # noqa: F401  -- read from here before the registry existed
from .variant import ActionError, Variant

FORMAT = "mountain-rummy-record/2"
READABLE_FORMATS = ("mountain-rummy-record/1", FORMAT)
PUBLIC = -1  # a log viewer who holds no seat: sees only what every player sees (hot seat)


class RecordError(ValueError):
    """A game record that is malformed, or does not replay to what it claims."""


def make_variant(name: str, config: dict) -> Variant:
    """Variant ``name`` with the options ``config``: :func:`.registry.make_variant` for a dict."""
    return registry.make_variant(name, **config)


@dataclass
class GameRecord:
    variant: str
    config: dict
    seed: int
    dealer: int
    deck: str
    actions: list[str] = field(default_factory=list)
    hand_decks: list[str] = field(default_factory=list)
    result: dict = field(default_factory=dict)
    players: list[str] = field(default_factory=list)
    start_scores: list[int] | None = None      # totals before the first hand (None: all zero)
    start_hand_no: int = 0                     # hands already played before the first
    next_decks: list[str] = field(default_factory=list)  # scripted decks of the following hands
    unfinished: bool = False
    format: str = FORMAT

    def to_json(self) -> str:
        return json.dumps(asdict(self), indent=1)

    def save(self, path) -> None:
        Path(path).write_text(self.to_json())

    @classmethod
    def from_json(cls, text: str) -> "GameRecord":
        try:
            data = json.loads(text)
        except json.JSONDecodeError as err:
            raise RecordError(f"not a JSON game record: {err}") from err
        if not isinstance(data, dict) or data.get("format") not in READABLE_FORMATS:
            raise RecordError(f"not a game record of format {' or '.join(map(repr, READABLE_FORMATS))}")
        names = set(cls.__dataclass_fields__)
        missing = sorted({"variant", "config", "seed", "dealer", "deck", "actions"} - set(data))
        if missing:
            raise RecordError(f"game record lacks field(s): {', '.join(missing)}")
        unknown = sorted(set(data) - names)
        if unknown:
            raise RecordError(f"game record has unknown field(s): {', '.join(unknown)}")
        if not isinstance(data["actions"], list) or not all(isinstance(a, str) for a in data["actions"]):
            raise RecordError("game record 'actions' must be a list of action texts")
        if not isinstance(data["config"], dict):
            raise RecordError("game record 'config' must be an object of variant options")
        if not isinstance(data.get("unfinished", False), bool):
            raise RecordError("game record 'unfinished' must be true or false")
        data["format"] = FORMAT  # a format-1 record is a format-2 record without a position
        return cls(**data)

    @classmethod
    def load(cls, path) -> "GameRecord":
        try:
            text = Path(path).read_text()
        except OSError as err:
            raise RecordError(f"cannot read game record {path}: {err}") from err
        return cls.from_json(text)


def _result(game: Game) -> dict:
    s = game.states[0]
    return {"scores": [int(v) for v in s["scores"][:game.variant.num_players]],
            "game_winner": int(s["game_winner"]),
            "last_hand": game.summary(0).as_dict()}


class Recorder:
    """Plays one game and records it: ``rec = Recorder(variant, seed); rec.play(a); rec.record``.

    ``rec.log`` is the full log; ``rec.view_log`` the log as ``viewer`` may see it (a seat,
    :data:`PUBLIC`, or ``None``: the full log itself). ``rec.hand_end`` is a game at the
    position where the last hand ended (``None`` before): in a game episode, whose engine
    deals the next hand in the same step, a copy's, for the reveal.
    """

    def __init__(self, variant: Variant, seed: int, *, deck=None, dealer=None, scores=None,
                 hand_no=0, next_decks=(), players=(), viewer: int | None = None):
        self.game = Game(variant, 1)
        self.game.reset(seed=seed, deck=deck, dealer=dealer, scores=scores, hand_no=hand_no,
                        next_decks=next_decks)
        s = self.game.states[0]
        self.record = GameRecord(
            variant=variant.name, config=asdict(variant.config), seed=int(seed),
            dealer=int(s["dealer"]), deck=deck_text(variant, s["deck"]),
            hand_decks=[deck_text(variant, s["deck"])], players=list(players),
            start_scores=[int(v) for v in s["scores"][:variant.num_players]],
            start_hand_no=int(s["hand_no"]),
            next_decks=[deck_text(variant, self.game.deck_order(d)) for d in next_decks])
        self.viewer = viewer
        self.log: list[str] = []
        self.view_log: list[str] = self.log if viewer is None else []
        self._one_hand: Game | None = None
        self.hand_end: Game | None = None
        self._write(lambda who: deal_line(self.game, viewer=who))

    def play(self, action) -> int:
        """Play ``action`` (id or text); returns the step's event code."""
        game = self.game
        variant = game.variant
        if isinstance(action, str):
            action = variant.parse_action(action)
        before = game.states[0].copy()
        mask = game.masks[0].copy()
        player = game.current_player(0)
        event = game.step_one(0, action)
        self.record.actions.append(variant.action_text(action))
        ended = game if event == EVENT_NONE or game.done(0) else self._hand_end(before, mask, action)
        self._write(lambda who: f"P{player}: {ended.describe(0, action, before, who)}")
        if event != EVENT_NONE:
            self.hand_end = ended
            self._write(lambda who: hand_result_lines(ended))
            self.record.result = _result(game)
            if not game.done(0):
                self.record.hand_decks.append(deck_text(variant, game.states[0]["deck"]))
                self._write(lambda who: deal_line(game, viewer=who))
        return event

    def stop(self) -> str:
        """Mark the record unfinished (the game stops before its end) and log where it stopped."""
        self.record.unfinished = True
        line = (f"Hand {int(self.game.states[0]['hand_no']) + 1} is unfinished after "
                f"{len(self.record.actions)} actions.")
        self._write(lambda who: line)
        return line

    def _write(self, lines_for) -> None:
        """Append ``lines_for(None)`` (a line or a list) to the full log and, with a viewer,
        ``lines_for(viewer)`` to the viewer's log."""
        logs = [(self.log, None)] + ([] if self.view_log is self.log else [(self.view_log, self.viewer)])
        for log, who in logs:
            lines = lines_for(who)
            log.extend([lines] if isinstance(lines, str) else lines)

    def _hand_end(self, before, mask, action) -> Game:
        """The position where the hand just ended. In a game episode the engine deals the
        next hand within the same step, so the last action is played again on a copy whose
        variant stops at the end of the hand (for the reveal and the last move's text)."""
        if self._one_hand is None:
            v = self.game.variant
            one_hand = registry.variant_info(v.name).option_defaults()["episode"]   # the default
            self._one_hand = Game(make_variant(v.name, {**asdict(v.config), "episode": one_hand}), 1)
        self._one_hand.states[0] = before
        self._one_hand.masks[0] = mask
        self._one_hand.step_one(0, action)
        return self._one_hand


def deck_text(variant: Variant, order) -> str:
    """A deck order in exact card text (``XX#2`` for the second joker), which parses back to
    the same card ids, so a record replays to the identical state."""
    return variant.deck.cards_text(order, exact=True)


def deal_line(game: Game, index: int = 0, viewer: int | None = None) -> str:
    """The deal: every hand, or for a ``viewer`` its own hand and the others' sizes."""
    s = game.states[index]
    deck = game.variant.deck

    def hand(p):
        cards = game.hand(index, p)
        return deck.cards_text(cards) if viewer is None or viewer == p else f"{len(cards)} cards"

    hands = "; ".join(f"P{p}: {hand(p)}" for p in range(game.variant.num_players))
    up = deck.cards_text(game.discard_pile(index))      # none in Crazy Rummy (CR-1)
    return f"Hand {int(s['hand_no']) + 1}, dealer P{int(s['dealer'])}. {hands}." + \
        (f" Up-card {up}." if up else "")


def hand_result_lines(game: Game, index: int = 0) -> list[str]:
    """How the hand ended, the hands and face-down cards it ended with (shown to all), the
    scores and who the hand went to; ``game`` holds the position where the hand ended."""
    h = game.summary(index)
    deck = game.variant.deck
    held = "; ".join(f"P{p} {deck.cards_text(game.hand(index, p)) or '(none)'}"
                     for p in range(len(h.credit)))
    facedown = np.flatnonzero(game.states[index]["loc"] == LOC_FACEDOWN)
    lines = [f"Hand ends by {h.end}" + (f" (P{h.ender})." if h.ender >= 0 else "."),
             f"  Hands: {held}." + (f" Face down: {deck.cards_text(facedown)}." if len(facedown) else "")]
    for p in range(len(h.credit)):
        lines.append(f"  P{p}: credit {h.credit[p]}, deadwood {h.deadwood[p]}, standard "
                     f"{h.standard_points[p]}, bonus {h.bonus[p]}, hand {h.hand_points[p]:+d}, "
                     f"total {h.totals[p]}")
    extra = f" Bonuses: {', '.join(h.bonus_kinds)}." if h.bonus_kinds else ""
    lines.append(f"  {h.outcome()}.{extra}")
    if game.states[index]["phase"] == PHASE_GAME_OVER:
        lines.append(game_over_line(h))
    return lines


def game_over_line(h) -> str:
    """The end of the game: the winner's total against the others' (seat order), or the
    seats that share the highest total (GE-9: no single winner)."""
    totals = h.totals
    if h.game_winner >= 0:
        others = ", ".join(str(t) for p, t in enumerate(totals) if p != h.game_winner)
        return f"Game over: P{h.game_winner} wins {totals[h.game_winner]} to {others}."
    leaders = " and ".join(f"P{p}" for p, t in enumerate(totals) if t == max(totals))
    return f"Game over: {leaders} share the highest total, {max(totals)}."


def replay(record: GameRecord, watch=None) -> tuple[Game, list[str]]:
    """Replay ``record``; returns the final game and its readable log. ``watch(game,
    action, before, player, event)``, if given, sees the start (``action`` None) and every
    replayed action (``before``: the state record it was played from).

    Raises :class:`RecordError` when the options, deck or an action are invalid, the replay
    ends with a different result than the record states, or the actions stop before the
    game ends in a record not marked ``unfinished`` (a cut-short record). The log of an
    unfinished record ends by saying so.
    """
    try:
        variant = make_variant(record.variant, dict(record.config))
        rec = Recorder(variant, record.seed, deck=record.deck, dealer=record.dealer,
                       scores=record.start_scores, hand_no=record.start_hand_no,
                       next_decks=record.next_decks)
    except (ConfigError, CardError, ValueError, TypeError) as err:
        raise RecordError(f"invalid game record: {err}") from err
    if watch:
        watch(rec.game, None, None, -1, EVENT_NONE)
    for i, text in enumerate(record.actions):
        if rec.game.done(0):
            raise RecordError(f"action {i + 1} ({text!r}) comes after the game ended")
        before, player = rec.game.states[0].copy(), rec.game.current_player(0)
        try:
            action = rec.game.variant.parse_action(text)
            event = rec.play(action)
        except (ActionError, IllegalActionError) as err:
            raise RecordError(f"action {i + 1} ({text!r}) does not replay: {err}") from err
        if watch:
            watch(rec.game, action, before, player, event)
    if not rec.game.done(0):
        stopped = rec.stop()
        if not record.unfinished:
            raise RecordError(f"the record is cut short: {stopped[0].lower()}{stopped[1:-1]} "
                              "and not marked unfinished")
    elif record.unfinished:
        raise RecordError("the record is marked unfinished, yet its actions play the game to its end")
    if record.result and rec.record.result != record.result:
        raise RecordError(f"replay ends with {rec.record.result}, record says {record.result}")
    return rec.game, rec.log
