"""AIVAT-style chance correction of recorded hands (Burch et al. 2018; docs/luck_skill.md,
"Chance correction").

A hand is replayed from its deal and its actions with full information. At every stock
draw the card drawn is, given everything that happened before, uniform over the cards
still in the stock (the deck was shuffled uniformly and nothing reveals the stock's order
before a draw). The correction of that draw is

    E_c'[v(h·c')] - v(h·c),

c the card drawn, c' every card in the stock, v a value of the position after the draw
for the drawing seat's points (:class:`HandValue`; :class:`RolloutValue`: seat 0's margin,
two seats). Its mean over the card drawn is exactly 0 whatever v is, as long as v depends
on the position and the card drawn only, so the corrected result has the raw result's
expectation; a good v removes the luck of the draws (:func:`first_draw_corrections` checks
the zero mean by enumeration).

N seats: a seat's result is its points minus the mean of the other seats'
(:func:`analysis.relative`), linear in the points, so a correction d of the drawer's points
is +d to its result and -d/(N-1) to every other seat's (:func:`seat_corrections`): the
corrected results are the results of the corrected points, sum to 0 over the seats, and
each has mean 0 over the card drawn. A German stock rebuilt from the discard pile (GE-8) is
no chance term of its own: its contents are known, and each later draw is uniform over what
is left of it, so it is corrected as any draw.

There is no deal term: v does not depend on who plays, and ``a`` is rotated through every
seat of a duplicate deal, so a deal term cancels exactly in a player's duplicate result.
Variants: all (``hand``); ``rollouts=N`` two-seat Mountain, Gin and German (a compiled
playout policy; German's is its rules player).
"""

from __future__ import annotations

import hashlib
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from mountain_rummy_env.core import rules
from mountain_rummy_env.core.batch import step_batch
from mountain_rummy_env.core.state import EVENT_NONE, LOC_HAND
from mountain_rummy_env.variants.robbers import OPENING_MINIMUM

DEFAULT_VALUE = "hand"


class ReplayError(ValueError):
    """A record that does not replay (a corrupt or foreign record)."""


@dataclass(frozen=True)
class HandRecord:
    """What a hand needs to be replayed: the deal's seed (the deck order), the dealer, and
    every action in turn."""
    deal: int
    dealer: int
    actions: tuple[int, ...]


def hand_records(row: dict) -> list[HandRecord]:
    """The hands of a duplicate-deal result row (:func:`runner.play_duplicate`)."""
    try:
        deal, dealer = int(row["deal"]), int(row["dealer"])
        return [HandRecord(deal, dealer, tuple(int(a) for a in h["actions"]))
                for h in row["hands"]]
    except (KeyError, TypeError, ValueError) as err:
        raise ReplayError(f"row of deal {row.get('deal')!r} cannot be replayed: bad or missing "
                          f"{err} (rows written before the actions were recorded have none)") from err


def dealt(variant, rec: HandRecord, deck=None):
    """A ``Game`` of one at the start of ``rec``'s hand, as the runner deals it (the deck
    order of ``Game.reset(seed=deal)``, or ``deck``)."""
    from mountain_rummy_env import Game

    game = Game(variant, 1)
    game.reset(seed=rec.deal)
    game.reset(seed=rec.deal, deck=game.states[0]["deck"].copy() if deck is None else deck,
               dealer=rec.dealer)
    return game


class HandValue:
    """v = ``scale`` times the drawer's hand value on the spot, as a value of the drawer's
    points (the other seats' hands do not change with the draw): ``"hand"`` (the variant's
    :data:`SCALES`) or ``"hand=SCALE"``. Deterministic and cheap. Per variant:

    * Mountain, Gin, German, Crazy: minus the least deadwood (in-hand value of the cards the
      best arrangement of the hand leaves unmelded) of the drawer's hand after its best
      discard -- what it would lose if the hand ended after this turn and it could lay
      down every meld it holds (German and Crazy through the two-deck solver, a card of
      Crazy's wild rank as a wild; German's opening minimum is not modelled);
    * Robber's: minus the in-hand value of what the drawer's best play now
      (:func:`mountain_rummy_env.rearrange.best_rearrangement` on the table, as
      :func:`mountain_rummy_env.robbers_play.best_play` weighs it: after opening the most
      cards, before it only a play of 40 points or more from the hand alone) leaves in its
      hand -- what it would lose if another seat went out next (RR-7).

    Cards of one face are interchangeable, so each face in the stock is solved once."""

    # Fixed per variant (and table size, where it has two) from rules-vs-greedy deals with
    # seeds 800000-800599 (Mountain, Gin), 800000-800199 (German, Crazy) or 800000-800099
    # (Robber's): the least-squares scale, rounded to one decimal and not below 0;
    # Mountain's 1.4 did not hold on seeds 900000-900599, 1 did. A study's deals never
    # choose their own scale (docs/luck_skill.md, "Chance correction"). Least squares:
    # German 1.91 at 4 seats, 0.90 at 2; Crazy 0.47; Robber's 0.21 at 2 seats and -0.08 at
    # 4 (its hand value does not follow a seat's result there: scale 0, no correction).
    SCALES = {"mountain": 1.0, "gin": 0.5, ("german", 4): 1.9, ("german", 2): 0.9,
              "crazy": 0.5, ("robbers", 2): 0.2, ("robbers", 4): 0.0}
    FAMILIES = {"mountain": "one_deck", "gin": "one_deck", "german": "two_decks",
                "crazy": "two_decks", "robbers": "robbers"}
    NODE_LIMIT = 20_000      # Robber's solver nodes per card drawn (bounded time, deterministic)

    def __init__(self, variant, scale: float | None = None):
        if variant.name not in self.FAMILIES:
            raise NotImplementedError(f"no hand value for variant {variant.name!r}")
        self.variant = variant
        self.family = self.FAMILIES[variant.name]
        if scale is None:
            scale = self.SCALES.get((variant.name, variant.num_players),
                                    self.SCALES.get(variant.name, 1.0))
        self.scale = scale

    def __call__(self, before, mask, action: int, deal: int, draw: int):
        """``(seat, values)``: values[j] of seat ``seat``'s points with the card at stock
        position ``stock_ptr + j`` drawn (j = 0: the card drawn)."""
        ptr, end = int(before["stock_ptr"]), int(before["stock_len"])
        drawer = int(before["current"])
        held = np.flatnonzero(before["loc"] == LOC_HAND + drawer)
        stock = before["stock"][ptr:end].astype(np.int64)
        if self.scale == 0:                   # no correction (Robber's at 4 seats)
            return drawer, np.zeros(len(stock))
        if self.family == "one_deck":
            return drawer, self._one_deck(held, stock)
        faces = self._faces(before, np.arange(len(before["loc"])))
        uniq, inverse = np.unique(faces[stock], return_inverse=True)
        counts = np.bincount(faces[held], minlength=53).astype(np.int64)
        if self.family == "two_decks":
            per_face = self._two_decks(counts, uniq)
        else:
            per_face = self._robbers(before, drawer, counts, uniq)
        return drawer, -self.scale * per_face[inverse]

    def _faces(self, before, cards):
        """Faces the cards play as this hand: a card of Crazy's wild rank is a wild (52)."""
        f = np.asarray(self.variant.spec.card_face, dtype=np.int64)[cards]
        wild = int(before["wild_rank"]) if "wild_rank" in before.dtype.names else -1
        if wild >= 0:
            f = np.where((f < 52) & (f % 13 == wild), 52, f)
        return f

    def _one_deck(self, held, stock):
        from agents.search import _deadwood_dropping_each, _hands

        cards = np.concatenate([np.repeat(held[None], len(stock), axis=0), stock[:, None]], axis=1)
        bit, natural, bits, jokers = _hands(self.variant, cards, [])
        return -self.scale * _deadwood_dropping_each(self.variant, bit, natural, bits,
                                                     jokers).min(axis=1)

    def _two_decks(self, counts, uniq):
        """Least deadwood after the best discard, per face drawn (face counts ``counts``
        of the hand before the draw)."""
        from mountain_rummy_env.solver import best_deadwood_batch_multiset

        rows = np.repeat(counts[None], len(uniq), axis=0)
        rows[np.arange(len(uniq)), uniq] += 1                  # the hand after each draw
        held = np.flatnonzero(rows.sum(axis=0))                # faces some row holds
        drops = np.repeat(rows[:, None, :], len(held), axis=1)  # (draws, discards, 53)
        drops[:, np.arange(len(held)), held] -= 1
        valid = drops[:, np.arange(len(held)), held] >= 0      # the row holds that face
        flat = np.maximum(drops.reshape(-1, 53), 0)           # invalid rows: masked below
        bit = np.uint64(1) << np.arange(52, dtype=np.uint64)
        once = ((flat[:, :52] >= 1) * bit).sum(axis=1, dtype=np.uint64)
        twice = ((flat[:, :52] >= 2) * bit).sum(axis=1, dtype=np.uint64)
        key = np.stack([once, twice, flat[:, 52].astype(np.uint64)], axis=1)
        uk, back = np.unique(key, axis=0, return_inverse=True)
        v = self.variant
        dw = best_deadwood_batch_multiset(uk[:, 0], uk[:, 1], uk[:, 2].astype(np.int64),
                                          v.table, v.spec.solver_values)
        dw = dw[back.reshape(-1)].reshape(len(uniq), len(held)).astype(np.float64)
        return np.where(valid, dw, np.inf).min(axis=1)

    def _robbers(self, before, drawer, counts, uniq):
        """In-hand value of what the best play leaves, per face drawn."""
        from mountain_rummy_env.rearrange import best_rearrangement
        from mountain_rummy_env.robbers_play import default_weights, slot_faces

        v = self.variant
        values = v.spec.hand_value.astype(np.float64)
        opened = bool(before["placed_before"][drawer])
        weights = default_weights(v, opened)
        on_table = np.zeros(53, np.int64)
        if opened:
            for faces in slot_faces(v, before).values():
                for f, n in faces.items():
                    on_table[f] += n
        out = np.empty(len(uniq))
        for k, f in enumerate(uniq.tolist()):
            hand = counts.copy()
            hand[f] += 1
            left = float(values[:52] @ hand[:52] + values[52] * hand[52])
            r = best_rearrangement(v.table, on_table, hand, weights,
                                   around_the_corner=v.config.around_the_corner,
                                   table_is_legal=True, node_limit=self.NODE_LIMIT)
            if r is not None and r.cards_placed:
                placed = float(values[:52] @ r.used[:52] + values[52] * r.used_jokers)
                if opened or placed >= OPENING_MINIMUM:
                    left -= placed
            out[k] = left
        return out


class RolloutValue:
    """v = seat 0's mean margin when the baseline playout policy (:mod:`agents.fastpolicy`)
    finishes the hand for both seats, over ``rollouts`` random orders of the rest of the
    stock; ``"rollouts=N"``. The rest of the stock is sorted before the orders (seeded from
    the deal and the draw's number, never from the cards) are applied, so v depends on the
    position and the card drawn only."""

    def __init__(self, variant, rollouts: int = 8, seed: int = 0):
        from agents.fastpolicy import check_playout_policy, rollout_tables

        if variant.num_players != 2:
            raise NotImplementedError(f"rollout values need two seats; {variant.name!r} has "
                                      f"{variant.num_players}")
        check_playout_policy(variant)

        self.variant = variant
        self.rollouts = rollouts
        self.seed = seed
        self.tables = rollout_tables(variant)
        self.scratch = np.zeros(rules.SCRATCH_RECORDS, dtype=variant.dtype)

    def __call__(self, before, mask, action: int, deal: int, draw: int) -> np.ndarray:
        from agents.fastpolicy import playout_batch

        spec = self.variant.spec
        ptr, end = int(before["stock_ptr"]), int(before["stock_len"])
        k, r = end - ptr, self.rollouts
        alts = np.empty(k, dtype=before.dtype)
        alts[:] = before
        for j in range(1, k):          # alternative j: the card at stock position ptr + j on top
            alts["stock"][j, [ptr, ptr + j]] = alts["stock"][j, [ptr + j, ptr]]
        masks = np.repeat(mask[None], k, axis=0)
        events = np.zeros(k, dtype=np.int8)
        if step_batch(alts, spec, np.full(k, action, dtype=np.int64), masks, events,
                      self.scratch) >= 0:
            raise ReplayError(f"deal {deal}: draw {draw} is not legal with another card on top")
        states = np.repeat(alts, r)                   # alternative-major: row = j * r + rollout
        masks = np.repeat(masks, r, axis=0)
        finished = np.repeat((events != EVENT_NONE).astype(np.int8), r)
        rest = np.arange(ptr + 1, end)
        stock = np.sort(states["stock"][:, rest], axis=1)
        rng = np.random.default_rng([self.seed, _SALT, deal, draw])
        for i in range(r):
            rows = np.arange(k) * r + i
            stock[rows] = stock[rows][:, rng.permutation(len(rest))]
        states["stock"][:, rest] = stock
        values = np.zeros(k * r, dtype=np.float64)
        playout_batch(states, spec, masks, self.scratch, values, 0, finished, self.tables)
        return 0, values.reshape(k, r).mean(axis=1)     # seat 0's margin: its relative result


_SALT = int.from_bytes(hashlib.sha256(b"aivat").digest()[:4], "little")


def parse_value(text: str) -> tuple[str, float]:
    """The value function named ``text``: ``("hand", scale)`` for ``hand=SCALE`` (``None``
    for ``hand``: the variant's own), ``("rollouts", n)`` for ``rollouts=N``; ``ValueError``
    otherwise."""
    name, eq, arg = text.partition("=")
    try:
        number = float(arg) if eq else None
    except ValueError:
        number = float("nan")
    if name == "hand" and (number is None or number > 0):
        return name, number
    if name == "rollouts" and number is not None and number >= 1 and number.is_integer():
        return name, number
    raise ValueError(f"unknown value function {text!r}: 'hand', 'hand=SCALE' (SCALE > 0) "
                     "or 'rollouts=N' (N >= 1)")


def make_value(variant, text: str, seed: int = 0):
    """The value function named ``text`` (:func:`parse_value`)."""
    name, number = parse_value(text)
    if name == "hand":
        return HandValue(variant, number)
    return RolloutValue(variant, int(number), seed)


def seat_corrections(seat: int, delta: float, seats: int) -> np.ndarray:
    """A draw's correction of every seat's result (a seat's points minus the mean of the
    other seats', :func:`analysis.relative`) when it corrects seat ``seat``'s points by
    ``delta``: ``+delta`` for that seat, ``-delta / (seats - 1)`` for each other one. The
    result is linear in the points, so this is exactly the results of the corrected points;
    the corrections sum to 0 over the seats, as the results do."""
    out = np.full(seats, -delta / (seats - 1))
    out[seat] = delta
    return out


class ChanceCorrector:
    """Computes the chance correction of hands of ``variant`` (any variant with a
    :class:`HandValue`, any number of seats; ``rollouts=N`` two-seat Mountain, Gin and German)
    with the value function ``value`` (:func:`make_value`)."""

    def __init__(self, variant, value: str = DEFAULT_VALUE, seed: int = 0):
        self.variant = variant
        self.seats = variant.num_players
        self.value = make_value(variant, value, seed)

    def hand(self, rec: HandRecord) -> np.ndarray:
        """The sum of the hand's draw corrections of each seat's result (they sum to 0)."""
        out = np.zeros(self.seats)
        for seat, delta in self.draw_corrections(rec, seats=True):
            out += seat_corrections(seat, delta, self.seats)
        return out

    def draw_corrections(self, rec: HandRecord, deck=None, draws: int | None = None,
                         seats: bool = False) -> list:
        """One correction per stock draw of the hand, in turn: of the drawing seat's points
        (``(seat, correction)`` with ``seats``); only the first ``draws`` (the replay stops
        there). ``deck`` replaces the deal's deck order (the actions up to there must stay
        legal). A German stock rebuilt from the discard pile (GE-8) is no term of its own:
        its cards are known, and the draws from it are corrected as any draw."""
        game = dealt(self.variant, rec, deck)
        out = []
        rebuilt = "rebuilt" in game.states[0].dtype.names
        for step, action in enumerate(rec.actions):
            if game.states[0]["phase"] >= 3:
                raise ReplayError(f"deal {rec.deal}: the hand ended before action {step} "
                                  f"of {len(rec.actions)}")
            before, mask = game.states[0].copy(), game.masks[0].copy()
            try:
                game.step_one(0, action)
            except ValueError as err:
                raise ReplayError(f"deal {rec.deal}, action {step}: {err}") from err
            after = game.states[0]
            drawn = int(after["stock_ptr"]) - int(before["stock_ptr"])
            if drawn == 1 and after["stock_len"] == before["stock_len"]:
                seat, values = self.value(before, mask, action, rec.deal, len(out))
                delta = float(values.mean() - values[0])
                out.append((seat, delta) if seats else delta)
                if len(out) == draws:
                    return out
            elif rebuilt and after["rebuilt"] and not before["rebuilt"] \
                    and int(after["stock_ptr"]) == 0:
                pass                   # GE-8: the stock rebuilt; its draws are corrected
            elif drawn != 0 or after["stock_len"] != before["stock_len"]:
                raise NotImplementedError(f"deal {rec.deal}, action {step}: a stock change "
                                          "other than one card drawn is not a supported chance event")
        if game.states[0]["phase"] < 3:
            raise ReplayError(f"deal {rec.deal}: the hand is not over after its "
                              f"{len(rec.actions)} actions")
        return out


def first_draw_corrections(corrector: ChanceCorrector, rec: HandRecord) -> np.ndarray:
    """The first stock draw's correction with each card of the stock drawn in turn (the deck
    of ``rec`` with that card moved to the draw's position): their mean is 0 to rounding.
    The actions before that draw must not depend on the stock (true: no one sees it)."""
    game = dealt(corrector.variant, rec)
    deck = game.states[0]["deck"].copy()
    first = len(deck) - int(game.states[0]["stock_len"])   # the stock is the deck's tail
    out = []
    for j in range(first, len(deck)):
        alt = deck.copy()
        alt[[first, j]] = alt[[j, first]]
        out.append(corrector.draw_corrections(rec, deck=alt, draws=1)[0])
    return np.asarray(out)


# -- result rows ---------------------------------------------------------------------------

def correct_row(row: dict, variant, value: str = DEFAULT_VALUE, seed: int = 0) -> dict:
    """The chance correction of every hand of a duplicate-deal row: ``chance[play][seat]``
    (added to the seats' results, a seat's points minus the mean of the others'; they sum
    to 0 over the seats: two seats +c and -c), and the seconds it took."""
    begun = time.process_time()
    corrector = _corrector(variant, value, seed)
    chance = [corrector.hand(rec).tolist() for rec in hand_records(row)]
    return {"chance": chance, "value": value, "cpu_seconds": time.process_time() - begun}


_CORRECTORS: dict = {}


def _corrector(variant, value: str, seed: int) -> ChanceCorrector:
    key = (variant.name, id(variant), value, seed)
    if key not in _CORRECTORS:
        _CORRECTORS[key] = ChanceCorrector(variant, value, seed)
    return _CORRECTORS[key]


def supported(variant, value: str = DEFAULT_VALUE) -> str:
    """Why ``variant`` cannot be chance-corrected here with ``value``, or "" when it can."""
    try:
        ChanceCorrector(variant, value)
    except NotImplementedError as err:
        return str(err)
    return ""


IDENTITY = ("kind", "variant", "options", "a", "b", "deal", "seed")   # a row's key fields


def _correction_job(a) -> dict:
    variant_name, options, value, seed, row = a
    from .runner import _variant

    variant, _ = _variant(variant_name, options, False)
    return {**{k: row[k] for k in IDENTITY}, **correct_row(row, variant, value, seed)}


def _failed_correction(a, why: str) -> dict:
    return {**{k: a[-1][k] for k in IDENTITY}, "value": a[2], "error": why}


def correct_rows(cfg, variant: str, rows: list[dict], out_dir, *, progress: bool = True) -> list[dict]:
    """The ladder's duplicate-deal rows of ``variant`` chance-corrected with ``cfg.aivat``
    (the value function, :func:`make_value`), in ``cfg.workers`` processes; corrections are stored in
    ``out_dir/aivat.jsonl`` (resumable, one line per deal) and returned attached to the
    rows: each hand of a corrected row gets ``chance`` (per seat, added to the seats'
    results). Other rows are returned as they were."""
    from experiments.tournament import load_results, result_sink

    from .runner import _key, run_jobs

    path = Path(out_dir) / "aivat.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)

    def stored() -> dict:
        return {_key(c): c for c in load_results(path) if "error" not in c
                and c.get("value") == cfg.aivat}

    done = stored()
    todo = [r for r in rows if r["kind"] == "pair" and "error" not in r
            and r["a"] in cfg.ladder and r["b"] in cfg.ladder and _key(r) not in done]
    args = [(cfg.variant_of(variant), cfg.options_for(variant), cfg.aivat, cfg.seed, r)
            for r in todo]
    with result_sink(path, len(args), desc=f"{variant} chance corrections", unit="deal",
                     progress=progress) as sink:
        run_jobs(args, sink, workers=cfg.workers, timeout=cfg.job_timeout,
                 fn=_correction_job, failed=_failed_correction)
    return attach(rows, stored())


def attach(rows: list[dict], corrections: dict) -> list[dict]:
    """Copies of ``rows`` whose hands carry ``chance`` from ``corrections`` (by row key)."""
    from .runner import _key

    out = []
    for r in rows:
        c = corrections.get(_key(r))
        if c is not None and len(c["chance"]) == len(r["hands"]):
            r = {**r, "hands": [{**h, "chance": ch} for h, ch in zip(r["hands"], c["chance"])]}
        out.append(r)
    return out
