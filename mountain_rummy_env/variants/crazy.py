"""Crazy Rummy (docs/crazy_rummy.md): the configuration, its tables and actions.

One 52-card deck, 3-6 seats, 13 rounds whose wild rank follows the round (A in round 1 ...
K in round 13). The rules are options of German Rummy's kernels
(:mod:`mountain_rummy_env.core.german`, :data:`CRAZY_OPTIONS`), and the actions are German's
(:class:`~mountain_rummy_env.variants.german.GermanActionLayout`):

=================  ==================  ==========================================================
family             text                meaning
=================  ==================  ==========================================================
draw               ``draw stock``      top card of the stock (CR-3)
take (card id)     ``take 7H``         the top discard, unless the seat holds one card (CR-4)
meld (template)    ``meld 5H 6H 7H``   new meld from hand, wilds for the faces not held (CR-2)
layoff (slot, f)   ``layoff 9H m3``    face 9H (natural, else a wild) onto meld 3, after a
                                       seat's first meld (CR-3)
swap (slot, f)     ``swap 7H m3``      CR-3: the natural 7H replaces meld 3's wild declared 7H,
                                       the wild goes to the hand
discard (face)     ``discard 3C``      ends the turn; the last card goes out (CR-4)
=================  ==================  ==========================================================
"""

from __future__ import annotations

from dataclasses import dataclass

from ..cards import NUM_RANKS, Deck
from ..config import check_choice, check_int, config_from_dict
from ..melds import MeldRules
from ..variant import Variant
from .german import face_values, german_family_variant

# CR-5 in-hand values: A 1, 2-10 face value, J Q K 10, a wild 25. Melds earn nothing (D9).
VALUES = (1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 10, 10, 10)
WILD_HAND_VALUE = 25
# CR-2: ace low only (A-2-3, never Q-K-A), sets of 3-4, runs of 3+, wilds in any number.
CRAZY_RULES = MeldRules(ace_low=True, ace_high=False, rank_credit=(0,) * NUM_RANKS,
                        ace_low_credit=0, ace_high_credit=0, min_naturals_with_two_jokers=0)
HAND_SIZE = 7             # CR-1 (and one more to the seat after the dealer)
MIN_SEATS, MAX_SEATS = 3, 6
TOTALS_SCALE = 1000       # game totals are observed / this (the observation's target_score)
# The rule options of core.german.GermanSpec for Crazy Rummy (their comments there), but
# the first wild rank, which is the round's.
CRAZY_OPTIONS = dict(open_min=0, freed_joker_melds=False, out_by_discard=True,
                     lone_card_draws=True, rebuild_stock=False, extra_card_first=True,
                     faces_once=True)


@dataclass(frozen=True)
class CrazyConfig:
    """Options of docs/crazy_rummy.md.

    ``num_players`` seats (3-6); ``episode="round"`` makes one round an episode, ``"game"``
    plays the rounds from ``round`` to 13; ``round`` (1-13) is the round dealt first, whose
    wild rank is the round's (A in round 1 ... K in round 13); ``max_turns`` ends a round
    with nobody out (as an empty stock does) so that any play ends.
    """

    num_players: int = 4
    episode: str = "round"
    round: int = 1
    max_turns: int = 500

    def __post_init__(self) -> None:
        check_int("num_players", self.num_players, MIN_SEATS, MAX_SEATS)
        check_choice("episode", self.episode, ("round", "game"))
        check_int("round", self.round, 1, NUM_RANKS)
        check_int("max_turns", self.max_turns, 1, 100_000)


def crazy_hand_values():
    """CR-5's in-hand values by face, int16[53] (index 52 = joker: a wild)."""
    return face_values(VALUES, WILD_HAND_VALUE)


def crazy_variant(config: CrazyConfig | None = None, **options) -> Variant:
    """The Crazy Rummy variant for ``config`` (or keyword options)."""
    if config is None:
        config = config_from_dict(CrazyConfig, options)
    elif options:
        raise TypeError("pass either a CrazyConfig or keyword options, not both")
    first_wild = config.round - 1
    return german_family_variant(
        "crazy", config, deck=Deck(1, 0), meld_rules=CRAZY_RULES, hand_size=HAND_SIZE,
        hand_value=crazy_hand_values(), target_score=TOTALS_SCALE,
        rule_options={**CRAZY_OPTIONS, "first_wild": first_wild},
        wild_ranks=tuple(range(first_wild, NUM_RANKS)))
