"""The compiled rules' spec record (core/spec.py): the namedtuple frozen into one numpy record."""

from __future__ import annotations

import numpy as np
import pytest
from numba import njit

from mountain_rummy_env import make_variant
from mountain_rummy_env.core import batch
from mountain_rummy_env.core.dispatch import FastCall
from mountain_rummy_env.core.spec import Spec, replace_spec, spec_class_of, spec_record

VARIANTS = [("mountain", {}), ("gin", {}), ("german", {"num_players": 4}),
            ("crazy", {"num_players": 4}), ("robbers", {"num_players": 4})]


@pytest.mark.parametrize("name,options", VARIANTS)
def test_record_holds_every_namedtuple_field(name, options):
    variant = make_variant(name, **options)
    spec = variant.spec
    cls = spec_class_of(spec)
    assert cls in batch.KERNELS_BY_SPEC and batch.kernels_of(spec) is batch.KERNELS_BY_SPEC[cls]
    for field in cls._fields:
        assert field in spec.dtype.names
    assert spec.num_cards == variant.deck.num_cards
    assert np.array_equal(spec.card_face, variant.deck.face_table())
    assert spec_class_of(spec.dtype) is cls


def test_one_dtype_object_per_layout():
    """Numba knows a record's type by its dtype object's address, FastCall by identity: a
    layout keeps one dtype object, alive for good (a freed one once had its address reused
    by Crazy's, and Crazy's record was read as German's, giving empty masks)."""
    a = make_variant("german", num_players=4).spec
    b = make_variant("german", num_players=6).spec
    c = make_variant("crazy", num_players=4).spec
    assert a.dtype is b.dtype and (a.num_players, b.num_players) == (4, 6)
    assert a.dtype is not c.dtype


def test_replace_spec_copies_and_checks_names():
    spec = make_variant("mountain").spec
    short = replace_spec(spec, hand_size=7)
    assert (short.hand_size, spec.hand_size) == (7, 13)
    assert short.dtype is spec.dtype
    with pytest.raises(KeyError, match="no field 'hand_sizes'"):
        replace_spec(spec, hand_sizes=7)
    with pytest.raises(KeyError):
        replace_spec(spec, kind_Spec=1)


def test_spec_record_refuses_other_field_types():
    fields = dict(zip(Spec._fields, make_variant("mountain").spec.tolist()[1:]))
    fields["num_players"] = "two"
    with pytest.raises(TypeError, match="num_players"):
        spec_record(Spec(**fields))


def test_not_a_spec_record():
    with pytest.raises(TypeError, match="not a spec record"):
        spec_class_of(np.zeros(1, [("x", np.int64)])[0])


@njit
def _read_x(record):
    return record.x


def test_fastcall_takes_the_dispatcher_for_another_record_layout():
    """A compiled entry point accepts a record of any layout and reads it by its own, so
    FastCall checks the record's dtype as it does an array's."""
    first = np.array([(7,)], [("x", np.int64)])[0]
    second = np.array([(1, 9)], [("pad", np.int64), ("x", np.int64)])[0]
    call = FastCall(_read_x)
    assert [call(first), call(second), call(first)] == [7, 9, 7]


@pytest.mark.parametrize("name,options", VARIANTS)
def test_entry_points_take_the_record_or_its_one_element_array(name, options):
    """``Variant.spec_ref`` holds the spec as a one-element array, which numba reads by
    pointer where it reads a record through the buffer protocol (core.spec.spec_of); the
    compiled entry points give the same games, masks and observations from either."""
    from mountain_rummy_env.core.rules import SCRATCH_RECORDS
    from mountain_rummy_env.core.state import PHASE_HAND_OVER
    from mountain_rummy_env.envs.observation import encode_observations, observation_size

    variant = make_variant(name, **options)
    ref = variant.spec_ref
    assert ref.shape == (1,) and ref.dtype is variant.spec.dtype
    assert ref[0].tobytes() == variant.spec.tobytes()
    n, P = 6, variant.num_players
    games = {}
    for form, spec in (("record", variant.spec), ("array", ref)):
        states = np.zeros(n, variant.dtype)
        masks = np.zeros((n, variant.num_actions), np.int8)
        events = np.zeros(n, np.int8)
        scratch = np.zeros(SCRATCH_RECORDS, variant.dtype)
        batch.new_game_batch(states, spec, np.arange(n, dtype=np.uint64) + 3,
                             np.full(n, -1, np.int64), np.zeros(n, np.bool_), masks, scratch)
        rng = np.random.default_rng(0)
        obs = np.zeros((n, observation_size(variant)), np.float32)
        for _ in range(30):
            live = states["phase"] < PHASE_HAND_OVER
            actions = np.array([rng.choice(np.flatnonzero(m)) if ok else -1
                                for m, ok in zip(masks, live)], np.int64)
            batch.step_batch(states, spec, actions, masks, events, scratch)
            encode_observations(states, spec, np.arange(n, dtype=np.int64) % P, obs)
        games[form] = (states.tobytes(), masks.tobytes(), obs.tobytes())
    assert games["record"] == games["array"]


_MASKS_SCRIPT = """
import hashlib, sys
import numpy as np
from mountain_rummy_env import Game, make_variant
for name in sys.argv[1:]:
    game = Game(make_variant(name, num_players=4), 1)
    game.reset(seed=11)
    rng = np.random.default_rng(0)
    digest = hashlib.sha256()
    for _ in range(40):
        digest.update(game.masks[0].tobytes())
        game.step(np.array([rng.choice(np.flatnonzero(game.masks[0]))]))
    print(name, digest.hexdigest()[:16])
"""


def test_kernels_cached_by_separate_processes_load_together(tmp_path):
    """Numba named a record type's code by a number given in the order a process met its
    layouts, so Crazy's kernels cached by one process and German's by another had the same
    names, and a process loading both ran German's code on Crazy's records
    (``_numba_cache.stable_record_names``)."""
    import os
    import subprocess
    import sys

    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path / "numba"))

    def masks(*names):
        out = subprocess.run([sys.executable, "-c", _MASKS_SCRIPT, *names], env=env,
                             capture_output=True, text=True, timeout=600)
        assert out.returncode == 0, out.stderr[-2000:]
        return out.stdout.split()

    alone = masks("crazy") + masks("german")
    together = masks("german", "crazy")
    assert sorted(together) == sorted(alone)
