"""Agents (imported as ``taluva_ai.agents``): random, greedy, MCTS and AlphaZero (``az``),
behind one interface (:class:`Agent`) and made by name (:func:`make_agent`)."""

from taluva_ai.agents.base import (
    REQUIRED,
    Agent,
    agent_parameters,
    describe_agents,
    known_agents,
    make_agent,
    match_specs,
    parse_agent_spec,
    register_agent,
    registered_agent_parameters,
    spec_key,
)
from taluva_ai.agents.evaluators import Evaluator, RolloutEvaluator
from taluva_ai.agents.ismcts import ISMCTSAgent, ISMCTSConfig
from taluva_ai.agents.mcts import MCTSAgent, MCTSConfig
from taluva_ai.agents.simple import GreedyAgent, RandomAgent

register_agent("random", RandomAgent, "uniformly random legal action")
register_agent("greedy", GreedyAgent, "one-ply heuristic: the best-valued legal action "
               "(docs/agents.md); epsilon: share of random moves")
register_agent("mcts", MCTSAgent, "Monte Carlo tree search with chance nodes, 2-4 players "
               "(docs/agents.md); time=S: seconds per move instead of sims")
register_agent("ismcts", ISMCTSAgent, "information-set MCTS for hidden information (Thurn "
               "und Taxis; docs/thurn_und_taxis.md)")


def _alphazero_agent(**params: object) -> Agent:
    """``az:builtin`` or ``az:path=...``: imported on first use (PyTorch only for a checkpoint,
    on its first load)."""
    from taluva_ai.agents.alphazero.agent import AlphaZeroAgent

    return AlphaZeroAgent(**params)


def _az_parameters() -> dict[str, object]:
    from taluva_ai.agents.alphazero.config import az_spec_parameters  # no PyTorch

    return az_spec_parameters()


register_agent("az", _alphazero_agent, "AlphaZero: MCTS guided by a network. az:builtin: the "
               "packaged network for the table's player count (2 players today; ONNX "
               "Runtime, no PyTorch), whose defaults sims=200, rollout=none, root=gumbel "
               "replace the ones listed below; az:path=RUN/best.pt: a taluva train "
               "checkpoint (needs PyTorch, the train extra); docs/alphazero.md; unset: the "
               "network's own setting",
               params=_az_parameters, positional="path")

def _openspiel_agent(**params: object) -> Agent:
    """``openspiel:sims=...``: imported on first use (it needs the ``openspiel`` extra)."""
    try:
        from taluva_ai.openspiel import OpenSpielMCTSAgent
    except ImportError as e:
        raise ValueError(str(e)) from None
    return OpenSpielMCTSAgent(**params)  # type: ignore[arg-type]


register_agent("openspiel", _openspiel_agent, "OpenSpiel's MCTSBot with random rollouts "
               "through the OpenSpiel game (needs the openspiel extra; docs/openspiel.md); "
               "openspiel:mcts,sims=400 is openspiel:bot=mcts,sims=400",
               params={"bot": "mcts", "sims": 400, "uct_c": 2.0, "rollouts": 1, "solve": True},
               positional="bot")

__all__ = [
    "REQUIRED",
    "Agent",
    "Evaluator",
    "GreedyAgent",
    "ISMCTSAgent",
    "ISMCTSConfig",
    "MCTSAgent",
    "MCTSConfig",
    "RandomAgent",
    "RolloutEvaluator",
    "agent_parameters",
    "describe_agents",
    "known_agents",
    "make_agent",
    "match_specs",
    "parse_agent_spec",
    "register_agent",
    "registered_agent_parameters",
    "spec_key",
]
