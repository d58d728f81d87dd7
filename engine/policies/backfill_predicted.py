"""EASY++ (Tsafrir, Etsion and Feitelson, "Backfilling using system-generated predictions rather than
user runtime estimates", IEEE TPDS 18(6), 2007): EASY-SJBF on predicted runtimes, corrected when a job
outlives its prediction.

The prediction is the mean runtime of the user's last two jobs to finish, never more than the job's
request (its request when the user has finished nothing yet); the simulator makes it online
(engine.sim.cycle.user_history) for the head, the candidates and the running jobs, which it expects
to end at start + prediction. A running job past that point is expected where the corrector says:
- "request": at its start + its request (the paper's default, Gaussier et al. SC'15's EASY++);
- "double": recursive doubling: at start + 2^k x prediction for the least k that is still in the
  future, never past its request;
- "tsafrir": Tsafrir's incremental correction: the prediction rises to the next of 1 min, 5 min,
  15 min, 30 min, 1 h, 2 h, 5 h, 10 h, 20 h, 50 h, 100 h beyond the time it has run, never past its
  request.
A job past its request is expected now (as under EASY). Queue order and true runtimes are untouched:
only what backfilling expects changes. The same correction exists for scenarios whose [runtime]
source is "predicted" (engine.predict.runtime_source: jump to the request).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar

import numpy as np

from engine.policies.backfill import FAMILY
from engine.policies.backfill_order import EasySjbf
from engine.policies.registry import register

CORRECTORS = ("request", "double", "tsafrir")
TSAFRIR_STEPS_S = np.array([60, 300, 900, 1800, 3600, 7200, 18_000, 36_000, 72_000, 180_000, 360_000], np.float64)


def corrected_ends(corrector: str, now_s: float, begin_s: np.ndarray, end_s: np.ndarray,
                   request_end_s: np.ndarray) -> np.ndarray:
    """Where running jobs past their predicted end (`end_s` <= now) are expected now."""
    request_end_s = np.where(np.isfinite(request_end_s), request_end_s, now_s)
    if corrector == "request":
        out = request_end_s
    elif corrector == "double":
        predicted = np.maximum(end_s - begin_s, 1.0)
        ran = np.maximum(now_s - begin_s, 0.0)
        k = np.floor(np.log2(np.maximum(ran / predicted, 1.0))) + 1
        out = begin_s + predicted * np.exp2(k)
    else:
        ran = now_s - begin_s
        step = np.searchsorted(TSAFRIR_STEPS_S, ran, side="right")
        out = np.where(step < len(TSAFRIR_STEPS_S), begin_s + TSAFRIR_STEPS_S[np.minimum(step, len(TSAFRIR_STEPS_S) - 1)],
                       request_end_s)
    return np.maximum(np.minimum(out, request_end_s), now_s)


@register(FAMILY, "easy++")
@dataclass(frozen=True)
class EasyPlusPlus(EasySjbf):
    """EASY++ (Tsafrir, Etsion and Feitelson, IEEE TPDS 18(6), 2007): EASY whose head reservation,
    candidates and running jobs' ends use the mean of the user's last two runtimes as the prediction
    (capped at the request), candidates tried shortest predicted runtime first (SJBF); a job that
    outlives its prediction is corrected by `corrector`: "request" (jump to the request), "double"
    (recursive doubling) or "tsafrir" (Tsafrir's increments). See this module's docstring."""

    predicts: ClassVar[bool] = True
    corrector: str = field(default="request", metadata={"help": "when a job outlives its prediction: "
                                                                 + ", ".join(CORRECTORS)})

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.corrector not in CORRECTORS:
            raise ValueError(f"corrector must be one of {', '.join(CORRECTORS)}, got {self.corrector!r}")

    def correct(self, now_s: float, begin_s: np.ndarray, end_s: np.ndarray, request_end_s: np.ndarray) -> np.ndarray:
        return corrected_ends(self.corrector, now_s, begin_s, end_s, request_end_s)
