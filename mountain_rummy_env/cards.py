"""Card ids and the card notation of docs/mountain_rummy.md.

A *face* is what a card shows: 52 natural faces ``face = suit * 13 + rank`` (rank 0 = ace,
12 = king; suits C D H S) plus ``JOKER_FACE`` (52) for a joker. A *card id* names one
physical card: deck ``d`` holds ids ``d * 52 + face``; jokers come after all natural cards.
So a one-deck game with two jokers (Mountain Rummy) uses ids 0..53 and a two-deck game with
four jokers (German Rummy) ids 0..107 -- arrays are sized per variant, never for 108 always.

Notation: rank ``A 2 3 4 5 6 7 8 9 T J Q K`` then suit ``C D H S`` (``TH``, ``AS``); a joker
is ``XX``; a melded joker shows its declared face, ``XX=7C``. Exact texts (game records) name
the second and later physical copies of a card by number, ``XX#2`` or ``5H#2`` (as the action
``take XX#2`` does), so a deck order reads back to the same card ids.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

RANKS = "A23456789TJQK"
SUITS = "CDHS"
SUIT_SYMBOLS = {"C": "\u2663", "D": "\u2666", "H": "\u2665", "S": "\u2660"}
NUM_RANKS = 13
NUM_SUITS = 4
NUM_FACES = 52
JOKER_FACE = 52
JOKER_TEXT = "XX"


class CardError(ValueError):
    """A card string is malformed, names a card the deck lacks, or repeats a card."""


def face_of(rank: int, suit: int) -> int:
    return suit * NUM_RANKS + rank


def rank_of(face: int) -> int:
    return face % NUM_RANKS


def suit_of(face: int) -> int:
    return face // NUM_RANKS


def face_text(face: int) -> str:
    """``face_text(face_of(9, 2)) == 'TH'``; the joker face prints as ``XX``."""
    if face == JOKER_FACE:
        return JOKER_TEXT
    if not 0 <= face < NUM_FACES:
        raise CardError(f"face index {face} is outside 0..52")
    return RANKS[rank_of(face)] + SUITS[suit_of(face)]


def parse_face(text: str) -> int:
    """Parse one face (``'7C'``, ``'XX'``); case-insensitive, ``10`` accepted for ``T``."""
    token = text.strip().upper()
    if token == JOKER_TEXT:
        return JOKER_FACE
    if token.startswith("10"):
        token = "T" + token[2:]
    if len(token) != 2 or token[0] not in RANKS or token[1] not in SUITS:
        raise CardError(
            f"malformed card {text!r}: expected rank {' '.join(RANKS)} then suit "
            f"{' '.join(SUITS)} (e.g. 'TH', 'AS'), or 'XX' for a joker"
        )
    return face_of(RANKS.index(token[0]), SUITS.index(token[1]))


def parse_declared(text: str) -> tuple[int, int | None]:
    """Parse ``'7C'`` -> (face, None), ``'XX'`` -> (JOKER_FACE, None), ``'XX=7C'`` -> (JOKER_FACE, face)."""
    token = text.strip().upper()
    if "=" not in token:
        return parse_face(token), None
    left, _, right = token.partition("=")
    if left != JOKER_TEXT:
        raise CardError(f"malformed card {text!r}: only a joker ('XX=7C') carries a declared card")
    declared = parse_face(right)
    if declared == JOKER_FACE:
        raise CardError(f"malformed card {text!r}: a joker must be declared as a natural card")
    return JOKER_FACE, declared


@dataclass(frozen=True)
class Deck:
    """Physical composition of a deck: how many 52-card decks and how many jokers."""

    num_decks: int = 1
    num_jokers: int = 2

    def __post_init__(self) -> None:
        if self.num_decks not in (1, 2):
            raise ValueError(f"num_decks must be 1 or 2, got {self.num_decks!r}")
        if not 0 <= self.num_jokers <= 4:
            raise ValueError(f"num_jokers must be in 0..4, got {self.num_jokers!r}")

    @property
    def num_naturals(self) -> int:
        return NUM_FACES * self.num_decks

    @property
    def num_cards(self) -> int:
        return self.num_naturals + self.num_jokers

    def face_table(self) -> np.ndarray:
        """``face_table()[card_id]`` is the face of that physical card (int8)."""
        faces = np.full(self.num_cards, JOKER_FACE, dtype=np.int8)
        faces[: self.num_naturals] = np.arange(self.num_naturals) % NUM_FACES
        return faces

    def card_text(self, card: int, exact: bool = False) -> str:
        """The card's name; ``exact=True`` numbers a second or later copy (``XX#2``)."""
        if not 0 <= card < self.num_cards:
            raise CardError(f"card id {card} is outside 0..{self.num_cards - 1}")
        if card >= self.num_naturals:
            name, copy = JOKER_TEXT, card - self.num_naturals
        else:
            name, copy = face_text(card % NUM_FACES), card // NUM_FACES
        return f"{name}#{copy + 1}" if exact and copy else name

    def cards_text(self, cards, exact: bool = False) -> str:
        return " ".join(self.card_text(int(c), exact) for c in cards)

    def parse_cards(self, text: str | list[str]) -> list[int]:
        """Card ids for a card string such as ``'5H 6H XX'``.

        Each name takes the lowest free physical copy (two-deck games have two ``5H``,
        jokers are interchangeable); ``XX#2`` takes the second copy itself. Raises
        :class:`CardError` for malformed names and for more copies than the deck holds.
        """
        tokens = text.replace(",", " ").split() if isinstance(text, str) else list(text)
        used: set[int] = set()
        ids = []
        for token in tokens:
            name, numbered, nth = token.partition("#")
            face, declared = parse_declared(name)
            if declared is not None:
                raise CardError(f"{token!r}: a card in hand has no declared value; write 'XX'")
            copies = (
                range(self.num_naturals, self.num_cards)
                if face == JOKER_FACE
                else range(face, self.num_naturals, NUM_FACES)
            )
            if not copies:
                raise CardError(f"{token!r}: this deck has no jokers")
            if numbered:
                if not nth.isdigit() or not 1 <= int(nth) <= len(copies):
                    raise CardError(f"malformed card {token!r}: this deck holds copies #1..#{len(copies)}")
                copies = copies[int(nth) - 1: int(nth)]
            free = [c for c in copies if c not in used]
            if not free:
                held = len(copies)
                raise CardError(
                    f"duplicate card {token!r}: this deck holds {held} "
                    f"{'joker' if face == JOKER_FACE else 'copy'}{'s' if held != 1 else ''} of it"
                )
            used.add(free[0])
            ids.append(free[0])
        return ids


def pretty_face(face: int) -> str:
    """Face with a suit symbol for human-readable renders (``T\u2665``); jokers print as ``XX``."""
    text = face_text(face)
    return text if face == JOKER_FACE else text[0] + SUIT_SYMBOLS[text[1]]
