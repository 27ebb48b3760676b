"""The search: Monte Carlo tree search over the game protocol, in one package.

The agents are thin users of it: ``mcts`` (:class:`~taluva_ai.agents.mcts.MCTSAgent`, rollout
or heuristic-prior evaluation), ``az`` (:class:`~taluva_ai.agents.alphazero.agent.
AlphaZeroAgent`, an ``MCTSAgent`` whose evaluator is a network) and AlphaZero self-play
(:mod:`taluva_ai.agents.alphazero.selfplay`, many searches at once); ``ismcts``
(:class:`~taluva_ai.agents.ismcts.ISMCTSAgent`) searches information sets with its own tree
(:mod:`.information_set`).

Modules
-------

- :mod:`.config`: :class:`~.config.MCTSConfig`, the parameters an ``mcts:`` or ``az:`` spec
  sets (checked before any work).
- :mod:`.tree`: the tree in flat arrays (:class:`~.tree.Tree`: nodes are rows, a node's
  children consecutive rows), compiled expansion, virtual loss and backup. Values are vectors,
  one entry per seat, backed up whole (max^n: Luckhart & Irani 1986; Sturtevant 2003 in
  MCTS), so 1 to 4 players search alike.
- :mod:`.puct`: selection, compiled: PUCT ``Q + c P sqrt(N) / (1 + n)`` when the evaluator
  gives priors (Silver et al., Nature 2017; Science 2018), UCT otherwise (Kocsis & Szepesvari
  2006); chance nodes stratified or sampled; pending virtual losses count as lost visits
  (Chaslot, Winands & van den Herik 2008), so a batch of leaves spreads over the tree.
- :mod:`.priors`: the priors' softmaxes (a network's logits over the legal actions, the
  heuristic values), one compiled implementation for every path.
- :mod:`.gumbel`: the Gumbel root (Danihelka, Guez, Schrittwieser & Silver, "Policy
  improvement by planning with Gumbel", ICLR 2022, as DeepMind's ``mctx``): sequential
  halving over the top ``gumbel_m`` actions of ``g + logits``, and the improved policy.
- :mod:`.root`: the root's exploration (Dirichlet noise, AlphaZero; or the Gumbel root) and
  the move chosen after the search.
- :mod:`.run`: one search of one position: which path runs it (below), the root's set-up, the
  loop feeding leaves to the evaluator.
- :mod:`.fallback`: the Python fallback: simulations stepped through the protocol, leaves
  handed out as a generator.
- :mod:`.compiled`: the compiled rollout search, whole simulations in one Numba loop.
- :mod:`.batched`: the compiled batched network search, many games' trees searched in Numba
  with one network call per round.
- :mod:`.specialize`: how the compiled loops are compiled once per game's kernels and cached.
- :mod:`.information_set`: single-observer information-set MCTS (Cowling, Powley & Whitehouse
  2012), the ``ismcts`` agent's search.

Which search runs when
----------------------

A search of one position (``MCTSAgent.search``, :func:`.run.run`) takes the first path that
fits; ``compiled=false`` in the spec forces the Python fallback:

1. **The compiled batched network search** (:mod:`.batched`), when the tree is fresh and
   :func:`.batched.compiled_net_search_ok` holds: ``compiled`` on, no ``reuse_tree``, a
   network evaluator with ``infer_arrays`` whose encoder has compiled kernels
   (``encoder.search_kernels()``), and a game with ``state.search_kernels()``. This is every
   ``az`` move on Taluva by default (``az:builtin``, a checkpoint), with either root (PUCT or
   ``root=gumbel``), any ``leaf_batch`` and rollouts mixed in (``lambda``). Selection,
   expansion, the leaves' encoding and the backup are compiled; Python makes the one network
   call per round. AlphaZero self-play runs the same search for ``parallel_games`` games at
   once (:class:`.batched.BatchedSearch`). Why: with the tree walk and the encoding
   compiled, the network calls take most of the time (75-86% in self-play, docs/alphazero.md,
   "Self-play speed"), and one call serves the leaves of many games.
2. **The compiled rollout search** (:mod:`.compiled`), when
   :func:`.run.rollout_search_ok` holds: ``compiled`` on, the default rollout evaluator
   (``mcts`` with ``rollout=random`` or ``greedy``; UCT with ``prior=none``, PUCT with the
   heuristic priors otherwise), ``leaf_batch=1``, ``root=puct``, and a game with
   ``state.search_kernels()`` (Taluva and its solo variant), a reused tree too. The root is
   set up in Python (its expansion, Dirichlet noise), then whole simulations (selection, the
   replay on a copy, expansion, the rollout, the backup) run in one Numba loop. Why: about
   1.5x the simulations per second of the Python fallback (docs/agents.md).
3. **The Python fallback** (:mod:`.fallback`) otherwise: any game of the protocol (Thurn und
   Taxis, a game of your own), any evaluator (a network without compiled kernels, your own),
   ``leaf_batch > 1`` with the rollout evaluator, ``root=gumbel`` with heuristic priors, a
   network search with ``reuse_tree``. Selection, virtual loss and the backup are still the
   compiled kernels of :mod:`.puct` and :mod:`.tree`; the replay, expansion and evaluation
   step through the protocol. ``MCTSAgent.search_steps`` (:func:`.run.steps`) is this search
   as a generator, which the Python self-play driver runs for many games with one evaluation
   per round.

The compiled batched search and the Python fallback make the same random draws in the same
order with the same arithmetic, so with one game they give the same tree and move
(``tests/test_mcts_batched.py``). The compiled rollout search's rollouts draw from Numba's
stream, not the evaluator's generator, so its statistics are not the Python loop's bits; the
two agree on budgets and proven wins (``tests/test_mcts.py``).

The compiled loops are templates compiled once per game's kernel set and cached on disk
(:mod:`.specialize`); a first search in a new checkout compiles them (the command line says
so), later processes load them.
"""
