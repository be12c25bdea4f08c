"""The opt-in solver feature block of the observation (``obs_features="solver"``,
docs/observation.md "Solver features"): the default view unchanged, only the observing
player's information read, the values equal to what the playout policy's solver primitives
compute (MR-7 takes and placements, MR-8 deadwood, MR-12 points), int8 = float32 quantised,
and the envs, the ppo agent and the self-play trainer carrying the choice. German and Crazy
Rummy's block (below): the German rules player's values (GE-3, GE-5, its discard scores,
takes and feeding), the same way."""

from __future__ import annotations

import hashlib

import numpy as np
import pytest
from numba import njit

from agents import fastpolicy as fp
from agents import german_policy as gp
from mountain_rummy_env import Game, make_variant
from mountain_rummy_env import german_features as GF
from mountain_rummy_env import german_player as GP
from mountain_rummy_env.config import ConfigError
from mountain_rummy_env.core import german as core_german
from mountain_rummy_env.core.rules import SCRATCH_RECORDS, card_face_now
from mountain_rummy_env.core.state import LOC_HAND, PHASE_DRAW, PHASE_PLAY, PHASE_RESPONSE
from mountain_rummy_env.envs import observation as O
from mountain_rummy_env.game import player_view
from mountain_rummy_env import solver_features as SF
from mountain_rummy_env.solver import (
    MultisetHand, best_arrangement_multiset, best_deadwood_batch_multiset, make_workspace,
)

VARIANT = make_variant("mountain")
SPEC = VARIANT.spec
VIEW = O.observation_layout(VARIANT).size
LAY = {name: (off, n) for name, off, n in SF.feature_layout(VARIANT)}
F = SF.JOKER_FACE + 1


@njit
def _act(states, spec, mask, tables):
    """The variant's playout move (Mountain's heuristic, German's rules player) in states[0]."""
    return fp.fast_action(states[0], spec, mask, tables)


@njit
def _holds_of(states, spec, p, counts, tables):
    return SF._holds(states[0], spec, p, counts, tables)


@njit
def _best_take_of(states, spec, mask, counts, bits, tables):
    return SF._best_take(states[0], spec, mask, counts, bits, tables)


def positions(n, seed):
    """Mid-hand positions (``Game`` of one, copied) from play by the compiled playout policy
    with some random moves: melds on the table, deep piles, placements to choose."""
    rng = np.random.default_rng(seed)
    tables = fp.rollout_tables(VARIANT)
    g = Game(VARIANT, 1)
    out = []
    while len(out) < n:
        g.reset(seed=int(rng.integers(1 << 30)))
        stop = int(rng.integers(1, 150))
        for _ in range(stop):
            if g.done(0):
                break
            legal = np.flatnonzero(g.masks[0])
            a = (int(rng.choice(legal)) if rng.random() < 0.2 else
                 int(_act(g.states.copy(), SPEC, g.masks[0].copy(), tables)))
            g.step_one(0, a)
        if not g.done(0):
            out.append(g)
            g = Game(VARIANT, 1)
    return out


@pytest.fixture(scope="module")
def games():
    return positions(60, seed=23)


def encode(states, players, obs_features="solver", dtype=np.float32):
    out = np.zeros((len(states), O.observation_size(VARIANT, obs_features)), dtype)
    O.encode_views(states, VARIANT, np.asarray(players, np.int64), out, obs_features)
    return out


def hand_of(s, p):
    counts = np.zeros(F, np.int64)
    bits = 0
    for c in np.flatnonzero(s["loc"] == LOC_HAND + p):
        f = int(SPEC.card_face[c])
        counts[f] += 1
        if f < SF.JOKER_FACE:
            bits |= 1 << f
    return counts, np.uint64(bits)


def points(hands, jokers):
    out = np.zeros(len(hands), np.int32)
    SF._points(fp.rollout_tables(VARIANT), np.array(hands, np.uint64), np.array(jokers, np.int8), out)
    return out


def block(row, name):
    off, n = LAY[name]
    return row[VIEW + off: VIEW + off + n]


def test_default_observation_is_unchanged():
    """obs_features="none" (the default everywhere) is the plain view, bit for bit: the
    shipped policy's 1809 floats, equal on seeded positions to the encoding before the
    feature block existed (digest taken then)."""
    assert O.observation_size(VARIANT) == O.observation_size(VARIANT, "none") == 1809
    assert O.observation_size(VARIANT, "solver") == 1809 + SF.feature_size(VARIANT)
    rng = np.random.default_rng(5)
    g = Game(VARIANT, 16)
    g.reset(seed=77)
    digest = hashlib.sha256()
    for _ in range(40):
        plain = np.zeros((16, 1809), np.float32)
        O.encode_observations(g.states, SPEC, g.states["current"].astype(np.int64), plain)
        assert np.array_equal(encode(g.states, g.states["current"], "none"), plain)
        digest.update(plain.tobytes())
        acts = [int(rng.choice(np.flatnonzero(m))) if not g.done(i) else -1
                for i, m in enumerate(g.masks)]
        for i, a in enumerate(acts):
            if a >= 0:
                g.step_one(i, a)
    assert digest.hexdigest()[:16] == DEFAULT_DIGEST, digest.hexdigest()[:16]


DEFAULT_DIGEST = "d760a1f795984468"


def test_solver_features_read_only_the_players_information(games):
    """The block is equal on the true state and on the player's public view (hidden cards
    re-dealt in card-id order, the stock blanked), for both seats and every phase."""
    checked = 0
    for g in games:
        for p in (0, 1):
            true = encode(g.states, [p])[0]
            public = encode(player_view(g, 0, p).public_state(), [p])[0]
            assert np.array_equal(true[VIEW:], public[VIEW:])
            checked += 1
    assert checked == 2 * len(games)


def test_discard_costs_and_melded_cards_are_the_solver_points(games):
    """Per held face: (points of the hand without it - points of the hand) / 50 (MR-12), and
    'in melds' exactly when that change is not the card's own deadwood value (MR-8)."""
    for g in games:
        s = g.states[0]
        for p in (0, 1):
            row = encode(g.states, [p])[0]
            counts, bits = hand_of(s, p)
            held = np.flatnonzero(counts)
            hands = [bits] + [bits & ~np.uint64(1 << f) if f < 52 else bits for f in held]
            jok = int(counts[52])
            jokers = [jok] + [jok - 1 if f == 52 else jok for f in held]
            pts = points(hands, jokers)
            want = np.zeros(F)
            want[held] = np.clip((pts[1:] - pts[0]) / SF.DISCARD_SCALE, -1, 1)
            assert np.allclose(block(row, "discard_cost"), want, atol=1e-6)
            melded = np.zeros(F)
            melded[held] = (pts[1:] - pts[0]) != SPEC.hand_value[held]
            assert np.array_equal(block(row, "in_melds"), melded)
            assert block(row, "points")[0] == pytest.approx(np.clip(pts[0] / 200, -1, 1), abs=1e-6)


def test_take_gains_match_the_playout_policys_best_take(games):
    """Per pile card: the points gained by taking it with every card above it (MR-7.1), as
    ``_best_take`` weighs it; the best legal gain is the take it chooses."""
    tables = fp.rollout_tables(VARIANT)
    draws = 0
    for g in games:
        s = g.states[0]
        pile = list(s["discard"][: s["discard_len"]])
        for p in (0, 1):
            row = encode(g.states, [p])[0]
            gains = block(row, "take_gain")
            counts, bits = hand_of(s, p)
            hands, jokers, b, j = [bits], [int(counts[52])], int(bits), int(counts[52])
            for c in reversed(pile):
                f = int(SPEC.card_face[c])
                if f == 52:
                    j += 1
                else:
                    b |= 1 << f
                hands.append(np.uint64(b))
                jokers.append(j)
            pts = points(hands, jokers)
            want = np.zeros(SPEC.num_cards)
            for k, c in enumerate(reversed(pile)):
                want[c] = np.clip((pts[k + 1] - pts[0]) / SF.TAKE_SCALE, -1, 1)
            assert np.allclose(gains, want, atol=1e-6)
            if s["phase"] == PHASE_DRAW and s["current"] == p and pile:
                draws += 1
                mask = g.masks[0]
                chosen = _best_take_of(g.states, SPEC, mask, counts, bits, tables)
                legal = [c for c in reversed(pile) if mask[SPEC.a_take + c]]
                best = max((gains[c] for c in legal), default=0.0)
                if chosen == SPEC.a_draw:
                    assert best <= 0
                else:
                    assert gains[chosen - SPEC.a_take] == best > 0
    assert draws > 5


def test_placement_and_hold_are_the_playout_policys(games):
    """To move in the play or response phase: the hold flag is ``_holds`` and the placement
    block shows the faces of ``_arranged_placement``'s meld or layoff (MR-7.2, MR-9)."""
    tables = fp.rollout_tables(VARIANT)
    placing = 0
    for g in games:
        s = g.states[0]
        for p in (0, 1):
            row = encode(g.states, [p])[0]
            scal = dict(zip(SF.FEATURE_SCALAR_NAMES, row[-SF.NUM_FEATURE_SCALARS:]))
            place = block(row, "placement")
            if not (s["current"] == p and s["phase"] in (PHASE_PLAY, PHASE_RESPONSE)):
                assert scal["holds"] == scal["places"] == 0 and not place.any()
                continue
            counts, bits = hand_of(s, p)
            assert scal["holds"] == _holds_of(g.states, SPEC, p, counts, tables)
            a = SF._arranged_placement(SPEC, g.masks[0], counts, bits, tables)
            assert scal["places"] == (a >= 0)
            if a < 0:
                assert not place.any()
                continue
            placing += 1
            want = np.zeros(F)
            if a < SPEC.a_regroup:
                tm = int(SPEC.t_mask[a - SPEC.a_meld])
                want[[f for f in range(52) if tm >> f & 1 and int(bits) >> f & 1]] = 1
                if tm & ~int(bits):
                    want[52] = 1
            else:
                f = (a - SPEC.a_layoff) % 52
                want[f if counts[f] else 52] = 1
            assert np.array_equal(place, want)
    assert placing > 3


def test_layable_and_end_flags(games):
    """'layable' is the playout's ``_layable`` per face (MR-9), and 'can_end' says the
    least deadwood after placing and dropping one card is within the knock limit (MR-7.3)."""
    for g in games:
        s = g.states[0]
        for p in (0, 1):
            row = encode(g.states, [p])[0]
            lay = block(row, "layable")
            for f in range(52):
                assert lay[f] == SF._layable(s, SPEC, f)
            assert lay[52] == 0
            end = block(row, "end_deadwood")[0] * 200
            if row[VIEW + LAY["can_end"][0]]:
                assert round(end) <= SPEC.knock_limit
            else:
                assert round(end) > SPEC.knock_limit


def test_int8_features_are_the_float32_ones_quantised(games):
    scale = O.observation_scale(VARIANT, obs_features="solver")
    scaled = O.scaled_features(VARIANT, obs_features="solver")
    low, high = O.observation_bounds(VARIANT, obs_features="solver")
    for g in games[:30]:
        for p in (0, 1):
            f = encode(g.states, [p])[0]
            q = encode(g.states, [p], dtype=np.int8)[0]
            assert np.array_equal(q[~scaled], f[~scaled].astype(np.int8))
            assert np.abs(q * scale - f).max() <= 0.5 / 127 + 1e-6
            assert (f >= low).all() and (f <= high).all()


def test_unknown_or_unsupported_obs_features_are_one_line_errors():
    with pytest.raises(ConfigError, match="obs_features must be one of 'none', 'solver', "
                                          "'solver_move', 'solver_move_outs'; got 'magic'"):
        O.observation_size(VARIANT, "magic")
    for name in ("german", "crazy"):
        with pytest.raises(ConfigError, match=f"'solver_move_outs' is Mountain's .* for variant "
                                              f"'{name}' 'solver_move' already shows the rules"):
            O.observation_size(make_variant(name), "solver_move_outs")
    for name in ("gin", "robbers"):
        for features in ("solver", "solver_move"):
            with pytest.raises(ConfigError, match=f"obs_features='{features}' is not available "
                                                  f"for variant '{name}'; supported: crazy, "
                                                  "german, mountain$"):
                O.observation_size(make_variant(name), features)
    from mountain_rummy_env import gin_rummy_v0, mountain_rummy_v0, robbers_rummy_v0

    with pytest.raises(ConfigError, match="supported: crazy, german, mountain"):
        gin_rummy_v0.vector_env(2, obs_features="solver")
    with pytest.raises(ConfigError, match="not available for variant 'robbers'"):
        robbers_rummy_v0.env(obs_features="solver")
    with pytest.raises(ConfigError, match="must be one of"):
        mountain_rummy_v0.vector_env(2, obs_features="yes")
    with pytest.raises(ConfigError, match="needs observation_layout='flat'"):
        mountain_rummy_v0.env(observation_layout="planes", obs_features="solver")


# --------------------------------------------------------------------------------------
# German and Crazy Rummy: the block of mountain_rummy_env/german_features.py (the German
# rules player's questions: GE-5 opening, discard scores, takes, layoffs, feeding)

GERMANS = {name: make_variant(name) for name in ("german", "crazy")}


def german_positions(variant, n, seed):
    """Positions (``Game`` of one) of 4-seat hands played by the compiled rules player with
    some random moves: openings, melds on the table, known cards, every phase."""
    rng = np.random.default_rng(seed)
    params = GP.rules_params(variant.name)
    work = np.zeros(SCRATCH_RECORDS, dtype=variant.dtype)
    order = GP.credit_order(variant)
    out = []
    g = Game(variant, 1)
    while len(out) < n:
        g.reset(seed=int(rng.integers(1 << 30)))
        for _ in range(int(rng.integers(1, 160))):
            if g.done(0):
                break
            a = gp.choose(g.states, variant.spec_ref, params, work, order)
            if rng.random() < 0.2 or not g.masks[0, a]:
                a = int(rng.choice(np.flatnonzero(g.masks[0])))
            g.step_one(0, int(a))
        if not g.done(0):
            out.append(g)
            g = Game(variant, 1)
    return out


@pytest.fixture(scope="module")
def german_games():
    return {name: german_positions(v, 40, seed=7) for name, v in GERMANS.items()}


def positions_of(name, request):
    return (request.getfixturevalue("games") if name == "mountain"
            else request.getfixturevalue("german_games")[name])


def encode_of(variant, states, players, obs_features="solver", dtype=np.float32):
    out = np.zeros((len(states), O.observation_size(variant, obs_features)), dtype)
    O.encode_views(states, variant, np.asarray(players, np.int64), out, obs_features)
    return out


def test_german_default_view_is_unchanged_and_the_block_has_its_size():
    """obs_features="none" stays the plain 6,417-value German view (2,125 Crazy); the
    solver block appends the German layout's values."""
    for name, v in GERMANS.items():
        plain = O.observation_layout(v).size
        assert O.observation_size(v) == O.observation_size(v, "none") == plain
        assert SF.feature_size(v) == 8 * 53 + len(GF.GERMAN_SCALAR_NAMES)
        assert O.observation_size(v, "solver") == plain + SF.feature_size(v)
        g = Game(v, 4)
        g.reset(seed=3)
        players = np.arange(4, dtype=np.int64)
        view = np.zeros((4, plain), np.float32)
        O.encode_observations(g.states, v.spec_ref, players, view)
        both = encode_of(v, g.states, players)
        assert np.array_equal(both[:, :plain], view)
        assert np.array_equal(encode_of(v, g.states, players, "none"), view)
    assert O.observation_size(GERMANS["german"]) == 6417


# sha256 (first 16 hex digits) of every seat's plain view over 60 seeded random steps of 8
# games, taken on main before the German block existed
PLAIN_DIGESTS = {"german": "8472d7bddb9bfa54", "crazy": "38d52cec6556557d",
                 "gin": "11bff8b52cc28cd4", "robbers": "be28d05431d3d333"}


@pytest.mark.parametrize("name", sorted(PLAIN_DIGESTS))
def test_default_view_of_every_variant_is_unchanged(name):
    """obs_features="none" is bit for bit the view before the German block, every variant."""
    v = make_variant(name)
    rng = np.random.default_rng(5)
    g = Game(v, 8)
    g.reset(seed=77)
    digest = hashlib.sha256()
    n = O.observation_layout(v).size
    for _ in range(60):
        for p in range(v.spec.num_players):
            out = np.zeros((8, n), np.float32)
            O.encode_views(g.states, v, np.full(8, p, np.int64), out, "none")
            digest.update(out.tobytes())
        for i, m in enumerate(g.masks):
            if not g.done(i):
                g.step_one(i, int(rng.choice(np.flatnonzero(m))))
    assert digest.hexdigest()[:16] == PLAIN_DIGESTS[name], digest.hexdigest()[:16]


@pytest.mark.parametrize("name", ["mountain", "german", "crazy"])
def test_block_is_equal_on_the_true_state_and_the_public_state(name, request):
    """Every variant with a block: equal for every seat on the true state and on that
    seat's ``public_state()`` (hidden cards dealt anew in card-id order, the stock blanked);
    encoding leaves the state as it was."""
    v = make_variant(name)
    view = O.observation_layout(v).size
    checked = 0
    for g in positions_of(name, request):
        for p in range(v.spec.num_players):
            before = g.states.tobytes()
            true = encode_of(v, g.states, [p])[0]
            assert g.states.tobytes() == before
            public = encode_of(v, player_view(g, 0, p).public_state(), [p])[0]
            assert np.array_equal(true[view:], public[view:])
            checked += 1
    assert checked >= 2 * 40


@pytest.mark.parametrize("name", ["mountain", "german", "crazy"])
def test_int8_block_is_the_float32_block_quantised(name, request):
    v = make_variant(name)
    scale = O.observation_scale(v, obs_features="solver")
    scaled = O.scaled_features(v, obs_features="solver")
    low, high = O.observation_bounds(v, obs_features="solver")
    for g in positions_of(name, request)[:20]:
        for p in range(v.spec.num_players):
            f = encode_of(v, g.states, [p])[0]
            q = encode_of(v, g.states, [p], dtype=np.int8)[0]
            assert np.array_equal(q[~scaled], f[~scaled].astype(np.int8))
            assert np.abs(q * scale - f).max() <= 0.5 / 127 + 1e-6
            assert (f >= low).all() and (f <= high).all()


def _german_hand(v, s, p):
    counts = np.zeros(F, np.int64)
    for c in np.flatnonzero(s["loc"] == LOC_HAND + p):
        counts[card_face_now(s, v.spec, c)] += 1
    once = sum(1 << f for f in range(52) if counts[f] >= 1)
    twice = sum(1 << f for f in range(52) if counts[f] >= 2)
    return counts, once, twice, int(counts[52])


@pytest.mark.parametrize("name", ["german", "crazy"])
def test_german_block_is_the_rules_players_values(name, german_games):
    """Per seat and face, the values the German rules player decides by (agents/
    german_policy.py): its discard scores (/100), its layoff, partial-meld and take tests,
    its feeding penalty, danger and cash flags; the least deadwood and meld credit of the
    meld solver (GE-3), the hand without each held face; the GE-5 opening questions; and,
    for the seat to move, the faces and kind of ``german_action``'s choice."""
    v = GERMANS[name]
    spec = v.spec
    view = O.observation_layout(v).size
    lay = {n: (off, k) for n, off, k in SF.feature_layout(v)}
    params = GP.rules_params(name)
    work = np.zeros(SCRATCH_RECORDS, dtype=v.dtype)
    order = GP.credit_order(v)
    ws = make_workspace(spec.num_templates)
    values = spec.solver_values
    kinds = set()
    opened_seen = 0
    for g in german_games[name]:
        s = g.states[0]
        for p in range(spec.num_players):
            row = encode_of(v, g.states, [p])[0, view:]

            def blk(n):
                off, k = lay[n]
                return row[off:off + k]

            def scal(n):
                return blk(n)[0]

            counts, once, twice, nj = _german_hand(v, s, p)
            held = np.flatnonzero(counts)
            scores = np.empty(F)
            GP.seat_discard_scores(s, spec, p, params, scores)
            if p == s["current"]:
                assert np.array_equal(scores, gp.discard_scores_of(g.states, v.spec_ref, params))
            want = np.where(np.isfinite(scores), np.clip(scores / 100, -1, 1), 0)
            assert np.allclose(blk("discard_score"), want, atol=1e-6)
            # least deadwood of the hand and of the hand without one copy of each held face
            o, w, j = [once], [twice], [nj]
            for f in held:
                if f == 52:
                    o.append(once), w.append(twice), j.append(nj - 1)
                else:
                    bit = 1 << int(f)
                    o.append(once if twice & bit else once & ~bit), w.append(twice & ~bit)
                    j.append(nj)
            dw = best_deadwood_batch_multiset(np.array(o, np.uint64), np.array(w, np.uint64),
                                              np.array(j), v.table, values)
            d = np.zeros(F)
            d[held] = dw[1:] - dw[0]
            assert np.allclose(blk("discard_deadwood"), np.clip(d / 50, -1, 1), atol=1e-6)
            melded = np.zeros(F)
            melded[held] = d[held] != -values[held]
            assert np.array_equal(blk("in_melds"), melded)
            assert scal("deadwood") == pytest.approx(min(dw[0] / 200, 1), abs=1e-6)
            best = best_arrangement_multiset(MultisetHand(once, twice, nj), v.table, values, "credit")
            credit = best.credit if best is not None else 0
            assert scal("meld_credit") == pytest.approx(min(credit / 100, 1), abs=1e-6)
            # per face: layoffs, partials, joins, feeding the next seat
            nq = (p + 1) % spec.num_players
            known = [int(spec.card_face[c]) for c in np.flatnonzero(s["loc"] == LOC_HAND + nq)
                     if s["public"][c] and card_face_now(s, spec, c) != 52]
            for f in range(52):
                layable = GP._layable(s, spec, f)
                assert blk("layable")[f] == layable
                assert blk("in_partial")[f] == (counts[f] > 0 and GP._in_partial(f, counts))
                joins = GP._joins(s, spec, f, np.uint64(once), nj, counts, True)
                assert blk("joins")[f] == (layable or joins)
                risk = (params[GP.P_FEED_LAYOFF] if s["placed_before"][nq] and layable else 0.0)
                risk += sum(params[GP.P_FEED_KNOWN] * GP._related(f, k) for k in known)
                assert blk("feed_risk")[f] == pytest.approx(min(risk / 32, 1), abs=1e-6)
            assert blk("joins")[52] == GP._joins(s, spec, 52, np.uint64(once), nj, counts, True)
            danger = GP._danger(s, spec, p, params)
            assert scal("danger") == danger
            assert scal("cash") == (len(np.flatnonzero(s["loc"] == LOC_HAND + p))
                                    <= params[GP.P_CASH] or danger)
            # GE-5: opened, can open, the margin to 40
            opened = bool(s["placed_before"][p])
            opened_seen += opened
            assert scal("opened") == opened
            playing = p == s["current"] and s["phase"] == PHASE_PLAY
            total = int(s["open_total"]) if playing else 0
            pending = core_german.pending_face(s, spec) if playing else -1
            can = core_german.opening_reachable(spec, ws, np.uint64(once), np.uint64(twice), nj,
                                                total, pending)
            assert scal("can_open") == (not opened and can)
            margin = 0 if opened else np.clip((total + credit - spec.open_min) / 40, -1, 1)
            assert scal("open_margin") == pytest.approx(margin, abs=1e-6)
            # the pile top
            top = int(s["discard"][s["discard_len"] - 1]) if s["discard_len"] else -1
            if top < 0:
                assert scal("top_joins") == scal("top_opens") == scal("top_gain") == 0
            else:
                tf = card_face_now(s, spec, top)
                assert scal("top_joins") == GP._joins(s, spec, tf, np.uint64(once), nj, counts, True)
                o2, w2, j2 = core_german.with_face(np.uint64(once), np.uint64(twice), nj, tf)
                opens = core_german.opening_reachable(spec, ws, o2, w2, j2, 0, tf)
                assert scal("top_opens") == (not opened and opens)
                after = best_deadwood_batch_multiset(np.array([o2], np.uint64),
                                                     np.array([w2], np.uint64), np.array([j2]),
                                                     v.table, values)[0]
                gain = (dw[0] + values[tf] - after) / 50
                assert scal("top_gain") == pytest.approx(np.clip(gain, -1, 1), abs=1e-6)
            # the rules player's choice, to move
            play = blk("rules_play")
            flags = {n: scal(n) for n in ("rules_takes", "rules_melds", "rules_lays_off",
                                          "rules_swaps", "rules_discards")}
            if p != s["current"] or s["phase"] not in (PHASE_DRAW, PHASE_PLAY):
                assert not play.any() and not any(flags.values())
                continue
            a = int(gp.choose(g.states, v.spec_ref, params, work, order))
            assert g.masks[0, a]
            want = np.zeros(F)
            if spec.a_take <= a < spec.a_take + spec.num_cards:
                kind = "rules_takes"
            elif spec.a_draw == a:
                kind = None
            elif spec.a_meld <= a < spec.a_meld + spec.num_templates:
                kind, tm = "rules_melds", int(spec.t_mask[a - spec.a_meld])
                want[[f for f in range(52) if tm >> f & 1 and once >> f & 1]] = 1
                want[52] = bool(tm & ~once)
            elif spec.a_layoff <= a < spec.a_layoff + spec.max_melds * 52:
                kind, f = "rules_lays_off", (a - spec.a_layoff) % 52
                want[f if counts[f] else 52] = 1
            elif spec.a_swap <= a < spec.a_swap + spec.max_melds * 52:
                kind = "rules_swaps"
                want[(a - spec.a_swap) % 52] = 1
            else:
                kind = "rules_discards"
                want[a - spec.a_discard] = 1
            kinds.add(kind)
            assert flags == {n: float(n == kind) for n in flags}, (a, flags)
            assert np.array_equal(play, want)
    assert {"rules_melds", "rules_discards", None} | ({"rules_takes"} if name == "german"
                                                       else set()) <= kinds
    assert opened_seen > 0


@pytest.mark.parametrize("name,features", [("mountain", "solver"), ("german", "solver"),
                                           ("crazy", "solver"), ("mountain", "solver_move"),
                                           ("german", "solver_move"),
                                           ("mountain", "solver_move_outs")])
def test_envs_append_the_block(name, features):
    """The vector env (learner and opponent callable), the AEC env and the single-agent
    env give the view with the variant's block (and the move block), equal to
    :func:`encode_views`, inside their spaces."""
    import importlib

    module = importlib.import_module(f"mountain_rummy_env.{name}_rummy_v0")
    v = GERMANS.get(name, VARIANT)
    seen = []

    def opponent(obs, masks):
        seen.append(obs.copy())
        return np.array([np.flatnonzero(m)[0] for m in masks])

    env = module.vector_env(4, seed=3, opponent=opponent, obs_dtype="int8", obs_features=features)
    obs, info = env.reset()
    assert obs.shape == (4, O.observation_size(v, features)) and obs.dtype == np.int8
    rng = np.random.default_rng(0)
    for _ in range(20):
        assert obs in env.observation_space
        assert np.array_equal(obs, encode_of(v, env.game.states, env._learner, features, np.int8))
        acts = [int(rng.choice(np.flatnonzero(m))) for m in info["action_mask"]]
        obs, _, _, _, info = env.step(acts)
    assert seen and all(o.shape[1] == obs.shape[1] for o in seen)
    aec = module.env(obs_features=features)
    aec.reset(seed=4)
    for _ in range(30):
        agent = aec.agent_selection
        o = aec.observe(agent)["observation"]
        assert o in aec.observation_space(agent)["observation"]
        assert np.array_equal(o, encode_of(v, aec.game.states,
                                           [aec.possible_agents.index(agent)], features)[0])
        obs_, _, term, trunc, _ = aec.last()
        aec.step(None if term or trunc else int(np.flatnonzero(obs_["action_mask"])[0]))
        if not aec.agents:
            break
    single = module.SingleAgentEnv(obs_features=features)
    o, _ = single.reset(seed=1)
    assert o.shape == (O.observation_size(v, features),) and o in single.observation_space


@pytest.mark.parametrize("name,features,discard", [
    ("mountain", "solver_move", "points"), ("mountain", "solver_move_outs", "outs"),
    ("german", "solver_move", "points"), ("crazy", "solver_move", "points")])
def test_move_block_is_the_playout_policys_move(name, features, discard, request):
    """obs_features="solver_move": the solver block, then the seat's move under the
    variant's playout policy (Mountain's heuristic, German's and Crazy's rules player),
    one-hot over the actions, legal, where the seat is to move; all 0 for the other seats;
    equal on the true state and the seat's public state; binary in both dtypes.
    "solver_move_outs": Mountain's heuristic with the rules player's discard."""
    v = GERMANS.get(name, VARIANT)
    tables = fp.rollout_tables(v, discard)
    n_act = v.num_actions
    low, high = O.observation_bounds(v, obs_features=features)
    assert not O.scaled_features(v, obs_features=features)[-n_act:].any()
    assert (low[-n_act:] == 0).all() and (high[-n_act:] == 1).all()
    moved = 0
    for g in positions_of(name, request):
        for p in range(v.num_players):
            row = encode_of(v, g.states, [p], features)[0]
            assert np.array_equal(row[:-n_act], encode_of(v, g.states, [p])[0])
            public = encode_of(v, player_view(g, 0, p).public_state(), [p], features)[0]
            assert np.array_equal(row[-n_act:], public[-n_act:])
            assert np.array_equal(encode_of(v, g.states, [p], features, np.int8)[0][-n_act:],
                                  row[-n_act:].astype(np.int8))
            move = np.flatnonzero(row[-n_act:])
            if p != g.current_player(0):
                assert len(move) == 0
                continue
            a = _act(g.states.copy(), v.spec, g.masks[0].copy(), tables)
            assert list(move) == [a] and g.masks[0, a] and row[-n_act + a] == 1
            moved += 1
    assert moved >= 30
