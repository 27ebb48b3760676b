"""AlphaZero-style training (imported as ``taluva_ai.agents.alphazero``; needs PyTorch, the
``train`` extra): network (:mod:`.net`), game encoders (:mod:`.encoder`), leaf evaluation
(:mod:`.evaluator`), batched self-play (:mod:`.selfplay`), replay buffer (:mod:`.replay`),
gating (:mod:`.gating`), the training loop (:mod:`.train`), its config (:mod:`.config`) and the
``az`` agent (:mod:`.agent`). docs/alphazero.md describes them.

The packaged network (``az:builtin``, :mod:`.builtin`) plays without PyTorch: its path
(:mod:`.agent`, :mod:`.evaluator`, :mod:`.encoder`, :mod:`.config`, :mod:`.builtin` and the ONNX
Runtime session of :mod:`.runtime`) imports PyTorch only for a checkpoint.
"""
