"""``Spec``: a variant's static tables and options, as one record the compiled rules take.

Built once per configuration from the card values, the meld table and the action layout, as
a namedtuple (:class:`Spec`, or a variant's extension of it), then frozen into one numpy
record (:func:`spec_record`) that the compiled rules read. A record reaches a compiled
function as one pointer; a namedtuple of arrays is passed field by field with a reference
count per array, which cost about 0.4 µs a call for German's spec (18 arrays), in loops
calling a helper per meld template. Numba specialises the rules on the record's type, and
the record names its namedtuple class (:func:`spec_class_of`), which picks the kernels.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import types
from numba.extending import overload

from ..cards import JOKER_FACE, Deck
from ..melds import MeldTable


class ActionLayout(NamedTuple):
    """Offsets of each action family in the flat ``Discrete(num_actions)`` space."""

    draw: int
    take: int        # + card id
    meld: int        # + template id
    regroup: int     # + template id
    layoff: int      # + meld slot * 52 + face
    discard: int     # + face (52 = joker)
    knock: int       # + face
    base_camp: int
    done: int
    num_actions: int

    @classmethod
    def build(cls, num_cards: int, num_templates: int, max_melds: int) -> "ActionLayout":
        sizes = [1, num_cards, num_templates, num_templates, max_melds * JOKER_FACE,
                 JOKER_FACE + 1, JOKER_FACE + 1, 1, 1]
        offsets = np.concatenate([[0], np.cumsum(sizes)]).tolist()
        return cls(*offsets)


class Spec(NamedTuple):
    num_players: int
    max_seats: int           # per-seat record arrays are this long (>= num_players)
    num_naturals: int
    num_cards: int
    hand_size: int
    max_melds: int
    num_templates: int
    knock_limit: int
    camp_respond: bool
    bonus_to_winner: bool
    max_turns: int
    target_score: int
    episode_game: bool
    base_bonus: int
    high_bonus: int
    undercut_bonus: int
    summit_bonus: int
    min_run_pos: int
    max_run_pos: int
    card_face: np.ndarray    # (C,) face of each card id
    hand_value: np.ndarray   # (53,) deadwood value by face
    rank_credit: np.ndarray  # (13,) meld credit in a set, by rank
    run_credit: np.ndarray   # (14,) meld credit in a run, by position
    t_mask: np.ndarray
    t_len: np.ndarray
    t_faces: np.ndarray
    t_kind: np.ndarray
    t_suit: np.ndarray
    t_rank: np.ndarray
    t_lo: np.ndarray
    t_hi: np.ndarray
    t_pos: np.ndarray
    by_face: np.ndarray        # (52, K) templates holding each face, -1 padded
    by_face_count: np.ndarray  # (52,)
    by_low: np.ndarray         # (52, L) templates whose lowest face each face is, -1 padded
    by_low_count: np.ndarray   # (52,)
    a_draw: int
    a_take: int
    a_meld: int
    a_regroup: int
    a_layoff: int
    a_discard: int
    a_knock: int
    a_base_camp: int
    a_done: int
    num_actions: int


def build_spec(*, deck: Deck, table: MeldTable, num_players: int, hand_size: int,
               hand_value: np.ndarray, knock_limit: int, camp_respond: bool,
               bonus_to_winner: bool, max_turns: int, target_score: int, episode_game: bool,
               bonuses: tuple[int, int, int, int], max_seats: int = 0) -> tuple[Spec, ActionLayout]:
    """The spec and action layout; ``max_seats`` (default ``num_players``) pads the per-seat
    record arrays, so one compiled kernel serves every table size of a variant."""
    from ..melds import position_credit

    max_melds = deck.num_cards // 3
    layout = ActionLayout.build(deck.num_cards, table.num_templates, max_melds)
    rules = table.rules
    spec = Spec(
        num_players=num_players, max_seats=max(max_seats, num_players),
        num_naturals=deck.num_naturals, num_cards=deck.num_cards,
        hand_size=hand_size, max_melds=max_melds, num_templates=table.num_templates,
        knock_limit=knock_limit, camp_respond=camp_respond, bonus_to_winner=bonus_to_winner,
        max_turns=max_turns, target_score=target_score, episode_game=episode_game,
        base_bonus=bonuses[0], high_bonus=bonuses[1], undercut_bonus=bonuses[2],
        summit_bonus=bonuses[3],
        min_run_pos=0 if rules.ace_low else 1, max_run_pos=13 if rules.ace_high else 12,
        card_face=deck.face_table(),
        hand_value=np.asarray(hand_value, dtype=np.int16),
        rank_credit=np.asarray(rules.rank_credit, dtype=np.int16),
        run_credit=np.array([position_credit(rules, p) for p in range(14)], dtype=np.int16),
        t_mask=table.mask, t_len=table.length, t_faces=table.faces, t_kind=table.kind,
        t_suit=table.suit, t_rank=table.rank, t_lo=table.lo, t_hi=table.hi, t_pos=table.pos,
        by_face=table.by_face, by_face_count=table.by_face_count,
        by_low=table.by_low, by_low_count=table.by_low_count,
        a_draw=layout.draw, a_take=layout.take, a_meld=layout.meld, a_regroup=layout.regroup,
        a_layoff=layout.layoff, a_discard=layout.discard, a_knock=layout.knock,
        a_base_camp=layout.base_camp, a_done=layout.done, num_actions=layout.num_actions,
    )
    return spec, layout


KIND_PREFIX = "kind_"   # the record's first field is named after its namedtuple class


def spec_record(spec: NamedTuple) -> np.record:
    """``spec`` (a namedtuple of ints, bools and arrays) as one read-only-by-convention
    numpy record with the same field names; its first field, ``kind_<class name>``, names
    the namedtuple class for :func:`spec_class_of`."""
    fields = [(KIND_PREFIX + type(spec).__name__, np.uint8)]
    for name, value in zip(spec._fields, spec):
        if isinstance(value, np.ndarray):
            fields.append((name, value.dtype, value.shape))
        elif isinstance(value, (bool, np.bool_)):
            fields.append((name, np.bool_))
        elif isinstance(value, (int, np.integer)):
            fields.append((name, np.int64))
        else:
            raise TypeError(f"spec field {name!r} must be an int, a bool or an array; "
                            f"got {type(value).__name__}")
    dtype = np.dtype((np.record, np.dtype(fields, align=True)))
    # one dtype object per layout, alive for good: numba's dispatcher knows a record's type
    # by the address of its dtype (a freed one's address, reused by another layout, was read
    # as the old layout), and dispatch.FastCall compares dtypes by identity
    dtype = SPEC_DTYPES.setdefault(dtype, dtype)
    holder = np.zeros(1, dtype)
    for name, value in zip(spec._fields, spec):
        holder[name][0] = value
    SPEC_CLASSES[type(spec).__name__] = type(spec)
    return holder[0]


def replace_spec(spec: np.record, **changes) -> np.record:
    """A copy of the spec record with some fields changed (as ``namedtuple._replace``)."""
    holder = np.array([spec], dtype=spec.dtype)
    for name, value in changes.items():
        if name not in spec.dtype.names or name.startswith(KIND_PREFIX):
            raise KeyError(f"spec has no field {name!r}")
        holder[name][0] = value
    return holder[0]


SPEC_DTYPES: dict[np.dtype, np.dtype] = {}
SPEC_CLASSES: dict[str, type] = {}   # namedtuple classes by name, of every spec_record made


def spec_class_of(spec) -> type:
    """The namedtuple class a spec record was built from: ``spec`` is the record, its
    numpy dtype, or its numba ``Record`` type."""
    names = getattr(getattr(spec, "dtype", None), "names", None)
    if names is None:
        names = tuple(getattr(spec, "fields", ()))
    kind = names[0] if names else ""
    if not kind.startswith(KIND_PREFIX):
        raise TypeError(f"not a spec record: {spec!r}")
    return SPEC_CLASSES[kind[len(KIND_PREFIX):]]


def spec_of(spec):
    """The spec record of ``spec``, given as the record or as a one-element array holding it
    (:attr:`Variant.spec_ref <mountain_rummy_env.variant.Variant.spec_ref>`). Compiled entry
    points take either and call this first. Why the array: numba reads a record argument
    through the buffer protocol, which builds the record's PEP 3118 format string at every
    call (10-30 us for a spec of 45-54 fields, more than a whole game step); an array it
    reads by pointer (about 0.1 us)."""
    return spec[0] if isinstance(spec, np.ndarray) else spec


@overload(spec_of)
def _spec_of(spec):
    if isinstance(spec, types.Array):
        return lambda spec: spec[0]
    return lambda spec: spec
