"""What the PettingZoo AEC envs (:class:`~taluva_ai.envs.pettingzoo_env.TaluvaAECEnv`,
:class:`~taluva_ai.envs.game_pettingzoo.GameAECEnv`) share: every seat an agent
(``player_0`` ..), chance nodes resolved inside ``reset`` and ``step``, the step's checks and
PettingZoo's dead steps, the rewards and episode end, the ``illegal_action`` modes and the
pictures. A subclass holds the game state and says how an action id is checked and played
(:meth:`SeatAECEnv._legal_move`). Each env's module docstring is its spec. Needs pettingzoo.
"""

from __future__ import annotations

from typing import Any

from gymnasium import spaces
from pettingzoo import AECEnv

from taluva_ai.envs.base import (
    EnvModes,
    EnvStateError,
    check_action,
    illegal_step_rewards,
)
from taluva_ai.errors import IllegalActionError
from taluva_ai.protocol import CHANCE, Game


class SeatAECEnv(EnvModes, AECEnv):
    """A PettingZoo AEC env of one game whose every seat is an agent (the module docstring).

    A subclass's ``__init__`` calls :meth:`_set_modes` and :meth:`_set_up`; it gives
    :meth:`_game_state`, :meth:`_legal_move` and :meth:`_illegal_error`, and may refresh the
    infos after each step (:meth:`_update_infos`).
    """

    game: Game
    illegal_action: str
    illegal_penalty: float
    _illegal_end: bool = False

    def _set_up(self, num_players: int, obs_space: spaces.Space,
                act_space: spaces.Discrete) -> None:
        """The agents and their spaces."""
        self.possible_agents = [f"player_{i}" for i in range(num_players)]
        self.observation_spaces = dict.fromkeys(self.possible_agents, obs_space)
        self.action_spaces = dict.fromkeys(self.possible_agents, act_space)
        self._num_actions = int(act_space.n)
        self._illegal_end = False

    # -- what a game adds -------------------------------------------------------------------

    def _legal_move(self, state: Any, action: int) -> int | None:
        """The move ``state.apply`` takes for the action id ``action``, None if it is masked
        out."""
        raise NotImplementedError

    def _illegal_error(self, state: Any, action: int) -> IllegalActionError:
        """The error of a masked ``action`` (``illegal_action="raise"``)."""
        raise NotImplementedError

    def _update_infos(self) -> None:
        """Refresh the agents' infos after a step (none by default)."""

    # -- PettingZoo API ---------------------------------------------------------------------

    def observation_space(self, agent: str) -> spaces.Space:
        return self.observation_spaces[agent]

    def action_space(self, agent: str) -> spaces.Space:
        return self.action_spaces[agent]

    def _seat(self, agent: str) -> int:
        return self.possible_agents.index(agent)

    def _resolve_chance(self) -> None:
        st = self._game_state()
        assert st is not None
        while st.current_player == CHANCE:
            st.draw()

    def _start(self) -> None:
        """A new game's first decision: chance resolved, every agent in play."""
        self._resolve_chance()
        self.agents = list(self.possible_agents)
        self.rewards = dict.fromkeys(self.agents, 0.0)
        self._cumulative_rewards = dict.fromkeys(self.agents, 0.0)
        self.terminations = dict.fromkeys(self.agents, False)
        self.truncations = dict.fromkeys(self.agents, False)
        self.infos: dict[str, dict[str, Any]] = {a: {} for a in self.agents}
        self._illegal_end = False
        self.agent_selection = self.possible_agents[int(self._game_state().current_player)]
        self._update_infos()

    def step(self, action: Any) -> None:
        """Apply the selected agent's action id (the env's module docstring).

        Raises:
            EnvStateError: before ``reset``, an action after the game ended, or any step
                once every agent is done ("the game is over").
            ValueError: a non-scalar or non-integer action.
            ActionOutOfRangeError: an id outside the action space.
            IllegalActionError: a masked action with ``illegal_action="raise"`` (nothing
                changes).
        """
        st = self._game_state()
        if st is None:
            raise EnvStateError("call reset() before step()")
        agent = self.agent_selection
        if self.terminations.get(agent, False) or self.truncations.get(agent, False):
            if action is not None:
                raise EnvStateError("the game is over: the only step left is step(None) "
                                    "for each agent, then reset()")
            self._was_dead_step(action)
            return
        if st.is_terminal() or agent not in self.agents:
            raise EnvStateError("the game is over (every agent is done): call reset() to "
                                "start a new one")
        a = check_action(action, self._num_actions)
        move = self._legal_move(st, a)
        if move is None:
            if self.illegal_action == "raise":
                raise self._illegal_error(st, a)
            self._illegal_step(agent)
            return
        self.infos[agent].pop("illegal_action", None)
        st.apply(move)
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
            self.agent_selection = self.possible_agents[int(st.current_player)]
        self._update_infos()
        self._accumulate_rewards()

    def _illegal_step(self, agent: str) -> None:
        """``agent`` chose a masked action in the ``"terminate"`` or ``"penalty"`` mode
        (module docstring); the state is unchanged."""
        if illegal_step_rewards(self, agent, self._seat(agent)):
            self._update_infos()
        self.infos[agent] = {**self.infos[agent], "illegal_action": True}
        self._accumulate_rewards()

    def close(self) -> None:
        pass


__all__ = ["SeatAECEnv"]
