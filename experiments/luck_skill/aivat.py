"""AIVAT-style chance correction of recorded hands (Burch et al. 2018; docs/luck_skill.md,
"Chance correction").

A hand is replayed from its deal and its actions with full information. At every stock
draw the card drawn is, given everything that happened before, uniform over the cards
still in the stock (the deck was shuffled uniformly and nothing reveals the stock's order
before a draw). The correction of that draw is

    E_c'[v(h·c')] - v(h·c),

c the card drawn, c' every card in the stock, v a value of the position after the draw for
seat 0's margin (:class:`HandValue`, :class:`RolloutValue`). Its mean over the card drawn
is exactly 0 whatever v is, as long as v depends on the position and the card drawn only,
so the corrected result (the hand points plus the sum of the corrections) has the raw
result's expectation; a good v removes the luck of the draws
(:func:`first_draw_corrections` checks the zero mean by enumeration).

There is no deal term: v is the same for both plays of a duplicate deal, and the players
swap seats, so a deal term cancels exactly in a player's duplicate result. Variants: two
seats with a compiled playout policy (Mountain and Gin; German, Crazy and Robber's are
refused).
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
    """v = ``scale`` times the drawer's hand value on the spot: minus the least deadwood of
    its hand after its best discard, for the drawer (the other seat's hand does not change
    with the draw). Deterministic and cheap; ``"hand"`` (the variant's :data:`SCALES`) or
    ``"hand=SCALE"``."""

    # Fixed per variant from rules-vs-greedy deals with seeds 800000-800599 (the least-squares
    # scale, rounded; Mountain's 1.4 did not hold on seeds 900000-900599, 1 did), so a study's
    # deals never choose their own scale (docs/luck_skill.md, "Chance correction").
    SCALES = {"mountain": 1.0, "gin": 0.5}

    def __init__(self, variant, scale: float | None = None):
        self.variant = variant
        self.scale = self.SCALES.get(variant.name, 1.0) if scale is None else scale

    def __call__(self, before, mask, action: int, deal: int, draw: int) -> np.ndarray:
        from agents.search import _deadwood_dropping_each, _hands

        ptr, end = int(before["stock_ptr"]), int(before["stock_len"])
        drawer = int(before["current"])
        held = np.flatnonzero(before["loc"] == LOC_HAND + drawer)
        stock = before["stock"][ptr:end].astype(np.int64)
        cards = np.concatenate([np.repeat(held[None], len(stock), axis=0), stock[:, None]], axis=1)
        bit, natural, bits, jokers = _hands(self.variant, cards, [])
        value = -self.scale * _deadwood_dropping_each(self.variant, bit, natural, bits,
                                                      jokers).min(axis=1)
        return value if drawer == 0 else -value


class RolloutValue:
    """v = seat 0's mean margin when the baseline playout policy (:mod:`agents.fastpolicy`)
    finishes the hand for both seats, over ``rollouts`` random orders of the rest of the
    stock; ``"rollouts=N"``. The rest of the stock is sorted before the orders (seeded from
    the deal and the draw's number, never from the cards) are applied, so v depends on the
    position and the card drawn only."""

    def __init__(self, variant, rollouts: int = 8, seed: int = 0):
        from agents.fastpolicy import rollout_tables

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
        return values.reshape(k, r).mean(axis=1)


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


class ChanceCorrector:
    """Computes the chance correction of hands of ``variant`` (2 seats, a variant with a
    compiled playout policy: Mountain, Gin) with the value function ``value``
    (:func:`make_value`)."""

    def __init__(self, variant, value: str = DEFAULT_VALUE, seed: int = 0):
        from agents.fastpolicy import check_playout_policy

        if variant.num_players != 2:
            raise NotImplementedError(
                f"the chance correction needs two seats; {variant.name!r} has {variant.num_players}")
        check_playout_policy(variant)
        self.variant = variant
        self.value = make_value(variant, value, seed)

    def hand(self, rec: HandRecord) -> float:
        """The sum of the hand's draw corrections to seat 0's margin (seat 1's is minus it)."""
        return float(sum(self.draw_corrections(rec)))

    def draw_corrections(self, rec: HandRecord, deck=None, draws: int | None = None) -> list[float]:
        """One correction per stock draw of the hand, in turn; only the first ``draws`` (the
        replay stops there). ``deck`` replaces the deal's deck order (the actions up to
        there must stay legal)."""
        game = dealt(self.variant, rec, deck)
        out = []
        for step, action in enumerate(rec.actions):
            if game.states[0]["phase"] >= 3:
                raise ReplayError(f"deal {rec.deal}: the hand ended before action {step} "
                                  f"of {len(rec.actions)}")
            before, mask = game.states[0].copy(), game.masks[0].copy()
            try:
                game.step_one(0, action)
            except ValueError as err:
                raise ReplayError(f"deal {rec.deal}, action {step}: {err}") from err
            drawn = int(game.states[0]["stock_ptr"]) - int(before["stock_ptr"])
            if drawn == 1 and game.states[0]["stock_len"] == before["stock_len"]:
                values = self.value(before, mask, action, rec.deal, len(out))
                out.append(float(values.mean() - values[0]))
                if len(out) == draws:
                    return out
            elif drawn != 0 or game.states[0]["stock_len"] != before["stock_len"]:
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
    (added to the seats' results: seat 0's margin gets +c, seat 1's -c), and the seconds
    it took."""
    begun = time.process_time()
    corrector = _corrector(variant, value, seed)
    chance = []
    for rec in hand_records(row):
        c = corrector.hand(rec)
        chance.append([c, -c])
    return {"chance": chance, "value": value, "cpu_seconds": time.process_time() - begun}


_CORRECTORS: dict = {}


def _corrector(variant, value: str, seed: int) -> ChanceCorrector:
    key = (variant.name, id(variant), value, seed)
    if key not in _CORRECTORS:
        _CORRECTORS[key] = ChanceCorrector(variant, value, seed)
    return _CORRECTORS[key]


def supported(variant) -> str:
    """Why ``variant`` cannot be chance-corrected here, or "" when it can."""
    try:
        ChanceCorrector(variant)
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
