"""``human``: a person at a terminal.

Shows the table, the hand and the legal moves as text, reads a move in the canonical form
(``meld 5H 6H 7H``, ``take 7H``, ``discard 3C``, ``knock 4D``, ``base camp``, ``done``), a
number from the list of legal moves, ``?``/``help`` for the list again, ``hint`` (Robber's
Rummy) for the rearrangement solver's best play from here, and explains bad input before
asking again. ``stdin``/``stdout`` are injectable (tests pass ``io.StringIO``).
"""

from __future__ import annotations

import sys

import numpy as np

from mountain_rummy_env.core.state import PHASE_NAMES

from .base import Agent, register


@register("human", help="a person at the terminal: shows the position, reads moves as text")
class HumanAgent(Agent):
    def __init__(self, seed=None, stdin=None, stdout=None):
        super().__init__(seed=seed)
        self.stdin = stdin if stdin is not None else sys.stdin
        self.stdout = stdout if stdout is not None else sys.stdout

    def say(self, text: str = "") -> None:
        print(text, file=self.stdout, flush=True)

    def render(self, view, legal) -> None:
        """The position as the seat sees it: the discard pile, then each other seat in
        playing order from the next one (hand size, the cards known to be in it: taken from
        the discard pile, and the melds it founded), this seat's melds, hand and moves."""
        deck = view.variant.deck
        self.say("")
        self.say(f"--- P{view.player} (you), {PHASE_NAMES[view.phase]} phase, turn "
                 f"{view.turn + 1}; stock {view.stock_size}; scores "
                 + ", ".join(f"P{q} {score}" for q, score in enumerate(view.scores)))
        self.say(f"discard pile (bottom..top): {deck.cards_text(view.discard) or '(empty)'}")
        for q in view.opponents:
            known = f"; known to hold {deck.cards_text(view.known[q])}" if view.known[q] else ""
            self.say(f"P{q}: {view.hand_sizes[q]} card(s){known}")
            self.say_melds(view, q)
        if any(m["founder"] == view.player for m in view.melds):
            self.say("your melds:")
            self.say_melds(view, view.player)
        self.say(f"your hand: {deck.cards_text(view.hand)}")
        if view.taken:
            self.say(f"taken this turn (may not be discarded): {deck.cards_text(view.taken)}")
        if view.obligation >= 0 and view.variant.lifts_table_cards:
            self.say(f"you lifted {deck.card_text(view.obligation)}: put it in a meld "
                     "(put mN) or reset the play")
        elif view.obligation >= 0:
            self.say(f"you must meld or lay off {deck.card_text(view.obligation)} this turn")
        self.say("legal moves: " + "; ".join(f"[{k}] {self.move_text(view, a)}"
                                             for k, a in enumerate(legal)))

    def say_melds(self, view, founder: int) -> None:
        """The table melds ``founder`` started, each with the seat credited for each card."""
        for m in view.melds:
            if m["founder"] == founder:
                owners = "".join(str(o) for o in m["owners"])
                self.say(f"  m{m['slot']}: {' '.join(m['text'])}   owners {owners}")

    @staticmethod
    def move_text(view, action: int) -> str:
        """The action's text, with ``XX=7H`` for a face a joker would fill (one that is
        neither in the hand nor on the table): the face is a declaration, not a card."""
        v = view.variant
        text = v.action_text(action)
        if v.deck.num_jokers == 0 or v.action_family(action) not in ("meld", "regroup", "layoff"):
            return text
        natural = {v.deck.card_text(c) for c in view.hand}
        natural.update(t for m in view.melds for t in m["text"])
        verb, *words = text.split()                 # faces, and a layoff's slot ``m3``
        return " ".join([verb] + [w if w in natural or w.startswith("m") else f"XX={w}"
                                  for w in words])

    def act(self, view, mask) -> int:
        v = view.variant
        legal = [int(a) for a in np.flatnonzero(mask)]
        self.render(view, legal)
        while True:
            self.stdout.write("your move> ")
            self.stdout.flush()
            line = self.stdin.readline()
            if line == "":
                self.say()                      # end the prompt's line
                raise EOFError("input ended while waiting for a move")
            text = line.strip()
            if not text:
                continue
            if text in ("?", "help"):
                self.render(view, legal)
                continue
            if text == "hint":
                self.say(hint(view, mask))
                continue
            if text.lstrip("+-").isdigit():
                k = int(text)
                if 0 <= k < len(legal):
                    return legal[k]
                self.say(f"no move number {k}: choose 0..{len(legal) - 1}")
                continue
            try:
                action = v.parse_action(text)
            except ValueError as err:
                self.say(f"cannot read {text!r}: {err}")
                continue
            if action in legal:
                return action
            self.say(f"{v.action_text(action)!r} is not legal now; '?' lists the legal moves")


def hint(view, mask) -> str:
    """Robber's Rummy: the solver's best play from this position as the seat sees it
    (:func:`mountain_rummy_env.robbers_play.best_play`), after undoing a play in progress."""
    from mountain_rummy_env.game import Game
    from mountain_rummy_env.robbers_play import best_play

    v = view.variant
    if not v.lifts_table_cards:
        return "hint: only Robber's Rummy has one (the table-rearrangement solver)"
    game = Game(v, 1)
    game.states[:] = view.public_state()
    game.masks[0] = mask
    first = []
    if mask[v.layout.reset]:
        game.step_one(0, v.layout.reset)
        first = ["reset"]
    play = best_play(game)
    if play is None:
        return "hint: no play places a card now" + (" (reset first)" if first else "")
    moves = first + [v.action_text(a) for a in play.actions]
    return (f"hint: {'; '.join(moves)} (places {play.cards} card(s) worth {play.points})")
