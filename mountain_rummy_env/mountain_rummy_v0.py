"""PettingZoo AEC / parallel Mountain Rummy, version 0 (see :mod:`mountain_rummy_env.envs.aec`).

``env(**config)`` (wrapped like the classic envs), ``raw_env`` and ``parallel_env(**config)``.
"""

from .envs.aec import __doc__ as _aec_doc
from .envs.aec import env, parallel_env, raw_env

__doc__ = _aec_doc
__all__ = ["env", "parallel_env", "raw_env"]

# Gymnasium VectorEnv of N games on the batched core (vector-bench issue); a Gin module adds
# the same line with its own variant constructor.
from .envs.vector import vector_env_factory as _vector_env_factory  # noqa: E402
from .variants.mountain import mountain_variant as _mountain_variant  # noqa: E402

vector_env = _vector_env_factory(_mountain_variant)
__all__ += ["vector_env"]
