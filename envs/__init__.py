"""Environments (imported as ``taluva_ai.envs``): the Gymnasium env ``taluva_ai/Taluva-v0``, the
native batched :class:`TaluvaVectorEnv` and the PettingZoo AEC env (docs/envs.md).

Importing this package registers ``taluva_ai/Taluva-v0`` with Gymnasium (``gymnasium.make``
and, through ``vector_entry_point``, ``gymnasium.make_vec(...,
vectorization_mode="vector_entry_point")``). Needs ``pip install 'taluva-ai[envs]'``.
"""

from __future__ import annotations

import gymnasium

from taluva_ai.envs.taluva_env import TaluvaEnv
from taluva_ai.envs.vector import EnvStateError, TaluvaVectorEnv

ENV_ID = "taluva_ai/Taluva-v0"

if ENV_ID not in gymnasium.registry:
    gymnasium.register(
        id=ENV_ID,
        entry_point="taluva_ai.envs.taluva_env:TaluvaEnv",
        vector_entry_point="taluva_ai.envs.vector:TaluvaVectorEnv",
        disable_env_checker=False,
    )


def aec_env(**kwargs: object) -> object:
    """The PettingZoo AEC env (:class:`taluva_ai.envs.pettingzoo_env.TaluvaAECEnv`)."""
    from taluva_ai.envs.pettingzoo_env import TaluvaAECEnv

    return TaluvaAECEnv(**kwargs)


__all__ = ["ENV_ID", "EnvStateError", "TaluvaEnv", "TaluvaVectorEnv", "aec_env"]
