"""The What-if page's runtime choices: which runtime every scenario's scheduler sees, twins that see
predictions, and the common window after the models' training cut (engine.scenario.runtime).

Scenarios are the dicts Scenario.from_dict reads; nothing here touches Streamlit.
"""
from __future__ import annotations

import pandas as pd

AS_SCENARIO = "as each scenario says"
# Label -> the [runtime] table it sets ({}: the users' requests).
RUNTIME_LABELS = {"users' requests": {}, "predicted P50": {"source": "predicted", "quantile": "p50"},
                  "predicted P90": {"source": "predicted", "quantile": "p90"},
                  "predicted P10": {"source": "predicted", "quantile": "p10"}}
TWIN = "predicted P50"  # the runtime of the "compare with predictions" twins


def with_runtimes(chosen: list[tuple[str, dict]], runtime: str, twins: bool) -> list[tuple[str, dict]]:
    """The scenarios with their runtime source overridden (unless `runtime` is AS_SCENARIO), each
    followed by its predicted-P50 twin when `twins` (for those seeing requests); overrides keep a
    scenario's [runtime] failure flag, and the label and scenario name say what the scheduler saw."""
    out = []
    for name, spec in chosen:
        if runtime != AS_SCENARIO:
            name, spec = _seeing(name, spec, runtime)
        out.append((name, spec))
        if twins and spec.get("runtime", {}).get("source", "request") == "request":
            out.append(_seeing(name, spec, TWIN))
    return out


def _seeing(name: str, spec: dict, runtime: str) -> tuple[str, dict]:
    failure = {"failure": True} if spec.get("runtime", {}).get("failure") else {}
    label = f"{name} · {runtime}"
    return label, {**spec, "name": f"{spec.get('name', name)} · {runtime}",
                   "runtime": {**RUNTIME_LABELS[runtime], **failure}}


def after_training(chosen: list[tuple[str, dict]], days: float, cut: pd.Timestamp | None) -> list[tuple[str, dict]]:
    """When any scenario predicts (runtimes, failures, or the GPUs of [rightsize]), every scenario without
    a window of its own replays the `days` days (0: all) after the models' training `cut`, so all of
    them are measured on the same jobs."""
    predicts = any(spec.get("runtime", {}).get("source") == "predicted" or spec.get("runtime", {}).get("failure")
                   or spec.get("rightsize", {}).get("enabled") for _, spec in chosen)
    if not predicts or cut is None:
        return chosen
    window = {"start_utc": cut.isoformat()}
    if days > 0:
        window["end_utc"] = (cut + pd.Timedelta(days=days)).isoformat()
    return [(name, spec if {"start_utc", "end_utc"} & set(spec.get("workload", {}))
             else {**spec, "workload": {**spec.get("workload", {}), **window}}) for name, spec in chosen]
