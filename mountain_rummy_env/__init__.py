"""mountain-rummy-env: RL environments for Mountain Rummy and other rummy variants.

The rules run on a batched, compiled core (:mod:`mountain_rummy_env.core`); variants are
small configuration modules (:mod:`mountain_rummy_env.variants`); :class:`Game` drives a
batch of games from Python. Environment adapters build on these.
"""

from ._numba_cache import configure_cache

configure_cache()  # before any compiled module is imported

from .cards import CardError, Deck
from .config import ConfigError
from .game import Game, HandSummary, IllegalActionError, PlayerView, player_view
from .variant import ActionError, Variant
from .variants.mountain import MountainConfig, mountain_variant

__all__ = [
    "ActionError", "CardError", "ConfigError", "Deck", "Game", "HandSummary",
    "IllegalActionError", "MountainConfig", "PlayerView", "Variant", "mountain_variant",
    "player_view",
]

# Environment adapters (importing them registers the Gymnasium id "MountainRummy-v0").
from . import mountain_rummy_v0  # noqa: E402
from .envs import SingleAgentEnv, encode_observations, observation_size  # noqa: E402

__all__ += ["SingleAgentEnv", "encode_observations", "mountain_rummy_v0", "observation_size"]

# Gin Rummy (docs/gin_rummy.md) on the same core and adapters.
from . import gin_rummy_v0  # noqa: E402
from .variants.gin import GinConfig, gin_variant  # noqa: E402

__all__ += ["GinConfig", "gin_rummy_v0", "gin_variant"]

# German Rummy (docs/german_rummy.md): 2-6 seats, two decks, on the same core and adapters.
from . import german_rummy_v0  # noqa: E402
from .variants.german import GermanConfig, german_variant  # noqa: E402

__all__ += ["GermanConfig", "german_rummy_v0", "german_variant"]
