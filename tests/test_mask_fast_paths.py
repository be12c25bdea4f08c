"""The mask's shortcuts against the full recomputation (issue #24, MR-7, MR-7.1).

``rules.legal_mask`` answers most deep-draw questions (can the taken card k still be
placed this turn?) from face bitmasks instead of the reachability search: yes where k fits
now (``rules.obligation_fits_now``), no where no sequence of placements could place it
(``rules.obligation_ever_fits``); ``rules.legal_mask_full`` always searches. In the draw
phase those bitmasks are followed down the discard pile instead of recomputed from each
take: at every draw position each take's probes must equal ``obligation_fits_now`` and
``obligation_ever_fits`` of the take made, and a no must be the search's no. Along random
playouts that take deep from the discard pile often (so that positions with a pending
obligation card are common), every mask must equal the full one, entry for entry, and
with k pending, each placement's no must be the search's no. The
vector env's sampler, which skips blocks of the mask by their count, must draw the same
action as the entry-by-entry walk it replaced.
"""

from __future__ import annotations

import numpy as np
from hypothesis import Phase, given, settings
from hypothesis import strategies as st
from numba import njit

from mountain_rummy_env import Game
from mountain_rummy_env.cards import JOKER_FACE
from mountain_rummy_env.core import rules
from mountain_rummy_env.core.state import PHASE_DRAW, PHASE_PLAY
from mountain_rummy_env.envs.vector import sample_masked

from helpers import short_variant, variant

NO_SHRINK = (Phase.explicit, Phase.reuse, Phase.generate)


@njit(cache=True)
def _full_mask(s, spec, mask, scratch):
    rules.legal_mask_full(s, spec, mask, scratch)


@njit(cache=True)
def _reachable_by_search(s, spec, scratch):
    return rules.obligation_reachable(s, spec, scratch, False)


@njit(cache=True)
def _fits_now(s, spec):
    return rules.obligation_fits_now(s, spec)


@njit(cache=True)
def _ever_fits(s, spec):
    return rules.obligation_ever_fits(s, spec)


@njit(cache=True)
def _probe_against_takes(s, spec, scratch):
    """The draw phase's probes of each take deeper than the top (``rules.face_fits_now`` and
    ``rules.face_ever_fits`` on the bitmasks of ``rules.fit_bits`` followed down the pile,
    as ``legal_mask`` does) against ``rules.obligation_fits_now`` and
    ``rules.obligation_ever_fits`` of the take made on the last record of ``scratch``, and
    each no of the second against the search. Every natural take is probed, also those
    ``legal_mask`` rules out before (a stronger check). Returns (takes compared, first
    probes saying yes, second probes saying no, disagreements)."""
    size, free, nj, nj_taken, held, free_bits, up = rules.fit_bits(s, spec, s.current)
    after = scratch[len(scratch) - 1:]
    compared = 0
    yes = 0
    no = 0
    bad = 0
    for depth in range(s.discard_len):
        f = spec.card_face[s.discard[s.discard_len - 1 - depth]]
        size += 1
        if f == JOKER_FACE:
            nj += 1
            nj_taken += 1
        else:
            held |= np.uint64(1) << np.uint64(f)
        if depth == 0 or f == JOKER_FACE:
            continue
        after[0] = s
        rules.take_cards(after[0], depth)
        probe = rules.face_fits_now(s, spec, f, size, free, nj, nj_taken, held, free_bits, up)
        ever = rules.face_ever_fits(s, spec, s.current, f, held, nj, up)
        compared += 1
        yes += probe
        no += not ever
        bad += probe != rules.obligation_fits_now(after[0], spec)
        bad += ever != rules.obligation_ever_fits(after[0], spec)
        if not ever:   # its no must be the search's no
            bad += rules.obligation_reachable(after[0], spec, scratch[:len(scratch) - 1], False)
    return compared, yes, no, bad


@njit(cache=True)
def _placements_against_search(s, spec, scratch):
    """With the obligation card k pending, each placement not using k is made on the last
    record of ``scratch`` (as ``legal_mask``'s probe does) and ``rules.obligation_ever_fits``
    asked of it; each no must be the search's no. Returns (placements, noes, disagreements)."""
    acts, n_hand, free_used, uses, placed = rules.candidate_buffers(spec)
    view = rules.new_views(s, spec)
    count = rules.placement_candidates_of(s, spec, view, -1, False, np.uint64(0), acts, n_hand,
                                          free_used, uses, placed)
    probe = scratch[len(scratch) - 1:]
    n = 0
    no = 0
    bad = 0
    for i in range(count):
        if uses[i]:
            continue
        probe[0] = s
        rules.apply_placement_with(probe[0], spec, view, acts[i])
        n += 1
        if not rules.obligation_ever_fits(probe[0], spec):
            no += 1
            bad += rules.obligation_reachable(probe[0], spec, scratch[:len(scratch) - 1], False)
    return n, no, bad


def play_and_compare(v, seed: int, steps: int, deep_bias: float) -> dict:
    """Random play of one game of ``v``; deep takes chosen with probability ``deep_bias``
    where offered. Every position's mask is compared with the full recomputation, and at
    every position with a pending obligation card the shortcut's yes must be the search's;
    at every draw position each take's probe must be the shortcut's answer after the take."""
    g = Game(v, 1)
    g.reset(seed=seed)
    rng = np.random.default_rng(seed)
    lay = v.layout
    full = np.zeros(v.num_actions, np.int8)
    scratch = np.zeros(rules.SCRATCH_RECORDS, dtype=v.dtype)
    seen = {"draw": 0, "pending": 0, "fits_now": 0, "cannot_fit": 0, "positions": 0,
            "probed": 0, "probe_yes": 0, "probe_no": 0, "placements": 0, "placement_no": 0}
    for _ in range(steps):
        if g.done(0):
            break
        s = g.states[0]
        _full_mask(s, g.spec, full, scratch)
        mask = g.masks[0]
        assert np.array_equal(mask, full), (
            seed, int(s["phase"]), np.flatnonzero(mask != full).tolist())
        seen["positions"] += 1
        phase = int(s["phase"])
        if phase == PHASE_DRAW:
            seen["draw"] += 1
            if rules.fits_now_possible(s, g.spec):
                compared, yes, no, bad = _probe_against_takes(s, g.spec, scratch)
                assert bad == 0, (seed, int(s["turn"]))
                seen["probed"] += compared
                seen["probe_yes"] += yes
                seen["probe_no"] += no
        if phase == PHASE_PLAY and int(s["obligation"]) >= 0:
            seen["pending"] += 1
            if _fits_now(s, g.spec):
                seen["fits_now"] += 1
                # a shortcut's yes is the search's yes
                assert _reachable_by_search(s, g.spec, scratch)
            if not _ever_fits(s, g.spec):
                seen["cannot_fit"] += 1
                # and its no is the search's no
                assert not _reachable_by_search(s, g.spec, scratch)
            n, no, bad = _placements_against_search(s, g.spec, scratch)
            assert bad == 0, (seed, int(s["turn"]))
            seen["placements"] += n
            seen["placement_no"] += no
        legal = np.flatnonzero(mask)
        deep = legal[(legal > lay.take) & (legal < lay.meld)]
        if phase == PHASE_DRAW and len(deep) > 1 and rng.random() < deep_bias:
            a = int(rng.choice(deep))
        else:
            a = int(rng.choice(legal))
        g.step_one(0, a)
    return seen


@settings(deadline=None, phases=NO_SHRINK, max_examples=12)
@given(seed=st.integers(0, 2**31 - 1), jokers=st.sampled_from([2, 1, 0]),
       hand_size=st.sampled_from([13, 13, 9, 7]), deep_bias=st.sampled_from([0.3, 0.9]))
def test_fast_mask_equals_full_recomputation(seed, jokers, hand_size, deep_bias):
    """MR-7.1: the shortcut masks equal the full search's along random playouts."""
    v = variant(num_jokers=jokers) if hand_size == 13 else short_variant(hand_size, num_jokers=jokers)
    play_and_compare(v, seed, 300, deep_bias)


def test_fast_mask_equals_full_on_many_positions():
    """A fixed set of games, enough pending-obligation positions to mean something."""
    total = None
    for seed in range(12):
        seen = play_and_compare(variant(), 1000 + seed, 400, 0.8)
        total = seen if total is None else {k: total[k] + seen[k] for k in total}
    assert total["pending"] >= 100 and total["fits_now"] >= 20, total
    assert total["probed"] >= 1000 and total["probe_yes"] >= 100, total
    assert total["probe_no"] >= 100 and total["placement_no"] >= 40, total


def _sample_reference(mask, rng_state):
    """The sampler before blocks: count, then walk entry by entry (splitmix64 as compiled)."""
    legal = np.flatnonzero(mask)
    if not len(legal):
        return -1, rng_state   # no draw made
    m64 = (1 << 64) - 1
    z = (rng_state + 0x9E3779B97F4A7C15) & m64
    new_state = z
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & m64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & m64
    z ^= z >> 31
    return int(legal[z % len(legal)]), new_state


@settings(deadline=None, max_examples=60)
@given(width=st.sampled_from([1, 63, 64, 65, 241, 1845, 4279]), density=st.floats(0, 1),
       seed=st.integers(0, 2**63 - 1))
def test_block_sampler_draws_the_same_action(width, density, seed):
    r = np.random.default_rng(seed % 2**32)
    masks = (r.random((8, width)) < density).astype(np.int8)
    rng = np.array([(seed + 7919 * b) % 2**64 for b in range(8)], np.uint64)
    out = np.zeros(8, np.int64)
    expected = [_sample_reference(masks[b], int(rng[b])) for b in range(8)]
    sample_masked(masks, rng, out)
    assert out.tolist() == [a for a, _ in expected]
    assert rng.tolist() == [st_ for _, st_ in expected]


@njit(cache=True)
def _templates_both_ways(spec, regroup, hand_bits, detachable, nj, require_face):
    """``rules.fitting_templates`` and the scan of the whole table it replaces."""
    fast = np.empty(spec.num_templates, np.int16)
    n = rules.fitting_templates(spec, regroup, hand_bits, detachable, nj, require_face, fast)
    full = []
    for t in range(spec.num_templates):
        holds = require_face < 0 or (spec.t_mask[t] >> np.uint64(require_face)) & np.uint64(1)
        if holds and rules.template_may_fit(spec.t_mask[t], regroup, hand_bits, detachable, nj):
            full.append(t)
    return fast[:n].copy(), np.array(full, np.int64)


def _face_bits(faces) -> np.uint64:
    return np.uint64(sum(1 << f for f in set(faces)))


@settings(deadline=None, max_examples=150)
@given(name=st.sampled_from(["mountain", "gin", "german", "crazy"]),
       hand=st.lists(st.integers(0, JOKER_FACE - 1), min_size=1, max_size=14),
       table=st.lists(st.integers(0, JOKER_FACE - 1), max_size=20),
       nj=st.integers(0, 2), regroup=st.booleans(), require=st.integers(-1, JOKER_FACE - 1))
def test_templates_found_by_lowest_face_are_the_table_scan(name, hand, table, nj, regroup,
                                                          require):
    """MR-3, MR-9: the placement candidates read only the ``by_low`` lists of the faces at
    hand when there is no joker; the templates found, and their order, must be those of
    ``template_may_fit`` over the whole table (with jokers, or narrowed to one face, the
    table is scanned as before)."""
    from mountain_rummy_env import make_variant

    spec = make_variant(name).spec
    hand_bits = _face_bits(hand)
    detachable = _face_bits(table) & ~hand_bits
    fast, full = _templates_both_ways(spec, int(regroup), hand_bits, detachable, nj, require)
    assert fast.tolist() == full.tolist()


def test_every_template_is_listed_under_its_lowest_face():
    """The ``by_low`` index of every variant's meld table: each template once, under the
    lowest face it holds, ids increasing within a list."""
    from mountain_rummy_env import make_variant

    for name in ("mountain", "gin", "german", "crazy", "robbers"):
        spec = make_variant(name).spec
        seen = []
        for f in range(JOKER_FACE):
            ids = spec.by_low[f, : spec.by_low_count[f]].tolist()
            assert ids == sorted(ids)
            for t in ids:
                mask = int(spec.t_mask[t])
                assert mask & -mask == 1 << f, (name, t, f)
            seen += ids
        assert sorted(seen) == list(range(spec.num_templates)), name
