"""Batch entry points shared by every variant.

Each variant's kernel module defines the per-game functions ``apply_action``,
``legal_mask``, ``new_game``, ``next_hand`` and ``start_hand`` over its own record and spec
types. The loops here are written once: numba specialises them per spec type and resolves
the per-game functions at compile time through :data:`KERNELS_BY_SPEC` (the result is cached
like any other compiled call). The vector env's fused kernel uses the same resolution.
"""

from __future__ import annotations

from numba import njit
from numba.extending import overload

from . import rules
from .spec import Spec, spec_class_of, spec_of

KERNELS_BY_SPEC: dict = {Spec: rules}


def register_kernels(spec_class, kernels) -> None:
    """Play specs of ``spec_class`` with the per-game functions of module ``kernels``."""
    KERNELS_BY_SPEC[spec_class] = kernels


def kernels_of(spec) -> object:
    """The kernel module playing ``spec`` (a spec record or namedtuple class), from Python."""
    cls = spec if isinstance(spec, type) else spec_class_of(spec)
    if cls not in KERNELS_BY_SPEC:
        raise TypeError(f"no kernels registered for spec type {cls!r}")
    return KERNELS_BY_SPEC[cls]


def variant_scalar_names(spec) -> tuple[str, ...]:
    """Names of the observation scalars a variant adds: its module's ``scalar_names(spec)``
    where the options choose them (as many as ``VARIANT_SCALAR_NAMES``, the compiled
    count), else ``VARIANT_SCALAR_NAMES``."""
    kernels = kernels_of(spec)
    if hasattr(kernels, "scalar_names"):
        return tuple(kernels.scalar_names(spec))
    return tuple(getattr(kernels, "VARIANT_SCALAR_NAMES", ()))


def _kernels_for(spec_type):
    cls = spec_class_of(spec_type)
    if cls not in KERNELS_BY_SPEC:
        raise TypeError(f"no kernels registered for spec type {cls!r}")
    return KERNELS_BY_SPEC[cls]


# Stubs resolved per spec type; calling them from Python is an error.
def apply_action(s, spec, a):  # pragma: no cover
    raise NotImplementedError("compiled only: resolved by spec type")


def legal_mask(s, spec, mask, scratch):  # pragma: no cover
    raise NotImplementedError("compiled only: resolved by spec type")


def new_game(s, spec, seed, dealer, deck_given):  # pragma: no cover
    raise NotImplementedError("compiled only: resolved by spec type")


def next_hand(s, spec):  # pragma: no cover
    raise NotImplementedError("compiled only: resolved by spec type")


def start_hand(s, spec):  # pragma: no cover
    raise NotImplementedError("compiled only: resolved by spec type")


def variant_scalars(s, spec, p, row, start, q):  # pragma: no cover
    raise NotImplementedError("compiled only: resolved by spec type")


def num_variant_scalars(spec):  # pragma: no cover
    raise NotImplementedError("compiled only: resolved by spec type")


@overload(variant_scalars)
def _variant_scalars(s, spec, p, row, start, q):
    fn = getattr(_kernels_for(spec), "variant_scalars", None)
    if fn is None:
        return lambda s, spec, p, row, start, q: None
    return lambda s, spec, p, row, start, q: fn(s, spec, p, row, start, q)


@overload(num_variant_scalars)
def _num_variant_scalars(spec):
    n = len(getattr(_kernels_for(spec), "VARIANT_SCALAR_NAMES", ()))
    return lambda spec: n


@overload(apply_action)
def _apply_action(s, spec, a):
    fn = _kernels_for(spec).apply_action
    return lambda s, spec, a: fn(s, spec, a)


@overload(legal_mask)
def _legal_mask(s, spec, mask, scratch):
    fn = _kernels_for(spec).legal_mask
    return lambda s, spec, mask, scratch: fn(s, spec, mask, scratch)


@overload(new_game)
def _new_game(s, spec, seed, dealer, deck_given):
    fn = _kernels_for(spec).new_game
    return lambda s, spec, seed, dealer, deck_given: fn(s, spec, seed, dealer, deck_given)


@overload(next_hand)
def _next_hand(s, spec):
    fn = _kernels_for(spec).next_hand
    return lambda s, spec: fn(s, spec)


@overload(start_hand)
def _start_hand(s, spec):
    fn = _kernels_for(spec).start_hand
    return lambda s, spec: fn(s, spec)


@njit(cache=True)
def step_batch(states, spec, actions, masks, events, scratch):
    """Apply ``actions[b]`` to every game whose mask allows it, then refresh its mask.
    Returns the index of the first game whose action was illegal (that game untouched), or -1.
    ``spec`` here and in the loops below: the record or ``Variant.spec_ref`` (spec_of)."""
    spec = spec_of(spec)
    bad = -1
    for b in range(states.shape[0]):
        a = actions[b]
        if a < 0 or a >= spec.num_actions or masks[b, a] == 0:
            events[b] = -1
            if bad < 0:
                bad = b
            continue
        events[b] = apply_action(states[b], spec, a)
        legal_mask(states[b], spec, masks[b], scratch)
    return bad


@njit(cache=True)
def mask_batch(states, spec, masks, scratch):
    spec = spec_of(spec)
    for b in range(states.shape[0]):
        legal_mask(states[b], spec, masks[b], scratch)


@njit(cache=True)
def new_game_batch(states, spec, seeds, dealers, deck_given, masks, scratch):
    spec = spec_of(spec)
    for b in range(states.shape[0]):
        new_game(states[b], spec, seeds[b], dealers[b], deck_given[b])
        legal_mask(states[b], spec, masks[b], scratch)


@njit(cache=True)
def next_hand_batch(states, spec, masks, scratch):
    """Deal the next hand of every game in ``states`` (each after a finished hand)."""
    spec = spec_of(spec)
    for b in range(states.shape[0]):
        next_hand(states[b], spec)
        legal_mask(states[b], spec, masks[b], scratch)


@njit(cache=True)
def deal_batch(states, spec, masks, scratch):
    """Deal every game's ``deck`` as its current hand, keeping dealer, totals and hand number
    (a scripted deck replacing the one the engine shuffled for a new hand)."""
    spec = spec_of(spec)
    for b in range(states.shape[0]):
        start_hand(states[b], spec)
        legal_mask(states[b], spec, masks[b], scratch)
