"""The actor network of :mod:`agents.ppo` (torch; imported only when a policy is built or loaded):
``body`` (Linear + activation per hidden layer) and ``head`` (a Linear to the logits).
"""

from __future__ import annotations

from collections import OrderedDict

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


def build_actor(observation_size: int, num_actions: int, net_arch, activation: str = "tanh") -> nn.Module:
    """The actor network for ``observation_size`` encoder features.

    Layer for layer the same as SB3's ``mlp_extractor.policy_net`` + ``action_net`` for
    ``net_arch=dict(pi=net_arch, ...)``, so their weights copy over one to one.
    """
    body = mlp(observation_size, net_arch, activation)
    last = int(net_arch[-1]) if len(net_arch) else observation_size
    return nn.Sequential(OrderedDict([("body", body), ("head", nn.Linear(last, num_actions))]))
