"""A scenario's [[chain]] entries: staged workflows built from the workload's own jobs.

    [[chain]]
    stages = ["ap-northeast", "eu-west", "us-east"]   # required: 2+ regions, in stage order
                                # ("Asia starts the run, Europe tunes it, the Americas finish it")
    workload_class = "training" # optional: the class of every stage's jobs, or a list, one per stage
    team = "llm-research"       # optional: only this team's jobs
    count = 10                  # chains to build (default 10, at most CHAIN_COUNT_MAX)
    checkpoint_gb = 200         # the checkpoint each stage hands to the next, GB (default 0: nothing moves)

Building (deterministic, no randomness). The candidates of a stage are the window's jobs in its region
(of its class and the team, when given) that are in no chain yet (an earlier [[chain]] entry or a
`depends_on` column), in submit order then job id. Chain k takes the first candidate of stage 1, then
for each later stage the first candidate submitted at or after the stage before it; building stops at
`count` chains or when a stage has no candidate left. Each stage but the first gets `depends_on` (the
job id of the stage before) and `checkpoint_gb` (engine.sim.processes.chains runs them). A [[chain]]
that builds no chain is an error naming the stage with no candidate.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from engine.core.errors import ScenarioError
from engine.core.vocabulary import WORKLOAD_CLASSES
from engine.scenario.checks import known_keys, number

CHAIN_COUNT_MAX = 10_000
CHECKPOINT_GB_MAX = 1e6
_KEYS = {"stages", "workload_class", "team", "count", "checkpoint_gb"}


@dataclass(frozen=True)
class ChainSpec:
    """One [[chain]] entry (the module docstring explains each field)."""

    stages: tuple[str, ...]
    classes: tuple[str | None, ...]
    team: str | None = None
    count: int = 10
    checkpoint_gb: float = 0.0


def parse_chains(entries: object, source: str) -> tuple[ChainSpec, ...]:
    """The [[chain]] list as ChainSpecs."""
    specs = []
    for n, spec in enumerate(entries or [], start=1):
        where = f"{source}: [[chain]] #{n}"
        known_keys(spec, _KEYS, where, "[[chain]] key")
        stages = spec.get("stages")
        if not isinstance(stages, list) or len(stages) < 2 or not all(isinstance(s, str) and s.strip() for s in stages):
            raise ScenarioError(f"{where}: stages must be a list of 2 or more region names, got {stages!r}")
        kind = spec.get("workload_class")
        classes = kind if isinstance(kind, list) else [kind] * len(stages)
        if len(classes) != len(stages):
            raise ScenarioError(f"{where}: workload_class lists {len(classes)} classes for {len(stages)} stages")
        for name in classes:
            if name is not None and name not in WORKLOAD_CLASSES:
                raise ScenarioError(f"{where}: workload_class {name!r} is unknown; choose from "
                                    f"{', '.join(WORKLOAD_CLASSES)}")
        team = spec.get("team")
        if team is not None and (not isinstance(team, str) or not team.strip()):
            raise ScenarioError(f"{where}: team must be a team's name, got {team!r}")
        count = spec.get("count", 10)
        if isinstance(count, bool) or not isinstance(count, int) or not 1 <= count <= CHAIN_COUNT_MAX:
            raise ScenarioError(f"{where}: count must be a whole number from 1 to {CHAIN_COUNT_MAX:,}, got {count!r}")
        gb = number(spec.get("checkpoint_gb", 0.0), f"{where}: checkpoint_gb")
        if gb > CHECKPOINT_GB_MAX:
            raise ScenarioError(f"{where}: checkpoint_gb must be at most {CHECKPOINT_GB_MAX:,.0f} GB, got {gb:g}")
        specs.append(ChainSpec(tuple(stages), tuple(classes), team, count, gb))
    return tuple(specs)


def build_chains(jobs: pd.DataFrame, specs: tuple[ChainSpec, ...], name: str) -> pd.DataFrame:
    """`jobs` with depends_on and checkpoint_gb set for the chains `specs` build (see the module docstring).
    No jobs, no chains: a scenario applied to no jobs (for its fleet alone, as the GPUs-needed search
    does) builds none and is no error; a window without jobs is refused before (Scenario.apply)."""
    if not specs or not len(jobs):
        return jobs
    jobs = jobs.copy()
    depends = (np.array(jobs["depends_on"].astype(object).where(jobs["depends_on"].notna(), None), dtype=object)
               if "depends_on" in jobs else np.full(len(jobs), None, object))  # copies: written below
    gb = (np.array(pd.to_numeric(jobs["checkpoint_gb"], errors="coerce"), dtype=np.float64) if "checkpoint_gb" in jobs
          else np.full(len(jobs), np.nan))
    submit = pd.to_datetime(jobs["submit_utc"]).to_numpy()
    ids = jobs["job_id"].astype(str).to_numpy(object)
    order = np.lexsort((ids, submit))
    used = (depends != None) | np.isin(ids, [str(d) for d in depends if d is not None])  # noqa: E711
    for n, spec in enumerate(specs, start=1):
        pools = [_candidates(jobs, order, spec, s) for s in range(len(spec.stages))]
        times = [submit[pool] for pool in pools]
        built = 0
        while built < spec.count:
            picks, after = [], None
            for stage, pool in enumerate(pools):
                k = 0 if after is None else int(np.searchsorted(times[stage], after, side="left"))
                while k < len(pool) and used[pool[k]]:
                    k += 1
                if k == len(pool):
                    break
                picks.append(pool[k])
                after = submit[pool[k]]
            if len(picks) < len(spec.stages):
                if built == 0:
                    stage = len(picks)
                    raise ScenarioError(f"{name}: [[chain]] #{n} builds no chain: stage {stage + 1} "
                                        f"({spec.stages[stage]}{_of(spec, stage)}) has no job to take")
                break
            used[picks] = True
            depends[picks[1:]] = ids[picks[:-1]]
            gb[picks[1:]] = spec.checkpoint_gb
            built += 1
    jobs["depends_on"], jobs["checkpoint_gb"] = depends, gb
    return jobs


def _candidates(jobs: pd.DataFrame, order: np.ndarray, spec: ChainSpec, stage: int) -> list[int]:
    """Positions of the jobs a stage may take, in submit then job id order."""
    keep = jobs["region"].astype(str).to_numpy(object)[order] == spec.stages[stage]
    if spec.classes[stage] is not None:
        keep &= jobs["workload_class"].astype(str).to_numpy(object)[order] == spec.classes[stage]
    if spec.team is not None:
        keep &= jobs["team"].astype(str).to_numpy(object)[order] == spec.team
    return order[keep].tolist()


def _of(spec: ChainSpec, stage: int) -> str:
    what = [f"class {spec.classes[stage]}"] if spec.classes[stage] else []
    what += [f"team {spec.team}"] if spec.team else []
    return f", {', '.join(what)}" if what else ""
