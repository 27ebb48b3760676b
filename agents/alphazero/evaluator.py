"""Leaf evaluation by the network, optionally mixed with a rollout (AlphaGo's leaf value).

:class:`NetEvaluator` is an :class:`~taluva_ai.agents.evaluators.Evaluator` (batched: one
network call for all the states it is given), so the MCTS of :mod:`taluva_ai.agents.mcts`
runs PUCT with its priors, one game at a time (the ``az`` agent) or many at once
(:mod:`.selfplay`).

Value of a leaf ``s`` (Silver et al. 2016, "Mastering the game of Go with deep neural networks
and tree search", eq. for ``V(s_L)``)::

    V(s) = (1 - lambda) * v_net(s) + lambda * z_rollout(s)

with ``z_rollout`` the returns of one rollout to the end of the game by the game's compiled
rollout policy (``state.rollout``: ``random``, or ``greedy``, the project's heuristic
player; :class:`~taluva_ai.agents.evaluators.RolloutEvaluator`). ``lambda = 0`` (no rollout) is
AlphaZero; AlphaGo used 0.5. A rollout costs about 1.4 ms on this project's machine, a small
network's evaluation under 1 ms per position in a batch, so mixing roughly doubles the cost of
a simulation; it gives a sound value signal long before a network trained for minutes on a
CPU has one.

Priors: softmax of the policy logits over the network ids of the legal actions. A legal action
without a network id (a Taluva action outside the view, docs/encoding.md) gets the smallest
logit of the legal actions that have one; when none has one, priors are uniform.

A chance node (the tile draw) is valued by sampling one outcome (the evaluator's seeded
generator, with the outcome probabilities) and evaluating the position after it; its rollout
starts from the chance node itself.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from taluva_ai.agents.alphazero.encoder import Encoded, NetEncoder
from taluva_ai.agents.alphazero.runtime import OnnxNet
from taluva_ai.agents.evaluators import Evaluator
from taluva_ai.agents.search.priors import legal_softmax
from taluva_ai.protocol import CHANCE, GameState, value_normalization

if TYPE_CHECKING:  # PyTorch is imported only for a PyTorch network (not for an OnnxNet)
    import torch

    from taluva_ai.agents.alphazero.net import PolicyValueNet


def slots_to_seats(values_slots: np.ndarray, player: int) -> np.ndarray:
    """Value vector by seat from one by player slot (slot ``j`` is seat ``(player + j) % n``)."""
    return np.roll(values_slots, player, axis=-1)


def seats_to_slots(values_seats: np.ndarray, player: int) -> np.ndarray:
    """Inverse of :func:`slots_to_seats`."""
    return np.roll(values_seats, -player, axis=-1)


def value_targets(state: GameState, returns: np.ndarray) -> np.ndarray:
    """``float64[n]``: the value head's targets of a finished game's ``returns`` (by seat):
    ``(returns - offset) / scale`` with the game's :func:`~taluva_ai.protocol.value_normalization`,
    clipped to the ``tanh`` range ``[-1, 1]`` (unchanged for 2-4 player Taluva; the solo score
    with ``(40, 20)``: 40 points is 0, 60 and more is 1)."""
    offset, scale = value_normalization(state)
    return np.clip((np.asarray(returns, dtype=np.float64) - offset) / scale, -1.0, 1.0)


def legal_priors(logits: np.ndarray, net_ids: np.ndarray) -> np.ndarray:
    """``float64[k]`` priors of ``k`` legal actions from the network's ``logits`` (all ids) and
    each action's network id (``-1``: none; see the module docstring), by the compiled
    :func:`~taluva_ai.agents.search.priors.legal_softmax` that the compiled search uses too."""
    out = np.empty(net_ids.size, dtype=np.float64)
    legal_softmax(logits, net_ids, out)
    return out


BACKENDS = ("auto", "torch", "onnx", "numpy")


def resolve_backend(backend: str, net: PolicyValueNet | OnnxNet,
                    device: torch.device | str) -> str:
    """The inference backend for ``backend`` (:data:`BACKENDS`). ``auto``: on the CPU, NumPy for
    a network that has a NumPy copy (the ``mlp`` family, ``numpy_forward``), else ONNX Runtime
    when the ``onnx`` and ``onnxruntime`` packages are installed, else PyTorch; on a GPU,
    PyTorch. The choice comes from ``taluva bench --inference`` (docs/alphazero.md: ONNX
    Runtime was the fastest on the CPU at every batch size for the ``conv`` presets). A network
    already exported (:class:`~.runtime.OnnxNet`, e.g. ``az:builtin``) runs on ONNX Runtime
    only.

    Raises:
        ValueError: an unknown backend, or one that cannot run here (names what is missing).
    """
    if backend not in BACKENDS:
        raise ValueError(f"backend must be one of {', '.join(BACKENDS)}, got {backend!r}")
    cpu = getattr(device, "type", str(device).partition(":")[0]) == "cpu"
    if isinstance(net, OnnxNet):
        if backend not in ("auto", "onnx"):
            raise ValueError(f"{net.name} is an ONNX model: it runs with backend=onnx (ONNX "
                             f"Runtime) only, not backend={backend}")
        if not cpu:
            raise ValueError(f"{net.name} is an ONNX model: it runs on the CPU; the device is "
                             f"{device}")
        return "onnx"
    if backend == "auto":
        if not cpu:
            return "torch"
        if hasattr(net, "numpy_forward"):
            return "numpy"
        return "onnx" if _onnx_missing() is None else "torch"
    if backend in ("onnx", "numpy") and not cpu:
        raise ValueError(f"backend={backend} runs on the CPU; the device is {device}")
    if backend == "numpy" and not hasattr(net, "numpy_forward"):
        raise ValueError("backend=numpy needs a network with a NumPy copy (the mlp family)")
    missing = _onnx_missing() if backend == "onnx" else None
    if missing is not None:
        raise ValueError(f"backend=onnx needs the {missing} package (the export and the "
                         "runtime): pip install -e '.[train]'")
    return backend


def _onnx_missing() -> str | None:
    """The first of ``onnx`` (torch's exporter needs it) and ``onnxruntime`` that is not
    installed, or None."""
    import importlib.util

    for name in ("onnx", "onnxruntime"):
        if importlib.util.find_spec(name) is None:
            return name
    return None


#: The chunk in which ONNX Runtime evaluates a batch on the CPU (``NetEvaluator(max_batch=)``):
#: self-play with the `tiny` network over radius 11 ran 1.26x faster in chunks of 16 than in one
#: call per batch of up to 256 (`taluva bench --selfplay`, with and without `--max-batch 512`;
#: docs/alphazero.md, "Self-play speed").
ONNX_CHUNK = 16


class NetEvaluator(Evaluator):
    """Evaluate leaves with a network (and optionally a rollout).

    Args:
        net: the network: a PyTorch one (put in eval mode here), or one already exported and
            loaded in ONNX Runtime (:class:`~.runtime.OnnxNet`, e.g. the packaged network of
            ``az:builtin``; PyTorch is then not imported; ``backend`` ``auto`` or ``onnx``,
            ``device`` ``cpu``).
        encoder: the game's :class:`~.encoder.NetEncoder`.
        device: where the network runs.
        rollout: ``"none"``, ``"random"`` or ``"greedy"``: the rollout mixed into the value.
        rollout_lambda: ``lambda`` in ``[0, 1]`` (``0`` with ``rollout="none"``).
        samples: tile placements sampled per greedy-rollout decision (Taluva).
        seed: seeds the rollouts and the chance samples.
        max_batch: the largest batch given to the network at once; a larger batch is run in
            chunks of this size (the outputs are the same). Default: :data:`ONNX_CHUNK` for
            ONNX Runtime, whose cost per position grows with the batch once a batch's
            activations outgrow the CPU's caches (docs/alphazero.md, "Inference on the
            CPU"), else 512.
        backend: ``auto``, ``torch``, ``onnx`` (ONNX Runtime) or ``numpy`` (:func:`resolve_backend`;
            ``self.backend`` is the one in use).

    Raises:
        ValueError: a bad ``rollout``, ``rollout_lambda`` or ``backend``.
    """

    gives_priors = True
    values_chance_nodes = False

    def __init__(self, net: PolicyValueNet | OnnxNet, encoder: NetEncoder,
                 device: torch.device | str = "cpu",
                 rollout: str = "none", rollout_lambda: float = 0.0, samples: int = 8,
                 seed: int | None = None, max_batch: int | None = None,
                 backend: str = "auto") -> None:
        if rollout not in ("none", "random", "greedy"):
            raise ValueError(f"rollout must be 'none', 'random' or 'greedy', got {rollout!r}")
        lam = float(rollout_lambda)
        if not 0.0 <= lam <= 1.0:
            raise ValueError(f"lambda must lie in [0, 1], got {rollout_lambda!r}")
        if rollout == "none" and lam > 0:
            raise ValueError("lambda > 0 mixes a rollout into the value: give rollout=greedy "
                             "or rollout=random")
        if rollout != "none" and lam == 0:
            raise ValueError(f"rollout={rollout} with lambda=0 would run rollouts for nothing: "
                             "give lambda > 0 or rollout=none")
        self.encoder = encoder
        self.rollout = rollout
        self.rollout_lambda = lam
        self.samples = samples
        self.evaluations = 0
        # The CPU backends hold a snapshot of the weights, so the net must not be trained while
        # this evaluator is in use (self-play and the az agent load fixed checkpoints).
        self._numpy: Any = None
        if isinstance(net, OnnxNet):
            self.net: Any = net
            self.device: Any = "cpu"
            self.backend = resolve_backend(backend, net, device)
            self._numpy = net
        else:
            import torch

            self.net = net.eval()
            self.device = torch.device(device)
            self.backend = resolve_backend(backend, net, self.device)
            if self.backend == "numpy":
                self._numpy = net.numpy_forward()
            elif self.backend == "onnx":
                from taluva_ai.agents.alphazero.net import onnx_forward

                self._numpy = onnx_forward(net, encoder)
        if max_batch is not None and max_batch < 1:
            raise ValueError(f"max_batch must be >= 1, got {max_batch!r}")
        self.max_batch = max_batch or (ONNX_CHUNK if self.backend == "onnx" else 512)
        self.reset(seed)

    def reset(self, seed: int | None = None) -> None:
        self.rng = np.random.default_rng(seed)

    def infer(self, encoded: Sequence[Encoded]) -> tuple[np.ndarray, np.ndarray]:
        """``(logits float32[B, A], values float32[B, n])`` (player slots) of encoded states
        (:meth:`infer_arrays` of their stacked planes and globals)."""
        return self.infer_arrays(np.stack([e.spatial for e in encoded]),
                                 np.stack([e.globals for e in encoded]))

    def infer_arrays(self, spatial: np.ndarray, glob: np.ndarray
                     ) -> tuple[np.ndarray, np.ndarray]:
        """``(logits float32[B, A], values float32[B, n])`` (player slots) of a batch already
        encoded: ``spatial float32[B, Cs, S, S]``, ``glob float32[B, G]`` (the compiled
        search's buffers, agents/search/batched.py). Runs in chunks of ``max_batch``."""
        logits, values = [], []
        for i in range(0, spatial.shape[0], self.max_batch):
            lo, va = self._forward(spatial[i:i + self.max_batch], glob[i:i + self.max_batch])
            logits.append(lo)
            values.append(va)
        self.evaluations += spatial.shape[0]
        if len(logits) == 1:
            return logits[0], values[0]
        return np.concatenate(logits), np.concatenate(values)

    def _forward(self, spatial: np.ndarray, glob: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        if self._numpy is not None:
            return self._numpy(spatial, glob)
        import torch

        with torch.inference_mode():
            sp = torch.from_numpy(spatial).to(self.device).float()
            gl = torch.from_numpy(glob).to(self.device).float()
            lo, va = self.net(sp, gl)
            return lo.float().cpu().numpy(), va.float().cpu().numpy()

    def evaluate(
        self, states: Sequence[GameState]
    ) -> tuple[list[np.ndarray | None], np.ndarray]:
        n = self.encoder.num_players
        out_values = np.zeros((len(states), n), dtype=np.float64)
        decision: list[GameState] = []
        where: list[int] = []
        for i, s in enumerate(states):
            d = s
            if d.current_player == CHANCE:
                d = s.clone()
                while d.current_player == CHANCE:
                    outcomes, probs = zip(*d.chance_outcomes(), strict=True)
                    d.apply(int(outcomes[self.rng.choice(len(outcomes), p=np.asarray(probs))]))
            if d.is_terminal():
                out_values[i] = d.returns()
                continue
            decision.append(d)
            where.append(i)
        priors: list[np.ndarray | None] = [None] * len(states)
        if decision:
            encoded = [self.encoder.encode(d) for d in decision]
            logits, values = self.infer(encoded)
            offset, scale = value_normalization(decision[0])
            for j, (i, e) in enumerate(zip(where, encoded, strict=True)):
                # on the game's returns scale, as rollouts and terminal returns are
                out_values[i] = slots_to_seats(values[j].astype(np.float64), e.player) * scale \
                    + offset
                if states[i].current_player != CHANCE:
                    priors[i] = legal_priors(logits[j], e.net_ids)
        if self.rollout_lambda > 0:
            lam = self.rollout_lambda
            for i, s in enumerate(states):
                seed = int(self.rng.integers(2**31 - 1))
                z = np.asarray(s.rollout(self.rollout, seed, self.samples),  # type: ignore[attr-defined]
                               dtype=np.float64)
                out_values[i] = (1.0 - lam) * out_values[i] + lam * z
        return priors, out_values
