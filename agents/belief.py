"""Belief networks: which of the hidden cards the opponent holds, for the search's samples.

The search (:mod:`agents.search`) re-deals the cards its player cannot see before each
playout. Uniform re-deals, even honed, ignore most of what the opponent's moves said:
which cards it discarded, which it left on the pile, what it melded. Searching with the
opponent's true hand (only the stock re-dealt) scored +19.8 (+13.5, +26.1) points a deal
above the plain search against ``rules`` (docs/training.md): the belief is where the
search loses most.

A belief network reads the player's observation (the env's encoder) and the planes of an
:class:`OpponentTracker` (what the next seat's moves showed, kept across turns from the
player's own views, since a view carries no move history) and gives, for every card, the
logit that the next seat holds it among its unknown cards. It is trained on hands of
``rules`` against ``rules`` with the true hands as labels (``experiments/belief_net.py``).
:func:`~agents.search.determinise` then deals that seat's unknown cards by Gumbel top-k of
the logits (Plackett-Luce sampling without replacement), the stock uniformly.

Two seats only: the tracker reads the pile between two of the player's turns as the next
seat's doing, which holds when it is the only other seat.

    netsearch:belief=mountain_belief                  # the shipped Mountain network
    netsearch:belief=runs/belief/mountain/belief.pt   # a network of your own
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np

from mountain_rummy_env.core.state import PHASE_DRAW

from .ppo import CheckpointError, read_checkpoint

FORMAT = "mountain-rummy-belief/1"
HISTORY_PLANES = ("opp_discarded", "opp_passed_top", "opp_left_in_pile", "opp_discard_recency")
RECENCY_DECAY = 0.7        # the recency plane's factor per turn of the player's
BELIEF_DIR = Path(__file__).resolve().parent / "beliefs"   # shipped networks (package data)
_META_KEYS = ("variant", "variant_options", "observation_size", "num_cards", "net_arch")


class OpponentTracker:
    """What the next seat's moves showed, as planes over card ids (:data:`HISTORY_PLANES`),
    kept from one seat's views and its own actions:

    * ``opp_discarded``: the next seat discarded it this hand;
    * ``opp_passed_top``: it lay on top of the pile, where the player had left it, and the
      next seat drew from the stock instead;
    * ``opp_left_in_pile``: it lay in the pile when the next seat drew and stayed there;
    * ``opp_discard_recency``: 1 for the next seat's latest discard, times
      :data:`RECENCY_DECAY` for each turn since.

    Call :meth:`observe` with every view the seat acts on and :meth:`remember` with the
    action it played; :meth:`reset` at each new hand."""

    def __init__(self, num_cards: int):
        self.num_cards = int(num_cards)
        self.reset()

    def reset(self) -> None:
        self.planes = np.zeros((len(HISTORY_PLANES), self.num_cards), np.float32)
        self._left: tuple | None = None     # the pile as the player left it, bottom first
        self._turn = -1

    def observe(self, view) -> None:
        """Read what changed on the pile since the player's last discard (once a turn, at
        the player's draw)."""
        if view.phase != PHASE_DRAW or view.turn == self._turn:
            return
        self._turn = view.turn
        discarded, passed_top, left_in_pile, recency = self.planes
        recency *= RECENCY_DECAY
        pile = view.discard
        if self._left is None:             # the player has not discarded yet this hand
            if view.turn > 0 and pile:
                discarded[pile[-1]] = recency[pile[-1]] = 1
            return
        before, now = set(self._left), set(pile)
        for c in pile:
            if c not in before:
                discarded[c] = recency[c] = 1
        if self._left and before <= now:                 # took nothing from the pile
            passed_top[self._left[-1]] = 1
        for c in self._left:
            if c in now:
                left_in_pile[c] = 1
        self._left = None

    def remember(self, view, action: int) -> None:
        """Note the pile the player leaves when ``action`` is a discard."""
        v = view.variant
        lay = v.layout
        if lay.discard <= action < lay.knock:
            face = action - lay.discard
            cf = v.spec.card_face
            card = next((c for c in view.hand if cf[c] == face), None)
            if card is not None:
                self._left = (*view.discard, card)


def next_seat_labels(view) -> tuple[np.ndarray, np.ndarray]:
    """``(pool, held)``, int8 over card ids: the cards ``view``'s player cannot see, and
    those of them the next seat holds (read from the view's true record: for training and
    tests, never for play)."""
    from mountain_rummy_env.core.state import LOC_HAND

    s = view._s
    pool = np.zeros(len(s["loc"]), np.int8)
    pool[view.hidden_cards()] = 1
    held = ((s["loc"] == LOC_HAND + view.opponents[0]) & (s["public"] == 0)).astype(np.int8)
    return pool, held


def belief_input_size(variant) -> int:
    from mountain_rummy_env.envs.observation import observation_size

    return observation_size(variant) + len(HISTORY_PLANES) * num_cards(variant)


def num_cards(variant) -> int:
    return len(variant.spec.card_face)


def build_belief_net(input_size: int, net_arch, cards: int):
    """An MLP (:func:`agents.ppo_nets.mlp`, ReLU): the observation and the history planes
    in, one logit per card out."""
    import torch.nn as nn

    from .ppo_nets import mlp

    last = int(net_arch[-1]) if len(net_arch) else int(input_size)
    return nn.Sequential(*mlp(input_size, net_arch, "relu"), nn.Linear(last, int(cards)))


def belief_meta(variant, net_arch, **extra) -> dict:
    from .ppo import variant_options

    return {"variant": variant.name, "variant_options": variant_options(variant),
            "observation_size": int(belief_input_size(variant)), "num_cards": num_cards(variant),
            "history_planes": list(HISTORY_PLANES), "net_arch": [int(w) for w in net_arch],
            **extra}


def save_belief(path, net, meta: dict, half: bool = False) -> None:
    """Write the network's weights (float16 with ``half``) and ``meta`` to ``path``
    atomically, and a ``.json`` sidecar with the metadata."""
    import torch

    missing = [k for k in _META_KEYS if k not in meta]
    if missing:
        raise ValueError(f"belief metadata lacks {missing}")
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    weights = {k: (v.detach().cpu().half() if half else v.detach().cpu().clone())
               for k, v in net.state_dict().items()}
    tmp = path.with_name(path.name + ".tmp")
    torch.save(dict(meta, format=FORMAT, state_dict=weights), tmp)
    os.replace(tmp, path)
    path.with_suffix(".json").write_text(json.dumps(dict(meta, format=FORMAT), indent=1) + "\n")


def shipped_beliefs() -> list[str]:
    return sorted(p.stem for p in BELIEF_DIR.glob("*.pt"))


def belief_path(name: str) -> Path:
    """A shipped network's file (``agents/beliefs/NAME.pt``), else ``name`` as a path."""
    shipped = BELIEF_DIR / f"{name}.pt"
    if shipped.is_file():
        return shipped
    path = Path(name)
    if not path.is_file():
        raise CheckpointError(f"no belief network {name!r}: neither a file nor a shipped name "
                              f"(shipped: {', '.join(shipped_beliefs()) or 'none'})")
    return path


_CACHE: dict = {}


def load_belief(name: str):
    """``(net, meta)`` of a belief file written by :func:`save_belief` (or a shipped name);
    :class:`CheckpointError` if it is missing, corrupt or not a belief network. Cached per
    (path, mtime, size): tournaments make one agent per deal."""
    path = belief_path(name)
    st = path.stat()
    key = (str(path.resolve()), st.st_mtime_ns, st.st_size)
    if key not in _CACHE:
        blob = read_checkpoint(path, "belief network", "a belief network", FORMAT)
        meta = {k: v for k, v in blob.items() if k != "state_dict"}
        try:
            net = build_belief_net(meta["observation_size"], meta["net_arch"], meta["num_cards"])
            net.load_state_dict({k: v.float() for k, v in blob["state_dict"].items()})
        except Exception as err:
            raise CheckpointError(f"belief network {str(path)!r} is inconsistent: "
                                  f"{type(err).__name__}: {str(err)[:300]}") from None
        net.eval()
        _CACHE[key] = (net, meta)
    return _CACHE[key]


class Belief:
    """A loaded belief network with its tracker, for one seat: :meth:`logits` of the view
    it last observed (computed once per decision)."""

    def __init__(self, name: str):
        self.net, self.meta = load_belief(name)
        self.name = name
        self.tracker = OpponentTracker(self.meta["num_cards"])
        self._view = None
        self._logits = None
        self._enc = None
        self._checked = None

    def check_variant(self, variant: str) -> None:
        """A :class:`CheckpointError` unless the network was trained for the game ``variant``."""
        if self.meta["variant"] != variant:
            raise CheckpointError(f"belief network {self.name!r} was trained for "
                                  f"{self.meta['variant']!r}, not {variant!r}")

    def check_options(self, variant) -> None:
        """A :class:`CheckpointError` unless the network reads ``variant``'s input (the
        game, its options) and the table has two seats."""
        self.check_variant(variant.name)
        if variant.num_players != 2:
            raise CheckpointError(f"a belief network needs a 2-seat table (its tracker reads the "
                                  f"pile as the one opponent's doing); this {variant.name!r} "
                                  f"table has {variant.num_players} seats")
        if self.meta["observation_size"] != belief_input_size(variant):
            raise CheckpointError(
                f"belief network {self.name!r} reads {self.meta['observation_size']} inputs; "
                f"this {variant.name!r} table gives {belief_input_size(variant)} (other options)")
        self._checked = variant

    def reset(self) -> None:
        self.tracker.reset()
        self._view = None

    def observe(self, view) -> None:
        self.tracker.observe(view)

    def remember(self, view, action: int) -> None:
        self.tracker.remember(view, action)

    def logits(self, view) -> np.ndarray:
        """One logit per card id: the next seat holds it among its unknown cards."""
        import torch

        from mountain_rummy_env.envs.observation import encode_views, observation_size

        if self._view is not view:
            v = view.variant
            if self._checked is not v:
                self.check_options(v)
            if self._enc is None:
                self._enc = np.zeros((1, observation_size(v)), np.int8)
            encode_views(view.public_state(), v, np.array([view.player], np.int64), self._enc)
            x = np.concatenate([self._enc[0].astype(np.float32), self.tracker.planes.reshape(-1)])
            with torch.no_grad():
                self._logits = self.net(torch.from_numpy(x[None]))[0].numpy().astype(np.float64)
            self._view = view
        return self._logits
