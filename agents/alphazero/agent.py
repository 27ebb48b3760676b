"""The ``az`` agent: MCTS with a trained network's priors and values.

``az:builtin`` plays the network packaged with taluva-ai (:mod:`.builtin`: ONNX, run by ONNX
Runtime, no PyTorch needed; defaults ``sims=200,rollout=none,root=gumbel``).
``az:path=runs/demo/best.pt,sims=200`` plays a checkpoint of ``taluva train`` (PyTorch, the
``train`` extra);
``az:path=...,sims=200,rollout=greedy,lambda=0.5`` mixes greedy rollouts into the leaf values
(AlphaGo's ``V = (1 - lambda) v_net + lambda z_rollout``; :mod:`.evaluator`). Without
``rollout`` and ``lambda`` in the spec, the agent values leaves as the run's self-play did (the
checkpoint records it: ``meta["leaf"]``); ``rollout=none`` asks for the network alone.

The search is :class:`~taluva_ai.agents.mcts.MCTSAgent` (PUCT, chance nodes, max^n value
vectors, virtual-loss leaf batches); every MCTS parameter may be given (``c``, ``fpu``,
``leaf_batch``, ``root=gumbel``, ``temperature``...), except the heuristic-prior ones.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from taluva_ai.agents.alphazero.builtin import BUILTIN, TABLES, WHAT, load_builtin
from taluva_ai.agents.alphazero.config import (
    AZ_DEFAULTS,
    AZ_NO_MCTS_PARAMETERS,
    BUILTIN_DEFAULTS,
)
from taluva_ai.agents.alphazero.encoder import NetEncoder, make_encoder
from taluva_ai.agents.alphazero.evaluator import NetEvaluator
from taluva_ai.agents.alphazero.runtime import CheckpointError, OnnxNet
from taluva_ai.agents.base import REQUIRED
from taluva_ai.agents.mcts import MCTSAgent
from taluva_ai.protocol import GameState

if TYPE_CHECKING:  # a checkpoint (.pt) needs PyTorch; az:builtin does not import it
    import torch

    from taluva_ai.agents.alphazero.net import PolicyValueNet

_CACHE: dict[tuple[str, int, str],
             tuple[PolicyValueNet, NetEncoder, dict[str, Any], str]] = {}


def need_torch(path: str | Path) -> None:
    """Check that PyTorch, which checkpoints (``.pt``) need, is installed.

    Raises:
        CheckpointError: it is not (one line naming the extra that installs it).
    """
    try:
        import torch  # noqa: F401
    except ImportError:
        raise CheckpointError(f"checkpoint {path}: a PyTorch checkpoint needs PyTorch: pip "
                              "install 'taluva-ai[train]' (az:builtin plays without it)") \
            from None


def load_net(path: str | Path, device: torch.device
             ) -> tuple[PolicyValueNet, NetEncoder, dict[str, Any]]:
    """The network of a checkpoint, its encoder and the checkpoint's payload (cached per file
    version and device, so the games of a tournament load a checkpoint once per process).

    Raises:
        CheckpointError: PyTorch is not installed; see :func:`~.net.load_checkpoint` and
            :func:`~.net.net_from_checkpoint`.
    """
    return _load_net(path, device)[:3]


def _load_net(path: str | Path, device: torch.device
              ) -> tuple[PolicyValueNet, NetEncoder, dict[str, Any], str]:
    """:func:`load_net`, and the SHA-256 of the checkpoint file's bytes it was made from."""
    need_torch(path)
    from taluva_ai.agents.alphazero.net import net_from_checkpoint, read_checkpoint

    p = Path(path).resolve()
    if not p.is_file():
        raise CheckpointError(f"checkpoint {path}: " + (
            "is a directory, not a checkpoint file (give the .pt file in it, e.g. "
            f"{Path(path) / 'best.pt'})" if p.is_dir() else
            "not a regular file" if p.exists() else "no such file"))
    key = (str(p), p.stat().st_mtime_ns, str(device))
    if key not in _CACHE:
        payload, digest = read_checkpoint(p)
        game = payload.get("game", {})
        enc_spec = payload.get("encoder", {})
        try:
            encoder = make_encoder(str(game.get("name")), int(enc_spec.get("num_players", 0)),
                                   **payload.get("encoder_options", {}))
        except (ValueError, TypeError) as e:
            raise CheckpointError(f"checkpoint {path}: {e}") from None
        net, _ = net_from_checkpoint(payload, p, encoder)
        net.to(device).eval()
        _CACHE.clear()  # one network per process is the common case; keep memory bounded
        _CACHE[key] = (net, encoder, payload, digest)
    return _CACHE[key]


class AlphaZeroAgent(MCTSAgent):
    """MCTS guided by a network checkpoint (see the module docstring).

    Args:
        seed: seeds the search, the rollouts and the chance samples.
        path: ``builtin`` (:data:`~.builtin.BUILTIN`; ``az:builtin`` for short): the packaged
            2-player network (:mod:`.builtin`; ONNX Runtime, no PyTorch); else a checkpoint
            (``best.pt`` of a run directory, or any ``checkpoints/*.pt``; needs PyTorch).
        rollout: ``none``, ``greedy`` or ``random``: the rollout mixed into the leaf values
            (default: the one the checkpoint's self-play used, else ``none``; ``none`` for
            ``builtin``); ``lambda``: its weight in [0, 1] (default: the checkpoint's, else
            0.5 with a rollout and 0 without).
        samples: tile placements sampled per greedy-rollout decision (default: the
            checkpoint's, else 8).
        device: ``auto`` (CUDA when available), ``cpu``, ``cuda``, ``cuda:1``... (``builtin``:
            ``auto`` or ``cpu``).
        threads: CPU threads of the network's inference (torch's for this process, or ONNX
            Runtime's; default 1: tournaments run one agent per core; 0 leaves torch's
            setting, or ONNX Runtime's default).
        backend: network inference: ``auto`` (ONNX Runtime on the CPU when installed),
            ``torch``, ``onnx`` (:func:`~.evaluator.resolve_backend`; ``builtin``: ``auto`` or
            ``onnx``).
        **params: :class:`~taluva_ai.agents.mcts.MCTSConfig` fields (defaults ``sims=200``,
            ``c=1.25``, ``leaf_batch=8``; ``builtin`` also ``root=gumbel``).

    Raises:
        ValueError: no ``path``, a bad parameter, or a network that cannot be used
            (:class:`~.runtime.CheckpointError`, one line naming what is wrong: a missing,
            damaged or incompatible file, or PyTorch missing for a checkpoint).
    """

    name = "az"

    @classmethod
    def spec_parameters(cls) -> dict[str, Any]:
        """The parameters of an ``az:...`` spec and their defaults (None: the checkpoint's
        setting): this class's keyword parameters, ``lambda``, and the ``mcts`` ones it takes
        (with the ``az`` defaults)."""
        import inspect

        own: dict[str, Any] = {}
        for name, p in inspect.signature(cls.__init__).parameters.items():
            if name in ("self", "seed") or p.kind is p.VAR_KEYWORD:
                continue
            own[name] = REQUIRED if name == "path" else p.default
            if name == "rollout":
                own["lambda"] = None  # popped from **params: ``lambda`` is a Python keyword
        search = {k: AZ_DEFAULTS.get(k, v) for k, v in MCTSAgent.spec_parameters().items()
                  if k not in AZ_NO_MCTS_PARAMETERS and k not in own}
        return {**own, **search}

    def __init__(self, seed: int | None = None, path: str | None = None,
                 rollout: str | None = None, samples: int | None = None, device: str = "auto",
                 threads: int = 1, backend: str = "auto", **params: Any) -> None:
        if not path:
            raise ValueError("az needs a network: az:builtin (the packaged one) or a "
                             "checkpoint, az:path=runs/<name>/best.pt")
        lam = params.pop("lambda", None)
        for bad in AZ_NO_MCTS_PARAMETERS:
            if bad in params:
                raise ValueError(f"az takes its priors from the network: no {bad} parameter")
        known = type(self).spec_parameters()
        unknown = sorted(set(params) - set(known))
        if unknown:
            raise ValueError(f"unknown az parameter(s) {', '.join(unknown)}; known: "
                             f"{', '.join(sorted(known))}")
        if not isinstance(threads, int) or isinstance(threads, bool) or threads < 0:
            raise ValueError(f"threads must be an integer >= 0, got {threads!r}")
        net: PolicyValueNet | OnnxNet
        defaults = dict(AZ_DEFAULTS)
        if str(path) == BUILTIN:
            if device not in ("auto", "cpu"):
                raise ValueError(f"az:builtin runs on ONNX Runtime on the CPU: device=auto or "
                                 f"cpu, got {device!r}")
            net, encoder, info = load_builtin(threads)
            self._files = {BUILTIN: str(info.get("sha256"))}
            dev: Any = "cpu"
            payload = {"game": info.get("game"), "meta": {**(info.get("source") or {}),
                                                          "leaf": info.get("leaf")}}
            defaults.update({k: v for k, v in BUILTIN_DEFAULTS.items() if k != "rollout"})
            if rollout is None and lam is None:
                rollout = BUILTIN_DEFAULTS["rollout"]
            self.label = WHAT
        else:
            need_torch(path)
            import torch

            from taluva_ai.agents.alphazero.net import resolve_device

            if threads:
                torch.set_num_threads(threads)
            dev = resolve_device(str(device))
            net, encoder, payload, digest = _load_net(path, dev)
            self._files = {str(path): digest}
            self.label = f"checkpoint {path}"
        leaf = dict(payload.get("meta", {}).get("leaf") or {})
        if rollout is None and lam is None:
            rollout = str(leaf.get("rollout", "none"))
            lam = leaf.get("lambda")
        if rollout is None:
            rollout = "none"
        if lam is None:
            lam = 0.5 if rollout != "none" else 0.0
        if samples is None:
            samples = int(leaf.get("samples", 8))
        if isinstance(lam, bool) or not isinstance(lam, (int, float)):
            raise ValueError(f"lambda must be a number in [0, 1], got {lam!r}")
        self.leaf = {"rollout": rollout, "lambda": float(lam), "samples": samples}
        self.encoder = encoder
        self.checkpoint = dict(payload.get("meta", {}))
        self.game_name = str((payload.get("game") or {}).get("name", ""))
        self.path = str(path)
        # what a built-in network for another table is made with (:meth:`_use_builtin`)
        self._evaluator_args: dict[str, Any] = {
            "rollout": str(rollout), "rollout_lambda": float(lam), "samples": samples,
            "seed": seed, "backend": str(backend), "threads": threads}
        evaluator = NetEvaluator(net, encoder, dev, rollout=str(rollout),
                                 rollout_lambda=float(lam), samples=samples, seed=seed,
                                 backend=str(backend))
        super().__init__(seed=seed, evaluator=evaluator, **{**defaults, **params})

    def _use_builtin(self, players: int) -> None:
        """Play the packaged network of ``players``-player tables from now on (``az:builtin``
        picks the network of the table at hand).

        Raises:
            ValueError: none ships for that table (one line naming those that do)."""
        args = dict(self._evaluator_args)
        try:
            net, encoder, info = load_builtin(int(args.pop("threads")), players=players)
        except CheckpointError as e:
            raise ValueError(str(e)) from None
        self.evaluator = NetEvaluator(net, encoder, "cpu", **args)
        self.evaluator.reset(None if args["seed"] is None else int(args["seed"]) + 1)
        self.encoder = encoder
        self._files = {BUILTIN: str(info.get("sha256"))}
        self.checkpoint = {**(info.get("source") or {}), "leaf": info.get("leaf")}

    def pinned_files(self) -> dict[str, str]:
        """``{file: SHA-256}`` of the network this agent plays: the checkpoint's path as given
        and the checksum of the bytes loaded, or ``{"builtin": the packaged ONNX file's
        checksum}`` (see :meth:`taluva_ai.agents.base.Agent.pinned_files`)."""
        return dict(self._files)

    def stats(self) -> dict[str, Any]:
        """MCTS statistics of the last move, and ``leaf``: how leaves were valued."""
        return {**super().stats(), "leaf": dict(self.leaf)}

    def act(self, state: GameState) -> int:
        """Search ``state`` (see :class:`~taluva_ai.agents.mcts.MCTSAgent`) and return an action.

        Raises:
            ValueError: the checkpoint was made for another game or another number of players,
                or ``state`` is not a decision node.
        """
        game = getattr(state, "game", None)
        self._check(getattr(game, "name", None), len(state.returns()))
        return super().act(state)

    def check_game(self, game: Any) -> None:
        """Refuse a game this checkpoint was not made for, before any move (the arena and
        ``taluva play`` call it).

        Raises:
            ValueError: another game, or another number of players.
        """
        self._check(getattr(game, "name", None), getattr(game, "num_players", None))

    def _check(self, name: str | None, players: int | None) -> None:
        if self.path == BUILTIN and players is not None and players in TABLES \
                and name in (None, self.game_name) and players != self.encoder.num_players:
            self._use_builtin(players)
        if self.game_name and name and name != self.game_name:
            raise ValueError(f"{self.label} is for {self.game_name}, this game is {name}")
        if players is not None and players != self.encoder.num_players:
            raise ValueError(f"{self.label} is for {self.encoder.num_players}-player games, "
                             f"this game has {players} player(s)")
