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
from gymnasium import spaces
from pettingzoo import AECEnv

from taluva_ai.envs.game_env import draw_module, game_spaces, render_game, tensor_game
from taluva_ai.envs.taluva_env import (
    RENDER_MODES,
    check_action,
    check_illegal_mode,
    illegal_step_rewards,
)
from taluva_ai.envs.vector import EnvStateError
from taluva_ai.errors import IllegalActionError
from taluva_ai.protocol import CHANCE, GameState


class GameAECEnv(AECEnv):
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
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(f"render_mode must be one of {self.metadata['render_modes']} or "
                             f"None, got {render_mode!r}")
        if render_mode == "rgb_array":
            draw_module(self.game)
        self.illegal_action = check_illegal_mode(illegal_action)
        self.illegal_penalty = float(illegal_penalty)
        self.render_mode = render_mode
        self.possible_agents = [f"player_{i}" for i in range(num_players)]
        obs_space, act_space = game_spaces(self.game)
        self.observation_spaces = dict.fromkeys(self.possible_agents, obs_space)
        self.action_spaces = dict.fromkeys(self.possible_agents, act_space)
        self.state: GameState | None = None
        self._illegal_end = False
        self._rng = np.random.default_rng()

    def observation_space(self, agent: str) -> spaces.Space:
        return self.observation_spaces[agent]

    def action_space(self, agent: str) -> spaces.Space:
        return self.action_spaces[agent]

    def _resolve_chance(self) -> None:
        assert self.state is not None
        while self.state.current_player == CHANCE:
            self.state.draw()

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None
              ) -> None:
        """A new game (its seed drawn from the env's generator, reseeded by ``seed``)."""
        if seed is not None:
            self._rng = np.random.default_rng(seed)
        self.state = self.game.new_initial_state(seed=int(self._rng.integers(2**62)))
        self._resolve_chance()
        self.agents = list(self.possible_agents)
        self.rewards = dict.fromkeys(self.agents, 0.0)
        self._cumulative_rewards = dict.fromkeys(self.agents, 0.0)
        self.terminations = dict.fromkeys(self.agents, False)
        self.truncations = dict.fromkeys(self.agents, False)
        self.infos: dict[str, dict[str, Any]] = {a: {} for a in self.agents}
        self._illegal_end = False
        self.agent_selection = self.possible_agents[self.state.current_player]

    def observe(self, agent: str) -> dict[str, np.ndarray]:
        """``agent``'s information set and its mask (zeros unless it is to move)."""
        if self.state is None:
            raise EnvStateError("call reset() before observe()")
        seat = self.possible_agents.index(agent)
        mask = np.zeros(self.game.num_actions, dtype=np.int8)
        if self.state.current_player == seat and not self._illegal_end:
            mask[self.state.legal_actions()] = 1
        tensor = self.state.observation_tensor(seat)  # type: ignore[attr-defined]
        return {"observation": np.asarray(tensor, dtype=np.float32), "action_mask": mask}

    def step(self, action: Any) -> None:
        """Apply the selected agent's action.

        Raises:
            EnvStateError: before ``reset``, an action after the game ended, or any step
                once every agent is done ("the game is over").
            ValueError, ActionOutOfRangeError: not an action id.
            IllegalActionError: a masked action with ``illegal_action="raise"``.
        """
        if self.state is None:
            raise EnvStateError("call reset() before step()")
        agent = self.agent_selection
        if self.terminations.get(agent, False) or self.truncations.get(agent, False):
            if action is not None:
                raise EnvStateError("the game is over: the only step left is step(None) "
                                    "for each agent, then reset()")
            self._was_dead_step(action)
            return
        st = self.state
        if st.is_terminal() or agent not in self.agents:
            raise EnvStateError("the game is over (every agent is done): call reset() to "
                                "start a new one")
        a = check_action(action, self.game.num_actions)
        if not st.legal_action_mask()[a]:
            if self.illegal_action == "raise":
                raise IllegalActionError(st.action_to_string(a),
                                         "masked out: not a legal action (see action_mask)")
            self._illegal_step(agent)
            return
        self.infos[agent].pop("illegal_action", None)
        st.apply(a)
        self._resolve_chance()
        self._cumulative_rewards[agent] = 0.0
        self._clear_rewards()
        if st.is_terminal():
            ret = st.returns()
            truncated = bool(getattr(st, "truncated", False))
            for i, ag in enumerate(self.agents):
                self.rewards[ag] = float(ret[i])
                self.terminations[ag] = not truncated
                self.truncations[ag] = truncated
        else:
            self.agent_selection = self.possible_agents[st.current_player]
        self._accumulate_rewards()

    def _illegal_step(self, agent: str) -> None:
        """``agent`` chose a masked action in the ``"terminate"`` or ``"penalty"`` mode
        (module docstring); the state is unchanged."""
        illegal_step_rewards(self, agent, self.possible_agents.index(agent))
        self.infos[agent] = {**self.infos.get(agent, {}), "illegal_action": True}
        self._accumulate_rewards()

    def render(self) -> str | np.ndarray | None:
        """As :meth:`taluva_ai.envs.game_env.GameEnv.render`.

        Raises:
            EnvStateError: before ``reset``.
        """
        if self.state is None:
            raise EnvStateError("call reset() before render()")
        return render_game(self.state, self.game, self.render_mode)

    def close(self) -> None:
        pass

