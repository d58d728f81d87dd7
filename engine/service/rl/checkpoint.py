"""A training run's state as bytes and back: what `--resume` needs to continue exactly.

An .npz archive (no pickle) holding the weights, the best weights so far, both Adam optimisers'
moments and step counts, and a JSON document with the epochs done, the learning curve, decisions,
seconds and the best weights' epoch and score.
"""
from __future__ import annotations

import io
import json

import numpy as np

from engine.policies.kernel_net import KernelNet
from engine.predict.rl.adam import Adam
from engine.service.rl.train import TrainingState


def state_bytes(state: TrainingState) -> bytes:
    net = state.net
    arrays = {f"w{k}": a for k, a in enumerate(net.arrays())}
    if state.best_net is not None:
        arrays.update({f"best{k}": a for k, a in enumerate(state.best_net.arrays())})
    for label, opt in (("pi", state.pi_opt), ("v", state.v_opt)):
        arrays.update({f"{label}_m{k}": a for k, a in enumerate(opt.m)})
        arrays.update({f"{label}_v{k}": a for k, a in enumerate(opt.v)})
    doc = {"policy_arrays": len(net.policy), "log_inputs": net.log_inputs, "epoch": state.epoch, "curve": state.curve,
           "decisions": state.decisions, "seconds": state.seconds, "best_epoch": state.best_epoch,
           "best_score": state.best_score if np.isfinite(state.best_score) else None,
           "optimisers": {label: {"lr": o.lr, "beta1": o.beta1, "beta2": o.beta2, "eps": o.eps, "t": o.t,
                                  "arrays": len(o.m)} for label, o in (("pi", state.pi_opt), ("v", state.v_opt))}}
    buffer = io.BytesIO()
    np.savez(buffer, doc=np.frombuffer(json.dumps(doc, allow_nan=False).encode(), dtype=np.uint8), **arrays)
    return buffer.getvalue()


def state_of(data: bytes) -> TrainingState:
    with np.load(io.BytesIO(data), allow_pickle=False) as archive:
        doc = json.loads(archive["doc"].tobytes().decode())
        weights = [archive[f"w{k}"] for k in range(sum(1 for f in archive.files if f.startswith("w")))]
        best = [archive[f"best{k}"] for k in range(sum(1 for f in archive.files if f.startswith("best")))]
        optimisers = {}
        for label, spec in doc["optimisers"].items():
            n = spec.pop("arrays")
            optimisers[label] = Adam(**spec, m=[archive[f"{label}_m{k}"] for k in range(n)],
                                     v=[archive[f"{label}_v{k}"] for k in range(n)])
    k = doc["policy_arrays"]
    net = KernelNet(tuple(weights[:k]), tuple(weights[k:]), doc["log_inputs"])
    best_net = KernelNet(tuple(best[:k]), tuple(best[k:]), doc["log_inputs"]) if best else None
    best_score = -np.inf if doc["best_score"] is None else doc["best_score"]
    return TrainingState(net, optimisers["pi"], optimisers["v"], doc["epoch"], doc["curve"], doc["decisions"],
                         doc["seconds"], best_net, doc["best_epoch"], best_score)
