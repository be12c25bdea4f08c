"""Gin Rummy (docs/gin_rummy.md): the configuration, its action layout and text forms.

Gin runs on the same core as Mountain Rummy: the same state record (plus a few Gin fields),
the same meld-table and solver, and the compiled kernels of :mod:`mountain_rummy_env.core.gin`,
which reuse Mountain's deal, shuffle and table moves. See ``docs/gin_rummy.md``.

=================  ==================  ==========================================================
family (ids)       text                meaning
=================  ==================  ==========================================================
draw (0)           ``draw stock``      top card of the stock
take (1..52)       ``take 7H``         the up-card / top of the discard pile (GR-1, GR-2); at the
                                       OpenSpiel wall: take it to knock
pass (53)          ``pass``            decline the first up-card (GR-1); end the knocker's meld
                                       declaration, the layoffs or the defender's melds; pass
                                       at the OpenSpiel wall
discard (54..105)  ``discard 3C``      discard a card, ends the turn
knock (106..157)   ``knock 4D``        discard 4D and knock (GR-3)
meld (158..486)    ``meld 5H 6H 7H``   lay down a meld after a knock (knocker, then defender)
layoff (487..538)  ``layoff 9H``       defender lays 9H off on the knocker's melds
=================  ==================  ==========================================================
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from ..cards import NUM_FACES, Deck
from ..config import check_choice, check_int, config_from_dict
from ..core import gin as kernels
from ..core.spec import build_spec
from ..melds import MeldRules, build_meld_table
from ..solver import fast_tables
from ..variant import Variant

GIN_RULES = MeldRules(ace_low=True, ace_high=False,
                      rank_credit=(1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 10, 10, 10))
HAND_VALUES = (1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 10, 10, 10)   # A..K
HAND_SIZE = 10
MAX_MELDS = 6            # <= 3 melds per 10-card hand, two players
OPENSPIEL_MAX_MELD = 5   # OpenSpiel declares runs of 3..5 cards (longer ones as two melds)
OPENSPIEL_UPCARD_DRAWS = 50


@dataclass(frozen=True)
class GinConfig:
    """Options of docs/gin_rummy.md plus ``episode``/``target_score``/``max_turns``.

    ``openspiel_compatible=True`` plays exactly like OpenSpiel's ``gin_rummy`` (ties score 0
    without undercut bonus, its wall and repeated-up-card rules, runs declared in pieces of
    <= 5 cards, its layoff limits, zero-sum hand points); the other options keep their values.
    ``episode="game"`` plays hands until a player reaches ``target_score``.
    """

    knock_card: int = 10
    gin_bonus: int = 25
    undercut_bonus: int = 25
    tie_is_undercut: bool = True
    openspiel_compatible: bool = False
    max_turns: int = 200
    episode: str = "hand"
    target_score: int = 100

    def __post_init__(self) -> None:
        check_int("knock_card", self.knock_card, 0, 10)
        check_int("gin_bonus", self.gin_bonus, 0, 1000)
        check_int("undercut_bonus", self.undercut_bonus, 0, 1000)
        check_choice("tie_is_undercut", self.tie_is_undercut, (True, False))
        check_choice("openspiel_compatible", self.openspiel_compatible, (False, True))
        check_int("max_turns", self.max_turns, 1, 100_000)
        check_choice("episode", self.episode, ("hand", "game"))
        check_int("target_score", self.target_score, 1, 10_000_000)


class GinActionLayout(NamedTuple):
    """Offsets of Gin's action families in its ``Discrete(num_actions)`` space."""

    draw: int
    take: int
    pass_: int
    discard: int
    knock: int
    meld: int
    layoff: int
    num_actions: int

    FORMS = {"layoff": "face"}   # ``layoff 9H``: the knocker's meld it fits is implied

    @classmethod
    def build(cls, num_templates: int) -> "GinActionLayout":
        sizes = [1, NUM_FACES, 1, NUM_FACES, NUM_FACES, num_templates, NUM_FACES]
        return cls(*np.concatenate([[0], np.cumsum(sizes)]).tolist())


@dataclass(frozen=True)
class GinVariant(Variant):
    """A :class:`Variant` with Gin's reward bounds (its actions read through ``FORMS``)."""

    def lowest_hand_points(self) -> int:
        """GR-4: only the hand winner scores, so a seat's hand points are never negative."""
        return 0

    def lowest_hand_margin(self) -> int:
        """GR-4 (and OpenSpiel's returns): the opponent wins at most a full hand's deadwood
        (every card at the highest value) plus the gin bonus, or, undercutting a knock, at
        most the knock limit plus the undercut bonus."""
        spec = self.spec
        full_hand = spec.hand_size * int(spec.hand_value.max())
        return -max(full_hand + spec.gin_bonus, spec.knock_limit + spec.undercut_bonus)


def gin_variant(config: GinConfig | None = None, **options) -> GinVariant:
    """The Gin Rummy variant for ``config`` (or keyword options)."""
    if config is None:
        config = config_from_dict(GinConfig, options)
    elif options:
        raise TypeError("pass either a GinConfig or keyword options, not both")
    table = build_meld_table(GIN_RULES)
    deck = Deck(1, 0)
    hand_value = np.zeros(NUM_FACES + 1, dtype=np.int16)
    hand_value[:NUM_FACES] = np.tile(HAND_VALUES, 4)
    base, _ = build_spec(
        deck=deck, table=table, num_players=2, hand_size=HAND_SIZE, hand_value=hand_value,
        knock_limit=config.knock_card, camp_respond=False, bonus_to_winner=True,
        max_turns=config.max_turns, target_score=config.target_score,
        episode_game=config.episode == "game",
        bonuses=(0, 0, config.undercut_bonus, 0))
    layout = GinActionLayout.build(table.num_templates)
    run_best, _, tgain, set_ids, set_cnt = fast_tables(table, hand_value, "deadwood")
    fields = base._asdict()
    fields.update(
        max_melds=MAX_MELDS,
        a_draw=layout.draw, a_take=layout.take, a_done=layout.pass_, a_discard=layout.discard,
        a_knock=layout.knock, a_meld=layout.meld, a_regroup=layout.layoff,
        a_layoff=layout.layoff, a_base_camp=layout.num_actions, num_actions=layout.num_actions,
        gin_bonus=config.gin_bonus, tie_is_undercut=config.tie_is_undercut,
        openspiel=config.openspiel_compatible,
        max_meld_len=OPENSPIEL_MAX_MELD if config.openspiel_compatible else 13,
        max_upcard_draws=OPENSPIEL_UPCARD_DRAWS if config.openspiel_compatible else 1 << 30,
        run_best=run_best, tgain=tgain, set_ids=set_ids, set_cnt=set_cnt,
    )
    spec = kernels.GinSpec(**fields)
    dtype = kernels.gin_state_dtype(deck.num_cards, MAX_MELDS, 2)
    return GinVariant("gin", config, deck, table, spec, layout, dtype)
