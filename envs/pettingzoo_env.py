"""PettingZoo AEC env of Taluva: every seat is an agent (``player_0`` .. ``player_{n-1}``).

Spaces per agent (docs/encoding.md): observation ``Dict({"observation": Box(float32, (C, S, S)),
"action_mask": Box(int8 0/1, (A,))})`` from that agent's view (its mask is all zero unless it is
to move); action ``Discrete(A)``, a view id of the view centred on the island as the agent to
move sees it.

``agent_selection`` is the seat to move; a turn is two of its steps (place the tile, build).
Chance nodes (the next tile of the deck shuffled from the reset seed) are resolved inside
``step``. Eliminated seats are skipped by the game and stay listed until the end.

Rewards: 0 until the game ends, then every seat's final return (docs/engine.md). All agents
terminate together when the game ends with a result; they are truncated when the board bound
removed every placement. Stepping a finished game raises ``EnvStateError`` except the "dead
steps" (``None`` actions) PettingZoo requires.

Illegal actions (a masked view id; ``illegal_action=``, Pgx's convention by default):
``"terminate"`` (default): the game ends there, every agent terminates, the actor's reward is
``illegal_penalty`` (default -1) and each other agent's ``-illegal_penalty / (n - 1)`` (a
forfeit), the actor's info has ``illegal_action`` True and every info ``step_kind`` ``"over"``;
``"penalty"``: the actor's reward is ``illegal_penalty``, nothing else changes and it is still
to move; ``"raise"``: ``IllegalActionError``, nothing changes. Ids outside the space raise in
every mode.

Info per agent: ``step_kind`` (``"tile"``/``"build"``/``"over"``) and ``outside`` (legal
engine actions hidden by the view, for the agent to move).

Render modes: ``"human"`` (prints the island as text), ``"ansi"`` (that text, returned),
``"rgb_array"`` (``uint8[480, 480, 3]``, :mod:`taluva_ai.games.taluva.draw`).

Version: v0.
"""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np
from gymnasium import spaces
from gymnasium.utils import seeding
from pettingzoo import AECEnv

from taluva_ai.envs.taluva_env import (
    RENDER_MODES,
    STEP_NAMES,
    check_action,
    check_illegal_mode,
    illegal_step_rewards,
)
from taluva_ai.envs.vector import END_TRUNCATED, OBS_HIGH, EnvStateError, make_rules
from taluva_ai.errors import IllegalActionError
from taluva_ai.games.taluva import RuleSet, TaluvaGame, TaluvaState
from taluva_ai.games.taluva.encoding import (
    DEFAULT_VIEW_RADIUS,
    encode,
    make_view,
    num_planes,
    view_to_engine,
)
from taluva_ai.games.taluva.state import M_END, M_PLAYER, M_STEP, new_arrays
from taluva_ai.games.taluva.tiles import full_tile_set


class TaluvaAECEnv(AECEnv):
    """Taluva for 2..4 agents, turn by turn (the module docstring is the spec).

    Args:
        num_players: 2..4.
        view_radius: the view's radius (default 13).
        rules: other rule options (a RuleSet or a dict).
        render_mode: None, ``"human"``, ``"ansi"`` or ``"rgb_array"``.
        illegal_action: ``"terminate"`` (default), ``"penalty"`` or ``"raise"`` (module
            docstring).
        illegal_penalty: the actor's reward for an illegal action (default -1).

    Raises:
        ValueError: a seat count outside 2..4 or another bad argument.
    """

    metadata: ClassVar[dict[str, Any]] = {
        "render_modes": RENDER_MODES,
        "name": "taluva_v0",
        "is_parallelizable": False,
        "render_fps": 2,
    }

    def __init__(
        self,
        num_players: int = 2,
        view_radius: int = DEFAULT_VIEW_RADIUS,
        rules: RuleSet | dict[str, Any] | None = None,
        render_mode: str | None = None,
        illegal_action: str = "terminate",
        illegal_penalty: float = -1.0,
    ) -> None:
        super().__init__()
        self.illegal_action = check_illegal_mode(illegal_action)
        self.illegal_penalty = float(illegal_penalty)
        self.rules = make_rules(num_players, rules)
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(f"render_mode must be one of {self.metadata['render_modes']} or None, "
                             f"got {render_mode!r}")
        self.render_mode = render_mode
        self.game = TaluvaGame(self.rules)
        self.view = make_view(view_radius)
        n = self.rules.num_players
        self.possible_agents = [f"player_{i}" for i in range(n)]
        s = self.view.side
        obs_space = spaces.Dict({
            "observation": spaces.Box(0.0, OBS_HIGH, (num_planes(n), s, s), np.float32),
            "action_mask": spaces.Box(0, 1, (self.view.num_actions,), np.int8),
        })
        self.observation_spaces = {a: obs_space for a in self.possible_agents}
        self.action_spaces = {a: spaces.Discrete(self.view.num_actions)
                              for a in self.possible_agents}
        self.state_: TaluvaState | None = None
        self._illegal_end = False
        self._np_random, _ = seeding.np_random(None)

    def observation_space(self, agent: str) -> spaces.Space:
        return self.observation_spaces[agent]

    def action_space(self, agent: str) -> spaces.Space:
        return self.action_spaces[agent]

    def _seat(self, agent: str) -> int:
        return self.possible_agents.index(agent)

    def _resolve_chance(self) -> None:
        assert self.state_ is not None
        while self.state_.current_player == -1:
            self.state_.draw()

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        """Start a new game (deck shuffled from ``seed``)."""
        if seed is not None:
            self._np_random, _ = seeding.np_random(seed)
        deck = self._np_random.permutation(full_tile_set()).astype(np.int8)
        cells, players, d, meta = new_arrays(self.rules.num_players, deck, self.game.num_cells,
                                             self.rules.tile_preview)
        self.state_ = TaluvaState(self.game, cells, players, d, meta)
        self._resolve_chance()
        self.agents = list(self.possible_agents)
        self.rewards = {a: 0.0 for a in self.agents}
        self._cumulative_rewards = {a: 0.0 for a in self.agents}
        self.terminations = {a: False for a in self.agents}
        self.truncations = {a: False for a in self.agents}
        self.infos: dict[str, dict[str, Any]] = {a: {} for a in self.agents}
        self._illegal_end = False
        self.agent_selection = self.possible_agents[int(self.state_.meta[M_PLAYER])]
        self._update_infos()

    def _update_infos(self) -> None:
        assert self.state_ is not None
        kind = ("over" if self._illegal_end
                else STEP_NAMES.get(int(self.state_.meta[M_STEP]), "chance"))
        for a in self.agents:
            self.infos[a] = {"step_kind": kind}

    def observe(self, agent: str) -> dict[str, np.ndarray]:
        """Planes from ``agent``'s view and its mask (zeros unless it is to move)."""
        if self.state_ is None:
            raise EnvStateError("call reset() before observe()")
        seat = self._seat(agent)
        obs, mask, _, outside = encode(self.state_, player=seat, view_radius=self.view.radius)
        if (self.state_.is_terminal() or self._illegal_end
                or int(self.state_.meta[M_PLAYER]) != seat):
            mask[:] = 0
        elif agent in self.infos:
            self.infos[agent]["outside"] = outside
        return {"observation": obs, "action_mask": mask}

    def step(self, action: Any) -> None:
        """Apply the selected agent's view id.

        Raises:
            EnvStateError: before ``reset``, an action after the game ended, or any step
                once every agent is done ("the game is over").
            ValueError: a non-scalar or non-integer action.
            ActionOutOfRangeError: an id outside the action space.
            IllegalActionError: a masked action with ``illegal_action="raise"``.
        """
        if self.state_ is None:
            raise EnvStateError("call reset() before step()")
        agent = self.agent_selection
        if self.terminations.get(agent, False) or self.truncations.get(agent, False):
            if action is not None:
                raise EnvStateError("the game is over: the only step left is step(None) "
                                    "for each agent, then reset()")
            self._was_dead_step(action)
            return
        st = self.state_
        if st.is_terminal() or agent not in self.agents:
            raise EnvStateError("the game is over (every agent is done): call reset() to "
                                "start a new one")
        a = check_action(action, self.view.num_actions)
        _, mask, center, _ = encode(st, view_radius=self.view.radius)
        if not mask[a]:
            if self.illegal_action == "raise":
                raise IllegalActionError(a, "masked out: not a legal action of the view "
                                         "(see action_mask)")
            self._illegal_step(agent)
            return
        _rules, _nbr, cell_of, _hexqr, _origin = self.game.kernel_args()
        st.apply(int(view_to_engine(a, cell_of, center[0], center[1], self.view.radius)))
        self._resolve_chance()
        self._cumulative_rewards[agent] = 0.0
        self._clear_rewards()
        if st.is_terminal():
            ret = st.returns()
            truncated = bool(st.meta[M_END] == END_TRUNCATED)
            for i, ag in enumerate(self.agents):
                self.rewards[ag] = float(ret[i])
                self.terminations[ag] = not truncated
                self.truncations[ag] = truncated
        else:
            self.agent_selection = self.possible_agents[int(st.meta[M_PLAYER])]
        self._update_infos()
        self._accumulate_rewards()

    def _illegal_step(self, agent: str) -> None:
        """``agent`` chose a masked action in the ``"terminate"`` or ``"penalty"`` mode
        (module docstring); the state is unchanged."""
        if illegal_step_rewards(self, agent, self._seat(agent)):
            self._update_infos()
        self.infos[agent]["illegal_action"] = True
        self._accumulate_rewards()

    def render(self) -> str | np.ndarray | None:
        """``"ansi"``: the island as text; ``"human"``: that text printed to stdout (returns
        None); ``"rgb_array"``: ``uint8[480, 480, 3]``; None without a render mode.

        Raises:
            EnvStateError: before ``reset``.
        """
        if self.state_ is None:
            raise EnvStateError("call reset() before render()")
        if self.render_mode == "human":
            print(self.state_, flush=True)
            return None
        if self.render_mode == "ansi":
            return str(self.state_)
        if self.render_mode == "rgb_array":
            from taluva_ai.games.taluva.draw import render_rgb

            return render_rgb(self.state_)
        return None

    def close(self) -> None:
        pass
