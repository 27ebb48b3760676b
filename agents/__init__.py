"""Agents (imported as ``taluva_ai.agents``): random, greedy, MCTS and AlphaZero (``az``),
behind one interface (:class:`Agent`) and made by name (:func:`make_agent`)."""

from taluva_ai.agents.base import (
    Agent,
    known_agents,
    make_agent,
    match_specs,
    parse_agent_spec,
    register_agent,
    spec_key,
)
from taluva_ai.agents.evaluators import Evaluator, RolloutEvaluator
from taluva_ai.agents.ismcts import ISMCTSAgent, ISMCTSConfig
from taluva_ai.agents.mcts import MCTSAgent, MCTSConfig
from taluva_ai.agents.simple import GreedyAgent, RandomAgent

register_agent("random", RandomAgent)
register_agent("greedy", GreedyAgent)
register_agent("mcts", MCTSAgent)
register_agent("ismcts", ISMCTSAgent)


def _alphazero_agent(**params: object) -> Agent:
    """``az:path=...``: imported on first use (it needs PyTorch, the ``train`` extra)."""
    try:
        from taluva_ai.agents.alphazero.agent import AlphaZeroAgent
    except ImportError as e:
        raise ValueError(f"the az agent needs PyTorch: pip install 'taluva-ai[train]' ({e})") \
            from None
    return AlphaZeroAgent(**params)


register_agent("az", _alphazero_agent)

__all__ = [
    "Agent",
    "Evaluator",
    "GreedyAgent",
    "ISMCTSAgent",
    "ISMCTSConfig",
    "MCTSAgent",
    "MCTSConfig",
    "RandomAgent",
    "RolloutEvaluator",
    "known_agents",
    "make_agent",
    "match_specs",
    "parse_agent_spec",
    "register_agent",
    "spec_key",
]
