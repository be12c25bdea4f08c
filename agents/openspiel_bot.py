"""``openspiel_simple``: OpenSpiel's own C++ SimpleGinRummyBot, playing our Gin.

Plays Gin with ``openspiel_compatible=True`` (whose moves map 1:1 onto OpenSpiel's
``gin_rummy``, :mod:`mountain_rummy_env.openspiel_gin`) through
``pyspiel.make_simple_gin_rummy_bot``. Needs open_spiel: ``pip install -e ".[peers]"``.

The bot (open_spiel/bots/gin_rummy/simple_gin_rummy_bot.cc) reads only its own player's
``ObservationTensor`` (its hand, the current player, the knock card, the up-card, the
discard pile as a set, the stock size, the melds laid) and ``LegalActions``. So at every
decision this agent builds, from the seat's view alone, an OpenSpiel state that gives the
bot exactly these, and asks the bot:

* a synthetic history: the deal, a first up-card taken, then one turn per stock card drawn
  in which the mover draws the next card of the discard pile from the stock and throws it
  at once (so the pile and the stock size come out as in the view, the hands unchanged);
  then the position's own part of the turn (the draw of the discard step, the knock, the
  discard and melds laid so far);
* the cards the seat cannot see are filled in from the unseen ones: for a knocker's hidden
  deadwood, the lowest-valued set that keeps OpenSpiel's knock legal (the real one is such a
  set, so one exists); every move of the history is checked legal;
* the bot keeps a plan after a knock (it lays its melds one action at a time); the agent
  starts a fresh bot at every decision and replays the bot's own earlier decisions of the
  knock from the rebuilt states, so the choice is a function of the view only.

The bot's choice maps back to our action (OpenSpiel's ``Knock`` then a discard is our
``knock c``). Limits, exactly: the bot never lays off (so no layoff of this seat needs
rebuilding); a position this bot could not have reached (a knock or meld of this seat that
the bot would not have made, e.g. another agent's earlier moves) raises an error.
"""

from __future__ import annotations

import itertools

import numpy as np

from mountain_rummy_env.core.gin import (
    DEF_MELD, DISCARD, DRAW, KNOCK_MELD, KNOCK_ONLY, LAYOFF, OFFER, WALL,
)
from mountain_rummy_env.openspiel_gin import (
    OS_DRAW_STOCK, OS_DRAW_UP, OS_KNOCK, OS_MELD, OS_PASS, OUR_TO_OS_CARD, VARIANT,
    os_meld_id, os_seat, our_to_os, pyspiel_module,
)

from .base import Agent, AgentSpecError, register

__all__ = ["OpenSpielSimpleAgent", "rebuild_history", "rebuild_state"]

MAX_FILLER_TRIES = 500


def _value(os_card: int) -> int:
    return min(os_card % 13 + 1, 10)


def _os(cards) -> list[int]:
    return [OUR_TO_OS_CARD[int(c)] for c in cards]


def _first_take(hands: dict, taker: int, up: int) -> list[int]:
    """Deal ``hands`` (OpenSpiel player -> 10 cards after the take) with ``up`` taken from
    them as the first up-card, which ``taker`` takes (player 0 passing first if taker is 1)."""
    dealt = {p: [c for c in hands[p] if c != up] for p in (0, 1)}
    return dealt[0] + dealt[1] + [up] + [OS_PASS] * taker + [OS_DRAW_UP]


def _draw_position(pile: list[int], mover: int, hands: dict) -> list[int]:
    """History to a draw (or wall) position: up-card ``pile[-1]`` on ``pile[:-1]``, the
    stock 31 - (len(pile) - 1), ``mover`` to draw, ``hands`` (10 cards each)."""
    t = len(pile) - 1                               # stock cards drawn so far
    taker = 1 - mover if t % 2 == 0 else mover      # takes the first up-card, throws pile[0]
    up = max(hands[taker])                          # ends in its hand, pile[0] leaves it
    hist = _first_take({**hands, taker: hands[taker] + [pile[0]]}, taker, up) + [pile[0]]
    for c in pile[1:]:
        hist += [OS_DRAW_STOCK, c, c]               # draw it from the stock, throw it
    return hist


def _discard_position(pile: list[int], mover: int, hand11: list[int],
                      other: list[int]) -> list[int]:
    """History to the discard step of ``mover`` holding ``hand11`` over discard pile ``pile``."""
    drawn = max(hand11)
    rest = [c for c in hand11 if c != drawn]
    if not pile:                                    # the first up-card was just taken
        return _first_take({mover: hand11, 1 - mover: other}, mover, drawn)
    return _draw_position(pile, mover, {mover: rest, 1 - mover: other}) + [OS_DRAW_STOCK, drawn]


def rebuild_history(view, mask, fillers=None) -> tuple[list[int], list[int]]:
    """``(history, replay)``: OpenSpiel actions (chance outcomes included) leading to a state
    that gives the seat of ``view`` the same observation and legal actions as the real game,
    and the indices in it of this seat's own earlier decisions since a knock (for the bot's
    plan). ``fillers``: the opponent's hidden cards to use (OpenSpiel ids; default: the
    unseen cards in id order)."""
    me = os_seat(view.player, view.dealer)
    opp = 1 - me
    step = view.step
    hand = _os(view.hand)
    pile = _os(view.discard)
    known = _os(view.opponent_known)
    melds = {0: [], 1: []}                          # OpenSpiel player -> (meld id, cards)
    for m in view.melds:
        if any(o != m["founder"] for o in m["owners"]):
            raise NotImplementedError("a card laid off by the defender: openspiel_simple never "
                                      "lays off, so it is never asked to act after one")
        template = VARIANT.table.find(list(m["cards"]))
        melds[os_seat(m["founder"], view.dealer)].append((os_meld_id(template), _os(m["cards"])))
    table = [c for p in (0, 1) for _, cards in melds[p] for c in cards]
    if fillers is None:
        seen = set(hand) | set(pile) | set(known) | set(table)
        fillers = [c for c in range(52) if c not in seen]
    hidden = view.opponent_hand_size - len(known)
    other = known + list(fillers)[:hidden]          # the opponent's hand in the history
    lay = [OS_MELD + mid for mid, _ in melds[me]]
    if step == OFFER:
        passes = me + 2 * int(mask[VARIANT.layout.draw])      # both passed: draw stock
        return _os_hands(me, hand, other) + pile + [OS_PASS] * passes, []
    if step in (DRAW, WALL):
        return _draw_position(pile, me, {me: hand, opp: other}), []
    if step in (DISCARD, KNOCK_ONLY):
        hist = _discard_position(pile, me, hand, other)
        return hist + [OS_KNOCK] * (step == KNOCK_ONLY), [len(hist)] * (step == KNOCK_ONLY)
    if step == KNOCK_MELD:                          # this seat knocked
        hand11 = hand + [c for _, cards in melds[me] for c in cards] + pile[-1:]
        hist = _discard_position(pile[:-1], me, hand11, other)
        start = len(hist)
        hist += [OS_KNOCK, pile[-1]] + lay
        return hist, list(range(start, len(hist)))
    if step in (LAYOFF, DEF_MELD):                  # the opponent knocked
        knocker11 = other + [c for _, cards in melds[opp] for c in cards] + pile[-1:]
        mine = hand + [c for _, cards in melds[me] for c in cards]
        hist = _discard_position(pile[:-1], opp, knocker11, mine)
        hist += [OS_KNOCK, pile[-1]] + [OS_MELD + mid for mid, _ in melds[opp]] + [OS_PASS]
        start = len(hist)
        gin = view.opponent_hand_size == 0
        if step == DEF_MELD:
            hist += [OS_PASS] * (not gin) + lay
        return hist, list(range(start, len(hist)))
    raise ValueError(f"no decision at Gin step {step}")


def _os_hands(me: int, hand: list[int], other: list[int]) -> list[int]:
    """The deal's hands in OpenSpiel's order (player 0's ten cards, then player 1's)."""
    return hand + other if me == 0 else other + hand


def _knocker_fillers(view, fillers: list[int]):
    """Candidate hidden deadwood of a knocking opponent: sets of its unknown cards' count
    from the unseen ones, within the knock limit, lowest-valued first."""
    n = view.opponent_hand_size - len(view.opponent_known)
    limit = view.variant.config.knock_card - sum(_value(c) for c in _os(view.opponent_known))
    ranked = sorted(fillers, key=lambda c: (_value(c), c))
    for combo in itertools.combinations(ranked, n):
        if sum(_value(c) for c in combo) <= limit:
            yield list(combo)


@register("openspiel_simple", variant="gin",
          help="OpenSpiel's own C++ SimpleGinRummyBot (needs open_spiel: pip install -e "
               "\".[peers]\"), playing through a rebuilt OpenSpiel state of its seat's view; "
               "Gin with openspiel_compatible=true only")
class OpenSpielSimpleAgent(Agent):
    """OpenSpiel's ``SimpleGinRummyBot`` (see the module docstring); Gin only."""

    name = "openspiel_simple"

    def __init__(self, seed=None):
        super().__init__(seed=seed)
        try:
            self._pyspiel = pyspiel_module()
        except ImportError as err:
            raise AgentSpecError(f"openspiel_simple plays through OpenSpiel's own bot: {err}") \
                from None
        self._games: dict = {}

    def _game(self, config):
        key = (config.knock_card, config.gin_bonus, config.undercut_bonus)
        if key not in self._games:
            game = self._pyspiel.load_game("gin_rummy", {
                "knock_card": config.knock_card, "gin_bonus": config.gin_bonus,
                "undercut_bonus": config.undercut_bonus})
            self._games[key] = (game, [self._pyspiel.make_simple_gin_rummy_bot(
                game.get_parameters(), p) for p in (0, 1)])
        return self._games[key]

    def check_options(self, variant) -> None:
        if variant.name != "gin" or not variant.config.openspiel_compatible:
            raise ValueError("openspiel_simple plays Gin with openspiel_compatible=true only "
                             "(tournament: --options '{\"openspiel_compatible\": true}')")

    def rebuild(self, view, mask):
        """``(state, bot)``: the rebuilt OpenSpiel state of ``view`` and this seat's bot, its
        plan since a knock replayed (see the module docstring)."""
        self.check_options(view.variant)
        game, bots = self._game(view.variant.config)
        bot = bots[os_seat(view.player, view.dealer)]
        state, hist, replay = rebuild_state(game, view, mask)
        bot.restart()
        if replay:
            state = game.new_initial_state()
            for k, a in enumerate(hist):
                if k in replay:                     # the bot's own earlier decisions
                    got = bot.step(state)
                    if got != a:
                        raise RuntimeError("openspiel_simple cannot act here: this seat's earlier "
                                           "knock or melds are not the bot's own choices")
                state.apply_action(a)
        return state, bot

    def act(self, view, mask) -> int:
        mask = np.asarray(mask)
        legal = np.flatnonzero(mask)
        if len(legal) == 1:
            return int(legal[0])
        state, bot = self.rebuild(view, mask)
        choice = bot.step(state)
        pending = choice == OS_KNOCK and view.step == DISCARD
        if pending:                                      # OpenSpiel knocks, then discards
            state.apply_action(choice)
            choice = bot.step(state)
        for a in legal:
            fam = VARIANT.action_family(int(a))
            if (not pending or fam == "knock") and our_to_os(int(a), view.step, pending) == choice:
                return int(a)
        raise RuntimeError(f"OpenSpiel's bot chose {state.action_to_string(choice)}, which is "
                           f"no legal move here")


def rebuild_state(game, view, mask):
    """``(state, history, replay)``: the OpenSpiel state of ``game`` rebuilt from ``view`` (see
    :func:`rebuild_history`), a knocking opponent's hidden deadwood chosen so that every move
    of the history is legal."""
    if view.step in (LAYOFF, DEF_MELD):          # a knocker's hidden deadwood must knock
        seen = set(_os(view.hand)) | set(_os(view.discard)) | set(_os(view.opponent_known))
        seen |= {c for m in view.melds for c in _os(m["cards"])}
        unseen = [c for c in range(52) if c not in seen]
        options = itertools.islice(_knocker_fillers(view, unseen), MAX_FILLER_TRIES)
    else:
        options = [None]                            # any hidden cards will do
    for fillers in options:
        hist, replay = rebuild_history(view, mask, fillers)
        state = _play(game, hist)
        if state is not None:
            break
    else:
        raise RuntimeError("no OpenSpiel history leads to this position (for a knock: no "
                           "hidden deadwood of the knocker lets OpenSpiel replay it)")
    return state, hist, replay


def _play(game, hist):
    """The state after ``hist``, or None if a player's move in it is illegal."""
    state = game.new_initial_state()
    for a in hist:
        if not state.is_chance_node() and a not in state.legal_actions():
            return None
        state.apply_action(a)
    return state
