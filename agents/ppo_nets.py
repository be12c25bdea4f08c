"""The actor network of :mod:`agents.ppo` (torch; imported only when a policy is built or loaded):
``body`` (Linear + activation per hidden layer) and ``head`` (a Linear to the logits).
:func:`legal_logits` computes the head at the legal actions only (the trainers' path).

With ``move_skip`` (observations with the move block, ``obs_features="solver_move"``) the
actor also adds ``move_gain`` (one learned weight per action) times the move block, the
last ``num_actions`` inputs, to the logits: a skip from the compiled heuristic's move to its
logit, which a hidden layer of 512 cannot pass on exactly for 1,845 actions. The untrained
actor plays that move with most of its probability and learns where to depart from it.
"""

from __future__ import annotations

from collections import OrderedDict

import torch
import torch.nn as nn

from .sparse_layers import SparseInputLinear, legal_head

ACTIVATIONS = {"tanh": nn.Tanh, "relu": nn.ReLU}
# move_gain at the start: the heuristic's move gets e^4 = 55 times the weight of any other
MOVE_GAIN_INIT = 4.0


def mlp(inputs: int, net_arch, activation: str) -> nn.Sequential:
    """Linear + activation per hidden width (SB3's ``MlpExtractor.policy_net`` layer for
    layer); the first Linear is a :class:`~agents.sparse_layers.SparseInputLinear`, the same
    layer computed from the observation's nonzeros in float32."""
    act = ACTIVATIONS[activation]
    layers, last = [], inputs
    for width in net_arch:
        layers += [(nn.Linear if layers else SparseInputLinear)(last, int(width)), act()]
        last = int(width)
    return nn.Sequential(*layers)


class MoveSkipActor(nn.Module):
    """``head(body(x)) + move_gain * x[:, -num_actions:]`` (the module docstring's skip)."""

    def __init__(self, body: nn.Module, head: nn.Linear):
        super().__init__()
        self.body, self.head = body, head
        self.move_gain = nn.Parameter(torch.full((head.out_features,), MOVE_GAIN_INIT))

    def forward(self, x):
        return self.head(self.body(x)) + self.move_gain * x[..., -self.head.out_features:]


def build_actor(observation_size: int, num_actions: int, net_arch, activation: str = "tanh",
                move_skip: bool = False) -> nn.Module:
    """The actor network for ``observation_size`` encoder features.

    Layer for layer the same as SB3's ``mlp_extractor.policy_net`` + ``action_net`` for
    ``net_arch=dict(pi=net_arch, ...)``, so their weights copy over one to one; with
    ``move_skip``, a :class:`MoveSkipActor` (the observation must end in the move block).
    """
    body = mlp(observation_size, net_arch, activation)
    last = int(net_arch[-1]) if len(net_arch) else observation_size
    head = nn.Linear(last, num_actions)
    if move_skip:
        if observation_size < num_actions:
            raise ValueError(f"move_skip needs the move block ({num_actions} values) in the "
                             f"observation; it has {observation_size}")
        return MoveSkipActor(body, head)
    return nn.Sequential(OrderedDict([("body", body), ("head", head)]))


def legal_logits(actor: nn.Module, x: torch.Tensor, ids: torch.Tensor,
                 valid: torch.Tensor) -> torch.Tensor:
    """``actor(x).gather(1, ids)`` with the padding (``~valid``) at -1e9, the head computed
    at the legal actions ``ids`` only (a dot product per legal action, not a matmul over all
    of them): Mountain has about 6 legal actions of 1,845, and the head's full matmul was
    the largest part of the self-play trainer's update (161 ms of a 4,096-row minibatch's
    forward and backward, against 24 ms with torch's gathers). In float32 the compiled
    :func:`~agents.sparse_layers.legal_head`; under bfloat16 the gathers. ``actor``:
    :func:`build_actor`'s."""
    head = actor.head
    h = actor.body(x)
    gain = actor.move_gain if isinstance(actor, MoveSkipActor) else None
    if h.dtype == head.weight.dtype == torch.float32:
        return legal_head(h, head, ids, valid, gain, x)     # compiled, the same sums
    rows, cols = valid.nonzero(as_tuple=True)
    a = ids[rows, cols]
    flat = (h[rows] * head.weight[a]).sum(1) + head.bias[a]
    if gain is not None:
        flat = flat + gain[a] * x[rows, x.shape[1] - head.out_features + a]
    return flat.new_full(ids.shape, -1e9).index_put((rows, cols), flat)
