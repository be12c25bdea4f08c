"""The actor networks of :mod:`agents.ppo` (torch; imported only when a policy is built or loaded).

* Plain: ``body`` (Linear + activation per hidden layer) and ``head`` (a Linear to the logits).
* Hinted (a policy trained with ``--hint``): the observation carries one more column, the
  id of the move an advising player (the ``rules`` player) would make, and the logits are
  ``head(body(observation)) + hint_weight x one_hot(hint)``; with slots, more columns hold
  the adviser's candidate moves in fixed places, each with a bonus from the network. The
  network learns corrections to the adviser's play; with its head near zero it plays the
  adviser's move.
"""

from __future__ import annotations

from collections import OrderedDict

import torch
import torch.nn as nn

ACTIVATIONS = {"tanh": nn.Tanh, "relu": nn.ReLU}


def mlp(inputs: int, net_arch, activation: str) -> nn.Sequential:
    """Linear + activation per hidden width (SB3's ``MlpExtractor.policy_net`` layer for layer)."""
    act = ACTIVATIONS[activation]
    layers, last = [], inputs
    for width in net_arch:
        layers += [nn.Linear(last, int(width)), act()]
        last = int(width)
    return nn.Sequential(*layers)


class HintHead(nn.Linear):
    """Logits from a latent whose last ``1 + slots`` columns are action ids: the hinted
    action, then the adviser's ``slots`` candidate moves in fixed places (-1: none). A
    Linear map of the rest, plus ``hint_weight`` on the hinted action, plus for each slot a
    bonus computed from the latent (``slot_net``) on that slot's action: a slot means the
    same kind of move in every position ("the top card", "the second-best discard"), which
    a per-action-id logit cannot generalise over. A ``Linear`` so SB3's orthogonal
    initialisation treats it as the action head it replaces; ``in_features`` excludes the
    id columns."""

    def __init__(self, in_features: int, num_actions: int, hint_weight: float = 0.0, slots: int = 0):
        super().__init__(in_features, num_actions)
        self.hint_weight = nn.Parameter(torch.tensor(float(hint_weight)))
        self.slots = int(slots)
        if self.slots:
            self.slot_net = nn.Linear(in_features, self.slots)

    @property
    def id_columns(self) -> int:
        return 1 + self.slots

    def forward(self, latent: torch.Tensor) -> torch.Tensor:
        k = self.id_columns
        features, ids = latent[:, :-k], latent[:, -k:].long()
        logits = super().forward(features)
        logits = logits + self.hint_weight * nn.functional.one_hot(ids[:, 0], self.out_features).to(logits.dtype)
        if self.slots:
            slot_ids = ids[:, 1:]
            bonus = self.slot_net(features) * (slot_ids >= 0).to(logits.dtype)
            logits = logits.scatter_add(1, slot_ids.clamp(min=0), bonus)
        return logits


class HintedActor(nn.Module):
    """``body`` on the observation without its id columns, then :class:`HintHead`."""

    def __init__(self, body: nn.Module, head: HintHead):
        super().__init__()
        self.body, self.head = body, head

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        k = self.head.id_columns
        return self.head(torch.cat([self.body(x[:, :-k]), x[:, -k:]], dim=1))


def build_actor(observation_size: int, num_actions: int, net_arch, activation: str = "tanh",
                hinted: bool = False, slots: int = 0) -> nn.Module:
    """The actor network for ``observation_size`` encoder features (without the id columns
    of a hinted actor: the hint and ``slots`` candidate moves).

    Layer for layer the same as SB3's ``mlp_extractor.policy_net`` + ``action_net`` for
    ``net_arch=dict(pi=net_arch, ...)``, so their weights copy over one to one.
    """
    body = mlp(observation_size, net_arch, activation)
    last = int(net_arch[-1]) if len(net_arch) else observation_size
    if hinted:
        return HintedActor(body, HintHead(last, num_actions, slots=slots))
    return nn.Sequential(OrderedDict([("body", body), ("head", nn.Linear(last, num_actions))]))
