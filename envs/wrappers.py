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
        env = PlanesOnly(gymnasium.make("taluva_ai/Taluva-v0", opponents=["random"]))
        MaskablePPO("MlpPolicy", env).learn(10_000)
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
