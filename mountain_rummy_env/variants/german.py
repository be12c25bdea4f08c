"""German Rummy / Rommé (docs/german_rummy.md): the configuration, its tables and actions.

Two 52-card decks and four jokers (108 cards), 2-6 seats, 13 cards each; the compiled
kernels are :mod:`mountain_rummy_env.core.german`.

=================  ==================  ==========================================================
family             text                meaning
=================  ==================  ==========================================================
draw               ``draw stock``      top card of the stock (GE-4)
take (card id)     ``take 7H#2``       the top discard (GE-4); before opening only for an opening
                                       that uses it (GE-5)
meld (template)    ``meld 5H 6H 7H``   new meld from hand, jokers for the faces not held (GE-3);
                                       before opening it counts toward the 40 (GE-5)
layoff (slot, f)   ``layoff 9H m3``    face 9H (natural, else a joker) onto meld 3, after opening
swap (slot, f)     ``swap 7H m3``      GE-6: the natural 7H replaces meld 3's joker declared 7H;
                                       the joker must go into a new meld next
discard (face)     ``discard 3C``      ends the turn; the last card goes out (GE-7)
=================  ==================  ==========================================================
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from ..cards import JOKER_FACE, Deck
from ..config import check_choice, check_int, config_from_dict
from ..core import german as kernels
from ..core.spec import build_spec
from ..melds import MeldRules, build_meld_table
from ..variant import Variant

# GE-2: A 11 (1 when low in A-2-3), K Q J 10 count 10, 2-9 face value; a joker in hand 20.
# GE-3: runs ace low or high (no wrap); a meld with two or more jokers needs two naturals.
VALUES = (11, 2, 3, 4, 5, 6, 7, 8, 9, 10, 10, 10, 10)
GERMAN_RULES = MeldRules(ace_low=True, ace_high=True, rank_credit=VALUES,
                         ace_low_credit=1, ace_high_credit=11, min_naturals_with_two_jokers=2)
JOKER_HAND_VALUE = 20
HAND_SIZE = 13            # GE-1
OPENING_MINIMUM = 40      # GE-5
MIN_SEATS, MAX_SEATS = 2, 6
# The rule options of core.german.GermanSpec as German Rummy plays them (their comments there).
GERMAN_OPTIONS = dict(open_min=OPENING_MINIMUM, freed_joker_melds=True, out_by_discard=False,
                      lone_card_draws=False, rebuild_stock=True, extra_card_first=False,
                      faces_once=False, first_wild=-1)


@dataclass(frozen=True)
class GermanConfig:
    """Options of docs/german_rummy.md.

    ``num_players`` seats (2-6); ``episode="hand"`` makes one hand an episode, ``"game"``
    plays the whole game (one hand per seat as dealer); ``max_turns`` ends a hand with no
    winner (as an exhausted stock does) so that any play ends.
    """

    num_players: int = 4
    max_turns: int = 500
    episode: str = "hand"

    def __post_init__(self) -> None:
        check_int("num_players", self.num_players, MIN_SEATS, MAX_SEATS)
        check_int("max_turns", self.max_turns, 1, 100_000)
        check_choice("episode", self.episode, ("hand", "game"))


class GermanActionLayout(NamedTuple):
    """Offsets of German Rummy's action families in its ``Discrete(num_actions)`` space."""

    draw: int
    take: int      # + card id
    meld: int      # + template id
    layoff: int    # + meld slot * 52 + face
    swap: int      # + meld slot * 52 + face
    discard: int   # + face (52 = joker)
    num_actions: int

    @classmethod
    def build(cls, num_cards: int, num_templates: int, max_melds: int) -> "GermanActionLayout":
        sizes = [1, num_cards, num_templates, max_melds * JOKER_FACE, max_melds * JOKER_FACE,
                 JOKER_FACE + 1]
        return cls(*np.concatenate([[0], np.cumsum(sizes)]).tolist())


def face_values(rank_values, joker_value: int) -> np.ndarray:
    """In-hand value of each face, int16[53] (index 52 = joker), for the solver and scoring."""
    values = np.zeros(JOKER_FACE + 1, dtype=np.int16)
    values[:JOKER_FACE] = np.tile(rank_values, 4)
    values[JOKER_FACE] = joker_value
    return values


def german_hand_values() -> np.ndarray:
    """GE-2's in-hand values (:func:`face_values`)."""
    return face_values(VALUES, JOKER_HAND_VALUE)


def german_variant(config: GermanConfig | None = None, **options) -> Variant:
    """The German Rummy variant for ``config`` (or keyword options)."""
    if config is None:
        config = config_from_dict(GermanConfig, options)
    elif options:
        raise TypeError("pass either a GermanConfig or keyword options, not both")
    return german_family_variant(
        "german", config, deck=Deck(2, 4), meld_rules=GERMAN_RULES, hand_size=HAND_SIZE,
        hand_value=german_hand_values(), target_score=1_000_000, rule_options=GERMAN_OPTIONS)


def german_family_variant(name: str, config, *, deck: Deck, meld_rules: MeldRules,
                          hand_size: int, hand_value: np.ndarray, target_score: int,
                          rule_options: dict, wild_ranks: tuple[int, ...] = ()) -> Variant:
    """A variant the German kernels play (:mod:`mountain_rummy_env.core.german`): ``deck``,
    the melds of ``meld_rules``, German's action layout and the ``rule_options`` of
    :class:`~mountain_rummy_env.core.german.GermanSpec`; ``config`` gives ``num_players``,
    ``max_turns`` and ``episode``. Per-seat record arrays are padded to six seats, so one
    compiled kernel (and one policy) serves every table size; ``target_score`` only scales
    the game totals in the observation."""
    table = build_meld_table(meld_rules)
    base, _ = build_spec(
        deck=deck, table=table, num_players=config.num_players, hand_size=hand_size,
        hand_value=hand_value, knock_limit=0, camp_respond=False, bonus_to_winner=False,
        max_turns=config.max_turns, target_score=target_score,
        episode_game=config.episode == "game", bonuses=(0, 0, 0, 0), max_seats=MAX_SEATS)
    layout = GermanActionLayout.build(deck.num_cards, table.num_templates, base.max_melds)
    none = layout.num_actions     # families German lacks start past the last id
    fields = base._asdict()
    fields.update(
        a_draw=layout.draw, a_take=layout.take, a_meld=layout.meld, a_regroup=none,
        a_layoff=layout.layoff, a_discard=layout.discard, a_knock=none, a_base_camp=none,
        a_done=none, num_actions=layout.num_actions,
        a_swap=layout.swap, t_credit=table.credit,
        t_total=table.credit.sum(axis=1).astype(np.int64),
        solver_values=hand_value.astype(np.int64),
        min_naturals=meld_rules.min_naturals_with_two_jokers, **rule_options,
    )
    spec = kernels.GermanSpec(**fields)
    dtype = kernels.german_state_dtype(deck.num_cards, base.max_melds, base.max_seats)
    return Variant(name, config, deck, table, spec, layout, dtype, wild_ranks)
