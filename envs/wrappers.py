"""Wrappers for the Taluva envs."""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np


class PlanesOnly(gym.ObservationWrapper):
    """Observation = the planes only (``Box float32[C, S, S]``); the legal mask stays available
    through ``action_masks()`` (sb3-contrib's ``MaskablePPO`` reads it there) and
    ``info["action_mask"]``. Use it with policies that take one array input::

        from sb3_contrib import MaskablePPO
        from taluva_ai.envs.sb3 import GapMaskablePolicy, cnn_policy_kwargs
        env = PlanesOnly(gymnasium.make("taluva_ai/Taluva-v0", opponents=["random"]))
        MaskablePPO(GapMaskablePolicy, env, policy_kwargs=cnn_policy_kwargs()).learn(10_000)

    (``"MlpPolicy"`` without the CNN flattens the planes: 5.2 million parameters, 5-10
    steps/s; :mod:`taluva_ai.envs.sb3`, docs/envs.md.)
    """

    def __init__(self, env: gym.Env) -> None:
        super().__init__(env)
        space: Any = env.observation_space
        self.observation_space = space["observation"]

    def observation(self, observation: dict[str, np.ndarray]) -> np.ndarray:
        return observation["observation"]

    def action_masks(self) -> np.ndarray:
        """``bool[A]`` legal mask of the wrapped env."""
        unwrapped: Any = self.env.unwrapped
        masks = unwrapped.action_masks()
        return np.asarray(masks, dtype=bool)
