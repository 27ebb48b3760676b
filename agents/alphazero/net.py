"""The AlphaZero network: a residual tower over the board canvas with FiLM-conditioned global
features, a policy head over the whole network action space and a value head with one output
per player; checkpoints.

Architecture (:class:`AZNet`; Silver et al. 2017 for the residual policy/value tower;
Perez et al. 2018 for FiLM; KataGo, Wu 2019, for global pooling in the value head):

- **inputs**: ``spatial float32[B, Cs, S, S]`` (the encoder's planes) and ``globals
  float32[B, G]``;
- **global MLP**: ``G -> H -> H`` (ReLU), giving the embedding ``e``;
- **stem**: 3x3 (or with ``[net] stem_kernel = 1``, 1x1) convolution ``Cs -> C`` plus a
  per-channel bias from ``e``, batch norm, ReLU;
- **tower**: ``blocks`` residual blocks, each ``conv3x3 - BN - FiLM(e) - ReLU - conv3x3 - BN
  + skip - ReLU``, where FiLM scales and shifts every channel by ``(1 + gamma(e), beta(e))``;
  off-board pixels (the corners of the square canvas) are zeroed after every block;
- **policy head**: ``conv1x1 C -> C``, BN, ReLU, ``conv1x1 C -> action_channels`` plus a
  per-channel bias from ``e``; flattened channel-major, these are the logits of the
  ``action_channels * S^2`` network ids (``id = channel * S^2 + row * S + col``). Illegal ids
  are masked by the caller (:func:`masked_log_softmax`). An encoder with ``extra_actions``
  (Taluva solo) adds their logits from the pooled policy features and ``e`` (``Linear(C + H
  -> extra)``), after the board ids;
- **value head**: ``conv1x1 C -> C``, BN, ReLU, then the mean and the max over board pixels,
  concatenated with ``e``, ``-> V`` (ReLU) ``-> n`` and ``tanh``: one value per player slot
  (slot ``j`` = the seat ``j`` places after the player to move), on the game's returns scale
  [-1, 1]. The same head serves 2, 3 or 4 players;
- **auxiliary head** (``[net] aux_head``; KataGo's auxiliary targets, Wu 2019): from the same
  pooled features, ``-> V`` (ReLU) ``-> n A`` and a sigmoid: the encoder's ``A`` auxiliary
  targets per player slot (:meth:`~.encoder.NetEncoder.aux_targets`; Taluva: each seat's
  final supply and whether it went out). Only training reads it (:meth:`AZNet.forward_aux`);
  ``forward``, the ONNX export and the search never compute it;
- **ownership head** (``[net] ownership_head``; KataGo's ownership target, Wu 2019): ``conv1x1
  C -> O`` on the value head's features, one logit per pixel and player slot: whether that
  slot holds the pixel's hex at the end of the game (:meth:`~.encoder.NetEncoder.
  ownership_targets`). Training only, as the auxiliary head (:meth:`AZNet.forward_train`).

Presets (:data:`PRESETS`): ``tiny`` (16 channels, 3 blocks), ``small`` (32, 6), ``medium``
(64, 10); ``taluva bench --net`` gives their sizes and speeds.

That tower is the ``conv`` family. Games without a board canvas (Thurn und Taxis) use the
``mlp`` family (:class:`MLPNet`): a residual MLP over the globals (and the flattened planes,
if any) with the same two heads. The encoder names its family (``NetEncoder.network``);
:func:`build_net` looks it up in :data:`NETWORKS` (:func:`register_network` adds one).
"""

from __future__ import annotations

import hashlib
import io
import json
import pickle
import zipfile
from collections.abc import Callable
from dataclasses import asdict
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import nn

from taluva_ai.agents.alphazero.config import PRESETS, NetConfig
from taluva_ai.agents.alphazero.encoder import NetEncoder
from taluva_ai.agents.alphazero.runtime import CheckpointError, OnnxNet, encoding_differences
from taluva_ai.runfiles import sha256_bytes, write_atomic

__all__ = ["NETWORKS", "PRESETS", "AZNet", "CheckpointError", "MLPNet", "NetConfig",
           "PolicyValueNet", "build_net", "export_onnx", "load_checkpoint",
           "masked_log_softmax", "net_from_checkpoint", "onnx_forward", "parameter_count",
           "register_network", "resolve_device", "save_checkpoint"]

#: Checkpoint ``format`` field.
CHECKPOINT_FORMAT = "taluva-ai-az-checkpoint/1"
#: The ONNX opset of :func:`export_onnx`.
ONNX_OPSET = 17


class FiLMBlock(nn.Module):
    """Residual block ``conv3x3 - BN - FiLM - ReLU - conv3x3 - BN + x - ReLU``."""

    def __init__(self, channels: int, hidden: int) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(channels, channels, 3, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(channels)
        self.film = nn.Linear(hidden, 2 * channels)
        self.conv2 = nn.Conv2d(channels, channels, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(channels)
        nn.init.zeros_(self.film.weight)
        nn.init.zeros_(self.film.bias)

    def forward(self, x: torch.Tensor, e: torch.Tensor, valid: torch.Tensor) -> torch.Tensor:
        gamma, beta = self.film(e).chunk(2, dim=1)
        y = self.bn1(self.conv1(x))
        y = torch.relu(y * (1.0 + gamma[:, :, None, None]) + beta[:, :, None, None])
        y = self.bn2(self.conv2(y))
        return torch.relu(x + y) * valid


class AZNet(nn.Module):
    """Policy-value network (see the module docstring).

    Args:
        encoder_spec: :meth:`NetEncoder.spec` (planes, side, globals, action channels,
            players).
        valid: ``bool[S, S]`` board pixels.
        channels, blocks, global_hidden, value_hidden: sizes (:meth:`NetConfig.sizes`).
        aux_outputs: auxiliary targets per player slot ``A`` (0: no auxiliary head).
        stem_kernel: the stem convolution's kernel (3 or 1).
        ownership_planes: ownership planes ``O`` (0: no ownership head).

    ``forward(spatial float32[B, Cs, S, S], globals float32[B, G])`` returns ``(logits
    float32[B, action_channels * S^2 + extra_actions], values float32[B, n])``;
    :meth:`forward_aux` and :meth:`forward_train` also the training-only heads'.
    """

    def __init__(self, encoder_spec: dict[str, Any], valid: np.ndarray, channels: int,
                 blocks: int, global_hidden: int, value_hidden: int,
                 aux_outputs: int = 0, stem_kernel: int = 3, ownership_planes: int = 0
                 ) -> None:
        super().__init__()
        cs, g = int(encoder_spec["spatial_planes"]), int(encoder_spec["num_globals"])
        self.side = int(encoder_spec["side"])
        self.action_channels = int(encoder_spec["action_channels"])
        self.num_players = int(encoder_spec["num_players"])
        c, h = channels, global_hidden
        self.register_buffer("valid", torch.as_tensor(np.asarray(valid, dtype=np.float32))
                             [None, None], persistent=False)
        self.num_valid = float(np.asarray(valid).sum())
        self.globals_mlp = nn.Sequential(nn.Linear(g, h), nn.ReLU(), nn.Linear(h, h), nn.ReLU())
        self.stem = nn.Conv2d(cs, c, stem_kernel, padding=stem_kernel // 2, bias=False)
        self.stem_global = nn.Linear(h, c)
        self.stem_bn = nn.BatchNorm2d(c)
        self.blocks = nn.ModuleList([FiLMBlock(c, h) for _ in range(blocks)])
        self.policy_conv = nn.Sequential(nn.Conv2d(c, c, 1, bias=False), nn.BatchNorm2d(c),
                                         nn.ReLU())
        self.policy_out = nn.Conv2d(c, self.action_channels, 1)
        self.policy_global = nn.Linear(h, self.action_channels)
        self.extra_actions = int(encoder_spec.get("extra_actions", 0))
        self.policy_extra = nn.Linear(c + h, self.extra_actions) if self.extra_actions else None
        self.value_conv = nn.Sequential(nn.Conv2d(c, c, 1, bias=False), nn.BatchNorm2d(c),
                                        nn.ReLU())
        self.value_fc = nn.Sequential(nn.Linear(2 * c + h, value_hidden), nn.ReLU(),
                                      nn.Linear(value_hidden, self.num_players))
        self.aux_outputs = int(aux_outputs)
        self.aux_fc = nn.Sequential(
            nn.Linear(2 * c + h, value_hidden), nn.ReLU(),
            nn.Linear(value_hidden, self.num_players * self.aux_outputs)) \
            if self.aux_outputs else None
        self.ownership_out = nn.Conv2d(c, int(ownership_planes), 1) \
            if ownership_planes else None

    def forward(self, spatial: torch.Tensor, globals_: torch.Tensor
                ) -> tuple[torch.Tensor, torch.Tensor]:
        logits, values, _, _ = self._heads(spatial, globals_, extra=False)
        return logits, values

    def forward_aux(self, spatial: torch.Tensor, globals_: torch.Tensor
                    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """:meth:`forward` and the auxiliary head: ``(logits, values, aux float32[B, n, A])``
        in ``[0, 1]`` by player slot.

        Raises:
            ValueError: the network has no auxiliary head."""
        if self.aux_fc is None:
            raise ValueError("this network has no auxiliary head ([net] aux_head = false)")
        logits, values, aux, _ = self._heads(spatial, globals_, extra=True)
        assert aux is not None
        return logits, values, aux

    def forward_train(self, spatial: torch.Tensor, globals_: torch.Tensor
                      ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor | None,
                                 torch.Tensor | None]:
        """:meth:`forward` and every training-only head: ``(logits, values, aux float32[B, n,
        A] or None, ownership logits float32[B, O, S, S] or None)`` (None where the network
        has no such head; the ownership logits are 0 off the board)."""
        return self._heads(spatial, globals_, extra=True)

    def _heads(self, spatial: torch.Tensor, globals_: torch.Tensor, extra: bool
               ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor | None, torch.Tensor | None]:
        valid: torch.Tensor = self.valid  # type: ignore[assignment]
        e = self.globals_mlp(globals_)
        x = self.stem(spatial) + self.stem_global(e)[:, :, None, None]
        x = torch.relu(self.stem_bn(x)) * valid
        for block in self.blocks:
            x = block(x, e, valid)
        pf = self.policy_conv(x)
        p = self.policy_out(pf) + self.policy_global(e)[:, :, None, None]
        logits = p.flatten(1)
        if self.policy_extra is not None:
            pooled = (pf * valid).sum(dim=(2, 3)) / self.num_valid
            logits = torch.cat([logits, self.policy_extra(torch.cat([pooled, e], dim=1))], 1)
        v = self.value_conv(x) * valid
        mean = v.sum(dim=(2, 3)) / self.num_valid
        # The max over the board's pixels: v >= 0 (a ReLU's output) and 0 off the board, so
        # the plain max is the max over the board, bit for bit, gradients included (a masked
        # max cost ONNX Runtime a Where node, 3% of the forward pass: docs/alphazero.md,
        # "Self-play speed").
        vmax = v.amax(dim=(2, 3))
        pooled = torch.cat([mean, vmax, e], dim=1)
        values = torch.tanh(self.value_fc(pooled))
        if not extra:
            return logits, values, None, None
        a = None
        if self.aux_fc is not None:
            a = torch.sigmoid(self.aux_fc(pooled)).view(v.shape[0], self.num_players,
                                                        self.aux_outputs)
        own = None if self.ownership_out is None else self.ownership_out(v) * valid
        return logits, values, a, own


class MLPNet(nn.Module):
    """Policy-value network over feature vectors (the ``mlp`` family; module docstring).

    Args:
        encoder_spec, valid: as for :class:`AZNet` (``valid`` is unused: no canvas).
        channels: unused (the ``conv`` family's width; kept so that every family takes the
            same sizes).
        blocks: residual blocks ``Linear(H, H) - LayerNorm - ReLU - Linear(H, H) + x - ReLU``.
        global_hidden: the width ``H``; value_hidden: ``V``.

    ``forward(spatial float32[B, Cs, S, S], globals float32[B, G])`` returns ``(logits
    float32[B, action_channels * S^2], values float32[B, n])``: the input is ``globals``
    concatenated with the flattened planes, ``-> H`` (ReLU), the blocks, then a linear policy
    head over every network id and a value head ``H -> V -> n`` with ``tanh`` (one value per
    player slot, as :class:`AZNet`).
    """

    def __init__(self, encoder_spec: dict[str, Any], valid: np.ndarray, channels: int,
                 blocks: int, global_hidden: int, value_hidden: int) -> None:
        super().__init__()
        side = int(encoder_spec["side"])
        self.side = side
        self.action_channels = int(encoder_spec["action_channels"])
        self.num_players = int(encoder_spec["num_players"])
        width = int(encoder_spec["num_globals"]) + int(encoder_spec["spatial_planes"]) * side ** 2
        h = global_hidden
        self.stem = nn.Sequential(nn.Linear(width, h), nn.ReLU())
        self.blocks = nn.ModuleList([
            nn.Sequential(nn.Linear(h, h), nn.LayerNorm(h), nn.ReLU(), nn.Linear(h, h))
            for _ in range(blocks)])
        self.policy_out = nn.Linear(h, self.action_channels * side * side)
        self.value_fc = nn.Sequential(nn.Linear(h, value_hidden), nn.ReLU(),
                                      nn.Linear(value_hidden, self.num_players))

    def forward(self, spatial: torch.Tensor, globals_: torch.Tensor
                ) -> tuple[torch.Tensor, torch.Tensor]:
        x = globals_ if spatial.shape[1] == 0 else torch.cat([globals_, spatial.flatten(1)], 1)
        x = self.stem(x)
        for block in self.blocks:
            x = torch.relu(x + block(x))
        return self.policy_out(x), torch.tanh(self.value_fc(x))

    def numpy_forward(self) -> Callable[[np.ndarray, np.ndarray], tuple[np.ndarray, np.ndarray]]:
        """A NumPy copy of :meth:`forward` for CPU inference: ``f(spatial float32[B, Cs, S, S],
        globals float32[B, G]) -> (logits float32[B, A], values float32[B, n])``, the same
        values up to float rounding (about 1e-6). It holds a snapshot of the current weights
        (later training does not change it). Search evaluates a few positions at a time, where
        torch's per-operation overhead dominates: a search move of 64 simulations of the
        ``tnt-demo`` network took 0.8 s with torch and 0.2 s with this on the loaded 2-core
        machine."""
        def w(m: nn.Module, name: str) -> np.ndarray:
            return np.array(getattr(m, name).detach().cpu().numpy(), dtype=np.float32)

        stem = self.stem[0]
        W0, b0 = w(stem, "weight").T.copy(), w(stem, "bias")
        blocks = []
        for blk in self.blocks:
            assert isinstance(blk, nn.Sequential)
            l1, ln, l2 = blk[0], blk[1], blk[3]
            assert isinstance(ln, nn.LayerNorm)
            blocks.append((w(l1, "weight").T.copy(), w(l1, "bias"), w(ln, "weight"),
                           w(ln, "bias"), float(ln.eps), w(l2, "weight").T.copy(),
                           w(l2, "bias")))
        Wp, bp = w(self.policy_out, "weight").T.copy(), w(self.policy_out, "bias")
        v1, v2 = self.value_fc[0], self.value_fc[2]
        Wv1, bv1 = w(v1, "weight").T.copy(), w(v1, "bias")
        Wv2, bv2 = w(v2, "weight").T.copy(), w(v2, "bias")

        def forward(spatial: np.ndarray, globals_: np.ndarray
                    ) -> tuple[np.ndarray, np.ndarray]:
            x = np.asarray(globals_, dtype=np.float32)
            if spatial.shape[1]:
                x = np.concatenate([x, spatial.reshape(len(x), -1).astype(np.float32)], 1)
            x = np.maximum(x @ W0 + b0, 0.0)
            for a1, c1, g, beta, eps, a2, c2 in blocks:
                y = x @ a1 + c1
                mu = y.mean(axis=1, keepdims=True)
                var = ((y - mu) ** 2).mean(axis=1, keepdims=True)
                y = np.maximum((y - mu) / np.sqrt(var + eps) * g + beta, 0.0)
                x = np.maximum(x + (y @ a2 + c2), 0.0)
            values = np.tanh(np.maximum(x @ Wv1 + bv1, 0.0) @ Wv2 + bv2)
            return (x @ Wp + bp).astype(np.float32), values.astype(np.float32)

        return forward


#: A network of any family: a module whose ``forward(spatial, globals)`` returns ``(logits,
#: values)`` as :class:`AZNet`'s does.
PolicyValueNet = nn.Module

#: Network families by name: ``factory(encoder_spec, valid, **NetConfig.sizes())``.
NETWORKS: dict[str, Callable[..., nn.Module]] = {"conv": AZNet, "mlp": MLPNet}


def register_network(name: str, factory: Callable[..., nn.Module]) -> None:
    """Register a network family (an encoder selects it with ``network = name``)."""
    NETWORKS[name] = factory


#: The training-only heads: the ``[net]`` key that adds each and its parameters' prefix.
TRAINING_HEADS = {"aux_head": "aux_fc.", "ownership_head": "ownership_out."}


def build_net(encoder: NetEncoder, config: NetConfig) -> PolicyValueNet:
    """A freshly initialised network for ``encoder`` (of its family, ``encoder.network``:
    :class:`AZNet` for ``conv``, :class:`MLPNet` for ``mlp``) of size ``config``, with an
    auxiliary head when ``config.aux_head`` and an ownership head when
    ``config.ownership_head``.

    Raises:
        ValueError: no network family of that name; an auxiliary head asked of an encoding
            without auxiliary targets (or of the ``mlp`` family).
    """
    family = getattr(encoder, "network", "conv")
    if family not in NETWORKS:
        raise ValueError(f"no network family {family!r}; known: {', '.join(sorted(NETWORKS))}")
    problem = config.problem_with(encoder)
    if problem is not None:
        raise ValueError(problem)
    extra: dict[str, int] = {}  # given only when set, so other families need not take them
    if config.aux_head:
        extra["aux_outputs"] = encoder.num_aux
    if config.stem_kernel != 3:
        extra["stem_kernel"] = config.stem_kernel
    if config.ownership_head:
        extra["ownership_planes"] = encoder.num_ownership
    return NETWORKS[family](encoder.spec(), encoder.valid, **config.sizes(), **extra)


def export_onnx(net: nn.Module, encoder: NetEncoder) -> bytes:
    """The network exported to ONNX (opset :data:`ONNX_OPSET`, a dynamic batch axis; inputs
    ``spatial float32[B, Cs, S, S]`` and ``globals float32[B, G]``, outputs ``logits
    float32[B, A]`` and ``values float32[B, n]``), as the bytes of a ``.onnx`` file: a snapshot
    of the current weights in eval mode (the network's mode is restored).

    Raises:
        ImportError: the ``onnx`` package (torch's exporter needs it) is not installed.
    """
    import warnings

    was_training = net.training
    net.eval()
    cs, side, g = encoder.spatial_planes, encoder.side, encoder.num_globals
    buf = io.BytesIO()
    try:
        with warnings.catch_warnings(), torch.no_grad():
            warnings.simplefilter("ignore")
            torch.onnx.export(net, (torch.zeros(2, cs, side, side), torch.zeros(2, g)), buf,  # type: ignore[arg-type]
                              input_names=list(OnnxNet.INPUTS),
                              output_names=list(OnnxNet.OUTPUTS),
                              dynamic_axes={k: {0: "batch"} for k in
                                            (*OnnxNet.INPUTS, *OnnxNet.OUTPUTS)},
                              opset_version=ONNX_OPSET, dynamo=False)
    finally:
        net.train(was_training)
    return buf.getvalue()


def onnx_forward(net: nn.Module, encoder: NetEncoder, threads: int | None = None) -> OnnxNet:
    """The network exported to ONNX in memory (:func:`export_onnx`) and run by ONNX Runtime on
    the CPU (:class:`~.runtime.OnnxNet`): ``f(spatial float32[B, Cs, S, S], globals
    float32[B, G]) -> (logits float32[B, A], values float32[B, n])``, equal to :meth:`forward`
    in eval mode up to float rounding (tests/test_alphazero_net.py checks 1e-5). A snapshot of
    the current weights.

    Args:
        encoder: the network's encoder (the input shapes).
        threads: ONNX Runtime's intra-op threads (default: ``torch.get_num_threads()``, which
            self-play workers and the ``az`` agent set to 1).

    Raises:
        ImportError: the ``onnx`` package is not installed.
        CheckpointError: the ``onnxruntime`` package is not installed.
    """
    return OnnxNet(export_onnx(net, encoder), int(threads or torch.get_num_threads()))


def parameter_count(net: nn.Module) -> int:
    """Trainable parameters."""
    return int(sum(p.numel() for p in net.parameters() if p.requires_grad))


def masked_log_softmax(logits: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """``log softmax`` over the legal ids only (``mask`` bool, same shape); illegal entries
    are 0 in the result (never ``-inf``, so ``target * logp`` stays finite)."""
    z = logits.masked_fill(~mask, float("-inf"))
    logp = torch.log_softmax(z, dim=-1)
    return torch.where(mask, logp, torch.zeros_like(logp))


def resolve_device(device: str) -> torch.device:
    """``auto`` -> CUDA when available, else CPU; otherwise ``torch.device(device)``.

    Raises:
        ValueError: an unknown device, or CUDA asked for where there is none.
    """
    if device == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    try:
        d = torch.device(device)
    except RuntimeError as e:
        raise ValueError(f"device {device!r}: {e}") from None
    if d.type == "cuda" and not torch.cuda.is_available():
        raise ValueError(f"device {device!r}: CUDA is not available on this machine")
    return d


# -- checkpoints ------------------------------------------------------------------------------


def save_checkpoint(path: str | Path, net: PolicyValueNet, encoder: NetEncoder,
                    config: NetConfig, game: dict[str, Any],
                    meta: dict[str, Any] | None = None) -> str:
    """Write a checkpoint atomically (a temporary file renamed onto ``path``): the weights and
    what they are for, ``{"format", "net": NetConfig fields, "sizes", "encoder":
    encoder.spec(), "encoder_options", "game": {"name", "options"}, "meta", "state_dict",
    "sha256"}``; only tensors and plain values, so :func:`load_checkpoint` reads it with
    ``weights_only=True``. ``sha256`` is the checksum of the rest (:func:`payload_sha256`),
    checked when the checkpoint is loaded.

    Returns:
        The SHA-256 of the file's bytes (a training run records it in its ``state.json``).

    Raises:
        OSError: the file cannot be written (naming ``path``).
    """
    path = Path(path)
    payload: dict[str, Any] = {
        "format": CHECKPOINT_FORMAT,
        "net": asdict(config),
        "sizes": config.sizes(),
        "encoder": encoder.spec(),
        "encoder_options": encoder.options(),
        "game": game,
        "meta": dict(meta or {}),
        "state_dict": {k: v.detach().cpu() for k, v in net.state_dict().items()},
    }
    payload["sha256"] = payload_sha256(payload)
    return save_torch(path, payload)


def save_torch(path: str | Path, obj: Any) -> str:
    """``torch.save(obj)`` written atomically (:func:`taluva_ai.runfiles.write_atomic`: a
    failed write, such as a full disk, raises an OSError naming ``path``, not torch's
    ``RuntimeError``); returns the SHA-256 of the file's bytes."""
    buf = io.BytesIO()
    torch.save(obj, buf)
    return write_atomic(path, buf.getvalue())


def payload_sha256(payload: dict[str, Any]) -> str:
    """The checksum a checkpoint carries: SHA-256 over its fields other than ``state_dict``
    and ``sha256`` (canonical JSON), then each tensor of ``state_dict`` in name order (name,
    dtype, shape, bytes)."""
    h = hashlib.sha256()
    rest = {k: v for k, v in payload.items() if k not in ("state_dict", "sha256")}
    h.update(json.dumps(rest, sort_keys=True, default=repr).encode("utf-8"))
    for name in sorted(payload["state_dict"]):
        t = payload["state_dict"][name].detach().cpu().contiguous()
        h.update(f"{name}|{t.dtype}|{tuple(t.shape)}|".encode())
        h.update(t.reshape(-1).view(torch.uint8).numpy().tobytes())
    return h.hexdigest()


#: The first bytes of a zip archive, PyTorch's checkpoint format since 1.6.
_ZIP_MAGIC = b"PK\x03\x04"


def _why_unloadable(data: bytes, error: Exception) -> str:
    """Why ``torch.load`` refused ``data``, in words (its own messages name internals: a
    KeyError, a negative seek, a UTF-8 byte): empty, not a zip archive (a checkpoint is one,
    PyTorch's format since 1.6), a damaged or cut-short archive, or else the error itself."""
    if not data:
        return "an empty file"
    if not data.startswith(_ZIP_MAGIC):
        return f"not a PyTorch checkpoint: no zip archive in its {len(data):,} bytes"
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as z:
            bad = z.testzip()
    except (zipfile.BadZipFile, OSError, ValueError, EOFError):
        return f"a damaged or cut-short zip archive ({len(data):,} bytes)"
    if bad is not None:
        return f"a damaged zip archive: {bad} fails its CRC check"
    first = str(error).splitlines()[0][:160] if str(error) else ""
    return f"{type(error).__name__}: {first}" if first else type(error).__name__


def load_checkpoint(path: str | Path) -> dict[str, Any]:
    """Read a checkpoint with ``torch.load(..., weights_only=True)`` (no arbitrary code).

    Raises:
        CheckpointError: missing or unreadable file, not a checkpoint of this format, or
            damaged (its content differs from the checksum saved with it).
    """
    return read_checkpoint(path)[0]


def read_checkpoint(path: str | Path) -> tuple[dict[str, Any], str]:
    """:func:`load_checkpoint`, and the SHA-256 of the file's bytes that were loaded (64 hex
    digits; the file is read once, so the checksum is that of the network returned even when
    the file is replaced meanwhile). A tournament pins it (docs/tournaments.md).

    Raises:
        CheckpointError: as :func:`load_checkpoint`.
    """
    path = Path(path)
    if not path.is_file():
        raise CheckpointError(f"checkpoint {path}: "
                              f"{'not a file' if path.exists() else 'no such file'}")
    try:
        data = path.read_bytes()
    except OSError as e:
        raise CheckpointError(f"checkpoint {path}: unreadable ({e.strerror or e})") from None
    digest = sha256_bytes(data)
    try:
        payload = torch.load(io.BytesIO(data), map_location="cpu", weights_only=True)
    except pickle.UnpicklingError as e:  # not a torch file, or one holding more than weights
        if not data.startswith(_ZIP_MAGIC):
            raise CheckpointError(f"checkpoint {path}: unreadable "
                                  f"({_why_unloadable(data, e)})") from None
        raise CheckpointError(f"checkpoint {path}: unreadable (not a PyTorch file of tensors "
                              "and plain data; taluva-ai loads checkpoints with "
                              "weights_only=True only)") from None
    except Exception as e:  # zip and other errors of every kind
        raise CheckpointError(f"checkpoint {path}: unreadable ({_why_unloadable(data, e)})"
                              ) from None
    if not isinstance(payload, dict) or payload.get("format") != CHECKPOINT_FORMAT:
        got = payload.get("format") if isinstance(payload, dict) else type(payload).__name__
        raise CheckpointError(f"checkpoint {path}: not a taluva-ai AlphaZero checkpoint "
                              f"(format {got!r}, expected {CHECKPOINT_FORMAT!r})")
    if "sha256" in payload:  # saved with its checksum (older checkpoints: without)
        try:
            ok = payload["sha256"] == payload_sha256(payload)
        except Exception:  # a state_dict that is not a dict of tensors
            ok = False
        if not ok:
            raise CheckpointError(f"checkpoint {path}: damaged (its weights or settings do not "
                                  "match the checksum saved with them); use an undamaged copy "
                                  "(a training run keeps every network in checkpoints/)")
    return payload, digest


def check_compatible(payload: dict[str, Any], path: str | Path, encoder: NetEncoder | None = None,
                     config: NetConfig | None = None) -> None:
    """Check that a loaded checkpoint fits an encoder and a network size.

    Raises:
        CheckpointError: naming the encoding fields (name, version, players, view...) or the
            network sizes (and stem kernel) that differ, with both values.
    """
    if encoder is not None:
        diff = encoding_differences(encoder.spec(), payload.get("encoder", {}))
        if diff:
            raise CheckpointError(f"checkpoint {path}: made for another encoding: "
                                  f"{'; '.join(diff)}")
    if config is not None:
        want_s = {**config.sizes(), "stem_kernel": config.stem_kernel}
        got_s = {**payload.get("sizes", {}),
                 "stem_kernel": payload.get("net", {}).get("stem_kernel", 3)}  # 3 before it
        diff = [f"{k} {got_s.get(k)!r} (expected {want_s[k]!r})" for k in want_s
                if got_s.get(k) != want_s[k]]
        if diff:
            raise CheckpointError(f"checkpoint {path}: made for another network shape: "
                                  f"{'; '.join(diff)}")


#: encoding fields a network may gain when :func:`init_from_checkpoint` widens it
WIDENING_FIELDS = ("num_globals", "build_sites")


def init_from_checkpoint(payload: dict[str, Any], path: str | Path, encoder: NetEncoder,
                         config: NetConfig) -> PolicyValueNet:
    """A network for ``encoder`` and ``config`` that starts as a checkpoint's network (a new
    run's ``[warm_start] init``).

    The checkpoint must fit ``config``'s sizes and ``encoder``'s encoding, except that the
    encoder may have more global inputs (Taluva's ``build_sites``): the first layer of the
    global MLP gets a zero weight for each new input, so the widened network computes exactly
    the checkpoint's function until training moves those weights (Net2Net's function-preserving
    growth, Chen et al. 2016). Training-only heads follow ``config`` as in
    :func:`net_from_checkpoint`.

    Raises:
        CheckpointError: another game, encoding or shape (naming the fields), fewer globals
            than the checkpoint's, the ``mlp`` family with added globals, or weights that do
            not fit.
    """
    from taluva_ai.agents.alphazero.encoder import make_encoder

    got = payload.get("encoder", {})
    want = encoder.spec()
    diff = encoding_differences({k: v for k, v in want.items() if k not in WIDENING_FIELDS},
                                got)
    if diff:
        raise CheckpointError(f"checkpoint {path}: made for another encoding: {'; '.join(diff)}")
    old_g, new_g = got.get("num_globals"), want["num_globals"]
    if not isinstance(old_g, int) or old_g > new_g:
        raise CheckpointError(f"checkpoint {path}: num_globals {old_g!r}: a network can start "
                              f"from one with at most the encoder's {new_g} global inputs")
    family = getattr(encoder, "network", "conv")
    if new_g > old_g and family != "conv":
        raise CheckpointError(f"checkpoint {path}: only the conv family takes added global "
                              f"inputs (this encoding's network is {family!r})")
    try:
        old_encoder = make_encoder(str(payload.get("game", {}).get("name")),
                                   int(got.get("num_players", 0)),
                                   **payload.get("encoder_options", {}))
    except (ValueError, TypeError) as e:
        raise CheckpointError(f"checkpoint {path}: {e}") from None
    old, _ = net_from_checkpoint(payload, path, old_encoder, config)
    net = build_net(encoder, config)
    state = net.state_dict()
    for key, value in old.state_dict().items():
        if state[key].shape == value.shape:
            state[key] = value
        elif key == "globals_mlp.0.weight":
            state[key] = torch.zeros_like(state[key])
            state[key][:, :old_g] = value
        else:  # no other tensor depends on the number of globals
            raise CheckpointError(f"checkpoint {path}: {key} has shape {tuple(value.shape)}, "
                                  f"the network {tuple(state[key].shape)}")
    net.load_state_dict(state)
    return net


def net_from_checkpoint(payload: dict[str, Any], path: str | Path, encoder: NetEncoder,
                        config: NetConfig | None = None) -> tuple[PolicyValueNet, NetConfig]:
    """Build the network a checkpoint describes and load its weights.

    Args:
        config: build this network instead (a training run's ``[net]``): it must have the
            checkpoint's sizes; its training-only heads (auxiliary, ownership;
            :data:`TRAINING_HEADS`) may differ from the checkpoint's (an added head starts
            freshly initialised, a dropped one is left out).

    Raises:
        CheckpointError: the checkpoint does not fit ``encoder`` (or ``config``'s sizes), or
            its weights do not fit the network it declares.
    """
    check_compatible(payload, path, encoder, config)
    try:
        declared = NetConfig(**payload["net"])
    except (TypeError, ValueError, KeyError) as e:
        raise CheckpointError(f"checkpoint {path}: bad network description: {e}") from None
    config = config or declared
    net = build_net(encoder, config)
    state = payload["state_dict"]
    for head, prefix in TRAINING_HEADS.items():  # an added head starts fresh, a dropped one goes
        if getattr(config, head) != getattr(declared, head) and isinstance(state, dict):
            state = {k: v for k, v in state.items() if not k.startswith(prefix)}
            if getattr(config, head):
                state.update({k: v for k, v in net.state_dict().items() if k.startswith(prefix)})
    try:
        net.load_state_dict(state)
    except (RuntimeError, KeyError) as e:
        # torch's message: a heading line, then one tab-indented line per problem
        lines = [x.strip() for x in str(e).splitlines() if x.strip()]
        first = (lines[1] if len(lines) > 1 and lines[0].startswith("Error(s) in loading")
                 else lines[0] if lines else type(e).__name__)[:200]
        raise CheckpointError(f"checkpoint {path}: its weights do not fit the network it "
                              f"declares ({first})") from None
    return net, config
