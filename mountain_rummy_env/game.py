"""``Game``: a batch of games of one variant, driven from Python.

It owns the state records, keeps every game's legal-action mask current (computed once per
step, inside the same compiled call), validates actions before anything changes, and offers
readable views (hands, table, hand summaries, move descriptions) for adapters, agents and logs.
A single game is ``Game(variant, 1)``.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np

from .cards import face_text
from .core import batch, rules
from .core.dispatch import FastCall
from .core.state import (
    BONUS_NAMES, END_NAMES, END_WENT_OUT, EVENT_HAND_OVER, LOC_DISCARD, LOC_FACEDOWN, LOC_HAND, LOC_STOCK, LOC_TABLE,
    MELD_EMPTY, MELD_WORK, PHASE_GAME_OVER, PHASE_HAND_OVER, PHASE_NAMES,
)
from .variant import ActionError, Variant


MELD_KIND_NAMES = {rules.SET: "set", rules.RUN: "run", MELD_WORK: "unfinished"}


class IllegalActionError(ActionError):
    """An action the mask does not allow in the current position; nothing was changed."""


@dataclass(frozen=True)
class HandSummary:
    """How a finished hand scored (MR-12, MR-13), per player."""

    hand_no: int
    end: str
    ender: int
    winner: int              # -1: no winner (exhausted tie)
    credit: tuple[int, ...]
    deadwood: tuple[int, ...]
    standard_points: tuple[int, ...]
    bonus: tuple[int, ...]
    bonus_kinds: tuple[str, ...]
    hand_points: tuple[int, ...]
    totals: tuple[int, ...]
    game_winner: int         # -1 while the game goes on

    def as_dict(self) -> dict:
        return {k: (list(v) if isinstance(v, tuple) else v) for k, v in self.__dict__.items()}

    @property
    def went_out(self) -> bool:
        """Whether a seat ended the hand by going out (GE-9): then that is the hand's result,
        every seat scoring its own melds and hand, and no one is a winner by points."""
        return self.end == END_NAMES[END_WENT_OUT]

    def outcome(self, names=None) -> str:
        """Who the hand went to, in words (``names[p]`` names seat ``p``, default ``P0`` ...):
        ``P1 went out`` (:attr:`went_out`), else ``Hand winner: P0`` (the seat the scoring
        favours, MR-12) or ``Hand winner: nobody``."""
        name = (lambda p: f"P{p}") if names is None else names.__getitem__
        if self.went_out:
            return f"{name(self.ender)} went out"
        return f"Hand winner: {name(self.winner) if self.winner >= 0 else 'nobody'}"


MAX_TOTAL = 10**9          # game totals settable at reset: |total| <= this (int32 field)
MAX_HAND_NO = 30_000       # hands already played, settable at reset (int16 field)


def _int_in(name: str, value, low: int, high: int) -> int:
    """``value`` as an int in ``low..high``; a bool, float or other type is refused."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or not low <= value <= high:
        raise ValueError(f"{name} must be an integer in {low}..{high}; got {value!r}")
    return int(value)


def _seed_array(seed, size: int) -> np.ndarray:
    if seed is None:
        return np.random.SeedSequence().generate_state(size, np.uint64)
    seeds = np.atleast_1d(np.asarray(seed))
    if seeds.dtype.kind not in "iu" or (seeds < 0).any():
        raise ValueError(f"seed must be a non-negative integer or array of them; got {seed!r}")
    if seeds.size == 1:
        # Gymnasium's convention: seed + i (in uint64: int64 + uint64 would round through float64)
        seeds = seeds.astype(np.uint64)[0] + np.arange(size, dtype=np.uint64)
    if seeds.size != size:
        raise ValueError(f"expected {size} seeds, got {seeds.size}")
    return seeds.astype(np.uint64)


class Game:
    """``batch_size`` independent games of ``variant``."""

    def __init__(self, variant: Variant, batch_size: int = 1):
        if batch_size < 1:
            raise ValueError(f"batch_size must be >= 1, got {batch_size}")
        self.variant = variant
        self.spec = variant.spec
        self._spec_ref = variant.spec_ref   # what the compiled calls take (core.spec.spec_of)
        self._episode_game = bool(variant.spec["episode_game"])   # read at every step
        self.states = np.zeros(batch_size, dtype=variant.dtype)
        self.masks = np.zeros((batch_size, variant.num_actions), dtype=np.int8)
        self.events = np.zeros(batch_size, dtype=np.int8)
        self._call = {name: FastCall(getattr(batch, name)) for name in
                      ("new_game_batch", "step_batch", "mask_batch", "next_hand_batch", "deal_batch")}
        self._one_action = np.zeros(1, dtype=np.int64)
        self._scratch = np.zeros(rules.SCRATCH_RECORDS, dtype=variant.dtype)
        self._next_decks: dict[int, list[np.ndarray]] = {}   # game -> scripted decks of its next hands
        self._step_single = None    # (states, bound step_batch) of a batch of one
        # each card's name and face, as lists: the views name every table card per decision
        self._card_names = [variant.deck.card_text(c) for c in range(variant.deck.num_cards)]
        self._card_faces = variant.spec.card_face[:variant.deck.num_cards].tolist()

    def __getstate__(self):  # copies and pickles bind the compiled step again on first use
        return {**self.__dict__, "_step_single": None}

    @property
    def batch_size(self) -> int:
        return len(self.states)

    # ----------------------------------------------------------------------------------
    # lifecycle

    def reset(self, seed=None, *, deck=None, dealer=None, scores=None, hand_no=0, next_decks=(),
              index=None) -> None:
        """Start new games: all, or only those in ``index``.

        ``seed`` seeds each game's generator (an int gives game i the seed ``seed + i``);
        ``deck`` fixes the first hand's order (card ids or a card string, top first) and
        ``dealer`` the first dealer (else MR-6 draws for it). A position part-way through a
        game: ``scores`` sets the totals (one int per seat), ``hand_no`` the number of hands
        already played, and ``next_decks`` the orders of the hands after the first, in turn
        (later hands come from the game's generator). Every argument is checked before any
        game changes: bad input raises ``ValueError`` (or ``TypeError``) and leaves them as
        they were.
        """
        idx = np.arange(self.batch_size) if index is None else np.atleast_1d(index)
        seeds = _seed_array(seed, len(idx))
        last_seat = self.variant.num_players - 1
        dealers = np.full(len(idx), -1 if dealer is None else _int_in("dealer", dealer, 0, last_seat),
                          dtype=np.int64)
        totals = None if scores is None else self._totals(scores)
        hand_no = _int_in("hand_no", hand_no, 0, MAX_HAND_NO)
        if isinstance(next_decks, (str, bytes, np.ndarray)) or not hasattr(next_decks, "__iter__"):
            raise TypeError(f"next_decks must be a list of deck orders (one per hand); got {next_decks!r}")
        scripted = [self.deck_order(d, f"next_decks[{k}]") for k, d in enumerate(next_decks)]
        sub = self.states[idx]
        given = np.zeros(len(idx), dtype=np.bool_)
        if deck is not None:
            sub["deck"] = self.deck_order(deck)
            given[:] = True
        masks = self.masks[idx]
        self._call["new_game_batch"](sub, self._spec_ref, seeds, dealers, given, masks, self._scratch)
        if totals is not None:
            sub["scores"][:, :len(totals)] = totals    # per-seat fields may be padded (German: 6)
        sub["hand_no"] = hand_no
        self.states[idx] = sub
        self.masks[idx] = masks
        if scripted or self._next_decks:
            for i in idx.tolist():
                if scripted:
                    self._next_decks[i] = list(scripted)
                else:
                    self._next_decks.pop(i, None)

    def _totals(self, scores) -> np.ndarray:
        """Validated game totals, one per seat."""
        P = self.variant.num_players
        if isinstance(scores, (str, bytes)) or not hasattr(scores, "__len__") or len(scores) != P:
            raise ValueError(f"scores must hold one total per seat ({P}); got {scores!r}")
        return np.array([_int_in("each total in scores", v, -MAX_TOTAL, MAX_TOTAL) for v in scores], np.int32)

    def deck_order(self, deck, name: str = "deck") -> np.ndarray:
        """Validate a full deck order (ids or a card string, top first); returns int8 ids."""
        deck_spec = self.variant.deck
        n = deck_spec.num_cards
        rule = f"{name} must hold each of the {n} cards exactly once"
        if isinstance(deck, str):
            ids = deck_spec.parse_cards(deck)
        elif hasattr(deck, "__iter__"):
            ids = list(deck)
            unknown = [c for c in ids if isinstance(c, bool) or not isinstance(c, (int, np.integer))
                       or not 0 <= c < n]
            if unknown:
                raise ValueError(f"{rule}: {unknown[0]!r} is not a card id (0..{n - 1})")
            ids = [int(c) for c in ids]
        else:
            raise TypeError(f"{name} must be a card string or a list of card ids; got {deck!r}")
        repeated = sorted({c for c in ids if ids.count(c) > 1})
        if repeated:
            raise ValueError(f"{rule}: {deck_spec.cards_text(repeated)} repeated")
        if len(ids) != n:
            raise ValueError(f"{rule}; got {len(ids)} cards")
        return np.asarray(ids, dtype=np.int8)

    def next_hand(self, index: int) -> None:
        """Deal the next hand of game ``index`` after a finished hand (``episode='hand'``)."""
        if self.states["phase"][index] != PHASE_HAND_OVER:
            raise ValueError("next_hand needs a finished hand that did not end the game")
        sl = slice(index, index + 1)
        self._call["next_hand_batch"](self.states[sl], self._spec_ref, self.masks[sl], self._scratch)
        self._deal_scripted(index)

    def _deal_scripted(self, index: int) -> None:
        """If game ``index`` has scripted decks left, deal its new hand from the next one
        instead of the order the engine shuffled (dealer, totals and hand number stay)."""
        queue = self._next_decks.get(index)
        if not queue:
            return
        self.states["deck"][index] = queue.pop(0)
        if not queue:
            del self._next_decks[index]
        sl = slice(index, index + 1)
        self._call["deal_batch"](self.states[sl], self._spec_ref, self.masks[sl], self._scratch)

    def step(self, actions) -> np.ndarray:
        """Play one action per game; returns per-game events (EVENT_* codes).

        Raises :class:`IllegalActionError` naming the first game with an illegal action,
        before any game is changed.
        """
        actions = np.asarray(actions, dtype=np.int64).reshape(-1)
        if actions.shape != (self.batch_size,):
            raise ValueError(f"expected {self.batch_size} actions, got {actions.shape[0]}")
        bad = (actions < 0) | (actions >= self.variant.num_actions)
        if not bad.any():
            bad = self.masks[np.arange(self.batch_size), actions] == 0
        if bad.any():
            b = int(np.flatnonzero(bad)[0])
            raise IllegalActionError(self.illegal_reason(b, int(actions[b])))
        self._call["step_batch"](self.states, self._spec_ref, actions, self.masks, self.events, self._scratch)
        if self._next_decks and self._episode_game:
            for b in np.flatnonzero(self.events == EVENT_HAND_OVER).tolist():
                self._deal_scripted(b)
        return self.events

    def step_one(self, index: int, action) -> int:
        """Play ``action`` (id or text) in game ``index`` alone; returns its event."""
        if isinstance(action, str):
            action = self.variant.parse_action(action)
        if isinstance(action, bool) or not isinstance(action, (int, np.integer)) \
                or not 0 <= action < self.variant.num_actions or not self.masks[index, action]:
            raise IllegalActionError(self.illegal_reason(index, action))
        self._one_action[0] = action
        if self.batch_size == 1:    # a single game: the compiled call bound to its arrays
            if self._step_single is None or self._step_single[0] is not self.states:
                self._step_single = (self.states, self._call["step_batch"].bind(
                    self.states, self._spec_ref, self._one_action, self.masks, self.events,
                    self._scratch))
            self._step_single[1]()
        else:
            sl = slice(index, index + 1)
            self._call["step_batch"](self.states[sl], self._spec_ref, self._one_action, self.masks[sl],
                                     self.events[sl], self._scratch)
        event = int(self.events[index])
        if event == EVENT_HAND_OVER and self._episode_game:
            self._deal_scripted(index)
        return event

    def illegal_reason(self, index: int, action) -> str:
        s = self.states[index]
        if isinstance(action, bool) or not isinstance(action, (int, np.integer)) or \
                not 0 <= action < self.variant.num_actions:
            return f"action {action!r} is not an id in 0..{self.variant.num_actions - 1}"
        phase = PHASE_NAMES[s["phase"]]
        legal = self.legal_actions(index)
        shown = ", ".join(self.variant.action_text(a) for a in legal[:12])
        more = f" (+{len(legal) - 12} more)" if len(legal) > 12 else ""
        return (f"illegal action {action} ({self.variant.action_text(int(action))!r}) for "
                f"player {s['current']} in the {phase} phase of game {index}; legal: {shown}{more}")

    # ----------------------------------------------------------------------------------
    # views

    def legal_actions(self, index: int = 0) -> list[int]:
        return np.flatnonzero(self.masks[index]).tolist()

    def done(self, index: int = 0) -> bool:
        return int(self.states["phase"][index]) in (PHASE_HAND_OVER, PHASE_GAME_OVER)

    def current_player(self, index: int = 0) -> int:
        return int(self.states["current"][index])

    def hand(self, index: int, player: int) -> list[int]:
        """Card ids in a player's hand, sorted by suit then rank (jokers last)."""
        return self.hand_of(self.states[index], player)

    def hand_of(self, s, player: int) -> list[int]:
        """:meth:`hand` of the state record ``s`` (one game's record, e.g. a view's copy)."""
        cards = np.flatnonzero(s["loc"] == LOC_HAND + player)
        faces = self._card_faces
        return sorted(cards.tolist(), key=lambda c: (faces[c], c))

    def discard_pile(self, index: int = 0) -> list[int]:
        s = self.states[index]
        return s["discard"][: s["discard_len"]].tolist()

    def stock(self, index: int = 0) -> list[int]:
        s = self.states[index]
        return s["stock"][s["stock_ptr"]: s["stock_len"]].tolist()

    def melds(self, index: int = 0) -> list[dict]:
        """Table melds: slot, founder, and cards in order with owner and shown face."""
        return self.melds_of(self.states[index])

    def melds_of(self, s) -> list[dict]:
        """:meth:`melds` of the state record ``s`` (``faces``: the face each card shows, a
        joker's or wild's the one it stands for, -1 not yet declared)."""
        kinds, founders, slots = s["m_kind"], s["m_founder"], s["m_cards"]
        shown, owner = s["shown"], s["owner"]          # each field read once: a view is
        out = []                                       # made for every decision
        for m in np.flatnonzero(kinds != MELD_EMPTY):
            cards = [c for c in slots[m].tolist() if c >= 0]
            faces = shown[cards].tolist()
            out.append({"slot": int(m), "founder": int(founders[m]),
                        "kind": MELD_KIND_NAMES[int(kinds[m])],
                        "cards": cards,
                        "text": [self._shown_text(c, f) for c, f in zip(cards, faces)],
                        "faces": faces,
                        "owners": owner[cards].tolist()})
        return out

    def card_on_table(self, index: int, card: int) -> str:
        """A table card's name; a joker or wild standing for another card adds it (``XX=7H``,
        ``5C=7H``)."""
        return self._shown_text(card, int(self.states[index]["shown"][card]))

    def _shown_text(self, card: int, shown: int) -> str:
        text = self._card_names[card]
        # shown -1: a joker not yet declared (an unfinished meld of a Robber's play)
        return text if shown == self._card_faces[card] or shown == -1 else f"{text}={face_text(shown)}"

    def table_text(self, index: int = 0) -> str:
        """The table in one line: ``m0 5H 6H 7H | m2 9C 9D XX=9S``."""
        return self.table_text_of(self.states[index])

    def table_text_of(self, s) -> str:
        """:meth:`table_text` of the state record ``s``."""
        return " | ".join(f"m{m['slot']} " + " ".join(m["text"]) for m in self.melds_of(s)) or "empty"

    def where(self, index: int = 0) -> np.ndarray:
        """``loc`` codes per card (see :mod:`core.state`)."""
        return self.states[index]["loc"].copy()

    def summary(self, index: int = 0) -> HandSummary:
        """Summary of the last finished hand of game ``index``."""
        return self.summaries([index])[0]

    def summaries(self, indices) -> list[HandSummary]:
        """:meth:`summary` of each game in ``indices``, each record field read once for all
        of them (the vector env summarises every game that ends in a step)."""
        sub = self.states[np.asarray(indices, dtype=np.int64)]
        seats = self.variant.num_players
        hand_no = sub["hand_no"].astype(np.int64)
        if self._episode_game:   # the next hand is already dealt, unless the game is over
            hand_no -= sub["phase"] != PHASE_GAME_OVER
        per_seat = {name: [tuple(row) for row in sub[name][:, :seats].tolist()]
                    for name in ("h_credit", "h_deadwood", "h_sp", "h_bonus", "h_points", "scores")}
        kinds = [tuple(name for bit, name in BONUS_NAMES.items() if bits & bit)
                 for bits in sub["h_bonus_kinds"].tolist()]
        return [HandSummary(hand_no=no, end=END_NAMES[end], ender=ender, winner=winner,
                            credit=per_seat["h_credit"][k], deadwood=per_seat["h_deadwood"][k],
                            standard_points=per_seat["h_sp"][k], bonus=per_seat["h_bonus"][k],
                            bonus_kinds=kinds[k], hand_points=per_seat["h_points"][k],
                            totals=per_seat["scores"][k], game_winner=game_winner)
                for k, (no, end, ender, winner, game_winner) in enumerate(zip(
                    hand_no.tolist(), sub["h_end_kind"].tolist(), sub["h_ender"].tolist(),
                    sub["h_winner"].tolist(), sub["game_winner"].tolist()))]

    def _repr_svg_(self) -> str:
        """Jupyter: game 0 with every card face up (:func:`drawing.draw`)."""
        from .drawing import draw

        return draw(self, 0)

    def clone(self) -> "Game":
        other = Game.__new__(Game)
        other.__dict__.update(self.__dict__)   # the variant, compiled calls, card lists: shared
        other.states = self.states.copy()      # what play changes: copied
        other.masks = self.masks.copy()
        other.events = self.events.copy()
        other._one_action = np.zeros(1, dtype=np.int64)
        other._scratch = np.zeros_like(self._scratch)
        other._next_decks = {b: list(q) for b, q in self._next_decks.items()}
        other._step_single = None
        return other

    def describe(self, index: int, action: int, before: np.void, viewer: int | None = None) -> str:
        """Readable form of ``action`` just played in game ``index`` from state ``before``,
        naming the cards it moved (``meld 5H 6H XX=7H``, ``take 7H (+ 9C QS)``).

        ``viewer`` limits the text to what that seat may know: another player's stock draw
        reads ``draw stock`` and a face-down discard ``(face down)`` without the card
        (``None``: everything; a number no seat has, e.g. -1: only what is public)."""
        v = self.variant
        text = v.action_text(action)
        after = self.states[index]
        family = v.action_family(action)
        sees = viewer is None or viewer == int(before["current"])
        if family == "draw":
            if not sees:
                return text
            drawn = [c for c in range(v.deck.num_cards)
                     if before["loc"][c] == LOC_STOCK and after["loc"][c] != LOC_STOCK]
            return f"draw stock ({v.deck.cards_text(drawn)})"
        if family == "take":
            card = action - v.layout.take
            taken = [c for c in before["discard"][: before["discard_len"]]
                     if after["loc"][c] != LOC_DISCARD and c != card]
            extra = f" (+ {v.deck.cards_text(taken)})" if taken else ""
            return f"take {v.deck.card_text(card, exact=True)}{extra}"
        if family in ("meld", "regroup", "layoff"):
            moved = [c for c in range(v.deck.num_cards)
                     if after["loc"][c] == LOC_TABLE and (before["loc"][c] != LOC_TABLE
                                                         or before["meld_of"][c] != after["meld_of"][c])]
            placed = " ".join(self.card_on_table(index, c) for c in moved
                              if before["loc"][c] != LOC_TABLE)
            detached = [self.card_on_table(index, c) for c in moved if before["loc"][c] == LOC_TABLE]
            word = family.split()[0]
            if family == "layoff":
                slots = {int(after["meld_of"][c]) for c in moved if before["loc"][c] != LOC_TABLE}
                return f"layoff {placed} on " + " ".join(f"m{m}" for m in sorted(slots))
            extra = f" with {' '.join(detached)} from the table" if detached else ""
            return f"{word} {placed}{extra}"
        if family == "lift":
            return f"lift {self.card_on_table(index, int(after['obligation']))} from m{action - v.layout.lift}"
        if family == "put":
            return f"put {self.card_on_table(index, int(before['obligation']))} on m{action - v.layout.put}"
        if family in ("commit", "reset"):
            return f"{text} (table: {self.table_text(index)})"
        if family == "swap":
            freed = [c for c in range(v.deck.num_cards)
                     if before["loc"][c] == LOC_TABLE and after["loc"][c] != LOC_TABLE]
            return f"{text} ({v.deck.cards_text(freed)} to hand)"
        if family in ("knock", "base_camp"):
            gone = [c for c in range(v.deck.num_cards)
                    if after["loc"][c] == LOC_FACEDOWN and before["loc"][c] != LOC_FACEDOWN]
            if not sees and (gone or family == "base_camp"):
                return f"{family.replace('_', ' ')} (face down)"
            return f"{text} ({v.deck.cards_text(gone)} face down)" if family == "base_camp" else text
        return text


class PlayerView:
    """What ``player`` may know in game ``index`` (all a player view holds, docs/observation.md).

    Agents act on this; the envs encode the same information as numpy planes. ``hand`` and
    ``known[q]`` (the cards seat ``q`` is known to hold: taken from the discard pile) are
    card ids, ``hand_sizes[q]`` seat ``q``'s hand size; ``opponent_known`` and
    ``opponent_hand_size`` are those of the next seat (the opponent in a 2-seat game);
    ``discard`` is bottom first; ``melds`` as in
    :meth:`Game.melds`; ``taken`` lists the hand cards that may not be discarded this turn;
    ``step`` is the variant's public step within the turn (Gin: ``core.gin.OFFER`` ...
    ``DEF_MELD``), -1 for a variant without steps.

    The view copies the game's record when it is made and builds each field from that copy
    on first use: it describes the position it was made at even after the game moves on, and
    an agent that reads only the mask (``random``) pays for none of the fields. (Building
    them all took most of a Robber's random-agent deal: thousands of steps, each with the
    table's melds formatted.)
    """

    def __init__(self, game: "Game", index: int, player: int):
        self.game, self.index, self.player = game, index, player
        self._s = game.states[index].copy()

    @cached_property
    def hand(self) -> tuple[int, ...]:
        return tuple(self.game.hand_of(self._s, self.player))

    @cached_property
    def discard(self) -> tuple[int, ...]:
        return tuple(self._s["discard"][: self._s["discard_len"]].tolist())

    @cached_property
    def melds(self) -> tuple[dict, ...]:
        return tuple(self.game.melds_of(self._s))

    @cached_property
    def known(self) -> tuple[tuple[int, ...], ...]:
        loc, public = self._s["loc"], self._s["public"]
        return tuple(() if q == self.player else
                     tuple(np.flatnonzero((loc == LOC_HAND + q) & (public == 1)).tolist())
                     for q in range(self.game.variant.num_players))

    @cached_property
    def hand_sizes(self) -> tuple[int, ...]:
        counts = np.bincount(self._s["loc"], minlength=LOC_HAND + self.game.variant.num_players)
        return tuple(counts[LOC_HAND:LOC_HAND + self.game.variant.num_players].tolist())

    @property
    def opponent_known(self) -> tuple[int, ...]:
        return self.known[(self.player + 1) % len(self.known)]

    @property
    def opponent_hand_size(self) -> int:
        return self.hand_sizes[(self.player + 1) % len(self.hand_sizes)]

    @property
    def stock_size(self) -> int:
        return int(self._s["stock_len"] - self._s["stock_ptr"])

    @cached_property
    def scores(self) -> tuple[int, ...]:
        return tuple(self._s["scores"][: self.game.variant.num_players].tolist())

    @property
    def phase(self) -> int:
        return int(self._s["phase"])

    @property
    def current(self) -> int:
        return int(self._s["current"])

    @property
    def obligation(self) -> int:
        return int(self._s["obligation"]) if self.current == self.player else -1

    @cached_property
    def taken(self) -> tuple[int, ...]:
        if self.current != self.player:
            return ()
        taken = self._s["taken"]
        return tuple(c for c in self.hand if taken[c])

    @property
    def turn(self) -> int:
        return int(self._s["turn"])

    @property
    def dealer(self) -> int:
        return int(self._s["dealer"])

    @property
    def step(self) -> int:
        return int(self._s["g_step"]) if "g_step" in self._s.dtype.names else -1

    def __repr__(self) -> str:
        return (f"PlayerView(player={self.player}, phase={PHASE_NAMES[self.phase]}, "
                f"hand={self.game.variant.deck.cards_text(self.hand)}, "
                f"table={self.game.table_text_of(self._s)})")

    def _repr_svg_(self) -> str:
        """Jupyter: the table as ``player`` sees it (:func:`drawing.draw`)."""
        from .drawing import draw

        return draw(self.game, self.index, self.player)

    @property
    def opponents(self) -> tuple[int, ...]:
        """The other seats in playing order, starting with the next one."""
        n = len(self.hand_sizes)
        return tuple((self.player + k) % n for k in range(1, n))

    @property
    def variant(self) -> Variant:
        return self.game.variant

    def hidden_cards(self) -> np.ndarray:
        """Ids, ascending, of the cards ``player`` cannot see: the opponents' cards not known
        to all, the stock and face-down discards."""
        s = self._s
        loc = s["loc"]
        return np.flatnonzero((loc == LOC_STOCK) | (loc == LOC_FACEDOWN) | (
            (loc >= LOC_HAND) & (loc != LOC_HAND + self.player) & (s["public"] == 0)))

    def public_state(self) -> np.ndarray:
        """A copy of the view's state record (shape ``(1,)``) holding only what ``player``
        may know: the cards it cannot see (the opponent's unknown cards, the stock, face-down
        discards) are dealt back in card-id order, and the deck order and the stock cards
        already drawn are blanked (-1). Agents read positions from this, never from
        ``game.states`` (which holds the hidden cards); search re-deals from it."""
        rec = np.empty(1, self._s.dtype)
        rec[0] = self._s
        s = rec[0]
        loc = s["loc"].copy()
        hidden = self.hidden_cards()
        ids = iter(hidden.tolist())
        seats = range(self.variant.num_players)
        unknown = [int((loc[hidden] == LOC_HAND + q).sum()) for q in seats]   # before dealing
        for q, count in enumerate(unknown):
            if q != self.player:
                for _ in range(count):
                    loc[next(ids)] = LOC_HAND + q
        stock = s["stock"].copy()
        ptr, end = int(s["stock_ptr"]), int(s["stock_len"])
        stock[:ptr] = -1
        for i in range(ptr, end):
            stock[i] = c = next(ids)
            loc[c] = LOC_STOCK
        for c in ids:
            loc[c] = LOC_FACEDOWN
        rec["loc"][0], rec["stock"][0], rec["deck"][0] = loc, stock, -1
        return rec


def player_view(game: Game, index: int, player: int) -> PlayerView:
    """What ``player`` may know of game ``index`` now (:class:`PlayerView`)."""
    return PlayerView(game, index, player)
