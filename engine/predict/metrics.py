"""Scores of runtime predictions and of failure probabilities.

Runtime (seconds; actual and predicted runtimes floored at 1 s before any ratio or logarithm):
- `male`: mean absolute log error, mean |ln(pred) - ln(actual)| (0 = perfect; ln 2 = off by 2x);
- `accuracy`: mean of min(pred, actual) / max(pred, actual), in 0-1 (1 = perfect);
- `underestimate_rate`: share of jobs with pred < actual (the job outlives its prediction);
- `coverage`: share of jobs with P10 <= actual <= P90 (the nominal 80 % interval); `interval_metrics`
  adds the shares below the P10 and above the P90 (nominal 10 % each) and the median P90 / P10.

Failure (label 1 = failed or cancelled, probability p in 0-1):
- `roc_auc`: area under the ROC curve (0.5 = chance);
- `pr_auc`: average precision, the area under the precision-recall curve (chance = base rate);
- `brier`: mean (p - label)^2 (0 = perfect; base rate x (1 - base rate) for the constant base rate);
- `calibration_table`: per bin of predicted probability, the mean prediction and the observed rate.
"""
from __future__ import annotations

import numpy as np
import pandas as pd
from sklearn.metrics import average_precision_score, brier_score_loss, roc_auc_score

from engine.predict.features import MIN_RUNTIME_S


def runtime_metrics(actual_s: np.ndarray, pred_s: np.ndarray) -> dict[str, float]:
    """male, accuracy and underestimate_rate of point predictions over jobs."""
    actual = np.maximum(np.asarray(actual_s, dtype=np.float64), MIN_RUNTIME_S)
    pred = np.maximum(np.asarray(pred_s, dtype=np.float64), MIN_RUNTIME_S)
    return {
        "male": float(np.mean(np.abs(np.log(pred) - np.log(actual)))),
        "accuracy": float(np.mean(np.minimum(pred, actual) / np.maximum(pred, actual))),
        "underestimate_rate": float(np.mean(pred < actual)),
    }


def coverage(actual_s: np.ndarray, low_s: np.ndarray, high_s: np.ndarray) -> float:
    """Share of jobs whose runtime (floored at 1 s) lies in [low, high]."""
    actual = np.maximum(np.asarray(actual_s, dtype=np.float64), MIN_RUNTIME_S)
    return float(np.mean((low_s <= actual) & (actual <= high_s)))


def interval_metrics(actual_s: np.ndarray, low_s: np.ndarray, high_s: np.ndarray) -> dict[str, float]:
    """coverage, the shares below the P10 and above the P90, and the median width as P90 / P10."""
    actual = np.maximum(np.asarray(actual_s, dtype=np.float64), MIN_RUNTIME_S)
    return {"coverage": coverage(actual, low_s, high_s), "below_p10": float(np.mean(actual < low_s)),
            "above_p90": float(np.mean(actual > high_s)),
            "width_ratio_median": float(np.median(np.asarray(high_s) / np.maximum(low_s, MIN_RUNTIME_S)))}


def failure_metrics(label: np.ndarray, prob: np.ndarray) -> dict[str, float]:
    """roc_auc, pr_auc, brier and the base rate; the AUCs are NaN when only one class occurs."""
    label = np.asarray(label, dtype=bool)
    both = 0 < label.sum() < len(label)
    return {
        "roc_auc": float(roc_auc_score(label, prob)) if both else float("nan"),
        "pr_auc": float(average_precision_score(label, prob)) if both else float("nan"),
        "brier": float(brier_score_loss(label, prob, labels=[False, True])),
        "base_rate": float(label.mean()),
    }


def calibration_table(label: np.ndarray, prob: np.ndarray, bins: int = 10) -> pd.DataFrame:
    """Equal-width bins of predicted probability over [0, 1]: bin edges, jobs, mean predicted
    and observed failure rate; empty bins are left out."""
    edges = np.linspace(0.0, 1.0, bins + 1)
    which = np.clip(np.searchsorted(edges, prob, side="right") - 1, 0, bins - 1)
    jobs = np.bincount(which, minlength=bins)
    predicted = np.bincount(which, weights=prob, minlength=bins)
    observed = np.bincount(which, weights=np.asarray(label, dtype=np.float64), minlength=bins)
    keep = jobs > 0
    return pd.DataFrame({
        "bin_low": edges[:-1][keep], "bin_high": edges[1:][keep], "jobs": jobs[keep],
        "predicted": predicted[keep] / jobs[keep], "observed": observed[keep] / jobs[keep],
    })
