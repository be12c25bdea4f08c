"""Batched observation encoders over the state records (``docs/observation.md``).

Every encoder is one compiled call over a batch of state records, so the single-game envs
(a batch of one) and a vector env (a batch of N) share the same code::

    out = np.zeros((B, observation_size(variant)), np.float32)
    encode_observations(game.states, variant.spec, players, out)   # players: (B,) seats

Layout (``C`` = cards of the variant, ``M`` = table meld slots, ``S`` = scalars):

* ``NUM_CARD_PLANES`` card planes of width ``C`` (column = card id; the face-indexed planes
  use column ``f`` < 52 for face ``f`` and a joker's own id column for that joker),
* ``SEAT_PLANES`` planes per further seat (below),
* ``M`` meld-slot rows of width ``C`` (which faces meld slot m shows; slot m is the ``m`` of
  ``layoff 9H m3``),
* ``NUM_SCALARS`` scalars, then ``SEAT_SCALARS`` per further seat.

Seats are relative to the observer: "opp" in a name is the next seat (the one who plays
after me; in a 2-seat game the opponent). A variant with more seats (padded to its largest
table, ``S`` seats: German 6) appends, for the seats 2 .. S-1 places after me, the planes
``table_seat`` and ``known_seat`` and the scalars of :data:`SEAT_SCALAR_NAMES`; absent
seats are zeros. With ``S`` = 2 the layout is exactly the 2-seat one.

The player's view holds only what that player may know: the other seats' hidden hand cards,
the stock and face-down cards enter only as the union ``UNSEEN`` (and as counts), so
permuting cards among those places leaves the observation unchanged.

``out`` may be float32 (values in [-1, 1]) or int8: binary features are 0/1 either way,
scaled features are quantised to ``round(127 * x)`` in int8 output. The envs take the choice
as ``obs_dtype`` (:data:`OBS_DTYPES`, :func:`obs_dtype_of`); :func:`observation_scale` turns
int8 observations back into the float32 scale.

:func:`encode_clairvoyant` appends the hidden information (opponent's whole hand, stock order,
face-down cards) for research agents allowed to peek; :func:`encode_state` is the
clairvoyant encoding from seat 0, the full state for centralised critics.

``obs_features`` (:data:`OBS_FEATURES`, default ``"none"``: the view above, unchanged)
``"solver"`` appends the solver feature block of :mod:`mountain_rummy_env.solver_features`
(Mountain; German and Crazy Rummy have their own, :mod:`mountain_rummy_env.german_features`)
after the player view; ``"solver_move"`` appends the move block after that (the variant's
compiled heuristic's move, one-hot over the actions: :func:`has_move_block`), and
``"solver_move_outs"`` (Mountain) the move of its heuristic discarding as the rules player.
:func:`observation_size`, :func:`observation_bounds`, :func:`scaled_features` and
:func:`observation_scale` take the same option, and :func:`encode_views` writes every part.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit

from ..config import ConfigError
from ..core import batch
from ..core.rules import card_face_now, is_wild
from ..core.spec import spec_of
from .. import solver_features as _solver
from ..solver_features import quantise as _q
from ..core.state import (
    LOC_FACEDOWN, LOC_HAND, LOC_STOCK, LOC_TABLE, PHASE_GAME_OVER,
    PHASE_HAND_OVER, PHASE_RESPONSE,
)

NUM_FACES = 52

# observation dtypes of the envs: float32 (default, for SB3's float networks) or int8 (a
# quarter of the memory; scaled features stored as round(INT8_SCALE * x))
OBS_DTYPES = ("float32", "int8")
INT8_SCALE = 127

# feature blocks appended to the player view: "none" (the plain view), "solver" (the meld
# solver's values of the player's choices, mountain_rummy_env.solver_features; Mountain,
# German and Crazy) or "solver_move" (those, then the compiled heuristic's move, one-hot);
# "solver_move_outs" (Mountain): the move of its heuristic discarding as the rules player
OBS_FEATURES = ("none", "solver", *_solver.MOVE_DISCARDS)

# ---- card planes (width C) -----------------------------------------------------------
P_HAND = 0            # in my hand
P_HAND_TAKEN = 1      # in my hand, taken from the discard pile this turn (may not be discarded);
                      # Robber's: on the table, placed from my hand in the play in progress
P_HAND_PUBLIC = 2     # in my hand and known to the opponent (taken from the discard pile)
P_OBLIGATION = 3      # the deep-draw card the player to move must meld or lay off this turn
P_DISCARD = 4         # in the discard pile
P_DISCARD_DEPTH = 5   # (C - depth) / C for a pile card, depth 0 = top (top card = 1)
P_DISCARD_TOP = 6     # the top card of the discard pile
P_TABLE_MINE = 7      # on the table, credited to me
P_TABLE_OPP = 8       # on the table, credited to the opponent
P_TABLE_MY_MELD = 9   # on the table in a meld I founded (my melds are never reorganised)
P_JOKER_FACES = 10    # column f < 52: a melded joker is declared as face f
P_TABLE_FACES = 11    # column f < 52: face f shows on the table; joker columns: that joker is on the table
P_OPP_KNOWN = 12      # in the opponent's hand and known (taken from the discard pile)
P_MY_FACEDOWN = 13    # discarded face down by me (knock / base camp) this hand
P_UNSEEN = 14         # none of the above: opponent's hidden hand, stock or opponent's face-down card
NUM_CARD_PLANES = 15
CARD_PLANE_NAMES = (
    "hand", "hand_taken", "hand_public", "obligation", "discard", "discard_depth",
    "discard_top", "table_mine", "table_opp", "table_my_meld", "joker_faces", "table_faces",
    "opp_known", "my_facedown", "unseen",
)

# ---- scalars -------------------------------------------------------------------------
S_STOCK = 0           # stock size / C
S_DISCARD = 1         # discard pile size / C
S_MY_HAND = 2         # my hand size / C
S_OPP_HAND = 3        # opponent hand size / C
S_PHASE = 4           # 5 one-hot: draw, play, response, hand over, game over
S_MY_TURN = 9         # I am the player to move
S_DEALER = 10         # I dealt this hand
S_TURN = 11           # completed turns / max_turns
S_MY_TOTAL = 12       # my game total / target_score, clipped to [-1, 1]
S_OPP_TOTAL = 13      # opponent's game total / target_score, clipped
S_OBLIGATION = 14     # a deep-draw obligation is pending
S_PLACED_NOW = 15     # I melded or laid off this turn (only while I am to move)
S_MY_PLACED = 16      # I melded or laid off on an earlier turn of this hand (no Summit)
S_OPP_PLACED = 17     # the opponent did (no Summit for them)
S_I_ENDED = 18        # I ended this hand (knock / camp; response phase and after)
S_OPP_ENDED = 19      # the opponent ended this hand
S_END_KIND = 20       # 3 one-hot: knock, base camp, high camp (response phase and after)
S_MY_DEADWOOD = 23    # value of my hand / 200, clipped
S_LAST_MINE = 24      # my points in the last finished hand / 200, clipped to [-1, 1]
S_LAST_OPP = 25       # opponent's points in the last finished hand / 200, clipped
S_HAND_NO = 26        # hand number / 100, clipped
NUM_SCALARS = 27
SCALAR_NAMES = (
    "stock_size", "discard_size", "my_hand_size", "opp_hand_size", "phase_draw", "phase_play",
    "phase_response", "phase_hand_over", "phase_game_over", "my_turn", "i_dealt", "turn",
    "my_total", "opp_total", "obligation_pending", "placed_this_turn", "i_placed_before",
    "opp_placed_before", "i_ended", "opp_ended", "end_knock", "end_base_camp", "end_high_camp",
    "my_deadwood", "last_hand_mine", "last_hand_opp", "hand_no",
)
SIGNED_SCALARS = (S_MY_TOTAL, S_OPP_TOTAL, S_LAST_MINE, S_LAST_OPP)
SCALED_SCALARS = (S_STOCK, S_DISCARD, S_MY_HAND, S_OPP_HAND, S_TURN, S_MY_TOTAL, S_OPP_TOTAL,
                  S_MY_DEADWOOD, S_LAST_MINE, S_LAST_OPP, S_HAND_NO)

# ---- per further seat (k = 2 .. S-1 places after me) ------------------------------------
SEAT_PLANE_NAMES = ("table_seat", "known_seat")   # credited to that seat; known in its hand
SEAT_PLANES = len(SEAT_PLANE_NAMES)
SEAT_SCALAR_NAMES = ("hand_size", "total", "placed_before", "last_hand")
SEAT_SCALARS = len(SEAT_SCALAR_NAMES)
SIGNED_SEAT_SCALARS = (1, 3)       # total, last hand
SCALED_SEAT_SCALARS = (0, 1, 3)    # hand size, total, last hand

# ---- clairvoyant extra planes ----------------------------------------------------------
X_OPP_HAND = 0        # every card in the next seat's hand (then one plane per further seat)
X_OPP_TAKEN = 1       # opponent's cards taken from the pile this turn
X_STOCK_DEPTH = 2     # (C - k) / C for the k-th stock card from the top (next draw = 1)
X_FACEDOWN = 3        # every face-down card
NUM_EXTRA_PLANES = 4
EXTRA_PLANE_NAMES = ("opp_hand", "opp_taken", "stock_depth", "facedown")


class ObservationLayout(NamedTuple):
    num_cards: int
    max_melds: int
    card_planes: int        # offset of the card planes (0)
    meld_rows: int          # offset of the meld-slot rows
    scalars: int            # offset of the scalars
    size: int               # flat player-view size
    extra: int              # offset of the clairvoyant planes (== size)
    clairvoyant_size: int
    planes_shape: tuple     # (rows, C) of the 2-D view
    num_seats: int = 2      # seats the record is padded to (S)
    variant_scalars: tuple = ()  # names of the variant's own scalars, after the seats' ones

    @property
    def further_seats(self) -> int:
        return self.num_seats - 2

    def card_plane(self, k: int) -> slice:
        return slice(k * self.num_cards, (k + 1) * self.num_cards)

    def seat_plane(self, k: int, offset: int) -> slice:
        """Plane ``k`` (index into SEAT_PLANE_NAMES) of the seat ``offset`` >= 2 places after me."""
        return self.card_plane(NUM_CARD_PLANES + (offset - 2) * SEAT_PLANES + k)

    def meld_row(self, m: int) -> slice:
        start = self.meld_rows + m * self.num_cards
        return slice(start, start + self.num_cards)

    def scalar(self, k: int) -> int:
        return self.scalars + k

    def seat_scalar(self, k: int, offset: int) -> int:
        """Scalar ``k`` (index into SEAT_SCALAR_NAMES) of the seat ``offset`` >= 2 places after me."""
        return self.scalars + NUM_SCALARS + (offset - 2) * SEAT_SCALARS + k

    def variant_scalar(self, name: str) -> int:
        """Offset of the variant's own scalar ``name`` (German: ``opening_total``, ...)."""
        return self.size - len(self.variant_scalars) + self.variant_scalars.index(name)

    def extra_plane(self, k: int) -> slice:
        start = self.extra + k * self.num_cards
        return slice(start, start + self.num_cards)


def observation_layout(variant) -> ObservationLayout:
    spec = variant.spec if hasattr(variant, "spec") else variant
    c, m, seats = int(spec.num_cards), int(spec.max_melds), int(spec.max_seats)
    planes = NUM_CARD_PLANES + (seats - 2) * SEAT_PLANES
    meld_rows = planes * c
    scalars = meld_rows + m * c
    size = scalars + NUM_SCALARS + (seats - 2) * SEAT_SCALARS + len(batch.variant_scalar_names(spec))
    extra_planes = NUM_EXTRA_PLANES + (seats - 2)
    return ObservationLayout(c, m, 0, meld_rows, scalars, size, size,
                             size + extra_planes * c, (planes + m + size - scalars, c), seats,
                             batch.variant_scalar_names(spec))


def obs_features_of(obs_features, variant=None) -> str:
    """The checked ``obs_features`` option (``None`` = ``"none"``): anything but a name of
    :data:`OBS_FEATURES`, or a solver block for a variant without one, raises
    ``ConfigError`` naming the supported ones."""
    name = "none" if obs_features is None else obs_features
    if name not in OBS_FEATURES:
        raise ConfigError(f"obs_features must be one of {', '.join(map(repr, OBS_FEATURES))}; "
                          f"got {obs_features!r}")
    if name != "none" and variant is not None:
        _solver.check_solver_features(variant, name)
    return name


def has_move_block(obs_features) -> bool:
    """Whether ``obs_features`` ends in the move block: the last ``num_actions`` values of the
    observation are the variant's compiled heuristic's move, one-hot (all 0 when the seat
    is not to move)."""
    return obs_features in _solver.MOVE_DISCARDS


def feature_size(variant, obs_features="none") -> int:
    """Length of the feature block ``obs_features`` appends to the player view (0 for none)."""
    if obs_features_of(obs_features, variant) == "none":
        return 0
    return _solver.feature_size(variant, has_move_block(obs_features))


def observation_size(variant, obs_features="none") -> int:
    """Length of the flat player view for ``variant`` (a Variant or its Spec; a Variant for
    a feature block), with the ``obs_features`` block appended."""
    size = observation_layout(variant).size
    return size if obs_features in ("none", None) else size + feature_size(variant, obs_features)


def encode_views(states, variant, players, out, obs_features="none") -> None:
    """:func:`encode_observations` of ``variant``'s ``states`` into ``out`` followed by the
    ``obs_features`` block (checked by the caller: :func:`obs_features_of`); ``out`` has
    :func:`observation_size` ``(variant, obs_features)`` columns (or more)."""
    players = np.asarray(players, np.int64)
    encode_observations(states, variant.spec_ref, players, out)
    if obs_features not in ("none", None):
        _solver.solver_features(variant, obs_features)(
            states, players, out, observation_layout(variant).size)


def clairvoyant_size(variant) -> int:
    return observation_layout(variant).clairvoyant_size


def state_size(variant) -> int:
    return clairvoyant_size(variant)


def planes_shape(variant) -> tuple:
    """Shape ``(rows, C)`` of the 2-D view: card planes, meld-slot rows, then every scalar
    broadcast along a row."""
    return observation_layout(variant).planes_shape


def obs_dtype_of(obs_dtype) -> np.dtype:
    """The numpy dtype of an env's ``obs_dtype`` option (a name of :data:`OBS_DTYPES` or the
    dtype itself); anything else raises ``ConfigError`` naming the allowed values."""
    try:
        dtype = np.dtype(obs_dtype) if obs_dtype is not None else None
    except (TypeError, ValueError):
        dtype = None
    if dtype is None or dtype.name not in OBS_DTYPES:
        raise ConfigError(f"obs_dtype must be one of {', '.join(map(repr, OBS_DTYPES))}; "
                          f"got {obs_dtype!r}")
    return dtype


def _no_clairvoyant_features(clairvoyant, obs_features) -> bool:
    features = obs_features not in ("none", None)
    if features and clairvoyant:
        raise ConfigError("obs_features apply to the player view, not the clairvoyant encoding")
    return features


def observation_bounds(variant, clairvoyant: bool = False, dtype=np.float32,
                       obs_features="none") -> tuple[np.ndarray, np.ndarray]:
    """(low, high) of the flat encoding in ``dtype`` (float32: [-1, 1]; int8: scaled features
    in [-127, 127], binary ones 0/1), for ``gymnasium.spaces.Box``; ``obs_features``: with
    that block appended (player view only)."""
    lay = observation_layout(variant)
    n = lay.clairvoyant_size if clairvoyant else lay.size
    low = np.zeros(n, np.float32)
    for k in SIGNED_SCALARS:
        low[lay.scalar(k)] = -1.0
    for o in range(2, lay.num_seats):
        for k in SIGNED_SEAT_SCALARS:
            low[lay.seat_scalar(k, o)] = -1.0
    if _no_clairvoyant_features(clairvoyant, obs_features):
        obs_features_of(obs_features, variant)
        signed = _solver.signed_features(variant, has_move_block(obs_features))
        low = np.concatenate([low, np.where(signed, -1.0, 0.0).astype(np.float32)])
    high = np.ones(len(low), np.float32)
    if np.dtype(dtype) == np.int8:
        scale = np.where(scaled_features(variant, clairvoyant, obs_features),
                         INT8_SCALE, 1).astype(np.float32)
        return (low * scale).astype(np.int8), (high * scale).astype(np.int8)
    return low, high


def observation_scale(variant, layout: str = "flat", obs_features="none") -> np.ndarray:
    """float32 factors that turn int8 player views into the float32 encoding's scale:
    ``obs * observation_scale(variant)`` (1 for binary features, 1/127 for scaled ones;
    equal to the float32 encoding up to the int8 rounding, 0.5/127). ``layout="planes"``
    gives the factors in the 2-D view's shape (no feature block there)."""
    if layout == "planes" and obs_features not in ("none", None):
        raise ConfigError("obs_features need the flat layout, not layout='planes'")
    scale = np.where(scaled_features(variant, obs_features=obs_features),
                     1.0 / INT8_SCALE, 1.0).astype(np.float32)
    return to_planes(scale[None], variant)[0] if layout == "planes" else scale


def scaled_features(variant, clairvoyant: bool = False, obs_features="none") -> np.ndarray:
    """Bool mask of the scaled (non-binary) features; int8 output stores them as round(127 x)."""
    if _no_clairvoyant_features(clairvoyant, obs_features):
        obs_features_of(obs_features, variant)
        return np.concatenate([scaled_features(variant),
                               _solver.scaled_features(variant, has_move_block(obs_features))])
    lay = observation_layout(variant)
    scaled = np.zeros(lay.clairvoyant_size if clairvoyant else lay.size, bool)
    scaled[lay.card_plane(P_DISCARD_DEPTH)] = True
    for k in SCALED_SCALARS:
        scaled[lay.scalar(k)] = True
    for o in range(2, lay.num_seats):
        for k in SCALED_SEAT_SCALARS:
            scaled[lay.seat_scalar(k, o)] = True
    for name in lay.variant_scalars:      # all in [0, 1]; the binary ones are unaffected
        scaled[lay.variant_scalar(name)] = True
    if clairvoyant:
        scaled[lay.extra_plane(X_STOCK_DEPTH)] = True
    return scaled


def to_planes(flat: np.ndarray, variant, out: np.ndarray | None = None) -> np.ndarray:
    """2-D view ``(..., rows, C)`` of flat player views ``(..., size)`` (scalars broadcast)."""
    lay = observation_layout(variant)
    c = lay.num_cards
    rows = lay.meld_rows // c + lay.max_melds
    if out is None:
        out = np.empty(flat.shape[:-1] + lay.planes_shape, dtype=flat.dtype)
    out[..., :rows, :] = flat[..., : rows * c].reshape(flat.shape[:-1] + (rows, c))
    out[..., rows:, :] = flat[..., lay.scalars: lay.size, None]
    return out


def describe_layout(variant) -> list[tuple[str, int, int, str]]:
    """``(name, offset, length, kind)`` for every block of the flat clairvoyant layout."""
    lay = observation_layout(variant)
    c = lay.num_cards
    further = range(2, lay.num_seats)
    rows = [(f"plane:{n}", k * c, c, "card") for k, n in enumerate(CARD_PLANE_NAMES)]
    rows += [(f"plane:{n}+{o}", lay.seat_plane(k, o).start, c, "card")
             for o in further for k, n in enumerate(SEAT_PLANE_NAMES)]
    rows += [(f"meld_slot:{m}", lay.meld_rows + m * c, c, "face") for m in range(lay.max_melds)]
    rows += [(f"scalar:{n}", lay.scalars + k, 1, "scalar") for k, n in enumerate(SCALAR_NAMES)]
    rows += [(f"scalar:{n}+{o}", lay.seat_scalar(k, o), 1, "scalar")
             for o in further for k, n in enumerate(SEAT_SCALAR_NAMES)]
    rows += [(f"scalar:{n}", lay.variant_scalar(n), 1, "scalar") for n in lay.variant_scalars]
    rows += [(f"extra:{n}", lay.extra + k * c, c, "card") for k, n in enumerate(EXTRA_PLANE_NAMES)]
    rows += [(f"extra:hand+{o}", lay.extra_plane(NUM_EXTRA_PLANES + o - 2).start, c, "card")
             for o in further]
    return rows


# --------------------------------------------------------------------------------------
# compiled encoders


@njit(cache=True)
def _planes(spec):
    """Card planes before the meld-slot rows: the fixed ones and each further seat's."""
    return NUM_CARD_PLANES + (spec.max_seats - 2) * SEAT_PLANES


@njit(cache=True)
def view_size(spec):
    """Length of the flat player view (as :func:`observation_size`), inside compiled code."""
    C = spec.num_cards
    return ((_planes(spec) + spec.max_melds) * C + NUM_SCALARS + (spec.max_seats - 2) * SEAT_SCALARS
            + batch.num_variant_scalars(spec))


@njit(cache=True)
def _encode_view(s, spec, p, row, q):
    C = spec.num_cards
    P = spec.num_players
    o = (p + 1) % P
    row[:] = 0
    cf = float(C)
    is_current = s.current == p
    phase = s.phase
    ended = phase == PHASE_RESPONSE or phase == PHASE_HAND_OVER or phase == PHASE_GAME_OVER
    planes = _planes(spec)
    my_hand = 0
    hand_sizes = np.zeros(P, np.int64)      # by seat offset from me
    deadwood = 0
    for c in range(C):
        loc = s.loc[c]
        if loc == LOC_HAND + p:
            my_hand += 1
            deadwood += spec.hand_value[card_face_now(s, spec, c)]
            row[P_HAND * C + c] = 1
            if is_current and s.taken[c] != 0:
                row[P_HAND_TAKEN * C + c] = 1
            if s.public[c] != 0:
                row[P_HAND_PUBLIC * C + c] = 1
        elif loc >= LOC_HAND:
            k = (loc - LOC_HAND - p) % P
            hand_sizes[k] += 1
            if s.public[c] == 0:
                row[P_UNSEEN * C + c] = 1
            elif k == 1:
                row[P_OPP_KNOWN * C + c] = 1
            else:
                row[(NUM_CARD_PLANES + (k - 2) * SEAT_PLANES + 1) * C + c] = 1
        elif loc == LOC_TABLE:
            k = (s.owner[c] - p) % P
            if k == 0:
                row[P_TABLE_MINE * C + c] = 1
            elif k == 1:
                row[P_TABLE_OPP * C + c] = 1
            else:
                row[(NUM_CARD_PLANES + (k - 2) * SEAT_PLANES) * C + c] = 1
            m = s.meld_of[c]
            if s.m_founder[m] == p:
                row[P_TABLE_MY_MELD * C + c] = 1
            if is_current and s.taken[c] != 0:   # Robber's: placed from my hand in this play
                row[P_HAND_TAKEN * C + c] = 1
            f = s.shown[c]                       # -1: a joker in an unfinished meld (Robber's)
            if f >= 0:
                row[P_TABLE_FACES * C + f] = 1
                row[(planes + m) * C + f] = 1
            if is_wild(s, spec, c):  # a joker or wild: its declared face
                if f >= 0:
                    row[P_JOKER_FACES * C + f] = 1
                if c >= NUM_FACES:      # a card with a column of its own (not a face's): itself
                    row[P_TABLE_FACES * C + c] = 1
                    row[(planes + m) * C + c] = 1
        elif loc == LOC_FACEDOWN:
            if ended and s.ender == p:
                row[P_MY_FACEDOWN * C + c] = 1
            else:
                row[P_UNSEEN * C + c] = 1
        elif loc == LOC_STOCK:
            row[P_UNSEEN * C + c] = 1
        # LOC_DISCARD is written below, in pile order
    n = s.discard_len
    for i in range(n):
        c = s.discard[i]
        depth = n - 1 - i
        row[P_DISCARD * C + c] = 1
        row[P_DISCARD_DEPTH * C + c] = _q((cf - depth) / cf, q)
    if n > 0:
        row[P_DISCARD_TOP * C + s.discard[n - 1]] = 1
    if s.obligation >= 0:
        row[P_OBLIGATION * C + s.obligation] = 1

    b = (planes + spec.max_melds) * C
    row[b + S_STOCK] = _q((s.stock_len - s.stock_ptr) / cf, q)
    row[b + S_DISCARD] = _q(n / cf, q)
    row[b + S_MY_HAND] = _q(my_hand / cf, q)
    row[b + S_OPP_HAND] = _q(hand_sizes[1] / cf, q)
    row[b + S_PHASE + phase] = 1
    if is_current:
        row[b + S_MY_TURN] = 1
    if s.dealer == p:
        row[b + S_DEALER] = 1
    row[b + S_TURN] = _q(s.turn / float(spec.max_turns), q)
    target = float(spec.target_score)
    row[b + S_MY_TOTAL] = _q(s.scores[p] / target, q)
    row[b + S_OPP_TOTAL] = _q(s.scores[o] / target, q)
    if s.obligation >= 0:
        row[b + S_OBLIGATION] = 1
    if is_current and s.placed_this_turn != 0:
        row[b + S_PLACED_NOW] = 1
    if s.placed_before[p] != 0:
        row[b + S_MY_PLACED] = 1
    if s.placed_before[o] != 0:
        row[b + S_OPP_PLACED] = 1
    if ended and s.ender >= 0:
        if s.ender == p:
            row[b + S_I_ENDED] = 1
        else:
            row[b + S_OPP_ENDED] = 1
        k = s.end_kind
        if 1 <= k <= 3:  # END_KNOCK, END_BASE_CAMP, END_HIGH_CAMP
            row[b + S_END_KIND + k - 1] = 1
    row[b + S_MY_DEADWOOD] = _q(deadwood / 200.0, q)
    row[b + S_LAST_MINE] = _q(s.h_points[p] / 200.0, q)
    row[b + S_LAST_OPP] = _q(s.h_points[o] / 200.0, q)
    row[b + S_HAND_NO] = _q(s.hand_no / 100.0, q)
    for k in range(2, P):
        seat = (p + k) % P
        x = b + NUM_SCALARS + (k - 2) * SEAT_SCALARS
        row[x] = _q(hand_sizes[k] / cf, q)
        row[x + 1] = _q(s.scores[seat] / target, q)
        row[x + 2] = 1 if s.placed_before[seat] != 0 else 0
        row[x + 3] = _q(s.h_points[seat] / 200.0, q)
    batch.variant_scalars(s, spec, p, row, b + NUM_SCALARS + (spec.max_seats - 2) * SEAT_SCALARS, q)


@njit(cache=True)
def _encode_extra(s, spec, p, row, start, q):
    C = spec.num_cards
    P = spec.num_players
    row[start:start + (NUM_EXTRA_PLANES + spec.max_seats - 2) * C] = 0
    for c in range(C):
        loc = s.loc[c]
        if loc >= LOC_HAND and loc != LOC_HAND + p:
            k = (loc - LOC_HAND - p) % P
            plane = X_OPP_HAND if k == 1 else NUM_EXTRA_PLANES + k - 2
            row[start + plane * C + c] = 1
            if s.taken[c] != 0:
                row[start + X_OPP_TAKEN * C + c] = 1
        elif loc == LOC_FACEDOWN:
            row[start + X_FACEDOWN * C + c] = 1
    cf = float(C)
    for i in range(s.stock_ptr, s.stock_len):
        row[start + X_STOCK_DEPTH * C + s.stock[i]] = _q((cf - (i - s.stock_ptr)) / cf, q)


@njit(cache=True)
def encode_observations(states, spec, players, out):
    """Write the view of seat ``players[b]`` of game ``states[b]`` into ``out[b, :size]``.

    ``out``: (B, n >= observation_size) float32 or int8 (int8: scaled features x 127).
    ``spec``: the record or ``Variant.spec_ref`` (faster from Python; core.spec.spec_of)."""
    spec = spec_of(spec)
    q = float(INT8_SCALE) if out.itemsize == 1 else 1.0
    for b in range(states.shape[0]):
        _encode_view(states[b], spec, players[b], out[b], q)


@njit(cache=True)
def encode_clairvoyant(states, spec, players, out):
    """Player view of ``players[b]`` followed by the hidden information (``out``: (B, clairvoyant_size))."""
    spec = spec_of(spec)
    q = float(INT8_SCALE) if out.itemsize == 1 else 1.0
    size = view_size(spec)
    for b in range(states.shape[0]):
        _encode_view(states[b], spec, players[b], out[b], q)
        _encode_extra(states[b], spec, players[b], out[b], size, q)


@njit(cache=True)
def encode_state(states, spec, out):
    """The full state (clairvoyant encoding from seat 0) for centralised critics."""
    spec = spec_of(spec)
    q = float(INT8_SCALE) if out.itemsize == 1 else 1.0
    size = view_size(spec)
    for b in range(states.shape[0]):
        _encode_view(states[b], spec, 0, out[b], q)
        _encode_extra(states[b], spec, 0, out[b], size, q)
