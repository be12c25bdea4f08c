"""Mountain Rummy (docs/mountain_rummy.md): the configuration and its variant tables."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..cards import Deck, JOKER_FACE
from ..config import check_choice, check_int, config_from_dict
from ..melds import MeldRules, build_meld_table
from ..variant import Variant

# MR-2: deadwood values by rank index A..K; a joker in hand counts 15.
HAND_VALUES = (14, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13)
JOKER_HAND_VALUE = 15
KNOCK_LIMIT = 10                      # MR-7
BONUSES = (10, 20, 30, 40)            # MR-13: base camp, high camp, undercut, summit


@dataclass(frozen=True)
class MountainConfig:
    """Options of docs/mountain_rummy.md (defaults first) plus ``episode``.

    ``episode="hand"`` makes one hand an episode; ``"game"`` plays hands until a hand winner
    reaches ``target_score`` (MR-14).
    """

    num_jokers: int = 2
    camp_response: str = "none"
    bonus_recipient: str = "hand_winner"
    max_turns: int = 200
    target_score: int = 1000
    episode: str = "hand"

    def __post_init__(self) -> None:
        check_choice("num_jokers", self.num_jokers, (2, 1, 0))
        check_choice("camp_response", self.camp_response, ("none", "respond"))
        check_choice("bonus_recipient", self.bonus_recipient, ("hand_winner", "earner"))
        check_int("max_turns", self.max_turns, 1, 100_000)
        check_int("target_score", self.target_score, 1, 10_000_000)
        check_choice("episode", self.episode, ("hand", "game"))


def mountain_variant(config: MountainConfig | None = None, **options) -> Variant:
    """The Mountain Rummy variant for ``config`` (or keyword options)."""
    if config is None:
        config = config_from_dict(MountainConfig, options)
    elif options:
        raise TypeError("pass either a MountainConfig or keyword options, not both")
    hand_value = np.zeros(JOKER_FACE + 1, dtype=np.int16)
    hand_value[:JOKER_FACE] = np.tile(HAND_VALUES, 4)
    hand_value[JOKER_FACE] = JOKER_HAND_VALUE
    return Variant.build(
        name="mountain", config=config, deck=Deck(1, config.num_jokers),
        table=build_meld_table(MeldRules()), num_players=2, hand_size=13,
        hand_value=hand_value, knock_limit=KNOCK_LIMIT,
        camp_respond=config.camp_response == "respond",
        bonus_to_winner=config.bonus_recipient == "hand_winner",
        max_turns=config.max_turns, target_score=config.target_score,
        episode_game=config.episode == "game", bonuses=BONUSES,
    )
