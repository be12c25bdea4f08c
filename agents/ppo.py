"""``ppo``: a policy network trained by ``experiments/train_ppo.py`` (MaskablePPO).

Spec: ``ppo:policy=mountain`` (a shipped policy, package data in ``agents/policies/``:
:func:`shipped_policies`, ``mountain-rummy agents`` lists them) or
``ppo:path=runs/ppo/mountain/policy.pt`` (a checkpoint file); greedy: the most probable legal
action, ``...,sample=1`` samples from the masked policy with the agent's seeded generator.

The agent encodes its :class:`~mountain_rummy_env.game.PlayerView`'s game state with the
shared observation encoder (:func:`mountain_rummy_env.envs.observation.encode_observations`)
from the view's player's seat -- exactly the observation the vector env gave the learner --
runs the actor network, masks illegal actions and picks one.

## Checkpoint format (safe to load)

One file written with ``torch.save`` and read with ``torch.load(weights_only=True)`` (no
arbitrary pickle): a dict of plain values and tensors::

    {"format": "mountain-rummy-ppo-policy/1", "variant": "mountain", "variant_options": {...},
     "observation_size": 1809, "num_actions": 1845, "net_arch": [256, 256],
     "activation": "tanh", "env_steps": 1000000, "state_dict": {...}}

An optional ``"obs_dtype"`` (``"float32"`` when absent, or ``"int8"``: ``train_ppo
--obs-dtype``) is the encoding the policy was trained on; the agent encodes in it and feeds
the values to the network as float32, as SB3 did. An optional ``"obs_features"``
(``"none"`` when absent, or ``"solver"``: ``selfplay_ppo --obs-features``) is the feature
block appended to the observation (``docs/observation.md``); the agent encodes with it, and
a value it does not know is a :class:`CheckpointError`. A checkpoint whose ``"guard"`` (an action
guard) or ``"hint"`` (an advising player) is other than absent or ``"none"`` was trained by
a route since removed (docs/training.md, "Tried routes"): it is refused with a
:class:`CheckpointError` that names :data:`LAST_ROUTES_COMMIT`, the last commit that plays it.

An optional ``"value_state_dict"`` is a value network (``experiments/expert_iteration.py``;
the ``netsearch`` agent reads it, :mod:`agents.netsearch`); an optional ``"training"`` entry
is a trainer's resumable state (the checkpoints of
``experiments/selfplay_ppo.py``: critic, optimizer, league, RNG states); play ignores it, so
such a checkpoint plays as its policy.

``state_dict`` holds the actor only: ``body.{0,2,..}.weight/bias`` (Linear layers with the
activation between them) and ``head.weight/bias`` (the logits), and ``move_gain`` where the
optional ``"move_skip"`` is true (the skip from the observation's move block to the logits,
:mod:`agents.ppo_nets`; only with ``"obs_features": "solver_move"``); the weights may be float16
(``experiments/ship_policy.py`` halves shipped files that way) and are cast to float32 on load. A
sidecar ``.json`` with the same metadata (no weights) is written next to it for humans. Missing, corrupt or
wrong-variant files raise :class:`CheckpointError` with the reason (a policy of another variant
when ``make_agent`` is given the variant, other options on the first ``act``). torch is imported only when a checkpoint is loaded.
"""

from __future__ import annotations

import functools
import json
import os
from pathlib import Path

import numpy as np

from .base import Agent, AgentSpecError, register

FORMAT = "mountain-rummy-ppo-policy/1"
_META_KEYS = ("variant", "variant_options", "observation_size", "num_actions", "net_arch",
              "activation")
# the last commit whose ppo agent plays policies trained with an action guard (--guard) or
# an adviser (--hint): routes removed since (docs/training.md, "Tried routes")
LAST_ROUTES_COMMIT = "cb72a70"
_REMOVED_ROUTES = {"guard": "action guard", "hint": "adviser"}


class CheckpointError(AgentSpecError):
    """A policy checkpoint that is missing, corrupt, made for another variant, or trained by a
    route since removed (an action guard or an adviser)."""


POLICY_DIR = Path(__file__).resolve().parent / "policies"


def shipped_policies() -> dict[str, dict]:
    """The policies shipped with the package, by name (``ppo:policy=NAME``): the metadata
    of each ``agents/policies/NAME.pt``, read from its ``.json`` sidecar."""
    return {pt.stem: json.loads(pt.with_suffix(".json").read_text())
            for pt in sorted(POLICY_DIR.glob("*.pt"))}


def policy_path(name: str) -> Path:
    """The checkpoint file of the shipped policy ``name``."""
    path = POLICY_DIR / f"{name}.pt"
    if not path.is_file():
        raise CheckpointError(f"no shipped policy {name!r}; shipped: "
                              f"{', '.join(shipped_policies()) or 'none'}")
    return path


def variant_options(variant) -> dict:
    """The variant's config as a plain dict (for the checkpoint metadata)."""
    import dataclasses

    cfg = variant.config
    if dataclasses.is_dataclass(cfg):
        return {k: v for k, v in dataclasses.asdict(cfg).items()
                if isinstance(v, (int, float, str, bool)) or v is None}
    return {}


def policy_meta(variant, observation_size: int, net_arch, activation: str, obs_dtype: str,
                env_steps: int, obs_features: str = "none", move_skip: bool = False,
                **extra) -> dict:
    """The metadata :func:`save_policy` writes for an actor trained on ``variant`` (every
    trainer's; ``obs_features``: the feature block of its observations; ``move_skip``: the
    actor adds the move block to its logits; ``extra``: plain values of its own, such as its
    name)."""
    return {"variant": variant.name, "variant_options": variant_options(variant),
            "observation_size": int(observation_size), "num_actions": int(variant.num_actions),
            "net_arch": [int(w) for w in net_arch], "activation": activation,
            "obs_dtype": obs_dtype, "obs_features": obs_features, "move_skip": bool(move_skip),
            "env_steps": int(env_steps), **extra}


def obs_features_of_meta(meta: dict) -> str:
    """The feature block a checkpoint's network reads (``"none"`` for files without it)."""
    return meta.get("obs_features") or "none"


def network_input(meta: dict, variant) -> tuple[str, int]:
    """``(obs_features, observation_size)`` of the input a network of ``meta`` reads in
    ``variant`` (the ppo and netsearch agents'): the checked feature block, and the size the
    network must match. For a network of another variant, the plain view's size, so that the
    agents' mismatch errors name both games."""
    from mountain_rummy_env.envs.observation import obs_features_of, observation_size

    same = meta.get("variant") in (None, variant.name)
    features = obs_features_of(obs_features_of_meta(meta), variant if same else None)
    return features, observation_size(variant, features if same else "none")


def save_policy(path, actor, meta: dict) -> None:
    """Write ``actor``'s weights and ``meta`` (the keys of :data:`_META_KEYS`, plus any plain
    extras such as ``env_steps``) to ``path`` atomically, and a ``.json`` sidecar."""
    import torch

    missing = [k for k in _META_KEYS if k not in meta]
    if missing:
        raise ValueError(f"policy metadata lacks {missing}")
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    blob = dict(meta, format=FORMAT,
                state_dict={k: v.detach().cpu().clone() for k, v in actor.state_dict().items()})
    tmp = path.with_name(path.name + ".tmp")
    torch.save(blob, tmp)
    os.replace(tmp, path)
    path.with_suffix(".json").write_text(json.dumps(dict(meta, format=FORMAT), indent=1) + "\n")


_CACHE: dict = {}


def read_checkpoint(path, what: str, kind: str, fmt: str, hint: str = "") -> dict:
    """The dict of the torch file ``path`` (``weights_only``: no arbitrary pickle), or a
    :class:`CheckpointError` naming the file: corrupt, not a torch file, or not of format
    ``fmt`` (``what`` names the file in the message, ``kind`` what it should be)."""
    import torch

    try:
        blob = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as err:  # corrupt zip, truncated file, unsafe pickle, ...
        raise CheckpointError(f"{what} {str(path)!r} is corrupt or not a torch file "
                              f"({type(err).__name__}: {str(err).splitlines()[0][:200]})") from None
    if not isinstance(blob, dict) or blob.get("format") != fmt:
        raise CheckpointError(f"{str(path)!r} is not {kind} (format "
                              f"{blob.get('format') if isinstance(blob, dict) else type(blob).__name__!r}"
                              f", expected {fmt!r}){hint}")
    return blob


def load_policy(path):
    """``(actor, meta)`` from a checkpoint written by :func:`save_policy`; raises
    :class:`CheckpointError` if the file is missing, corrupt or not a policy checkpoint.
    Cached per (path, mtime, size): tournaments make one agent per deal."""
    p = Path(path)
    if not p.is_file():
        raise CheckpointError(f"policy checkpoint {str(path)!r} does not exist")
    st = p.stat()
    key = (str(p.resolve()), st.st_mtime_ns, st.st_size)
    if key in _CACHE:
        return _CACHE[key]
    from mountain_rummy_env.envs.observation import has_move_block, obs_dtype_of, obs_features_of

    from .ppo_nets import ACTIVATIONS, build_actor

    blob = read_checkpoint(path, "policy checkpoint", "a PPO policy checkpoint", FORMAT,
                           "; SB3 training zips are not loaded here")
    meta = {k: blob.get(k) for k in blob
            if k not in ("state_dict", "training", "value_state_dict")}   # weights, not metadata
    for key, route in _REMOVED_ROUTES.items():
        if (meta.get(key) or "none") != "none":
            raise CheckpointError(
                f"policy checkpoint {str(path)!r} was trained with the {route} "
                f"{meta[key]!r} (train_ppo --{key}), a route removed from this repository; "
                f"commit {LAST_ROUTES_COMMIT} is the last that plays it (docs/training.md)")
    try:
        if meta["activation"] not in ACTIVATIONS:
            raise ValueError(f"unknown activation {meta['activation']!r}")
        obs_dtype_of(meta.get("obs_dtype") or "float32")
        features = obs_features_of(obs_features_of_meta(meta))
        move_skip = bool(meta.get("move_skip"))
        if move_skip and not has_move_block(features):
            raise ValueError(f"move_skip needs obs_features with the move block, not {features!r}")
        actor = build_actor(int(meta["observation_size"]), int(meta["num_actions"]),
                            [int(w) for w in meta["net_arch"]], meta["activation"], move_skip)
        actor.load_state_dict(blob["state_dict"])
    except Exception as err:
        raise CheckpointError(f"policy checkpoint {str(path)!r} is inconsistent: "
                              f"{type(err).__name__}: {str(err)[:300]}") from None
    actor.eval()
    _CACHE[key] = (actor, meta)
    return actor, meta


@functools.cache
def _fork_safe_torch():
    """torch, made safe to use in processes forked from this one (the study's and the
    tournaments' workers): a child forked after torch ran an op in parallel here hangs in
    its first parallel op (the OpenMP pool does not survive fork), so a forked child runs
    torch on one thread. Registered once per process."""
    import torch

    os.register_at_fork(after_in_child=lambda: torch.set_num_threads(1))
    return torch


def masked_logits(actor, obs: np.ndarray, masks: np.ndarray) -> np.ndarray:
    """Logits ``(B, A)`` of ``actor`` for the observation batch, illegal actions at -inf."""
    torch = _fork_safe_torch()

    with torch.no_grad():
        logits = actor(torch.as_tensor(np.asarray(obs, np.float32))).numpy().astype(np.float64)
    logits[np.asarray(masks) == 0] = -np.inf
    return logits


def pick(logits: np.ndarray, rng=None) -> np.ndarray:
    """Argmax of each row (``rng`` None) or a sample from its softmax."""
    if rng is None:
        return logits.argmax(axis=1)
    z = logits - logits.max(axis=1, keepdims=True)
    p = np.exp(z)
    p /= p.sum(axis=1, keepdims=True)
    u = rng.random((len(p), 1))
    return np.minimum((p.cumsum(axis=1) < u).sum(axis=1), p.shape[1] - 1)


class PPOAgent(Agent):
    """Plays a trained actor network on the encoded :class:`PlayerView`."""

    def __init__(self, seed=None, path: str | None = None, sample: int = 0, actor=None,
                 meta: dict | None = None):
        super().__init__(seed)
        if actor is None:
            if not path:
                raise CheckpointError("the ppo agent needs a checkpoint: ppo:policy=NAME "
                                      "(shipped) or ppo:path=FILE.pt")
            actor, meta = load_policy(path)
        self.path = str(path) if path else None
        self.actor, self.meta = actor, dict(meta or {})
        self.sample = bool(sample)
        self._checked = None
        self._obs = None
        self._view = None     # the encoder's output in the checkpoint's obs_dtype

    def check_variant(self, variant: str) -> None:
        want = self.meta.get("variant")
        if want is not None and want != variant:
            raise CheckpointError(f"policy {self.path or '(given actor)'} plays {want!r}, "
                                  f"not {variant!r}")

    def _check(self, variant) -> None:
        from mountain_rummy_env.envs.observation import obs_dtype_of

        if self._checked is variant:
            return
        want = self.meta.get("variant")
        features, n_obs = network_input(self.meta, variant)
        n_act = variant.num_actions
        if (want is not None and want != variant.name) or \
                n_obs != self.meta.get("observation_size") or n_act != self.meta.get("num_actions"):
            raise CheckpointError(
                f"checkpoint was trained for variant {want!r} (observation size "
                f"{self.meta.get('observation_size')}, {self.meta.get('num_actions')} actions) "
                f"but this game is {variant.name!r} ({n_obs}, {n_act})")
        self._obs = np.zeros((1, n_obs), np.float32)
        self._view = np.zeros((1, n_obs), obs_dtype_of(self.meta.get("obs_dtype") or "float32"))
        self._features = features
        self._checked = variant

    def observe(self, view) -> np.ndarray:
        """The observation of ``view`` (its player's seat), shape ``(1, observation_size)``."""
        from mountain_rummy_env.envs.observation import encode_views

        v = view.variant
        self._check(v)
        encode_views(view.public_state(), v, np.array([view.player], np.int64), self._view,
                     self._features)
        self._obs[0] = self._view[0]
        return self._obs

    def _logits(self, view, mask) -> np.ndarray:
        """Masked logits of the policy for ``view``."""
        return masked_logits(self.actor, self.observe(view), np.asarray(mask)[None])[0]

    def action_probabilities(self, view, mask) -> np.ndarray:
        logits = self._logits(view, mask)
        p = np.exp(logits - logits.max())
        return p / p.sum()

    def act(self, view, mask) -> int:
        legal = np.flatnonzero(mask)
        if len(legal) == 1:
            return int(legal[0])
        logits = self._logits(view, mask)
        return int(pick(logits[None], self.rng if self.sample else None)[0])


@register("ppo", {"policy": str, "path": str, "sample": int},
          "MaskablePPO policy: policy=NAME one shipped with the package (listed below), "
          "path=a checkpoint .pt from experiments/train_ppo.py; sample=1 samples")
def _make_ppo(seed=None, policy: str = "", path: str = "", sample: int = 0):
    if bool(policy) == bool(path):
        raise CheckpointError("the ppo agent needs one checkpoint: ppo:policy=NAME (shipped: "
                              f"{', '.join(shipped_policies()) or 'none'}) or ppo:path=FILE.pt")
    return PPOAgent(seed=seed, path=policy_path(policy) if policy else path, sample=sample)
