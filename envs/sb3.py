"""Stable-Baselines3 pieces for the Taluva envs (``pip install 'taluva-ai[rl]'``: torch and
sb3-contrib): :class:`TaluvaCNN`, a small CNN features extractor over the planes,
:func:`cnn_policy_kwargs` to hand it to sb3-contrib's ``MaskablePPO``, and
:class:`GapMaskablePolicy`, its ``"MlpPolicy"`` with a faster masked distribution
(docs/envs.md)::

    import gymnasium as gym
    from sb3_contrib import MaskablePPO
    import taluva_ai.envs
    from taluva_ai.envs.sb3 import GapMaskablePolicy, cnn_policy_kwargs
    from taluva_ai.envs.wrappers import PlanesOnly

    env = PlanesOnly(gym.make("taluva_ai/Taluva-v0", opponents=["random"]))
    model = MaskablePPO(GapMaskablePolicy, env, policy_kwargs=cnn_policy_kwargs(), n_epochs=2)
    model.learn(10_000)

SB3's default ``MlpPolicy`` flattens the ``float32[49, 27, 27]`` planes into 35,721 inputs of
two 64-unit MLPs (5.2 million parameters) and trains at 5-10 steps/s on 2 cores. With this
extractor the policy has 785,919 parameters (663,390 of them in the action layer, 64 x 10,206
view ids); with :class:`GapMaskablePolicy` as well, ``experiments/sb3_maskable_ppo.py`` trains
at 235 agent steps per CPU second on one thread (docs/envs.md has the measurement).
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import torch
from sb3_contrib.common.maskable.distributions import (
    MaskableCategorical,
    MaskableCategoricalDistribution,
)
from sb3_contrib.common.maskable.policies import MaskableActorCriticPolicy
from stable_baselines3.common.torch_layers import BaseFeaturesExtractor
from torch import nn
from torch.distributions import Categorical


class TaluvaCNN(BaseFeaturesExtractor):
    """A small CNN features extractor for planes ``float32[C, S, S]`` (the observation of
    ``PlanesOnly(TaluvaEnv)`` or ``PlanesOnly(TaluvaSoloEnv)``, docs/encoding.md).

    Layers: a 2x2 convolution of stride 2 ``C -> channels`` (padding 1: it mixes the planes
    of each 2x2 patch of hexes, ``S -> S // 2 + 1``, 27 -> 14), a 3x3 convolution of stride 2
    (14 -> 7; each feature then sees a patch about 6 hexes wide), each followed by ReLU, then
    a linear layer to ``features_dim`` and ReLU. For the 2-player planes (49 x 27 x 27) and
    the defaults it has 105,952 parameters. (A first layer of stride 2 is cheaper on CPU than
    a 1x1 convolution over the 49 planes at full resolution: it reads the input once and
    writes a quarter of the pixels.)

    Args:
        observation_space: a ``Box`` of shape ``(C, S, S)``.
        features_dim: the output size (default 128).
        channels: the convolutions' width (default 16).

    Raises:
        ValueError: the space is not a 3-D ``Box`` with square planes, or a size is below 1.
    """

    def __init__(self, observation_space: gym.spaces.Space, features_dim: int = 128,
                 channels: int = 16) -> None:
        shape = getattr(observation_space, "shape", None)
        if (not isinstance(observation_space, gym.spaces.Box) or shape is None
                or len(shape) != 3 or shape[1] != shape[2]):
            raise ValueError(f"TaluvaCNN takes planes Box(C, S, S), got {observation_space}")
        for name, v in (("features_dim", features_dim), ("channels", channels)):
            if isinstance(v, bool) or not isinstance(v, int) or v < 1:
                raise ValueError(f"TaluvaCNN: {name} must be an integer >= 1, got {v!r}")
        super().__init__(observation_space, features_dim)
        c, s, _ = shape
        out = (s // 2 + 1 + 1) // 2  # S -> S // 2 + 1 -> ceil of its half
        self.convs = nn.Sequential(
            nn.Conv2d(c, channels, 2, stride=2, padding=1), nn.ReLU(),
            nn.Conv2d(channels, channels, 3, stride=2, padding=1), nn.ReLU(),
        )
        self.linear = nn.Sequential(nn.Flatten(), nn.Linear(channels * out * out, features_dim),
                                    nn.ReLU())

    def forward(self, observations: torch.Tensor) -> torch.Tensor:
        """``float32[B, features_dim]`` from planes ``float32[B, C, S, S]``."""
        return self.linear(self.convs(observations))


#: How far below the smallest legal logit :class:`GapMaskableCategorical` puts the masked-out
#: ones: their probabilities are then below ``exp(-60)`` (1e-26) of the least likely legal id.
MASK_GAP = 60.0


class GapMaskableCategorical(MaskableCategorical):
    """sb3-contrib's ``MaskableCategorical`` with the masked-out logits set ``MASK_GAP`` below
    the smallest legal logit of their row instead of at -1e8 (a row with no legal id: all
    equal, a uniform distribution, as sb3-contrib gives). Same distribution to within 1e-22
    per id, and its entropy still counts the legal ids only; but ``exp`` of the normalised
    logits stays in the range where x86 CPUs compute it fast: values below about -87 (where
    float32's ``exp`` underflows, -1e8 among them) take a slow path, 10 to 30 times slower,
    which made the masked distribution over Taluva's 10,206 ids most of a PPO update's time."""

    def apply_masking(self, masks: Any) -> None:
        if masks is None:
            super().apply_masking(None)
            return
        raw = self._original_logits
        self.masks = torch.as_tensor(masks, dtype=torch.bool, device=raw.device).reshape(
            raw.shape)
        low = raw.detach()
        floor = low.masked_fill(~self.masks, float("inf")).amin(-1, keepdim=True)
        floor = torch.where(torch.isfinite(floor), floor, low.amin(-1, keepdim=True)) - MASK_GAP
        logits = torch.where(self.masks, raw, floor)
        self.__dict__.pop("probs", None)
        Categorical.__init__(self, logits=logits, validate_args=self._validate_args)

    def sample(self, sample_shape: torch.Size | list[int] | tuple[int, ...] = torch.Size()  # noqa: B008
               ) -> torch.Tensor:
        """One id per row by inverse-CDF sampling (``torch.searchsorted`` in the cumulative
        probabilities, with ``u`` uniform in ``(0, total]``, so an id of probability 0 (or a
        masked one, below 1e-22) is never drawn): the distribution of ``Categorical.sample``,
        whose ``torch.multinomial`` is about 30 times slower over 10,206 ids. Other
        ``sample_shape`` values go to ``Categorical.sample``."""
        if torch.Size(sample_shape) != torch.Size():
            return super().sample(sample_shape)
        cdf = self.probs.cumsum(-1)
        u = (1.0 - torch.rand((*cdf.shape[:-1], 1), dtype=cdf.dtype, device=cdf.device)) \
            * cdf[..., -1:]
        return torch.searchsorted(cdf, u).squeeze(-1).clamp_(max=cdf.shape[-1] - 1)


class GapMaskableCategoricalDistribution(MaskableCategoricalDistribution):
    """``MaskableCategoricalDistribution`` made of :class:`GapMaskableCategorical`."""

    def proba_distribution(self, action_logits: torch.Tensor) -> Any:
        self.distribution = GapMaskableCategorical(logits=action_logits.view(-1, self.action_dim))
        return self


class GapMaskablePolicy(MaskableActorCriticPolicy):
    """sb3-contrib's ``MaskableActorCriticPolicy`` (``"MlpPolicy"``) with
    :class:`GapMaskableCategorical` action distributions: the same policy, several times
    faster over a large masked action space (docs/envs.md). Give it to ``MaskablePPO`` in
    place of ``"MlpPolicy"``, with :func:`cnn_policy_kwargs` for the CNN.

    Raises:
        ValueError: an action space that is not ``Discrete``.
    """

    def __init__(self, observation_space: gym.spaces.Space, action_space: gym.spaces.Space,
                 *args: Any, **kwargs: Any) -> None:
        if not isinstance(action_space, gym.spaces.Discrete):
            raise ValueError(f"GapMaskablePolicy needs a Discrete action space, got "
                             f"{action_space}")
        super().__init__(observation_space, action_space, *args, **kwargs)
        self.action_dist = GapMaskableCategoricalDistribution(int(action_space.n))


def cnn_policy_kwargs(features_dim: int = 128, channels: int = 16,
                      net_arch: tuple[int, ...] = (64,)) -> dict[str, Any]:
    """``policy_kwargs`` for sb3 / sb3-contrib policies (``"MlpPolicy"`` on planes): the
    :class:`TaluvaCNN` extractor shared by the policy and the value function, then
    ``net_arch`` hidden layers for each (default one of 64 units) before the action layer
    and the value."""
    return {
        "features_extractor_class": TaluvaCNN,
        "features_extractor_kwargs": {"features_dim": features_dim, "channels": channels},
        "net_arch": {"pi": list(net_arch), "vf": list(net_arch)},
    }


__all__ = ["MASK_GAP", "GapMaskableCategorical", "GapMaskablePolicy", "TaluvaCNN",
           "cnn_policy_kwargs"]
