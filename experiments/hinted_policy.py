"""MaskablePPO's MLP policy for a hinted observation (``train_ppo --hint``).

The observation's last columns are the adviser's move and its ``slots`` candidate moves
(:data:`agents.ppo.HINTS`). The actor's MLP and the critic see the rest; the action head
(:class:`agents.ppo_nets.HintHead`) adds a learned weight, starting at ``hint_weight``, to
the adviser's move's logit and a bonus from the network to each slot's move. The head starts
near zero (SB3's orthogonal initialisation, gain 0.01), so the first policy plays the
adviser's move with a probability set by ``hint_weight`` and the number of legal moves.
Its layers are named as :func:`agents.ppo_nets.build_actor`'s hinted actor expects.
"""

from __future__ import annotations

from functools import partial

import torch
from sb3_contrib.common.maskable.policies import MaskableActorCriticPolicy
from stable_baselines3.common.torch_layers import MlpExtractor

from agents.ppo_nets import HintHead


class HintPassingExtractor(MlpExtractor):
    """SB3's ``MlpExtractor`` on the features without the ``id_columns`` (the hint and the
    slots); the actor's latent carries them on to the head."""

    def __init__(self, feature_dim: int, net_arch, activation_fn, device="cpu", id_columns: int = 1):
        super().__init__(feature_dim - id_columns, net_arch, activation_fn, device)
        self.id_columns = id_columns
        self.latent_dim_pi += id_columns

    def forward_actor(self, features: torch.Tensor) -> torch.Tensor:
        k = self.id_columns
        return torch.cat([self.policy_net(features[:, :-k]), features[:, -k:]], dim=1)

    def forward_critic(self, features: torch.Tensor) -> torch.Tensor:
        return self.value_net(features[:, :-self.id_columns])


class HintedMaskablePolicy(MaskableActorCriticPolicy):
    def __init__(self, *args, hint_weight: float = 5.0, slots: int = 0, **kwargs):
        self.hint_weight = float(hint_weight)
        self.slots = int(slots)
        super().__init__(*args, **kwargs)

    def _build_mlp_extractor(self) -> None:
        self.mlp_extractor = HintPassingExtractor(self.features_dim, self.net_arch,
                                                  self.activation_fn, self.device, 1 + self.slots)

    def _build(self, lr_schedule) -> None:
        super()._build(lr_schedule)
        self.action_net = HintHead(self.mlp_extractor.latent_dim_pi - 1 - self.slots,
                                   int(self.action_space.n), self.hint_weight, self.slots)
        if self.ortho_init:
            self.action_net.apply(partial(self.init_weights, gain=0.01))
        self.optimizer = self.optimizer_class(self.parameters(), lr=lr_schedule(1),
                                              **self.optimizer_kwargs)

    def _get_constructor_parameters(self) -> dict:
        return dict(super()._get_constructor_parameters(), hint_weight=self.hint_weight,
                    slots=self.slots)
