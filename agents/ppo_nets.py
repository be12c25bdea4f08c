"""The actor networks of :mod:`agents.ppo` (torch; imported only when a policy is built or loaded).

* Plain: ``body`` (Linear + activation per hidden layer) and ``head`` (a Linear to the logits).
* Hinted (a policy trained with ``--hint rules``): the observation carries one more column,
  the id of the move an advising player (the ``rules`` player) would make, and the logits
  are ``head(body(observation)) + hint_weight x one_hot(hint)``. The network learns
  corrections to the adviser's play; with its head near zero it plays the adviser's move.
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
    """Logits from a latent whose last column is the hinted action id: a Linear map of the
    rest plus ``hint_weight`` on the hinted action. A ``Linear`` so SB3's orthogonal
    initialisation treats it as the action head it replaces; ``in_features`` excludes the
    hint column."""

    def __init__(self, in_features: int, num_actions: int, hint_weight: float = 0.0):
        super().__init__(in_features, num_actions)
        self.hint_weight = nn.Parameter(torch.tensor(float(hint_weight)))

    def forward(self, latent: torch.Tensor) -> torch.Tensor:
        logits = super().forward(latent[:, :-1])
        hint = latent[:, -1].long()
        return logits + self.hint_weight * nn.functional.one_hot(hint, self.out_features).to(logits.dtype)


class HintedActor(nn.Module):
    """``body`` on the observation without its last column (the hint), then :class:`HintHead`."""

    def __init__(self, observation_size: int, num_actions: int, net_arch, activation: str):
        super().__init__()
        self.body = mlp(observation_size, net_arch, activation)
        last = int(net_arch[-1]) if len(net_arch) else observation_size
        self.head = HintHead(last, num_actions)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(torch.cat([self.body(x[:, :-1]), x[:, -1:]], dim=1))


def build_actor(observation_size: int, num_actions: int, net_arch, activation: str = "tanh",
                hinted: bool = False) -> nn.Module:
    """The actor network for ``observation_size`` encoder features (without the hint column).

    Layer for layer the same as SB3's ``mlp_extractor.policy_net`` + ``action_net`` for
    ``net_arch=dict(pi=net_arch, ...)``, so their weights copy over one to one.
    """
    if hinted:
        return HintedActor(observation_size, num_actions, net_arch, activation)
    body = mlp(observation_size, net_arch, activation)
    last = int(net_arch[-1]) if len(net_arch) else observation_size
    return nn.Sequential(OrderedDict([("body", body), ("head", nn.Linear(last, num_actions))]))
