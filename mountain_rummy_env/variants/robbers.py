"""Robber's Rummy (docs/robbers_rummy.md): the configuration, its tables and actions.

Two 52-card decks and ``num_jokers`` jokers (default 4), 2-6 seats, 11 cards each, no
discard pile; after opening a play may rearrange the whole table (RR-6). The compiled
kernels are :mod:`mountain_rummy_env.core.robbers`.

=================  ==================  ==========================================================
family             text                meaning
=================  ==================  ==========================================================
draw               ``draw stock``      top card of the stock; ends the turn unless the seat
                                       played (RR-4, once a turn)
pass               ``pass``            the stock is empty and the seat did not play (RR-7)
end                ``end turn``        after a play
commit             ``commit``          the play stands: every slot a valid meld, a hand card
                                       placed, an opening worth >= 40 (RR-5, RR-6)
reset              ``reset``           the table and hand as at the play's start
meld (template)    ``meld 5H 6H 7H``   new meld from hand, a joker for a face not held (RR-3)
layoff (slot, f)   ``layoff 9H m3``    hand card 9H (``XX``: a joker) into slot 3
lift (slot, f)     ``lift 9H m3``      pick table card 9H up from slot 3 ...
put (slot)         ``put m4``          ... and set it down in slot 4
=================  ==================  ==========================================================

``meld``, ``layoff``, ``lift`` and ``put`` are edits: a play is edits closed by ``commit`` or
``reset``; a slot may be invalid between them. A new meld goes to the first empty slot.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from ..cards import JOKER_FACE, Deck
from ..config import check_choice, check_int, config_from_dict
from ..core import robbers as kernels
from ..core.spec import build_spec
from ..melds import build_meld_table
from ..variant import Variant
from .german import GERMAN_RULES, german_hand_values

HAND_SIZE = 11            # RR-1
OPENING_MINIMUM = 40      # RR-5
MIN_SEATS, MAX_SEATS = 2, 6


@dataclass(frozen=True)
class RobbersConfig:
    """Options of docs/robbers_rummy.md.

    ``num_players`` seats (2-6); ``num_jokers`` beside the two decks (RR-1, 0-4);
    ``around_the_corner`` allows runs that wrap past the ace (Q-K-A-2, RR-3); ``max_edits``
    caps the edit actions of one turn (so every turn ends; a full rearrangement of a large
    table needs about two per table card moved); ``episode="hand"`` makes one hand an
    episode, ``"game"`` plays one hand per seat as dealer; ``max_turns`` ends a hand as an
    exhausted stock does (RR-7) so that any play ends.
    """

    num_players: int = 4
    num_jokers: int = 4
    around_the_corner: bool = False
    max_edits: int = 80
    max_turns: int = 1000
    episode: str = "hand"

    def __post_init__(self) -> None:
        check_int("num_players", self.num_players, MIN_SEATS, MAX_SEATS)
        check_int("num_jokers", self.num_jokers, 0, 4)
        check_choice("around_the_corner", self.around_the_corner, (False, True))
        check_int("max_edits", self.max_edits, 1, 1000)
        check_int("max_turns", self.max_turns, 1, 100_000)
        check_choice("episode", self.episode, ("hand", "game"))


class RobbersActionLayout(NamedTuple):
    """Offsets of Robber's Rummy's action families in its ``Discrete(num_actions)`` space."""

    draw: int
    pass_: int
    end: int
    commit: int
    reset: int
    meld: int      # + template id
    layoff: int    # + slot * 53 + face (52: a joker)
    lift: int      # + slot * 53 + face
    put: int       # + slot
    num_actions: int

    FORMS = {"layoff": "slot_any", "lift": "slot_any"}

    @classmethod
    def build(cls, num_templates: int, max_melds: int) -> "RobbersActionLayout":
        stride = JOKER_FACE + 1
        sizes = [1, 1, 1, 1, 1, num_templates, max_melds * stride, max_melds * stride, max_melds]
        return cls(*np.concatenate([[0], np.cumsum(sizes)]).tolist())


def robbers_variant(config: RobbersConfig | None = None, **options) -> Variant:
    """The Robber's Rummy variant for ``config`` (or keyword options)."""
    if config is None:
        config = config_from_dict(RobbersConfig, options)
    elif options:
        raise TypeError("pass either a RobbersConfig or keyword options, not both")
    deck = Deck(2, config.num_jokers)
    table = build_meld_table(GERMAN_RULES)
    hand_value = german_hand_values()
    base, _ = build_spec(
        deck=deck, table=table, num_players=config.num_players, hand_size=HAND_SIZE,
        hand_value=hand_value, knock_limit=0, camp_respond=False, bonus_to_winner=False,
        max_turns=config.max_turns, target_score=1000, episode_game=config.episode == "game",
        bonuses=(0, 0, 0, 0), max_seats=MAX_SEATS)
    layout = RobbersActionLayout.build(table.num_templates, base.max_melds)
    none = layout.num_actions     # families Robber's lacks start past the last id
    fields = base._asdict()
    fields.update(
        a_draw=layout.draw, a_take=none, a_meld=layout.meld, a_regroup=none,
        a_layoff=layout.layoff, a_discard=none, a_knock=none, a_base_camp=none, a_done=none,
        num_actions=layout.num_actions, open_min=OPENING_MINIMUM, max_edits=config.max_edits,
        around_the_corner=config.around_the_corner, a_pass=layout.pass_, a_end=layout.end,
        a_commit=layout.commit, a_reset=layout.reset, a_lift=layout.lift, a_put=layout.put,
    )
    spec = kernels.RobbersSpec(**fields)
    dtype = kernels.robbers_state_dtype(deck.num_cards, base.max_melds, base.max_seats)
    return Variant("robbers", config, deck, table, spec, layout, dtype)
