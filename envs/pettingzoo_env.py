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

from taluva_ai.envs.aec import SeatAECEnv
from taluva_ai.envs.base import RENDER_MODES, EnvStateError
from taluva_ai.envs.taluva_env import STEP_NAMES
from taluva_ai.envs.vector import OBS_HIGH, make_rules
from taluva_ai.errors import IllegalActionError
from taluva_ai.games.taluva import RuleSet, TaluvaGame, TaluvaState
from taluva_ai.games.taluva.encoding import (
    DEFAULT_VIEW_RADIUS,
    encode,
    make_view,
    num_planes,
    view_to_engine,
)
from taluva_ai.games.taluva.state import M_PLAYER, M_STEP, new_arrays
from taluva_ai.games.taluva.tiles import full_tile_set


class TaluvaAECEnv(SeatAECEnv):
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
        self.rules = make_rules(num_players, rules)
        self._set_modes(illegal_action, illegal_penalty, render_mode)
        self.game = TaluvaGame(self.rules)
        self.view = make_view(view_radius)
        n = self.rules.num_players
        s = self.view.side
        obs_space = spaces.Dict({
            "observation": spaces.Box(0.0, OBS_HIGH, (num_planes(n), s, s), np.float32),
            "action_mask": spaces.Box(0, 1, (self.view.num_actions,), np.int8),
        })
        self._set_up(n, obs_space, spaces.Discrete(self.view.num_actions))
        self.state_: TaluvaState | None = None
        self._np_random, _ = seeding.np_random(None)

    def _game_state(self) -> TaluvaState | None:
        return self.state_

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        """Start a new game (deck shuffled from ``seed``)."""
        if seed is not None:
            self._np_random, _ = seeding.np_random(seed)
        deck = self._np_random.permutation(full_tile_set()).astype(np.int8)
        cells, players, d, meta = new_arrays(self.rules.num_players, deck, self.game.num_cells,
                                             self.rules.tile_preview)
        self.state_ = TaluvaState(self.game, cells, players, d, meta)
        self._start()

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

    def _legal_move(self, state: TaluvaState, action: int) -> int | None:
        """The engine action of the view id ``action`` in the view of the agent to move."""
        _, mask, center, _ = encode(state, view_radius=self.view.radius)
        if not mask[action]:
            return None
        _rules, _nbr, cell_of, _hexqr, _origin = self.game.kernel_args()
        return int(view_to_engine(action, cell_of, center[0], center[1], self.view.radius))

    def _illegal_error(self, state: TaluvaState, action: int) -> IllegalActionError:
        return IllegalActionError(action, "masked out: not a legal action of the view "
                                  "(see action_mask)")
