"""Network inference without PyTorch: an exported network (ONNX) run by ONNX Runtime.

:class:`OnnxNet` is the ONNX Runtime session every ONNX inference of the project goes through:
``NetEvaluator(backend="onnx")`` exports a PyTorch network to it in memory
(:func:`~.net.onnx_forward`), and the packaged network (``az:builtin``, :mod:`.builtin`) is one
read from a file. This module imports neither PyTorch nor ``onnx`` (only ``onnxruntime``, a
base dependency), so the ``az:builtin`` agent runs after the plain install.

It also holds what checkpoints and packaged networks share without PyTorch:
:class:`CheckpointError` and :func:`encoding_differences`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

__all__ = ["CheckpointError", "OnnxNet", "encoding_differences"]


class CheckpointError(ValueError):
    """A checkpoint that cannot be used: unreadable, not a checkpoint, or made for another
    network shape or encoding (the message says which)."""


def encoding_differences(want: dict[str, Any], got: dict[str, Any]) -> list[str]:
    """The fields of an encoder's :meth:`~.encoder.NetEncoder.spec` ``want`` that a network's
    recorded spec ``got`` gives otherwise, as ``"field got (expected want)"`` (empty: it fits)."""
    return [f"{k} {got.get(k)!r} (expected {want[k]!r})" for k in want if got.get(k) != want[k]]


class OnnxNet:
    """A policy-value network exported to ONNX, run by ONNX Runtime on the CPU.

    Calling it, ``net(spatial float32[B, Cs, S, S], globals float32[B, G])``, returns
    ``(logits float32[B, A], values float32[B, n])``, as the PyTorch network's ``forward`` in
    eval mode does (equal to 1e-5; tests/test_alphazero_net.py and tests/test_builtin.py).

    Args:
        model: the ONNX model: its bytes, or the path of a ``.onnx`` file. Inputs ``spatial``
            and ``globals``, outputs ``logits`` and ``values``, a dynamic batch axis (as
            :func:`~.net.export_onnx` writes them).
        threads: ONNX Runtime's intra-op threads (0: its default, one per core).
        name: what error messages call the model (default: the path, or ``ONNX model``).

    Raises:
        CheckpointError: ``onnxruntime`` is not installed, or the model is unreadable or lacks
            those inputs and outputs (one line, naming the model).
    """

    INPUTS = ("spatial", "globals")
    OUTPUTS = ("logits", "values")

    def __init__(self, model: bytes | str | Path, threads: int = 1,
                 name: str | None = None) -> None:
        self.name = name or (str(model) if not isinstance(model, bytes) else "ONNX model")
        try:
            import onnxruntime as ort
        except ImportError:
            raise CheckpointError(f"{self.name}: ONNX Runtime is not installed (a dependency "
                                  "of taluva-ai): pip install onnxruntime") from None
        opts = ort.SessionOptions()
        opts.intra_op_num_threads = int(threads)
        opts.inter_op_num_threads = 1
        opts.log_severity_level = 3
        source = model if isinstance(model, bytes) else str(model)
        try:
            self.session = ort.InferenceSession(source, opts, providers=["CPUExecutionProvider"])
        except Exception as e:  # onnxruntime raises its own exception types
            first = str(e).splitlines()[0] if str(e) else type(e).__name__
            raise CheckpointError(f"{self.name}: unreadable ONNX model ({first})") from None
        self.inputs = {i.name: list(i.shape) for i in self.session.get_inputs()}
        self.outputs = {o.name: list(o.shape) for o in self.session.get_outputs()}
        if tuple(self.inputs) != self.INPUTS or tuple(self.outputs) != self.OUTPUTS:
            raise CheckpointError(f"{self.name}: not a taluva-ai network (inputs "
                                  f"{', '.join(self.inputs)}; outputs {', '.join(self.outputs)}; "
                                  f"expected {', '.join(self.INPUTS)}; "
                                  f"{', '.join(self.OUTPUTS)})")

    def shapes(self) -> dict[str, tuple[Any, ...]]:
        """The shape of each input and output without the batch axis (``{"spatial": (Cs, S,
        S), "globals": (G,), "logits": (A,), "values": (n,)}``)."""
        return {k: tuple(v[1:]) for k, v in {**self.inputs, **self.outputs}.items()}

    def check_fits(self, encoder: Any) -> None:
        """Check that the model's input and output shapes are those of ``encoder``
        (:class:`~.encoder.NetEncoder`).

        Raises:
            CheckpointError: naming each shape that differs, with both values.
        """
        want = {"spatial": (encoder.spatial_planes, encoder.side, encoder.side),
                "globals": (encoder.num_globals,), "logits": (encoder.num_actions,),
                "values": (encoder.num_players,)}
        got = self.shapes()
        diff = [f"{k} {list(got[k])} (expected {list(v)})" for k, v in want.items()
                if got[k] != v]
        if diff:
            raise CheckpointError(f"{self.name}: made for another encoding: {'; '.join(diff)}")

    def __call__(self, spatial: np.ndarray, globals_: np.ndarray
                 ) -> tuple[np.ndarray, np.ndarray]:
        logits, values = self.session.run(
            None, {"spatial": np.ascontiguousarray(spatial, np.float32),
                   "globals": np.ascontiguousarray(globals_, np.float32)})
        return logits, values
