"""The variant registry: the one table a variant is added to, and what reads it.

Each :class:`VariantInfo` names a variant (the name records, the CLI's ``--variant`` and the
agents' tables use), its factory and config class, the title logs and renders show, the seat
counts it is played with, its PettingZoo module (``mountain_rummy_env.<env_module>``) and its
Gymnasium ids. :func:`make_variant` builds a variant by name; the package's exports, the root
``*_v0`` modules (:mod:`mountain_rummy_env.envs.game_module`), the Gymnasium registration,
render titles, game records and the CLI all read :data:`VARIANTS`.

Adding a variant: write its config and factory (``variants/<name>.py``), add its entry to
:data:`VARIANTS`, and add the root module ``<env_module>.py`` (a docstring and two lines, as
``gin_rummy_v0.py``). Agent-side tables (``agents/``, ``experiments/``) fail with a message
naming the variants they do support until they get an entry of their own.
"""

from __future__ import annotations

import importlib
from dataclasses import MISSING, dataclass, fields
from types import ModuleType
from typing import Callable

from .config import ConfigError
from .variant import Variant
from .variants import crazy, german, robbers
from .variants.crazy import CrazyConfig, crazy_variant
from .variants.german import GermanConfig, german_variant
from .variants.gin import GinConfig, gin_variant
from .variants.mountain import MountainConfig, mountain_variant
from .variants.robbers import RobbersConfig, robbers_variant


@dataclass(frozen=True)
class VariantInfo:
    """One registered variant (see the module docstring)."""

    name: str                          # the variant's ``Variant.name``
    title: str                         # shown by renders, logs and the CLI
    description: str                   # one line, for the CLI's ``variants`` list
    factory: Callable[..., Variant]    # ``factory(**options)``, options of ``config_class``
    config_class: type
    num_players: range                 # seat counts; several: ``num_players`` is a config option
    env_module: str                    # root module name, PettingZoo's env name
    gym_ids: tuple[str, ...]           # Gymnasium ids of its single-agent env

    def make(self, **options) -> Variant:
        """This variant with config ``options``; ``num_players`` must be a seat count of
        :attr:`num_players` (a variant with one seat count takes it only to check it)."""
        if "num_players" in options:
            self.check_num_players(options["num_players"])
            if len(self.num_players) == 1:
                options = {k: v for k, v in options.items() if k != "num_players"}
        return self.factory(**options)

    def check_num_players(self, num_players) -> None:
        """A :class:`ConfigError` naming the allowed seat counts unless ``num_players`` is one."""
        seats = self.num_players
        if isinstance(num_players, bool) or not isinstance(num_players, int) or num_players not in seats:
            allowed = str(seats[0]) if len(seats) == 1 else f"in {seats[0]}..{seats[-1]}"
            raise ConfigError(f"num_players must be {allowed} for {self.title} ({self.name!r}); "
                              f"got {num_players!r}")

    def option_defaults(self) -> dict:
        """Every config option with its default value (``num_players`` included when it is one)."""
        return {f.name: f.default for f in fields(self.config_class) if f.default is not MISSING}

    def import_env_module(self) -> ModuleType:
        """The root PettingZoo module, ``mountain_rummy_env.<env_module>``."""
        return importlib.import_module(f"{__package__}.{self.env_module}")


VARIANTS: dict[str, VariantInfo] = {info.name: info for info in (
    VariantInfo(
        name="mountain", title="Mountain Rummy",
        description="knocks, Base/High Camp, undercuts, Summit; deep discard draws and "
                    "layoffs that may reorganise the opponent's melds (docs/mountain_rummy.md)",
        factory=mountain_variant, config_class=MountainConfig, num_players=range(2, 3),
        env_module="mountain_rummy_v0", gym_ids=("MountainRummy-v0",)),
    VariantInfo(
        name="gin", title="Gin Rummy",
        description="classic Gin Rummy, checked move by move against OpenSpiel "
                    "(docs/gin_rummy.md)",
        factory=gin_variant, config_class=GinConfig, num_players=range(2, 3),
        env_module="gin_rummy_v0", gym_ids=("GinRummy-v0",)),
    VariantInfo(
        name="german", title="German Rummy",
        description="Rommé for 2-6 players with two decks and four jokers: a 40-point opening, "
                    "layoffs and joker exchange; everyone is scored (docs/german_rummy.md)",
        factory=german_variant, config_class=GermanConfig,
        num_players=range(german.MIN_SEATS, german.MAX_SEATS + 1),
        env_module="german_rummy_v0", gym_ids=("GermanRummy-v0",)),
    VariantInfo(
        name="crazy", title="Crazy Rummy",
        description="3-6 players, one deck, 13 rounds with a wild rank that changes each round "
                    "(A ... K); going out needs a final discard; penalty points "
                    "(docs/crazy_rummy.md)",
        factory=crazy_variant, config_class=CrazyConfig,
        num_players=range(crazy.MIN_SEATS, crazy.MAX_SEATS + 1),
        env_module="crazy_rummy_v0", gym_ids=("CrazyRummy-v0",)),
    VariantInfo(
        name="robbers", title="Robber's Rummy",
        description="2-6 players, two decks and jokers, no discard pile; after a 40-point "
                    "opening a play may rearrange the whole table (docs/robbers_rummy.md)",
        factory=robbers_variant, config_class=RobbersConfig,
        num_players=range(robbers.MIN_SEATS, robbers.MAX_SEATS + 1),
        env_module="robbers_rummy_v0", gym_ids=("RobbersRummy-v0",)),
)}

DEFAULT_VARIANT = "mountain"   # the primary game: the CLI's and training's default


def variant_names() -> tuple[str, ...]:
    """Names :func:`make_variant` accepts (the CLI's ``--variant`` choices)."""
    return tuple(VARIANTS)


def variant_info(name: str) -> VariantInfo:
    """The entry of variant ``name``; an unknown name is a :class:`ConfigError` naming the known."""
    info = VARIANTS.get(name)
    if info is None:
        raise ConfigError(f"unknown variant {name!r}; known: {', '.join(VARIANTS)}")
    return info


def make_variant(name: str, **options) -> Variant:
    """Variant ``name`` with config ``options`` (and ``num_players``, checked against the
    variant's seat counts); errors name the known variants, seat counts or options."""
    return variant_info(name).make(**options)


def variant_title(name: str) -> str:
    """The title of variant ``name``; the name itself for a variant built outside the registry."""
    info = VARIANTS.get(name)
    return info.title if info is not None else name
