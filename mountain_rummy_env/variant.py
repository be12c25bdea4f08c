"""A variant: its options, deck, meld table, compiled-rules spec and action text forms.

Every action id has a canonical text form, and text parses back to the id:

=================  ============================  =============================================
family             text                          meaning
=================  ============================  =============================================
draw               ``draw stock``                top card of the stock (MR-7.1)
take (card id)     ``take 7H``                   that discard-pile card and all above it; the
                                                 second joker from the top is ``take XX#2``
meld (template)    ``meld 5H 6H 7H``             new meld from hand; missing faces filled by
                                                 jokers, shown as ``XX=7H`` in logs
regroup (template) ``regroup 5H 6H 7H``          new meld from hand plus cards detached from
                                                 the opponent's melds (MR-9)
layoff (slot, f)   ``layoff 9H m3``              face 9H (natural, else a joker) onto meld 3
discard (face)     ``discard 3C``                face-up discard, ends the turn
knock (face)       ``knock 4D``                  face-down discard with deadwood <= 10
base camp          ``base camp``                 face-down discard of the last card
done               ``done``                      end of the response phase (MR-10)
=================  ============================  =============================================
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .cards import JOKER_FACE, CardError, Deck, face_text, parse_declared
from .core.spec import ActionLayout, Spec, build_spec
from .core.state import state_dtype
from .melds import MeldTable


class ActionError(ValueError):
    """An action id or action text that is out of range, malformed or illegal here."""


@dataclass(frozen=True)
class Variant:
    name: str
    config: object
    deck: Deck
    table: MeldTable
    spec: Spec
    layout: ActionLayout
    dtype: np.dtype = field(repr=False)

    @classmethod
    def build(cls, *, name: str, config, deck: Deck, table: MeldTable, num_players: int,
              **options) -> "Variant":
        """A variant played by Mountain Rummy's kernels (:mod:`core.rules`); a variant with
        phases of its own registers its spec type in :mod:`core.batch` (see :mod:`core.gin`)."""
        spec, layout = build_spec(deck=deck, table=table, num_players=num_players, **options)
        dtype = state_dtype(deck.num_cards, spec.max_melds, num_players)
        return cls(name, config, deck, table, spec, layout, dtype)

    @property
    def num_actions(self) -> int:
        return self.layout.num_actions

    @property
    def num_players(self) -> int:
        return self.spec.num_players

    # ----------------------------------------------------------------------------------
    # reward bounds (docs/rewards.md derives them)

    def lowest_hand_points(self) -> int:
        """A lower bound of one seat's hand points (MR-12, MR-13): credit and bonuses are never
        negative, and at worst the seat holds every card, so -(all cards' deadwood values)."""
        spec = self.spec
        return -int(spec.hand_value[spec.card_face].sum())

    def lowest_hand_margin(self) -> int:
        """A lower bound of a seat's hand points minus an opponent's (MR-12, MR-13): at worst
        every card is in this seat's hand (deadwood) or credited to the opponent on the table,
        each card counting the larger of its deadwood value and its best meld credit, and the
        opponent takes the largest bonus a hand can give (a camp with summit, or an undercut)."""
        spec = self.spec
        faces = spec.card_face
        natural = faces < JOKER_FACE
        rank = faces % 13
        best_credit = np.where(natural, np.maximum(spec.rank_credit[rank], spec.run_credit[rank]),
                               max(spec.rank_credit.max(), spec.run_credit.max()))
        best_credit = np.where(natural & (rank == 0), np.maximum(best_credit, spec.run_credit[13]), best_credit)
        per_card = np.maximum(spec.hand_value[faces], best_credit)
        bonus = max(max(spec.base_bonus, spec.high_bonus) + spec.summit_bonus, spec.undercut_bonus)
        return -int(per_card.sum() + bonus)

    # ----------------------------------------------------------------------------------
    # action <-> text

    def action_family(self, action: int) -> str:
        """Name of the family of ``action`` (``'draw'``, ``'take'``, ``'meld'``, ...)."""
        self._check_id(action)
        offsets = list(self.layout)
        for name, start, stop in zip(type(self.layout)._fields, offsets, offsets[1:]):
            if start <= action < stop:
                return name.rstrip("_")      # Gin's ``pass_`` is the family ``pass``
        raise AssertionError(action)

    def action_text(self, action: int) -> str:
        family = self.action_family(action)
        lay = self.layout
        if family == "draw":
            return "draw stock"
        if family == "take":
            card = action - lay.take
            if card >= self.deck.num_naturals:
                n = card - self.deck.num_naturals
                return "take XX" if n == 0 else f"take XX#{n + 1}"
            return f"take {self.deck.card_text(card)}"
        if family in ("meld", "regroup"):
            t = action - getattr(lay, family)
            return f"{family} " + " ".join(face_text(f) for f in self.table.template_faces(t))
        if family == "layoff":
            slot, face = divmod(action - lay.layoff, JOKER_FACE)
            return f"layoff {face_text(face)} m{slot}"
        if family in ("discard", "knock"):
            return f"{family} {face_text(action - getattr(lay, family))}"
        return "base camp" if family == "base_camp" else "done"

    def parse_action(self, text: str) -> int:
        """Action id for a canonical text form (case-insensitive; ``XX=7H`` accepted for 7H)."""
        words = text.strip().split()
        if not words:
            raise ActionError("empty action text")
        verb = words[0].lower()
        args = words[1:]
        lay = self.layout
        try:
            if verb == "draw" and [w.lower() for w in args] in ([], ["stock"]):
                return lay.draw
            if verb == "base" and [w.lower() for w in args] == ["camp"]:
                return lay.base_camp
            if verb == "done" and not args:
                return lay.done
            if verb == "take" and len(args) == 1:
                token = args[0].upper()
                if token.startswith("XX"):
                    nth = int(token[3:]) if token.startswith("XX#") else 1
                    if not 1 <= nth <= self.deck.num_jokers or token not in ("XX", f"XX#{nth}"):
                        raise ActionError(f"no joker {token!r} in this deck")
                    return lay.take + self.deck.num_naturals + nth - 1
                return lay.take + self.deck.parse_cards(token)[0]
            if verb in ("meld", "regroup") and len(args) >= 3:
                faces = [self._declared_face(w) for w in args]
                t = self.table.find(faces)
                if t < 0 or len(set(faces)) != len(faces):
                    raise ActionError(f"{' '.join(args)!r} is not a set or run")
                return getattr(lay, verb) + t
            if verb == "layoff" and len(args) == 2 and args[1].lower().startswith("m"):
                face = self._declared_face(args[0])
                slot = int(args[1][1:])
                if not 0 <= slot < self.spec.max_melds:
                    raise ActionError(f"meld slot {slot} is outside 0..{self.spec.max_melds - 1}")
                return lay.layoff + slot * JOKER_FACE + face
            if verb in ("discard", "knock") and len(args) == 1:
                face, declared = parse_declared(args[0])
                if declared is not None:
                    raise ActionError("a card in hand has no declared value")
                return getattr(lay, verb) + face
        except (CardError, ValueError) as err:
            if isinstance(err, ActionError):
                raise
            raise ActionError(f"cannot parse action {text!r}: {err}") from err
        raise ActionError(
            f"cannot parse action {text!r}; forms: 'draw stock', 'take 7H', 'meld 5H 6H 7H', "
            "'regroup 5H 6H 7H', 'layoff 9H m3', 'discard 3C', 'knock 4D', 'base camp', 'done'"
        )

    @staticmethod
    def _declared_face(token: str) -> int:
        face, declared = parse_declared(token)
        face = declared if declared is not None else face
        if face == JOKER_FACE:
            raise ActionError("name the face a joker stands for, e.g. 'XX=7H' or just '7H'")
        return face

    def _check_id(self, action) -> None:
        if isinstance(action, bool) or not isinstance(action, (int, np.integer)) or \
                not 0 <= action < self.num_actions:
            raise ActionError(f"action {action!r} is not an id in 0..{self.num_actions - 1}")
