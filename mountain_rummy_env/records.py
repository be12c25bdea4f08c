"""Game records (JSON) that replay to the identical result, and readable hand logs.

A record holds the variant and its options, the seed, the starting position (the first
deal's deck order and dealer; for a game started part-way, the totals, the hand number and
any scripted decks of the following hands: see ``Game.reset``), every action in canonical
text and the result. Later hands of a multi-hand game are dealt from the scripted decks, then
by the game's own seeded generator, so the seed and the starting position fix every deal;
each hand's deck order is stored too, for readers. Format 2 added the position fields; a
format-1 record (without them) still replays. :func:`replay` re-plays the actions and
raises :class:`RecordError` if anything -- a field, an action, the result -- does not fit.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from pathlib import Path

from .cards import CardError
from .config import ConfigError
from .core.state import EVENT_NONE
from .game import Game, IllegalActionError
from .variant import ActionError, Variant

FORMAT = "mountain-rummy-record/2"
READABLE_FORMATS = ("mountain-rummy-record/1", FORMAT)


class RecordError(ValueError):
    """A game record that is malformed, or does not replay to what it claims."""


def _variant_factories():
    from .variants.gin import gin_variant
    from .variants.mountain import mountain_variant

    return {"mountain": mountain_variant, "gin": gin_variant}


def variant_names() -> tuple[str, ...]:
    """Names :func:`make_variant` accepts (for CLI choices)."""
    return tuple(_variant_factories())


def make_variant(name: str, config: dict) -> Variant:
    factories = _variant_factories()
    if name not in factories:
        raise RecordError(f"unknown variant {name!r}; known: {', '.join(sorted(factories))}")
    return factories[name](**config)


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
    return {"scores": [int(v) for v in s["scores"]], "game_winner": int(s["game_winner"]),
            "last_hand": game.summary(0).as_dict()}


class Recorder:
    """Plays one game and records it: ``rec = Recorder(variant, seed); rec.play(a); rec.record``."""

    def __init__(self, variant: Variant, seed: int, *, deck=None, dealer=None, scores=None,
                 hand_no=0, next_decks=(), players=()):
        self.game = Game(variant, 1)
        self.game.reset(seed=seed, deck=deck, dealer=dealer, scores=scores, hand_no=hand_no,
                        next_decks=next_decks)
        s = self.game.states[0]
        self.record = GameRecord(
            variant=variant.name, config=asdict(variant.config), seed=int(seed),
            dealer=int(s["dealer"]), deck=deck_text(variant, s["deck"]),
            hand_decks=[deck_text(variant, s["deck"])], players=list(players),
            start_scores=[int(v) for v in s["scores"]], start_hand_no=int(s["hand_no"]),
            next_decks=[deck_text(variant, self.game.deck_order(d)) for d in next_decks])
        self.log: list[str] = [deal_line(self.game)]

    def play(self, action) -> int:
        """Play ``action`` (id or text); returns the step's event code."""
        game = self.game
        variant = game.variant
        if isinstance(action, str):
            action = variant.parse_action(action)
        before = game.states[0].copy()
        player = game.current_player(0)
        event = game.step_one(0, action)
        self.record.actions.append(variant.action_text(action))
        self.log.append(f"P{player}: {game.describe(0, action, before)}")
        if event != EVENT_NONE:
            self.log.extend(hand_result_lines(game))
            self.record.result = _result(game)
            if not game.done(0):
                self.record.hand_decks.append(deck_text(variant, game.states[0]["deck"]))
                self.log.append(deal_line(game))
        return event


def deck_text(variant: Variant, order) -> str:
    """A deck order in exact card text (``XX#2`` for the second joker), which parses back to
    the same card ids, so a record replays to the identical state."""
    return variant.deck.cards_text(order, exact=True)


def deal_line(game: Game, index: int = 0) -> str:
    s = game.states[index]
    deck = game.variant.deck
    hands = "; ".join(f"P{p}: {deck.cards_text(game.hand(index, p))}"
                      for p in range(game.variant.num_players))
    up = deck.cards_text(game.discard_pile(index))
    return f"Hand {int(s['hand_no']) + 1}, dealer P{int(s['dealer'])}. {hands}. Up-card {up}."


def hand_result_lines(game: Game, index: int = 0) -> list[str]:
    h = game.summary(index)
    lines = [f"Hand ends by {h.end} (P{h.ender})."]
    for p in range(len(h.credit)):
        lines.append(f"  P{p}: credit {h.credit[p]}, deadwood {h.deadwood[p]}, standard "
                     f"{h.standard_points[p]}, bonus {h.bonus[p]}, hand {h.hand_points[p]:+d}, "
                     f"total {h.totals[p]}")
    who = f"P{h.winner}" if h.winner >= 0 else "nobody"
    extra = f" Bonuses: {', '.join(h.bonus_kinds)}." if h.bonus_kinds else ""
    lines.append(f"  Hand winner: {who}.{extra}")
    if h.game_winner >= 0:
        lines.append(f"Game over: P{h.game_winner} wins {h.totals[h.game_winner]} to "
                     f"{min(h.totals)}.")
    return lines


def replay(record: GameRecord) -> tuple[Game, list[str]]:
    """Replay ``record``; returns the final game and its readable log.

    Raises :class:`RecordError` when the options, deck or an action are invalid, or the
    replay ends with a different result than the record states.
    """
    try:
        variant = make_variant(record.variant, dict(record.config))
        rec = Recorder(variant, record.seed, deck=record.deck, dealer=record.dealer,
                       scores=record.start_scores, hand_no=record.start_hand_no,
                       next_decks=record.next_decks)
    except (ConfigError, CardError, ValueError, TypeError) as err:
        raise RecordError(f"invalid game record: {err}") from err
    for i, text in enumerate(record.actions):
        if rec.game.done(0):
            raise RecordError(f"action {i + 1} ({text!r}) comes after the game ended")
        try:
            rec.play(text)
        except (ActionError, IllegalActionError) as err:
            raise RecordError(f"action {i + 1} ({text!r}) does not replay: {err}") from err
    if record.result and rec.record.result != record.result:
        raise RecordError(f"replay ends with {rec.record.result}, record says {record.result}")
    return rec.game, rec.log
