"""The reinforcement-learning scheduler against RLScheduler's published result and the heuristics.

Each run plays one packaged agent greedily on the ten 1,024-job test sequences of one log with one
backfill mode (engine/service/rl/evaluate.py), beside SJF and F1 replayed on the same sequences:
- Lublin-1 with and without backfilling, the agents trained there (RLScheduler published its RL
  agent's figures for these two: 254.67 and 58.64);
- the Lublin-1 agents on Lublin-2 and HPC2N, logs they never saw (generalisation);
- agents trained on HPC2N, on HPC2N.
The record (`fidelity_rl.json`, made by benchmarks/rl_fidelity.py) holds every run's means and
sequences and each agent's training cost; the Fidelity page shows it.
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

import pandas as pd

from engine.policies.rl_agent import packaged, packaged_meta
from engine.service.experiments.swf_jobs import load_swf_jobs
from engine.service.rl.evaluate import evaluate

RECORD = Path(str(resources.files("engine.service.rl").joinpath("fidelity_rl.json")))
LOGS = {"Lublin-1": "traces/swf/lublin_256.swf", "Lublin-2": "traces/swf/lublin_256_new2",
        "HPC2N": "traces/swf/HPC2N-2002-2.2-cln.swf.gz"}
# (agent, log it is tested on, backfill mode); the agent's own log is in its meta
RUNS = (("lublin-1", "Lublin-1", "none"), ("lublin-1-backfill", "Lublin-1", "compat"),
        ("lublin-1", "Lublin-2", "none"), ("lublin-1-backfill", "Lublin-2", "compat"),
        ("lublin-1", "HPC2N", "none"), ("lublin-1-backfill", "HPC2N", "compat"),
        ("hpc2n", "HPC2N", "none"), ("hpc2n-backfill", "HPC2N", "compat"))
COLUMNS = ("log", "backfill", "agent", "trained_on", "agent_bsld", "SJF", "F1", "FCFS", "published_RL",
           "published_SJF", "published_F1", "beats_SJF_and_F1")


@dataclass(frozen=True)
class RLRecord:
    """The recorded runs (a table of COLUMNS and every sequence) and how it was made."""

    runs: pd.DataFrame
    sequences: pd.DataFrame
    training: pd.DataFrame
    meta: dict


def run(shared: str | Path, runs=RUNS, progress=None) -> dict:
    """Every run of `runs` on the traces under `shared`, as the record's JSON document (without meta)."""
    shared, logs, out = Path(shared), {}, []
    for agent_name, log, backfill in runs:
        if log not in logs:
            logs[log] = load_swf_jobs(shared / LOGS[log])
        result = evaluate(logs[log], packaged(agent_name), backfill, orders=("FCFS", "SJF", "F1"))
        out.append({"agent": agent_name, "log": log, "backfill": backfill, "evaluation": result})
        if progress is not None:
            progress(f"{agent_name} on {log} ({backfill}): {result['orders']['agent']['mean']['avg_bounded_slowdown']:.2f}")
    training = {name: packaged_meta(name).get("training", {}) | {"source": packaged_meta(name).get("data", {}).get("source")}
                for name in sorted({r[0] for r in runs})}
    return {"runs": out, "training": training}


def load_record(path: str | Path = RECORD) -> RLRecord:
    doc = json.loads(Path(path).read_text(encoding="utf-8"))
    return RLRecord(*tables(doc), doc.get("meta", {}))


def tables(doc: dict) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """(one row per run, one row per run and sequence, one row per agent's training) of a record."""
    rows, sequences = [], []
    for entry in doc["runs"]:
        result, orders = entry["evaluation"], entry["evaluation"]["orders"]
        mean = {name: orders[name]["mean"]["avg_bounded_slowdown"] for name in orders}
        published = result["published"]
        rows.append({"log": entry["log"], "backfill": entry["backfill"], "agent": entry["agent"],
                     "trained_on": doc["training"].get(entry["agent"], {}).get("source"),
                     "agent_bsld": mean["agent"], "SJF": mean["SJF"], "F1": mean["F1"], "FCFS": mean.get("FCFS"),
                     "published_RL": published.get("RL"), "published_SJF": published.get("SJF"),
                     "published_F1": published.get("F1"), "beats_SJF_and_F1": mean["agent"] < min(mean["SJF"], mean["F1"])})
        for k, start in enumerate(result["starts"]):
            sequences.append({"log": entry["log"], "backfill": entry["backfill"], "agent": entry["agent"], "start": start,
                              **{"agent_bsld" if name == "agent" else name: orders[name]["sequences"][k][
                                  "avg_bounded_slowdown"] for name in orders}})
    training = pd.DataFrame([{"agent": name, **{k: v for k, v in t.items() if not isinstance(v, dict)}}
                             for name, t in doc["training"].items()])
    return pd.DataFrame(rows, columns=list(COLUMNS)), pd.DataFrame(sequences), training
