"""Interop (:mod:`taluva_ai.openspiel`; docs/openspiel.md): OpenSpiel's ``MCTSBot`` as the
``openspiel`` agent of the registry (:class:`OpenSpielMCTSAgent`), and any agent of this
project as an OpenSpiel bot (:class:`AgentBot`).
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np
import pyspiel

from taluva_ai.agents.base import Agent
from taluva_ai.openspiel.core import TALUVA, THURN_UND_TAXIS, _Core, _steps, openspiel_game
from taluva_ai.protocol import GameState


@dataclasses.dataclass(frozen=True)
class OpenSpielMCTSConfig:
    """Parameters of the ``openspiel`` agent (``openspiel:sims=400,uct_c=2``).

    Attributes:
        bot: the OpenSpiel bot; ``mcts`` (``open_spiel.python.algorithms.mcts.MCTSBot``).
        sims: simulations per move (MCTSBot's ``max_simulations``).
        uct_c: UCT's exploration constant (OpenSpiel's MCTS example uses 2).
        rollouts: random rollouts per leaf (``RandomRolloutEvaluator``'s ``n_rollouts``).
        solve: back up solved subtrees (MCTS-Solver), MCTSBot's ``solve``.
    """

    bot: str = "mcts"
    sims: int = 400
    uct_c: float = 2.0
    rollouts: int = 1
    solve: bool = True

    def __post_init__(self) -> None:
        if self.bot != "mcts":
            raise ValueError(f"openspiel parameter bot={self.bot!r}: the bot offered is 'mcts'")
        for name in ("sims", "rollouts"):
            v = getattr(self, name)
            if not isinstance(v, int) or isinstance(v, bool) or v < 1:
                raise ValueError(f"openspiel parameter {name}={v!r} must be a positive integer")
        c = self.uct_c
        if not isinstance(c, (int, float)) or isinstance(c, bool) or not 0 <= c < float("inf"):
            raise ValueError(f"openspiel parameter uct_c={c!r} must be a finite number >= 0")
        if not isinstance(self.solve, bool):
            raise ValueError(f"openspiel parameter solve={self.solve!r} must be true or false")


class OpenSpielMCTSAgent(Agent):
    """OpenSpiel's ``MCTSBot`` with random rollouts (``RandomRolloutEvaluator``), searching
    through the OpenSpiel game of the state's game: the ``openspiel`` agent of the registry
    (``taluva tournament --agents mcts:sims=100 openspiel:sims=100``).

    With hidden information (Thurn und Taxis, Taluva's ``tile_preview``) it searches a
    determinization, ``state.resample(player)``, like this project's MCTS (OpenSpiel's MCTS is
    a perfect-information search). The bot's randomness comes from the agent's seed.

    Args:
        seed: the agent's seed. The other arguments: :class:`OpenSpielMCTSConfig`.

    Raises:
        ValueError: a bad parameter (named); at :meth:`act`, a game with no OpenSpiel game.
    """

    name = "openspiel"

    @staticmethod
    def spec_parameters() -> dict[str, Any]:
        return {f.name: f.default for f in dataclasses.fields(OpenSpielMCTSConfig)}

    def __init__(self, seed: int | None = None, **params: Any) -> None:
        unknown = sorted(set(params) - set(self.spec_parameters()))
        if unknown:
            raise ValueError(f"unknown openspiel parameter(s) {', '.join(unknown)}; known: "
                             f"{', '.join(self.spec_parameters())}")
        self.config = OpenSpielMCTSConfig(**params)
        self.reset(seed)
        self._last: dict[str, Any] = {}

    def reset(self, seed: int | None = None) -> None:
        self.rng = np.random.default_rng(seed)
        self._random_state = np.random.RandomState(int(self.rng.integers(2**32)))

    def act(self, state: GameState) -> int:
        from open_spiel.python.algorithms.mcts import MCTSBot, RandomRolloutEvaluator

        game = openspiel_game(state.game)  # type: ignore[attr-defined]
        player = state.current_player
        hidden = getattr(state, "has_hidden_information", lambda: False)()
        engine = state.resample(player, self.rng) if hidden else state  # type: ignore[attr-defined]
        root = game.state_from_engine(engine)
        c = self.config
        evaluator = RandomRolloutEvaluator(c.rollouts, random_state=self._random_state)
        bot = MCTSBot(game, float(c.uct_c), c.sims, evaluator, solve=c.solve,
                      random_state=self._random_state)
        action = int(bot.step(root))
        self._last = {"sims": c.sims, "determinized": bool(hidden)}
        return action

    def stats(self) -> dict[str, Any]:
        return dict(self._last)


class AgentBot(pyspiel.Bot):
    """An agent of this project as an OpenSpiel bot, for ``evaluate_bots`` and OpenSpiel's
    other bot tools: ``AgentBot("mcts:sims=100", player_id=0, seed=1)``.

    The agent sees the engine state inside the OpenSpiel state (the states of
    ``python_taluva`` / ``python_thurn_und_taxis``) and answers with its action id; agents read
    only what the player to move may know (hidden information through ``resample``).

    Args:
        agent: an :class:`~taluva_ai.agents.Agent` or an agent spec (``make_agent``).
        player_id: the seat the bot plays.
        seed: the agent's seed (a spec's agent is made with it; ``restart_at`` resets it).

    An agent that keeps its search tree between moves (``mcts:reuse_tree=true``) is given an
    engine state that records the game's history, replayed from the OpenSpiel state's start
    at each step, so it finds its subtree as it does in this project's arena.

    Raises:
        ValueError: a bad agent spec. At ``step``: TypeError for a state of another game.
    """

    def __init__(self, agent: Agent | str, player_id: int, seed: int | None = None) -> None:
        pyspiel.Bot.__init__(self)
        if isinstance(agent, str):
            from taluva_ai.agents.base import make_agent

            agent = make_agent(agent, seed=seed)
        self.agent = agent
        self._player_id = int(player_id)
        self._seed = seed

    def player_id(self) -> int:
        return self._player_id

    def provides_policy(self) -> bool:
        return False

    def restart_at(self, state: Any) -> None:
        self.agent.reset(self._seed)

    def inform_action(self, state: Any, player_id: int, action: int) -> None:
        pass

    def step(self, state: Any) -> int:
        core = getattr(state, "_core", None)
        if core is None:
            raise TypeError(f"AgentBot plays the states of {TALUVA} and {THURN_UND_TAXIS}, got "
                            f"{type(state).__name__}")
        engine = core.engine.clone()
        if getattr(getattr(self.agent, "config", None), "reuse_tree", False):
            engine = _engine_with_history(core)
        return int(self.agent.act(engine))


def _engine_with_history(core: _Core) -> Any:
    """A copy of ``core``'s engine state whose ``history()`` (and undo) holds the OpenSpiel
    history: the line replayed from its start with the engine recording it, so that an agent
    that keeps its tree between moves (``mcts:reuse_tree=true``) finds the moves since its
    last search."""
    engine = core.start.clone()
    engine.record_history = True
    for s in _steps(core.log):
        engine.apply_unchecked(s.action)
    return engine
