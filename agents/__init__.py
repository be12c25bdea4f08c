"""Agents for the rummy environments: one interface, a registry, and baselines.

``make_agent("random" | "greedy" | "rules" | "search:budget=200" | "human", seed=...)``
returns an :class:`Agent` with ``act(view, mask) -> action id``. See ``docs/agents.md``.
"""

from .base import Agent, AgentSpecError, make_agent, parse_spec, register, registered

__all__ = ["Agent", "AgentSpecError", "make_agent", "parse_spec", "register", "registered"]
from . import ppo  # noqa: E402,F401  -- registers the "ppo" agent (experiments/train_ppo.py)
