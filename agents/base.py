"""The agent interface, the registry and ``make_agent`` spec strings.

An agent sees only a :class:`~mountain_rummy_env.game.PlayerView` (what its player may know)
and the int8 legal-action mask of the current position, and returns one legal action id::

    agent = make_agent("search:budget=200", seed=1)
    action = agent.act(view, mask)

The interface knows nothing about Mountain Rummy: action ids, masks and views are the
variant's own, so the same agents and tournament code serve other variants.

A spec names a registered agent (``search:budget=200``), an agent an installed package
declares in the entry-point group ``mountain_rummy_env.agents``, a class or factory by
module path (``mypkg.agents:Mine:depth=3``: a part after the colon without ``=`` names the
object), or a program speaking JSON lines (``proc:python my_agent.py``, :mod:`agents.proc`).
See docs/your_agent.md.
"""

from __future__ import annotations

import inspect
import re
from dataclasses import dataclass, field
from typing import Callable

import numpy as np

ENTRY_POINT_GROUP = "mountain_rummy_env.agents"
PROC_PREFIX = "proc"
_DOTTED = re.compile(r"^[A-Za-z_]\w*(\.[A-Za-z_]\w*)*$")


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

    def check_options(self, variant) -> None:
        """Raise ``ValueError`` if this agent cannot play ``variant`` (a
        :class:`~mountain_rummy_env.variant.Variant`, its options included; default: it can);
        ``mountain-rummy tournament`` asks before play."""

    def action_probabilities(self, view, mask: np.ndarray) -> np.ndarray:
        """Probability of each action id (default: all mass on :meth:`act`'s choice)."""
        probs = np.zeros(len(mask), dtype=np.float64)
        probs[self.act(view, mask)] = 1.0
        return probs

    def use_time_per_move(self, seconds: float) -> bool:
        """Spend about ``seconds`` on each decision from now on, if this agent can size its
        effort by time (search agents can); returns whether it will. Tournaments with
        ``--time-per-move`` call it on every agent, so agents that can are compared at
        equal time; the others play as they always do."""
        return False

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

    def use_time_per_move(self, seconds: float) -> bool:
        return any([s.use_time_per_move(seconds) for s in self._built.values()])

    def _select(self, view) -> Agent:
        strategy = self.strategy_for(view.variant.name)
        if strategy is not self._active:
            self._active = strategy
            strategy.reset()
        return strategy


def _default_params(factory) -> dict[str, type]:
    """``{name: type}`` of the factory's keyword parameters with int/float/str defaults."""
    target = factory.__init__ if isinstance(factory, type) else factory
    return {name: type(p.default) for name, p in inspect.signature(target).parameters.items()
            if name != "seed" and type(p.default) in (int, float, str)}


def _accepted(cls) -> set[str]:
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
        from mountain_rummy_env.registry import variant_names

        order = {name: k for k, name in enumerate(variant_names())}      # the registry's order
        helps = {v: self.helps.get(v, "") for v in sorted(self.strategies,
                                                         key=lambda v: order.get(v, len(order)))}
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
    """Agent names with their help (a line per variant strategy) and parameters: the
    registered ones, then those installed packages declare in the entry-point group
    ``mountain_rummy_env.agents``."""
    _load_builtins()
    out = {}
    for name, entry in sorted(_REGISTRY.items()):
        ps = ", ".join(f"{k} ({t.__name__})" for k, t in entry.params.items())
        out[name] = entry.help_line() + (f"\n[params: {ps}]" if ps else "")
    for name, ep in sorted(installed_agents().items()):
        package = f"package {ep.dist.name}" if getattr(ep, "dist", None) else "an installed package"
        if name in _REGISTRY:
            out[f"{name} ({ep.value})"] = (f"from {package}; shadowed by the built-in agent of "
                                           f"this name, so enter it as {ep.value}")
        else:
            out[name] = f"from {package}: {ep.value}"
    return out


def installed_agents() -> dict:
    """``{name: entry point}`` of the agents installed packages declare in the group
    ``mountain_rummy_env.agents`` (names lower case, as spec names are read)."""
    from importlib.metadata import entry_points

    return {ep.name.strip().lower(): ep for ep in entry_points(group=ENTRY_POINT_GROUP)}


@dataclass(frozen=True)
class AgentSpec:
    """A spec string read: ``kind`` is ``"name"`` (a registered or installed agent),
    ``"object"`` (``target`` = ``"module.path:Name"``) or ``"proc"`` (``target`` = the
    command); ``params`` are the ``key=value`` parameters as text."""
    kind: str
    target: str
    params: dict = field(default_factory=dict)


def read_spec(spec: str) -> AgentSpec:
    """Read a spec string. ``proc:COMMAND`` runs a program (the rest is its command line);
    a registered or installed agent's name before the first colon is that agent,
    ``name[:key=value,...]``; otherwise, when the part after the first colon has no ``=``,
    ``module.path:Name[:key=value,...]`` (so ``search:budget`` stays a bad parameter of
    ``search``, and the two forms never overlap)."""
    if not isinstance(spec, str) or not spec.strip():
        raise AgentSpecError(f"empty agent spec {spec!r}")
    head, colon, rest = spec.strip().partition(":")
    if head.strip().lower() == PROC_PREFIX and colon:
        if not rest.strip():
            raise AgentSpecError(f"agent spec {spec!r} names no command; write "
                                 f"proc:COMMAND, e.g. proc:python my_agent.py")
        return AgentSpec("proc", rest.strip())
    attr, _, params = rest.partition(":")
    if colon and attr.strip() and "=" not in attr and head.strip().lower() not in _names():
        module, attr = head.strip(), attr.strip()
        for part, what in ((module, "module path"), (attr, "object name")):
            if not _DOTTED.match(part):
                raise AgentSpecError(f"agent spec {spec!r}: {part!r} is not a {what}; write "
                                     f"module.path:Name[:key=value,...]")
        return AgentSpec("object", f"{module}:{attr}", _read_params(params, spec))
    return AgentSpec("name", head.strip().lower(), _read_params(rest, spec))


def _names() -> set[str]:
    """The names of the registered and the installed agents."""
    _load_builtins()
    return set(_REGISTRY) | set(installed_agents())


def _read_params(text: str, spec: str) -> dict:
    params = {}
    if text:
        for item in text.split(","):
            key, eq, value = item.partition("=")
            if not eq or not key.strip() or not value.strip():
                raise AgentSpecError(f"bad parameter {item!r} in agent spec {spec!r}; "
                                     "write name:key=value,key=value")
            params[key.strip()] = value.strip()
    return params


def parse_spec(spec: str) -> tuple[str, dict]:
    """``'search:budget=200,depth=3'`` -> ``('search', {'budget': '200', 'depth': '3'})``;
    ``'mypkg.agents:Mine:depth=3'`` -> ``('mypkg.agents:Mine', {'depth': '3'})``;
    ``'proc:python x.py'`` -> ``('proc', {})`` (see :func:`read_spec`)."""
    s = read_spec(spec)
    return ("proc" if s.kind == "proc" else s.target), dict(s.params)


def make_agent(spec: str, seed=None, variant: str | None = None, **kwargs) -> Agent:
    """Build an agent from a spec string such as ``random``, ``rules``, ``search:budget=200``,
    ``mypkg.agents:Mine:depth=3`` or ``proc:python my_agent.py`` (:func:`read_spec`).

    With ``variant`` (a variant name) the agent is that variant's strategy, checked now;
    without it, an agent that plays every variant it has a strategy for (:class:`ByVariant`).
    ``kwargs`` are passed to the factory as is (e.g. ``stdin=`` for ``human``). A spec that
    names nothing usable (an unknown name, a module that does not import, an object that
    is missing or makes no agent, a program that is not there) raises :class:`AgentSpecError`.
    """
    _load_builtins()
    s = read_spec(spec)
    if s.kind == "proc":
        from .proc import ProcAgent
        agent = ProcAgent(s.target, seed=seed, **kwargs)
    elif s.kind == "object":
        agent = _from_factory(_import_object(s.target, spec), s.target, s.params, seed, kwargs)
    elif s.target in _REGISTRY:
        agent = _from_registry(s.target, s.params, spec, seed, variant, kwargs)
    elif s.target in (plugins := installed_agents()):
        ep = plugins[s.target]
        try:
            factory = ep.load()
        except Exception as err:
            raise AgentSpecError(f"agent {s.target!r} of an installed package ({ep.value}) "
                                 f"does not load: {type(err).__name__}: {err}") from err
        agent = _from_factory(factory, s.target, s.params, seed, kwargs)
    else:
        known = sorted(set(_REGISTRY) | set(plugins))
        raise AgentSpecError(f"unknown agent {s.target!r} in spec {spec!r}; known: "
                             f"{', '.join(known)}; or name a class as module.path:Name, or a "
                             f"program as proc:COMMAND")
    if s.kind != "name" or s.target not in _REGISTRY:
        try:
            if variant is not None:
                agent.check_variant(variant)
        except ValueError as err:
            raise AgentSpecError(f"agent spec {spec!r}: {err}") from err
    agent.name = spec.strip()
    return agent


def _from_registry(name: str, raw: dict, spec: str, seed, variant, kwargs) -> Agent:
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
    return agent


def _import_object(target: str, spec: str):
    """The object ``module.path:Name`` names (``Name`` may be dotted: ``Outer.Inner``)."""
    import importlib

    module_name, _, attr = target.partition(":")
    try:
        obj = importlib.import_module(module_name)
    except Exception as err:
        raise AgentSpecError(f"agent spec {spec!r}: cannot import module {module_name!r} "
                             f"({type(err).__name__}: {err})") from err
    for part in attr.split("."):
        if not hasattr(obj, part):
            raise AgentSpecError(f"agent spec {spec!r}: {getattr(obj, '__name__', obj)!s} "
                                 f"has no attribute {part!r}")
        obj = getattr(obj, part)
    return obj


def _param_types(factory) -> tuple[dict[str, type | None], bool, bool]:
    """The factory's keyword parameters with the type a spec value is read as (that of its
    int/float/str default or annotation, else ``None``: kept as text), whether it takes
    ``seed`` and whether it takes any keyword (``**kwargs``)."""
    try:
        signature = inspect.signature(factory)
    except (TypeError, ValueError):
        return {}, False, True
    types, any_keyword = {}, False
    for name, p in signature.parameters.items():
        if p.kind is p.VAR_KEYWORD:
            any_keyword = True
        elif p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY):
            hint = p.annotation if p.annotation in (int, float, str) else \
                {"int": int, "float": float, "str": str}.get(p.annotation)
            default = type(p.default) if type(p.default) in (int, float, str) else None
            types[name] = default or hint
    return types, "seed" in types or any_keyword, any_keyword


def _from_factory(factory, target: str, raw: dict, seed, kwargs) -> Agent:
    """Call a plug-in's class or factory with the spec's parameters (each read as the type
    of its default or annotation, else kept as text) and ``seed`` when it takes one; an
    object that is an :class:`Agent` is used as it is, any other with ``act(view, mask)``
    is wrapped (:class:`PluggedAgent`)."""
    if not isinstance(factory, type) and callable(getattr(factory, "act", None)):
        raise AgentSpecError(f"{target} is an agent object, not a class or factory; name its "
                             f"class, so every seat and every hand gets an agent of its own")
    if not callable(factory):
        raise AgentSpecError(f"{target} is a {type(factory).__name__}, not a class or factory "
                             f"of agents")
    types, takes_seed, any_keyword = _param_types(factory)
    params = {}
    for key, value in raw.items():
        if key not in types and not any_keyword:
            known = ", ".join(k for k in types if k != "seed") or "none"
            raise AgentSpecError(f"{target} has no parameter {key!r} (parameters: {known})")
        kind = types.get(key)
        try:
            params[key] = kind(value) if kind else value
        except ValueError:
            raise AgentSpecError(f"parameter {key}={value!r} of {target} must be "
                                 f"{kind.__name__}") from None
    if takes_seed:
        params["seed"] = seed
    try:
        made = factory(**params, **kwargs)
    except (TypeError, ValueError) as err:
        raise AgentSpecError(f"{target}: {type(err).__name__}: {err}") from err
    if isinstance(made, Agent):
        return made
    if not callable(getattr(made, "act", None)):
        raise AgentSpecError(f"{target} made a {type(made).__name__}, which has no "
                             f"act(view, mask) method")
    return PluggedAgent(made)


class PluggedAgent(Agent):
    """An agent object of another package that is not an :class:`Agent`: it needs only
    ``act(view, mask) -> action id``; ``reset()``, ``check_variant(variant)``,
    ``check_options(variant)``, ``action_probabilities(view, mask)`` and
    ``use_time_per_move(seconds)`` are used when it has them."""

    def __init__(self, inner):
        super().__init__()
        self.inner = inner

    def reset(self) -> None:
        if callable(getattr(self.inner, "reset", None)):
            self.inner.reset()

    def act(self, view, mask) -> int:
        return self.inner.act(view, mask)

    def check_variant(self, variant: str) -> None:
        if callable(getattr(self.inner, "check_variant", None)):
            self.inner.check_variant(variant)

    def check_options(self, variant) -> None:
        if callable(getattr(self.inner, "check_options", None)):
            self.inner.check_options(variant)

    def action_probabilities(self, view, mask) -> np.ndarray:
        if callable(getattr(self.inner, "action_probabilities", None)):
            return np.asarray(self.inner.action_probabilities(view, mask), dtype=np.float64)
        return super().action_probabilities(view, mask)

    def use_time_per_move(self, seconds: float) -> bool:
        hook = getattr(self.inner, "use_time_per_move", None)
        return bool(hook(seconds)) if callable(hook) else False


def _load_builtins() -> None:
    import importlib

    for mod in ("random_agent", "greedy", "rules", "simple_gin", "openspiel_bot", "search",
                "german", "robbers", "human", "netsearch", "fastpolicy"):
        importlib.import_module(f"{__package__}.{mod}")  # each registers its agents
