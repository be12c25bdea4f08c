"""mountain-rummy-env: RL environments for Mountain Rummy and other rummy variants.

The rules run on a batched, compiled core (:mod:`mountain_rummy_env.core`); variants are
small configuration modules (:mod:`mountain_rummy_env.variants`) listed in one table,
:mod:`mountain_rummy_env.registry`; :class:`Game` drives a batch of games from Python.
Environment adapters build on these.
"""

from ._numba_cache import configure_cache

configure_cache()  # before any compiled module is imported

from .cards import CardError, Deck
from .config import ConfigError
from .game import Game, HandSummary, IllegalActionError, PlayerView, player_view
from .registry import VARIANTS, make_variant, variant_names
from .variant import ActionError, Variant

# Environment adapters (importing them registers every variant's Gymnasium ids).
from .envs import SingleAgentEnv, encode_observations, observation_size

__all__ = [
    "ActionError", "CardError", "ConfigError", "Deck", "Game", "HandSummary",
    "IllegalActionError", "PlayerView", "SingleAgentEnv", "Variant", "encode_observations",
    "make_variant", "observation_size", "player_view", "variant_names",
]

# Every registered variant's factory, config class and PettingZoo module, e.g.
# ``mountain_variant``, ``MountainConfig``, ``mountain_rummy_v0``.
for _info in VARIANTS.values():
    globals().update({
        _info.factory.__name__: _info.factory,
        _info.config_class.__name__: _info.config_class,
        _info.env_module: _info.import_env_module(),
    })
    __all__ += [_info.factory.__name__, _info.config_class.__name__, _info.env_module]
del _info
