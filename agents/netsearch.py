"""``netsearch``: the Monte Carlo search guided by a policy/value network (expert iteration).

The network is a policy file of :mod:`agents.ppo` (the actor: priors over the actions)
that may also hold a value network (``"value_state_dict"``: the expected hand margin of the
player to move, in units of ``meta["reward_scale"]``); ``experiments/expert_iteration.py``
trains both on this agent's own searches. The search is the variant's ``search`` agent
(:class:`~agents.search.SearchAgent`, :class:`~agents.search.GinSearchAgent`,
:class:`~agents.german.GermanSearchAgent`) with :class:`NetGuided` mixed in:

* **Candidates.** Wherever the search searches, its candidates are the heuristic's choice
  (always first: the search keeps it unless a challenger beats it on fresh samples), the
  network's ``top`` legal actions by prior, and with ``widen=1`` (the default) the search's
  own candidates too; ``widen=0`` searches only the heuristic's choice and the network's.
  A decision between plans (Mountain's hold-or-place) keeps the search's own candidates.
* **Evaluation.** Every candidate is played out on the same determinised samples by the
  compiled playouts (:meth:`~agents.search.MonteCarloSearch.search`, unchanged). The screen's
  best challenger is picked on ``mean margin + prior_weight x prior`` (a tiny multiple of the
  prior always breaks ties), blended with the value head's estimate after the candidate
  (``value_weight`` in [0, 1], on ``value_samples`` determinisations) where the file has one.
* **Belief.** ``belief=NAME`` (shipped, ``agents/beliefs``) or ``belief=FILE`` (trained by
  ``experiments/belief_net.py``): a belief network deals the opponent's hidden cards in
  every sample, by what its moves showed (:mod:`agents.belief`), instead of the honed
  uniform re-deal. Two-seat tables; it combines with a policy network or stands alone.
* **Without a network** (``path`` empty) it is the plain search, and still records.
* **Features.** The network's file decides the feature block appended to the observations
  it reads and records (``"obs_features"``, :func:`agents.ppo.network_input`); without a
  network, ``features`` does (``none`` by default; ``features=solver``: the trainer's
  iteration 0 under ``--obs-features solver``, so its records fit the network). A
  ``features`` other than the network's is an error, not ignored.

Recording (for the trainer): with ``agent.recorder`` a list, every decision with more than
one legal action appends ``(obs, packed mask, action ids, target probabilities, action
played)``: at a searched decision the target is the softmax of the searched candidates'
mean playout margins over ``temperature`` points (each candidate counted by its first
action); elsewhere it is the action played (one-hot). Targets only name legal actions.

    netsearch                                    # the plain search, recording if asked
    netsearch:features=solver                    # the same, recording the solver block too
    netsearch:path=runs/expert/mountain/policy.pt,top=3,budget=200
    netsearch:policy=gin_expert,budget=64        # the shipped Gin network (agents/policies)
    netsearch:belief=mountain_belief             # the search dealing by the belief network
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from .base import register
from .belief import Belief
from .german import GermanSearchAgent
from .ppo import CheckpointError, load_policy, masked_logits, obs_features_of_meta, policy_path
from .search import GinSearchAgent, SearchAgent

VALUE_KEY = "value_state_dict"
_VALUES: dict = {}


def build_value(observation_size: int, net_arch, activation: str):
    """The value network: the actor's widths, one output (``experiments/selfplay_ppo``'s critic)."""
    import torch.nn as nn

    from .ppo_nets import mlp

    return nn.Sequential(mlp(observation_size, net_arch, activation), nn.Linear(int(net_arch[-1]), 1))


def load_value(path, meta: dict):
    """The value network of the policy file ``path`` (``None`` when it has none); cached
    per (path, mtime, size). A corrupt value entry is a :class:`CheckpointError`."""
    import torch

    p = Path(path)
    st = p.stat()
    key = (str(p.resolve()), st.st_mtime_ns, st.st_size)
    if key not in _VALUES:
        blob = torch.load(p, map_location="cpu", weights_only=True)
        sd = blob.get(VALUE_KEY)
        net = None
        if sd is not None:
            try:
                net = build_value(int(meta["observation_size"]), meta["net_arch"], meta["activation"])
                net.load_state_dict(sd)
            except Exception as err:
                raise CheckpointError(f"policy checkpoint {str(path)!r} has an inconsistent value "
                                      f"network: {type(err).__name__}: {str(err)[:300]}") from None
            net.eval()
        _VALUES[key] = net
    return _VALUES[key]


def softmax_targets(actions, means, temperature: float) -> tuple[np.ndarray, np.ndarray]:
    """``(ids, probs)``: the softmax of ``means / temperature`` over ``actions``, an action
    named twice (two plans that start alike) getting the sum of its shares."""
    m = np.asarray(means, np.float64)
    z = np.exp((m - m.max()) / max(temperature, 1e-9))
    p = z / z.sum()
    ids = list(dict.fromkeys(int(a) for a in actions))
    probs = np.zeros(len(ids))
    for a, q in zip(actions, p):
        probs[ids.index(int(a))] += q
    return np.asarray(ids, np.int64), probs


class NetGuided:
    """Mixed in before a :class:`~agents.search.MonteCarloSearch` agent (see the module
    docstring). Subclasses call :meth:`_net_init` after their search's ``__init__``."""

    recorder = None        # a list to append each decision's record to (the trainer's)
    belief = None          # an agents.belief.Belief: deals the opponent's hidden cards
    TIE = 1e-6             # points per unit of prior: the prior breaks ties

    def _net_init(self, path: str, policy: str, top: int, widen: int, prior_weight: float,
                  value_weight: float, value_samples: int, temperature: float,
                  features: str, belief: str = "") -> None:
        if path and policy:
            raise CheckpointError("netsearch takes one network: path=FILE.pt or policy=NAME "
                                  "(shipped), not both")
        if policy:
            path = str(policy_path(policy))   # a shipped network, package data (agents/policies)
        if top < 0:
            raise ValueError(f"top must be >= 0, got {top}")
        if not 0 <= value_weight <= 1:
            raise ValueError(f"value_weight must be in [0, 1], got {value_weight}")
        if value_samples < 1:
            raise ValueError(f"value_samples must be >= 1, got {value_samples}")
        if temperature <= 0:
            raise ValueError(f"temperature must be > 0, got {temperature}")
        self.path = path or None
        self.top, self.widen = int(top), bool(widen)
        self.prior_weight, self.value_weight = float(prior_weight), float(value_weight)
        self.value_samples, self.temperature = int(value_samples), float(temperature)
        self.actor = self.value = None
        self.meta: dict = {}
        if path:
            self.actor, self.meta = load_policy(path)
            self.value = load_value(path, self.meta)
        if features:
            from mountain_rummy_env.envs.observation import obs_features_of

            features = obs_features_of(features)
            if not path:
                self.meta = {"obs_features": features}    # what network_input reads
            elif features != obs_features_of_meta(self.meta):
                raise CheckpointError(f"features={features} but network {path} reads "
                                      f"{obs_features_of_meta(self.meta)!r} features (its file "
                                      "decides: leave features out)")
        self._checked = None
        self._step = None
        self.belief = Belief(belief) if belief else None

    # -- the network ---------------------------------------------------------------

    def check_options(self, variant) -> None:
        super().check_options(variant)
        if self.belief is not None:
            self.belief.check_options(variant)

    def check_variant(self, variant: str) -> None:
        if self.belief is not None:
            self.belief.check_variant(variant)
        want = self.meta.get("variant")
        if want is not None and want != variant:
            raise CheckpointError(f"network {self.path} plays {want!r}, not {variant!r}")

    def _buffers(self, variant):
        from mountain_rummy_env.envs.observation import obs_dtype_of

        from .ppo import network_input

        if self._checked is not variant:
            self._features, n_obs = network_input(self.meta, variant)
            if self.actor is not None and (
                    self.meta.get("variant") != variant.name
                    or self.meta.get("observation_size") != n_obs
                    or self.meta.get("num_actions") != variant.num_actions):
                raise CheckpointError(
                    f"network {self.path} was trained for {self.meta.get('variant')!r} "
                    f"(observation size {self.meta.get('observation_size')}, "
                    f"{self.meta.get('num_actions')} actions), not {variant.name!r} "
                    f"({n_obs}, {variant.num_actions})")
            self._enc = np.zeros((1, n_obs), obs_dtype_of(self.meta.get("obs_dtype") or "int8"))
            self._checked = variant
        return self._enc

    def observe(self, view) -> np.ndarray:
        """The encoded observation of ``view`` (its player's seat), one row, in the
        network's encoding (int8 when there is no network: the trainer's)."""
        from mountain_rummy_env.envs.observation import encode_views

        enc = self._buffers(view.variant)
        encode_views(view.public_state(), view.variant, np.array([view.player], np.int64), enc,
                     self._features)
        return enc

    def priors(self, view, mask) -> np.ndarray | None:
        """The network's probability of each action (0 where illegal), once per decision."""
        if self.actor is None:
            return None
        if self._step is None or self._step[0] is not view:
            logits = masked_logits(self.actor, self.observe(view).astype(np.float32),
                                   np.asarray(mask)[None])[0]
            p = np.exp(logits - logits.max())
            self._step = (view, p / p.sum())
        return self._step[1]

    # -- searching -----------------------------------------------------------------

    def reset(self) -> None:
        super().reset()
        self._searches: list = []
        if self.belief is not None:
            self.belief.reset()

    def belief_logits(self, view) -> np.ndarray | None:
        return None if self.belief is None else self.belief.logits(view)

    def act(self, view, mask) -> int:
        self._searches = []
        self._step = None
        if self.belief is not None:
            self.belief.observe(view)
        if self.actor is not None:
            self._buffers(view.variant)     # a network of another game fails here, at once
        obs = None
        record = self.recorder is not None and np.count_nonzero(mask) > 1
        if record:
            obs = self.observe(view).copy()
        action = int(super().act(view, mask))
        if self.belief is not None:
            self.belief.remember(view, action)
        if record:
            self.recorder.append((obs[0], np.packbits(np.asarray(mask) != 0),
                                  *self.target(action), action))
        return action

    def target(self, action: int) -> tuple[np.ndarray, np.ndarray]:
        """``(ids, probs)`` of this decision: the last search whose candidates hold
        ``action`` (as a first move), else ``action`` alone."""
        for cands, means in reversed(self._searches):
            firsts = [c[0] if isinstance(c, tuple) else c for c in cands]
            if action in firsts:
                return softmax_targets(firsts, means, self.temperature)
        return np.array([action], np.int64), np.ones(1)

    def search(self, view, mask, cands):
        if self.actor is not None and all(not isinstance(c, tuple) for c in cands):
            p = self.priors(view, mask)
            legal = np.flatnonzero(mask)
            ranked = legal[np.argsort(-p[legal], kind="stable")][: self.top]
            own = list(cands[1:]) if self.widen else []
            cands = list(dict.fromkeys([int(cands[0]), *(int(a) for a in ranked), *own]))
            if len(cands) == 1:
                return cands[0]
        return super().search(view, mask, cands)

    def screen_scores(self, view, mask, cands, means) -> np.ndarray:
        self._searches.append((list(cands), np.asarray(means, np.float64).copy()))
        scores = np.asarray(means, np.float64).copy()
        p = self.priors(view, mask)
        if p is None:
            return scores
        firsts = np.array([c[0] if isinstance(c, tuple) else c for c in cands])
        scores += (self.prior_weight + self.TIE) * p[firsts]
        if self.value is not None and self.value_weight > 0:
            values, ok = self.candidate_values(view, mask, cands)
            scores[ok] = (1 - self.value_weight) * scores[ok] + self.value_weight * values[ok]
        return scores

    def candidate_values(self, view, mask, cands) -> tuple[np.ndarray, np.ndarray]:
        """The value head's mean estimate (points) after each candidate, over
        ``value_samples`` determinisations; ``ok`` is False for a candidate that ended the
        hand in some sample (its playouts are exact there)."""
        import torch

        from mountain_rummy_env.envs.observation import encode_views

        v = view.variant
        states, _, finished = self.play_candidates(view, mask, cands,
                                                   self.sample_states(view, self.value_samples))
        enc = np.zeros((len(states), self._buffers(v).shape[1]), self._enc.dtype)
        encode_views(states, v, np.full(len(states), view.player, np.int64), enc, self._features)
        with torch.no_grad():
            out = self.value(torch.as_tensor(enc.astype(np.float32)))[:, 0].numpy()
        k = len(cands)
        scale = float(self.meta.get("reward_scale") or 0.01)
        values = (out / scale).reshape(-1, k).mean(axis=0)
        ok = ~finished.reshape(-1, k).any(axis=0).astype(bool)
        return values, ok


_PARAMS_HELP = ("path=policy/value file (empty: plain search), policy=NAME a shipped one "
                "(agents/policies), top=the network's best actions "
                "added to the candidates, widen=1 keeps the search's own candidates too, "
                "prior_weight=points per unit of prior in picking the challenger, "
                "value_weight=share of the value head in it, temperature=points of the "
                "recorded target's softmax, features=solver: the solver feature block in "
                "the observations of the plain search (a network's file decides its own), "
                "belief=NAME or FILE: a belief network (agents/beliefs) deals the opponent's "
                "hidden cards in the samples (2 seats)")


@register("netsearch", variant="mountain",
          help="the Mountain search with a policy/value network's top actions among its "
               "candidates and its prior/value in picking the challenger; " + _PARAMS_HELP)
class NetSearchAgent(NetGuided, SearchAgent):
    def __init__(self, seed=None, path: str = "", policy: str = "", top: int = 3, widen: int = 1,
                 prior_weight: float = 0.0, value_weight: float = 0.0, value_samples: int = 8,
                 temperature: float = 5.0, features: str = "", budget: int = 200, discards: int = 3,
                 z: float = 1.0, hone: float = 1.0, meld_free: int = 0, seconds: float = 0.0,
                 belief: str = ""):
        SearchAgent.__init__(self, seed, budget, discards, z, "all", hone, meld_free, 1, seconds)
        self._net_init(path, policy, top, widen, prior_weight, value_weight, value_samples,
                       temperature, features, belief)


@register("netsearch", variant="gin",
          help="the Gin search with the network's top actions and prior/value (as Mountain's)")
class GinNetSearchAgent(NetGuided, GinSearchAgent):
    def __init__(self, seed=None, path: str = "", policy: str = "", top: int = 3, widen: int = 1,
                 prior_weight: float = 0.0, value_weight: float = 0.0, value_samples: int = 8,
                 temperature: float = 5.0, features: str = "", budget: int = 200, discards: int = 3,
                 z: float = 1.0, hone: float = 1.25, seconds: float = 0.0, belief: str = ""):
        GinSearchAgent.__init__(self, seed, budget, discards, z, "all", hone, seconds)
        self._net_init(path, policy, top, widen, prior_weight, value_weight, value_samples,
                       temperature, features, belief)


@register("netsearch", variant="crazy",
          help="the German/Crazy search with the network's top actions and prior/value")
@register("netsearch", variant="german",
          help="the German search with the network's top actions and prior/value (as Mountain's)")
class GermanNetSearchAgent(NetGuided, GermanSearchAgent):
    def __init__(self, seed=None, path: str = "", policy: str = "", top: int = 3, widen: int = 1,
                 prior_weight: float = 0.0, value_weight: float = 0.0, value_samples: int = 8,
                 temperature: float = 5.0, features: str = "", budget: int = 400, discards: int = 3,
                 z: float = 0.5, seconds: float = 0.0, belief: str = ""):
        GermanSearchAgent.__init__(self, seed, budget, discards, z, 0, seconds)
        self._net_init(path, policy, top, widen, prior_weight, value_weight, value_samples,
                       temperature, features, belief)
