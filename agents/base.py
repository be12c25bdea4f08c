"""The agent interface, the registry and ``make_agent`` spec strings.

An agent sees only a :class:`~mountain_rummy_env.game.PlayerView` (what its player may know)
and the int8 legal-action mask of the current position, and returns one legal action id::

    agent = make_agent("search:budget=200", seed=1)
    action = agent.act(view, mask)

The interface knows nothing about Mountain Rummy: action ids, masks and views are the
variant's own, so the same agents and tournament code serve other variants.
"""

from __future__ import annotations

from typing import Callable

import numpy as np


class Agent:
    """Base class. Subclasses implement :meth:`act`; the rest is optional.

    ``name`` is the spec string the agent was made from (used in tables and logs).
    ``reset()`` is called at the start of every hand (agents that track the hand clear it).
    """

    name: str = "agent"

    def __init__(self, seed=None):
        self.rng = np.random.default_rng(seed)

    def reset(self) -> None:
        """Forget everything about the previous hand."""

    def act(self, view, mask: np.ndarray) -> int:  # pragma: no cover - interface
        raise NotImplementedError

    def action_probabilities(self, view, mask: np.ndarray) -> np.ndarray:
        """Probability of each action id (default: all mass on :meth:`act`'s choice)."""
        probs = np.zeros(len(mask), dtype=np.float64)
        probs[self.act(view, mask)] = 1.0
        return probs

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.name}>"


class AgentSpecError(ValueError):
    """A spec string that names no agent, or gives it bad parameters."""


# name -> (factory(seed, **params), {param: type}, one-line help)
_REGISTRY: dict[str, tuple[Callable[..., Agent], dict[str, type], str]] = {}


def register(name: str, params: dict[str, type] | None = None, help: str = ""):
    """Class decorator / function: register an agent factory under ``name``.

    ``params`` maps each accepted parameter to its type (``int``, ``float``, ``str``); spec
    strings give them as ``name:key=value,key=value``.
    """

    def deco(factory):
        _REGISTRY[name] = (factory, dict(params or {}), help)
        return factory

    return deco


def registered() -> dict[str, str]:
    """Registered agent names with their help line and parameters."""
    _load_builtins()
    out = {}
    for name, (_, params, help) in sorted(_REGISTRY.items()):
        ps = ", ".join(f"{k} ({t.__name__})" for k, t in params.items())
        out[name] = help + (f" [params: {ps}]" if ps else "")
    return out


def parse_spec(spec: str) -> tuple[str, dict]:
    """``'search:budget=200,depth=3'`` -> ``('search', {'budget': '200', 'depth': '3'})``."""
    if not isinstance(spec, str) or not spec.strip():
        raise AgentSpecError(f"empty agent spec {spec!r}")
    name, _, rest = spec.strip().partition(":")
    params = {}
    if rest:
        for item in rest.split(","):
            key, eq, value = item.partition("=")
            if not eq or not key.strip() or not value.strip():
                raise AgentSpecError(f"bad parameter {item!r} in agent spec {spec!r}; "
                                     "write name:key=value,key=value")
            params[key.strip()] = value.strip()
    return name.strip().lower(), params


def make_agent(spec: str, seed=None, **kwargs) -> Agent:
    """Build an agent from a spec string such as ``random``, ``rules`` or ``search:budget=200``.

    ``kwargs`` are passed to the factory as is (e.g. ``stdin=``/``stdout=`` for ``human``).
    """
    _load_builtins()
    name, raw = parse_spec(spec)
    if name not in _REGISTRY:
        raise AgentSpecError(f"unknown agent {name!r} in spec {spec!r}; known: "
                             f"{', '.join(sorted(_REGISTRY))}")
    factory, types, _ = _REGISTRY[name]
    params = {}
    for key, value in raw.items():
        if key not in types:
            known = ", ".join(types) or "none"
            raise AgentSpecError(f"agent {name!r} has no parameter {key!r} (parameters: {known})")
        try:
            params[key] = types[key](value)
        except ValueError:
            raise AgentSpecError(f"parameter {key}={value!r} of agent {name!r} must be "
                                 f"{types[key].__name__}") from None
    try:
        agent = factory(seed=seed, **params, **kwargs)
    except ValueError as err:
        raise AgentSpecError(f"agent spec {spec!r}: {err}") from err
    agent.name = spec.strip()
    return agent


def _load_builtins() -> None:
    import importlib

    for mod in ("random_agent", "greedy", "rules", "search", "human"):
        importlib.import_module(f"{__package__}.{mod}")  # each registers its agents
