"""A variant: its options, deck, meld table, compiled-rules spec and action text forms.

Every action id has a canonical text form, and text parses back to the id:

=================  ============================  =============================================
family             text                          meaning
=================  ============================  =============================================
draw               ``draw stock``                top card of the stock (MR-7.1)
take (card id)     ``take 7H``                   that discard-pile card and all above it; a
                                                 second physical copy reads ``take XX#2``
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

Other variants add families (each variant module's table): ``pass``, ``swap 7H m2``, and
Robber's Rummy's ``end turn``, ``commit``, ``reset``, ``lift 9H m3`` / ``layoff XX m3``
(a face or ``XX`` in a slot) and ``put m4``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .cards import JOKER_FACE, NUM_RANKS, CardError, Deck, face_text, parse_declared, parse_face
from .core.spec import ActionLayout, build_spec, spec_record
from .core.state import state_dtype
from .melds import MeldTable


class ActionError(ValueError):
    """An action id or action text that is out of range, malformed or illegal here."""


# How each action family's ids read as text. A layout may override a family's form with a
# class attribute ``FORMS`` (Gin's ``layoff`` names only a face).
DEFAULT_FORMS = {
    "draw": "words", "pass": "words", "done": "words", "base_camp": "words",
    "take": "card", "meld": "template", "regroup": "template", "layoff": "slot_face",
    "swap": "slot_face", "discard": "face", "knock": "face", "end": "words", "commit": "words",
    "reset": "words", "put": "slot",
}
WORDS = {"draw": "draw stock", "base_camp": "base camp", "end": "end turn"}
FORM_EXAMPLES = {"card": "7H", "template": "5H 6H 7H", "slot_face": "9H m3", "face": "3C",
                 "slot": "m4", "slot_any": "9H m3"}


def _field(family: str) -> str:
    """Layout field of a family (``pass`` is the field ``pass_``, a Python keyword)."""
    return family + "_" if family == "pass" else family


def _example(family: str, form: str) -> str:
    if form == "words":
        return WORDS.get(family, family.replace("_", " "))
    return f"{family} {FORM_EXAMPLES[form]}"


@dataclass(frozen=True)
class Variant:
    name: str
    config: object
    deck: Deck
    table: MeldTable
    spec: np.record     # given as a namedtuple (core.spec.Spec or a variant's), kept as its record
    layout: ActionLayout
    dtype: np.dtype = field(repr=False)
    wild_ranks: tuple[int, ...] = ()   # ranks a hand may make wild (Crazy Rummy: the rounds' ranks)
    # the spec as a one-element array, what the env layers pass to compiled entry points:
    # numba reads an array argument by pointer, a record one at a cost (core.spec.spec_of)
    spec_ref: np.ndarray = field(init=False, repr=False, compare=False)

    def __post_init__(self):
        if isinstance(self.spec, tuple):
            object.__setattr__(self, "spec", spec_record(self.spec))
        ref = np.zeros(1, self.spec.dtype)
        ref[0] = self.spec
        object.__setattr__(self, "spec_ref", ref)

    @classmethod
    def build(cls, *, name: str, config, deck: Deck, table: MeldTable, num_players: int,
              **options) -> "Variant":
        """A variant played by Mountain Rummy's kernels (:mod:`core.rules`); a variant with
        phases of its own registers its spec type in :mod:`core.batch` (see :mod:`core.gin`)."""
        spec, layout = build_spec(deck=deck, table=table, num_players=num_players, **options)
        dtype = state_dtype(deck.num_cards, spec.max_melds, spec.max_seats)
        return cls(name, config, deck, table, spec, layout, dtype)

    @property
    def num_actions(self) -> int:
        return self.layout.num_actions

    @property
    def num_players(self) -> int:
        return int(self.spec["num_players"])   # item access: a record's attribute costs ~5x

    # ----------------------------------------------------------------------------------
    # reward bounds (docs/rewards.md derives them)

    def hand_values(self) -> np.ndarray:
        """Each card's in-hand value (deadwood), one row per rank in :attr:`wild_ranks` (the
        cards of that rank count as jokers), or a single row for a variant without wilds."""
        spec = self.spec
        faces = spec.card_face
        plain = spec.hand_value[faces].astype(np.int64)
        rows = [np.where((faces < JOKER_FACE) & (faces % NUM_RANKS == r), spec.hand_value[JOKER_FACE],
                         plain) for r in self.wild_ranks]
        return np.array(rows or [plain])

    def lowest_hand_points(self) -> int:
        """A lower bound of one seat's hand points (MR-12, MR-13): credit and bonuses are never
        negative, and at worst the seat holds every card, so -(all cards' deadwood values) in
        the costliest hand (:meth:`hand_values`)."""
        return -int(self.hand_values().sum(axis=1).max())

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
        per_card = np.maximum(self.hand_values(), best_credit)
        bonus = max(max(spec.base_bonus, spec.high_bonus) + spec.summit_bonus, spec.undercut_bonus)
        return -int(per_card.sum(axis=1).max() + bonus)

    @property
    def lifts_table_cards(self) -> bool:
        """Whether a play may pick table cards up and put them in other melds (Robber's
        Rummy's ``lift``/``put``): then the pending card is a lifted one, not a deep draw."""
        return "lift" in self.layout._fields

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

    def action_form(self, family: str) -> str:
        """How ``family``'s ids read as text: a key of :data:`FORM_EXAMPLES`."""
        return getattr(self.layout, "FORMS", {}).get(family) or DEFAULT_FORMS[family]

    def action_text(self, action: int) -> str:
        family = self.action_family(action)
        index = action - getattr(self.layout, _field(family))
        form = self.action_form(family)
        verb = family.replace("_", " ")
        if form == "words":
            return WORDS.get(family, verb)
        if form == "card":
            return f"{verb} {self.deck.card_text(index, exact=True)}"
        if form == "template":
            return f"{verb} " + " ".join(face_text(f) for f in self.table.template_faces(index))
        if form in ("slot_face", "slot_any"):
            slot, face = divmod(index, JOKER_FACE + (form == "slot_any"))
            return f"{verb} {face_text(face)} m{slot}"
        if form == "slot":
            return f"{verb} m{index}"
        return f"{verb} {face_text(index)}"      # "face"

    def parse_action(self, text: str) -> int:
        """Action id for a canonical text form (case-insensitive; ``XX=7H`` accepted for 7H)."""
        words = text.strip().split()
        if not words:
            raise ActionError("empty action text")
        lowered = [w.lower() for w in words]
        families = [name.rstrip("_") for name in type(self.layout)._fields[:-1]]
        for family in families:
            form = self.action_form(family)
            if form == "words" and lowered in (WORDS.get(family, family).split(), [family]):
                return getattr(self.layout, _field(family))
        family = lowered[0]
        args = words[1:]
        if family not in families or self.action_form(family) == "words":
            raise self._unparsable(text, families)
        start = getattr(self.layout, _field(family))
        size = self._family_size(family)
        form = self.action_form(family)
        try:
            if form == "template" and len(args) >= 3:
                faces = [self._declared_face(w) for w in args]
                t = self.table.find(faces)
                if t < 0 or len(set(faces)) != len(faces):
                    raise ActionError(f"{' '.join(args)!r} is not a set or run")
                return start + t
            if form == "card" and len(args) == 1:
                if parse_declared(args[0].partition("#")[0])[1] is not None:
                    raise ActionError("a card in hand has no declared value")
                return start + self.deck.parse_cards(args[0])[0]
            if form in ("slot_face", "slot_any") and len(args) == 2:
                # slot_face: a face, naturals before jokers; slot_any: a face or XX (a joker)
                stride = JOKER_FACE + (form == "slot_any")
                face = parse_face(args[0]) if form == "slot_any" else self._declared_face(args[0])
                return start + self._slot(args[1], size // stride) * stride + face
            if form == "slot" and len(args) == 1:
                return start + self._slot(args[0], size)
            if form == "face" and len(args) == 1:
                face, declared = parse_declared(args[0])
                if declared is not None:
                    raise ActionError("a card in hand has no declared value")
                if face >= size:
                    raise ActionError(f"{self.name} has no jokers")
                return start + face
        except (CardError, ValueError) as err:
            if isinstance(err, ActionError):
                raise
            raise ActionError(f"cannot parse action {text!r}: {err}") from err
        raise self._unparsable(text, families)

    def _family_size(self, family: str) -> int:
        offsets = list(self.layout)
        k = type(self.layout)._fields.index(_field(family))
        return offsets[k + 1] - offsets[k]

    def _unparsable(self, text: str, families: list[str]) -> ActionError:
        forms = ", ".join(repr(_example(f, self.action_form(f))) for f in families)
        return ActionError(f"cannot parse action {text!r}; forms: {forms}")

    @staticmethod
    def _slot(token: str, slots: int) -> int:
        """Meld slot ``mK`` of ``slots``."""
        if not token.lower().startswith("m") or not token[1:].isdigit():
            raise ActionError(f"malformed meld slot {token!r}: expected m0..m{slots - 1}")
        slot = int(token[1:])
        if not 0 <= slot < slots:
            raise ActionError(f"meld slot {slot} is outside 0..{slots - 1}")
        return slot

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
