"""Environments (imported as ``taluva_ai.envs``): the Gymnasium env ``taluva_ai/Taluva-v0``, the
native batched :class:`TaluvaVectorEnv` and the PettingZoo AEC env (docs/envs.md); for any
protocol game with an observation tensor, :class:`GameEnv` and :func:`game_aec_env`, with
``taluva_ai/ThurnUndTaxis-v0`` and its batched :class:`ThurnUndTaxisVectorEnv`
(docs/thurn_und_taxis.md);
the solo variant's single-agent env ``taluva_ai/TaluvaSolo-v0`` and
:class:`TaluvaSoloVectorEnv` (docs/solo.md).

Importing this package registers ``taluva_ai/Taluva-v0`` with Gymnasium (``gymnasium.make``
and, through ``vector_entry_point``, ``gymnasium.make_vec(...,
vectorization_mode="vector_entry_point")``). Needs ``pip install 'taluva-ai[envs]'``.
"""

from __future__ import annotations

from typing import Any

try:
    import gymnasium
except ImportError as e:  # the core package does not need it
    raise ImportError(f"taluva_ai.envs needs the envs extra: pip install 'taluva-ai[envs]' "
                      f"(or -e '.[envs]' in a checkout) ({e})") from e

from taluva_ai.envs.game_env import GameEnv, ThurnUndTaxisEnv
from taluva_ai.envs.solo_env import TaluvaSoloEnv, TaluvaSoloVectorEnv
from taluva_ai.envs.taluva_env import TaluvaEnv
from taluva_ai.envs.tnt_vector import ThurnUndTaxisVectorEnv
from taluva_ai.envs.vector import EnvStateError, TaluvaVectorEnv

ENV_ID = "taluva_ai/Taluva-v0"
TNT_ENV_ID = "taluva_ai/ThurnUndTaxis-v0"
#: The solo variant (docs/solo.md).
SOLO_ENV_ID = "taluva_ai/TaluvaSolo-v0"

#: ``(env id, entry point, vector entry point)`` of each registered env.
_ENTRY_POINTS = (
    (ENV_ID, "taluva_ai.envs.taluva_env:TaluvaEnv", "taluva_ai.envs.vector:TaluvaVectorEnv"),
    (TNT_ENV_ID, "taluva_ai.envs.game_env:ThurnUndTaxisEnv",
     "taluva_ai.envs.tnt_vector:ThurnUndTaxisVectorEnv"),
    (SOLO_ENV_ID, "taluva_ai.envs.solo_env:TaluvaSoloEnv",
     "taluva_ai.envs.solo_env:TaluvaSoloVectorEnv"),
)
for _id, _entry, _vector_entry in _ENTRY_POINTS:
    if _id not in gymnasium.registry:
        gymnasium.register(id=_id, entry_point=_entry, vector_entry_point=_vector_entry,
                           disable_env_checker=False)
del _id, _entry, _vector_entry


def aec_env(**kwargs: object) -> object:
    """The PettingZoo AEC env (:class:`taluva_ai.envs.pettingzoo_env.TaluvaAECEnv`)."""
    from taluva_ai.envs.pettingzoo_env import TaluvaAECEnv

    return TaluvaAECEnv(**kwargs)


def game_aec_env(game: str = "thurn_und_taxis", **kwargs: Any) -> Any:
    """The PettingZoo AEC env of a protocol game with an observation tensor
    (:class:`taluva_ai.envs.game_pettingzoo.GameAECEnv`; Thurn und Taxis by default)."""
    from taluva_ai.envs.game_pettingzoo import GameAECEnv

    return GameAECEnv(game, **kwargs)


__all__ = ["ENV_ID", "SOLO_ENV_ID", "TNT_ENV_ID", "EnvStateError", "GameEnv", "TaluvaEnv",
           "TaluvaSoloEnv", "TaluvaSoloVectorEnv", "TaluvaVectorEnv", "ThurnUndTaxisEnv",
           "ThurnUndTaxisVectorEnv", "aec_env", "game_aec_env"]
