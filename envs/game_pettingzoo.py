"""PettingZoo AEC env of any protocol game with an observation tensor (Thurn und Taxis:
``taluva_ai.envs.game_aec_env(num_players=3)``): every seat is an agent (``player_0`` ..)
that observes its own information set. Spaces, chance, rewards, episode end and render modes
are those of :mod:`taluva_ai.envs.game_env`; the game is reached only through the protocol.

Illegal actions (a masked id; ``illegal_action=``, Pgx's convention by default):
``"terminate"`` (default): the game ends there, every agent terminates, the actor's reward is
``illegal_penalty`` (default -1) and each other agent's ``-illegal_penalty / (n - 1)`` (a
forfeit), ``infos[actor]["illegal_action"]`` is True; ``"penalty"``: the actor's reward is
``illegal_penalty``, nothing else changes and it is still to move; ``"raise"``:
``IllegalActionError``, nothing changes.

Version: v0.
"""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np

from taluva_ai.envs.aec import SeatAECEnv
from taluva_ai.envs.base import RENDER_MODES, EnvStateError
from taluva_ai.envs.game_env import draw_module, game_spaces, tensor_game
from taluva_ai.errors import IllegalActionError
from taluva_ai.protocol import GameState


class GameAECEnv(SeatAECEnv):
    """PettingZoo AEC env of a protocol game: every seat is an agent (``player_0`` ..),
    observing its own information set (module docstring for spaces and rewards).

    Args:
        game: a registered game name (default ``"thurn_und_taxis"``).
        num_players: 2..4.
        render_mode: None, ``"human"``, ``"ansi"`` or ``"rgb_array"``.
        illegal_action: ``"terminate"`` (default), ``"penalty"`` or ``"raise"`` (module
            docstring).
        illegal_penalty: the actor's reward for an illegal action (default -1).
        **options: the game's options.

    Raises:
        ValueError: an unknown game, a bad option, render mode or illegal_action.
    """

    metadata: ClassVar[dict[str, Any]] = {"render_modes": RENDER_MODES,
                                          "name": "protocol_game_v0",
                                          "is_parallelizable": False, "render_fps": 2}

    def __init__(self, game: str = "thurn_und_taxis", num_players: int = 2,
                 render_mode: str | None = None, illegal_action: str = "terminate",
                 illegal_penalty: float = -1.0, **options: Any) -> None:
        super().__init__()
        try:
            self.game = tensor_game(game, {"num_players": num_players, **options})
        except (KeyError, TypeError) as e:
            raise ValueError(str(e.args[0] if e.args else e)) from None
        self._set_modes(illegal_action, illegal_penalty, render_mode)
        if render_mode == "rgb_array":
            draw_module(self.game)
        self._set_up(num_players, *game_spaces(self.game))
        self.state: GameState | None = None
        self._rng = np.random.default_rng()

    def _game_state(self) -> GameState | None:
        return self.state

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None
              ) -> None:
        """A new game (its seed drawn from the env's generator, reseeded by ``seed``)."""
        if seed is not None:
            self._rng = np.random.default_rng(seed)
        self.state = self.game.new_initial_state(seed=int(self._rng.integers(2**62)))
        self._start()

    def observe(self, agent: str) -> dict[str, np.ndarray]:
        """``agent``'s information set and its mask (zeros unless it is to move)."""
        if self.state is None:
            raise EnvStateError("call reset() before observe()")
        seat = self._seat(agent)
        mask = np.zeros(self.game.num_actions, dtype=np.int8)
        if self.state.current_player == seat and not self._illegal_end:
            mask[self.state.legal_actions()] = 1
        tensor = self.state.observation_tensor(seat)  # type: ignore[attr-defined]
        return {"observation": np.asarray(tensor, dtype=np.float32), "action_mask": mask}

    def _legal_move(self, state: GameState, action: int) -> int | None:
        return action if state.legal_action_mask()[action] else None

    def _illegal_error(self, state: GameState, action: int) -> IllegalActionError:
        return IllegalActionError(state.action_to_string(action),
                                  "masked out: not a legal action (see action_mask)")
