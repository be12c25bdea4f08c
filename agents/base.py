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

    def check_variant(self, variant: str) -> None:
        """Raise :class:`AgentSpecError` if this agent cannot play the variant named
        ``variant`` (default: it plays them all); :func:`make_agent` asks before play."""

    def action_probabilities(self, view, mask: np.ndarray) -> np.ndarray:
        """Probability of each action id (default: all mass on :meth:`act`'s choice)."""
        probs = np.zeros(len(mask), dtype=np.float64)
        probs[self.act(view, mask)] = 1.0
        return probs

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.name}>"


class AgentSpecError(ValueError):
    """A spec string that names no agent, or gives it bad parameters."""


class ByVariant(Agent):
    """One agent name with a strategy per variant (``greedy`` plays Mountain and Gin alike).

    Every strategy that takes the given parameters is built at once, with the agent's seed
    (so bad values fail here); each view goes to the strategy of its variant.
    """

    def __init__(self, name: str, strategies: dict, seed, params: dict, kwargs: dict):
        super().__init__(seed=seed)
        self._agent_name, self._strategies, self._params = name, strategies, params
        self._built: dict[str, Agent] = {
            variant: cls(seed=seed, **params, **kwargs)
            for variant, cls in strategies.items() if set(params) <= _accepted(cls)}
        self._active: Agent | None = None
        if not self._built:
            raise AgentSpecError(f"no strategy of agent {name!r} takes the parameters "
                                 f"{', '.join(sorted(params))}")

    @property
    def name(self) -> str:
        return self._agent_name

    @name.setter
    def name(self, spec: str) -> None:
        """The spec string: the strategies report it too."""
        self._agent_name = spec
        for strategy in self._built.values():
            strategy.name = spec

    def strategy_for(self, variant_name: str) -> Agent:
        """The strategy playing ``variant_name``."""
        hit = self._built.get(variant_name)
        if hit is not None:
            return hit
        cls = self._strategies.get(variant_name)
        if cls is None:
            raise AgentSpecError(f"agent {self._agent_name!r} has no strategy for variant "
                                 f"{variant_name!r} (it plays: {', '.join(self._strategies)})")
        unknown = set(self._params) - _accepted(cls)
        raise AgentSpecError(f"parameter(s) {', '.join(sorted(unknown))} of agent "
                             f"{self._agent_name!r} do not apply to {variant_name!r}")

    def reset(self) -> None:
        if self._active is not None:
            self._active.reset()

    def act(self, view, mask) -> int:
        return self._select(view).act(view, mask)

    def action_probabilities(self, view, mask) -> np.ndarray:
        return self._select(view).action_probabilities(view, mask)

    def _select(self, view) -> Agent:
        strategy = self.strategy_for(view.variant.name)
        if strategy is not self._active:
            self._active = strategy
            strategy.reset()
        return strategy


def _default_params(factory) -> dict[str, type]:
    """``{name: type}`` of the factory's keyword parameters with int/float/str defaults."""
    import inspect
    target = factory.__init__ if isinstance(factory, type) else factory
    return {name: type(p.default) for name, p in inspect.signature(target).parameters.items()
            if name != "seed" and type(p.default) in (int, float, str)}


def _accepted(cls) -> set[str]:
    import inspect
    return set(inspect.signature(cls.__init__).parameters) - {"self", "seed"}


class _Entry:
    """A registered name: one factory for every variant, or a strategy class per variant."""

    def __init__(self):
        self.factory: Callable[..., Agent] | None = None
        self.strategies: dict[str, type] = {}
        self.params: dict[str, type] = {}
        self.help = ""                        # the factory's
        self.helps: dict[str, str] = {}       # each variant strategy's

    def help_line(self) -> str:
        """The name's help: the factory's line, or a line per variant strategy (``gin:
        ...``), one for all of them when they read the same."""
        if not self.strategies:
            return self.help
        helps = {v: self.helps.get(v, "") for v in self.strategies}
        if len(set(helps.values())) == 1:
            return f"{helps[next(iter(helps))]} [variants: {', '.join(helps)}]".lstrip()
        silent = [v for v, text in helps.items() if not text]
        return "\n".join(f"{v}: {text}" for v, text in helps.items() if text) + (
            f" [also plays: {', '.join(silent)}]" if silent else "")


_REGISTRY: dict[str, _Entry] = {}


def register(name: str, params: dict[str, type] | None = None, help: str = "", *,
             variant: str | None = None):
    """Class decorator / function: register an agent factory under ``name``.

    ``params`` maps each accepted parameter to its type (``int``, ``float``, ``str``); spec
    strings give them as ``name:key=value,key=value``. Left out, they are read from the
    factory's keyword defaults (``budget: int = 200``). Without ``variant`` the factory
    plays every variant; with it, the class is ``name``'s strategy for that variant only
    (several classes may share a name, one per variant, see :class:`ByVariant`), and
    ``help`` says what it does in that variant (``mountain-rummy agents`` lists each).
    """

    def deco(factory):
        entry = _REGISTRY.setdefault(name, _Entry())
        if variant is None:
            entry.factory = factory
            entry.help = help
        else:
            entry.strategies[variant] = factory
            entry.helps[variant] = help
        entry.params.update(_default_params(factory) if params is None else params)
        return factory

    return deco


def registered() -> dict[str, str]:
    """Registered agent names with their help (a line per variant strategy) and parameters."""
    _load_builtins()
    out = {}
    for name, entry in sorted(_REGISTRY.items()):
        ps = ", ".join(f"{k} ({t.__name__})" for k, t in entry.params.items())
        out[name] = entry.help_line() + (f"\n[params: {ps}]" if ps else "")
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


def make_agent(spec: str, seed=None, variant: str | None = None, **kwargs) -> Agent:
    """Build an agent from a spec string such as ``random``, ``rules`` or ``search:budget=200``.

    With ``variant`` (a variant name) the agent is that variant's strategy, checked now;
    without it, an agent that plays every variant it has a strategy for (:class:`ByVariant`). ``kwargs`` are passed to the factory as is (e.g. ``stdin=`` for ``human``).
    """
    _load_builtins()
    name, raw = parse_spec(spec)
    if name not in _REGISTRY:
        raise AgentSpecError(f"unknown agent {name!r} in spec {spec!r}; known: "
                             f"{', '.join(sorted(_REGISTRY))}")
    entry = _REGISTRY[name]
    types = entry.params
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
        if entry.factory is not None:
            agent = entry.factory(seed=seed, **params, **kwargs)
            if variant is not None:
                agent.check_variant(variant)          # e.g. a policy trained on another game
        else:
            agent = ByVariant(name, entry.strategies, seed, params, kwargs)
            if variant is not None:
                agent = agent.strategy_for(variant)   # bad parameters fail here, not mid-game
    except ValueError as err:
        raise AgentSpecError(f"agent spec {spec!r}: {err}") from err
    agent.name = spec.strip()
    return agent


def _load_builtins() -> None:
    import importlib

    for mod in ("random_agent", "greedy", "rules", "gin", "search", "german", "human"):
        importlib.import_module(f"{__package__}.{mod}")  # each registers its agents
