"""Where ONNX Runtime spends a network's CPU time, and what padding the stem's input channels
to a multiple of 8 would buy (docs/alphazero.md, "Self-play speed").

    python experiments/profile_inference.py [--model FILE] [--json OUT]

Reads an ONNX network (default: the built-in one, agents/alphazero/data/builtin-2p.onnx) and:

1. runs it 60 times at batch 64 on one thread under ONNX Runtime's profiler and prints each
   operator's share of the kernel time (the 14 largest);
2. measures positions per CPU second (``time.process_time``) of the model as it is and with
   the stem's input padded to 32 and 48 channels (a ``Pad`` node and zero weights: the same
   outputs up to float rounding, printed), 4 interleaved rounds of 2 seconds at batch 128,
   and prints the medians.

Inputs are random 0/1 planes (10% ones) and uniform globals: the speed of a convolution does
not depend on the values. Needs the ``train`` extra (``onnx``) and ``onnxruntime``.
"""

from __future__ import annotations

import argparse
import collections
import json
import time
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
BUILTIN = ROOT / "agents" / "alphazero" / "data" / "builtin-2p.onnx"


def padded_stem(model: bytes, channels: int) -> bytes:
    """``model`` with the first convolution on the ``spatial`` input taking ``channels``
    input channels: the input is zero-padded by a ``Pad`` node and the weights by zeros."""
    import onnx
    from onnx import helper, numpy_helper

    m = onnx.load_from_string(model)
    conv = next(n for n in m.graph.node if n.op_type == "Conv" and n.input[0] == "spatial")
    init = next(i for i in m.graph.initializer if i.name == conv.input[1])
    w = numpy_helper.to_array(init)
    extra = channels - w.shape[1]
    w = np.concatenate([w, np.zeros((w.shape[0], extra, *w.shape[2:]), w.dtype)], axis=1)
    init.CopyFrom(numpy_helper.from_array(w, init.name))
    m.graph.initializer.append(numpy_helper.from_array(
        np.array([0, 0, 0, 0, 0, extra, 0, 0], np.int64), "stem_pads"))
    conv.input[0] = "spatial_padded"
    at = list(m.graph.node).index(conv)
    m.graph.node.insert(at, helper.make_node("Pad", ["spatial", "stem_pads"],
                                             ["spatial_padded"]))
    return bytes(m.SerializeToString())


def _inputs(session: Any, batch: int) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(0)
    shapes = {i.name: i.shape[1:] for i in session.get_inputs()}
    return {"spatial": (rng.random((batch, *shapes["spatial"])) < 0.1).astype(np.float32),
            "globals": rng.random((batch, *shapes["globals"])).astype(np.float32)}


def operator_shares(model: bytes, batch: int = 64, runs: int = 60) -> dict[str, float]:
    """Each node's share of ONNX Runtime's kernel time (one thread), largest first."""
    import onnxruntime as ort

    opts = ort.SessionOptions()
    opts.intra_op_num_threads = 1
    opts.inter_op_num_threads = 1
    opts.enable_profiling = True
    opts.log_severity_level = 3
    session = ort.InferenceSession(model, opts, providers=["CPUExecutionProvider"])
    feed = _inputs(session, batch)
    for _ in range(runs):
        session.run(None, feed)
    trace = Path(session.end_profiling())
    try:
        events = json.loads(trace.read_text())
    finally:
        trace.unlink(missing_ok=True)
    total: collections.Counter[str] = collections.Counter()
    for e in events:
        if e.get("cat") == "Node" and e["name"].endswith("_kernel_time"):
            total[f"{e['args']['op_name']} {e['name'].removesuffix('_kernel_time')}"] += e["dur"]
    whole = sum(total.values()) or 1
    return {k: v / whole for k, v in total.most_common()}


def throughput(models: dict[str, bytes], batch: int = 128, rounds: int = 4,
               seconds: float = 2.0) -> dict[str, dict[str, Any]]:
    """Positions per CPU second of each model, ``rounds`` interleaved rounds; the largest
    output difference from the first model."""
    from taluva_ai.agents.alphazero.runtime import OnnxNet

    nets = {k: OnnxNet(m, threads=1) for k, m in models.items()}
    first = next(iter(nets.values()))
    feed = _inputs(first.session, batch)
    ref = first(feed["spatial"], feed["globals"])
    out: dict[str, dict[str, Any]] = {}
    for k, net in nets.items():
        got = net(feed["spatial"], feed["globals"])
        out[k] = {"max_abs_diff": max(float(np.abs(a - b).max()) for a, b in zip(got, ref,
                                                                                 strict=True)),
                  "rounds": []}
    for _ in range(rounds):
        for k, net in nets.items():
            t0, w0, n = time.process_time(), time.perf_counter(), 0
            while time.perf_counter() - w0 < seconds:
                net(feed["spatial"], feed["globals"])
                n += batch
            out[k]["rounds"].append(round(n / (time.process_time() - t0), 1))
    for v in out.values():
        v["median_positions_per_cpu_s"] = float(np.median(v["rounds"]))
    return out


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--model", default=str(BUILTIN), help="an ONNX network (default: built-in)")
    p.add_argument("--json", default=None, metavar="OUT", help="also write the figures here")
    args = p.parse_args()
    model = Path(args.model).read_bytes()
    shares = operator_shares(model)
    for name, share in list(shares.items())[:14]:
        print(f"{share:6.1%}  {name}")
    speed = throughput({"as is": model, "stem padded to 32": padded_stem(model, 32),
                        "stem padded to 48": padded_stem(model, 48)})
    for k, v in speed.items():
        print(f"{k}: {v['median_positions_per_cpu_s']:.0f} positions per CPU second "
              f"(rounds {v['rounds']}; outputs differ by at most {v['max_abs_diff']:.1e})")
    if args.json:
        Path(args.json).write_text(json.dumps({"operator_shares": shares, "throughput": speed},
                                              indent=2) + "\n")


if __name__ == "__main__":
    main()
