"""The variant registry (mountain_rummy_env/registry.py): every entry builds, has its env
modules and Gymnasium ids, errors name what is allowed, and everything that lists variants
(package exports, Gymnasium, render titles, records, the CLI, agent-side tables) reads it."""

from __future__ import annotations

import re
import warnings
from dataclasses import dataclass
from pathlib import Path

import gymnasium
import numpy as np
import pytest

import mountain_rummy_env
from mountain_rummy_env import ConfigError, make_variant, registry
from mountain_rummy_env.core.spec import Spec
from mountain_rummy_env.registry import VARIANTS, VariantInfo

ENTRIES = list(VARIANTS.values())
NAMES = list(VARIANTS)


@pytest.mark.parametrize("name", NAMES)
def test_every_variant_builds_with_each_seat_count(name):
    info = VARIANTS[name]
    variant = make_variant(name)
    assert variant.name == name
    assert isinstance(variant.config, info.config_class)
    assert variant.num_players in info.num_players
    for seats in info.num_players:
        assert make_variant(name, num_players=seats).num_players == seats
    # one seat count: num_players is checked, not a config option; several: it is one
    assert ("num_players" in info.option_defaults()) == (len(info.num_players) > 1)


@pytest.mark.parametrize("name", NAMES)
def test_package_exports_and_env_module(name):
    info = VARIANTS[name]
    module = info.import_env_module()
    assert getattr(mountain_rummy_env, info.env_module) is module
    assert getattr(mountain_rummy_env, info.factory.__name__) is info.factory
    assert getattr(mountain_rummy_env, info.config_class.__name__) is info.config_class
    assert {info.env_module, info.factory.__name__, info.config_class.__name__} <= set(mountain_rummy_env.__all__)
    assert module.raw_env.metadata["name"] == info.env_module
    assert module.raw_env.__module__ == module.SingleAgentEnv.__module__ == module.__name__
    assert module.ENV_ID in info.gym_ids
    e = module.env(render_mode="ansi")
    e.reset(seed=0)
    assert e.unwrapped.variant.name == name
    assert e.render().startswith(f"{info.title} - hand 1")     # the title comes from the entry
    venv = module.vector_env(2, seed=0)
    assert venv.variant.name == name and info.title in module.vector_env.__doc__


@pytest.mark.parametrize("name", NAMES)
def test_every_surface_takes_the_compact_obs_dtype(name):
    """obs_dtype='int8' on each variant's AEC env, Gymnasium id and vector env."""
    info = VARIANTS[name]
    module = info.import_env_module()
    e = module.env(obs_dtype="int8")
    e.reset(seed=0)
    obs = e.observe(e.agent_selection)
    assert obs["observation"].dtype == np.int8 and obs in e.observation_space(e.agent_selection)
    single = gymnasium.make(info.gym_ids[0], obs_dtype="int8")
    assert single.reset(seed=0)[0] in single.observation_space
    venv = module.vector_env(2, seed=0, obs_dtype="int8")
    assert venv.reset()[0].dtype == np.int8


@pytest.mark.parametrize("name, env_id", [(i.name, g) for i in ENTRIES for g in i.gym_ids])
def test_gymnasium_ids_make_a_checked_env(name, env_id):
    from gymnasium.utils.env_checker import check_env

    info = VARIANTS[name]
    assert gymnasium.spec(env_id).entry_point == f"mountain_rummy_env.{info.env_module}:SingleAgentEnv"
    env = gymnasium.make(env_id, illegal_action="terminate")
    assert env.unwrapped.variant.name == name
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        check_env(env.unwrapped)


def test_unknown_variant_names_the_known_ones():
    with pytest.raises(ConfigError, match=f"unknown variant 'canasta'; known: {', '.join(NAMES)}"):
        make_variant("canasta")
    from mountain_rummy_env.records import make_variant as record_make_variant
    with pytest.raises(ConfigError, match="known: mountain, gin"):
        record_make_variant("canasta", {})
    assert record_make_variant("gin", {"knock_card": 9, "num_players": 2}).config.knock_card == 9


@pytest.mark.parametrize("name", ["mountain", "gin"])
@pytest.mark.parametrize("seats", [3, 1, 0, True, "2", 2.0])
def test_two_seat_variants_refuse_other_seat_counts(name, seats):
    with pytest.raises(ConfigError, match=rf"num_players must be 2 for {VARIANTS[name].title} .*got {seats!r}"):
        make_variant(name, num_players=seats)
    with pytest.raises(ConfigError, match="num_players must be 2"):
        VARIANTS[name].import_env_module().raw_env(num_players=seats)   # the envs ask the registry


def test_bad_option_names_the_valid_ones():
    with pytest.raises(ConfigError, match="unknown option.*num_jokers for GinConfig; valid: episode, gin_bonus"):
        make_variant("gin", num_jokers=1)
    with pytest.raises(ConfigError, match="num_jokers must be one of 2, 1, 0; got 5"):
        make_variant("mountain", num_jokers=5)


@dataclass(frozen=True)
class _SeatsConfig:
    num_players: int = 4


def _seats_factory(**options):
    return _SeatsConfig(**options)


SEATS = VariantInfo(name="seats", title="Seats Rummy", description="a test entry", factory=_seats_factory,
                    config_class=_SeatsConfig, num_players=range(2, 7), env_module="seats_v0",
                    gym_ids=("Seats-v0",))


def test_several_seat_counts_pass_num_players_on_and_name_the_range():
    assert SEATS.make(num_players=6) == _SeatsConfig(6)
    assert SEATS.make() == _SeatsConfig(4)
    with pytest.raises(ConfigError, match=r"num_players must be in 2\.\.6 for Seats Rummy \('seats'\); got 7"):
        SEATS.make(num_players=7)


def test_cli_variant_choices_and_help_come_from_the_registry(monkeypatch, capsys):
    from experiments.cli import build_parser, main

    monkeypatch.setitem(VARIANTS, "seats", SEATS)
    parser = build_parser()
    for command in ("play", "tournament"):
        assert parser.parse_args([command, "--variant", "seats"]).variant == "seats"
    with pytest.raises(SystemExit):
        parser.parse_args(["play", "--variant", "canasta"])
    assert "choose from " + ", ".join(VARIANTS) in capsys.readouterr().err.replace("'", "")
    with pytest.raises(SystemExit):
        main(["play", "--help"])
    help_text = " ".join(capsys.readouterr().out.split())
    assert ", ".join(f"{name} ({info.title})" for name, info in VARIANTS.items()) in help_text
    assert "seats (Seats Rummy)" in help_text
    assert "1000 Mountain Rummy, 100 Gin Rummy" in help_text      # --target: each config's default
    monkeypatch.delitem(VARIANTS, "seats")
    assert main(["variants"]) == 0
    listing = capsys.readouterr().out
    for info in ENTRIES:
        assert f"{info.name:10s} {info.title}: {info.description}" in listing
        assert f"mountain_rummy_env.{info.env_module}; Gymnasium: {', '.join(info.gym_ids)}" in listing
    assert "knock_card=10" in listing and "num_jokers=2" in listing


def test_train_ppo_needs_defaults_for_the_variant(monkeypatch, capsys):
    from experiments import train_ppo

    monkeypatch.setattr(train_ppo, "DEFAULT_EVAL", {"mountain": "random"})
    with pytest.raises(SystemExit):
        train_ppo.parse_args(["--variant", "gin"])
    assert "--eval-opponents has no default for --variant gin (only for mountain); give --eval-opponents" \
        in capsys.readouterr().err
    assert train_ppo.parse_args(["--variant", "gin", "--eval-opponents", "random"]).variant == "gin"


def test_playout_policies_fail_clearly_for_an_unsupported_variant(monkeypatch):
    from agents import fastpolicy

    monkeypatch.setattr(fastpolicy, "POLICY_BY_SPEC", {Spec: fastpolicy.mountain_action})
    monkeypatch.setattr(fastpolicy, "_TABLES", {})
    with pytest.raises(NotImplementedError, match="no playout policy for variant 'gin' .*GinSpec.* has: Spec"):
        fastpolicy.rollout_tables(make_variant("gin"))


def test_the_library_never_imports_agents_or_experiments():
    package = Path(registry.__file__).parent
    for path in package.rglob("*.py"):
        assert not re.search(r"^\s*(from|import)\s+(agents|experiments)\b", path.read_text(), re.M), path
