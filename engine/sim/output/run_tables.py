"""Tables of a finished simulation run: the per-job table, the timeline, the decision log, the
segments and the fragmentation samples, as a `SimulationResult` (engine.sim.output.result describes every
column).

Text columns are built as pandas' `str` columns by pyarrow's `take` of a few names by integer
codes (regions, reasons, decisions, users, projects, queues, teams, node lists): converting
hundreds of thousands of Python strings one by one costs several times more. The node lists are
joined the same way, all at once (`joined_names`), from the node indices each piece held."""
from __future__ import annotations

from itertools import chain

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from engine.core.reasons import DECISIONS, SOFT_CONSTRAINTS
from engine.policies.constraints import COST_UNITS
from engine.scenario.queues import queue_table
from engine.sim.output.result import SimulationResult

QUOTA_COLUMNS = ["region", "holder", "by", "nominal_gpus", "borrowing_limit_gpus", "lending_limit_gpus", "cap_gpus",
                 "most_gpus"]
RELAXATION_COLUMNS = ["row", "job_id", "team", "home_region", "time_s", "region", "constraint", "cost", "cost_unit"]
CLUSTER_COLUMNS = ["region", "cluster", "node", "gpus"]
SEGMENT_COLUMNS = ["row", "job_id", "region", "nodes", "start_s", "end_s", "gpus_allocated", "outcome", "lost_s"]
SEPARATOR = pa.scalar(";", pa.large_string())  # between the node names of a piece
_SOFT_CODE = {name: code for code, name in enumerate(SOFT_CONSTRAINTS)}  # a relaxed constraint's code in labels()


def run_tables(run, scenario: str) -> SimulationResult:
    """The result of a finished run (engine.sim.simulator._Run) named `scenario`."""
    w, sharing = run.w, run.sharing
    ledger = sharing.ledger
    regions = list(run.regions)
    region = _region_codes(run)
    nodes = _node_lists(run, region)
    jobs = pd.DataFrame({
        "job_id": w.job_id, "region": labels(region, regions), "home_region": labels(run.home, regions),
        "workload_class": _text(w.workload_class), "team": labels(ledger.team, ledger.teams),
        "submit_s": w.submit_s, "start_s": run.start, "end_s": run.end,
        "wait_s": np.where(np.isnan(run.patience.gave_up_s), run.start, run.patience.gave_up_s) - w.submit_s,
        "run_s": run.end - run.start, "gpus": w.asked_gpus,
        "gpus_allocated": run.alloc_gpus,
        "failed": w.failed, "started": np.isfinite(run.start), "nodes": nodes,
        "reason": labels(run.reason, DECISIONS), "latency_ms": run.latency_ms,
        "user": labels(ledger.user, ledger.user_names), "project": labels(ledger.project, ledger.project_names),
        "queue": labels(sharing.qclass, [q.name for q in sharing.queues]),
        "priority": w.priority, "deadline_s": w.deadline_s,
        "preemptions": sharing.preemptions, "lost_gpu_hours": sharing.lost_gpu_s / 3600.0,
        **run.processes.job_columns(len(w))})
    relaxations = _relaxations(run, jobs, regions)
    if relaxations is not None:
        jobs["relaxed"] = pd.array(_joined(run.router.relaxed, len(jobs)), dtype="str")
    timeline = _timeline(run, regions)
    logged = np.asarray(run.log_j, np.int64)
    decisions = pd.DataFrame({"time_s": np.asarray(run.log_t, np.float64), "row": logged,
                              "job_id": jobs["job_id"].array.take(logged),
                              "region": labels(region[logged], regions),
                              "decision": labels(np.asarray(run.log_c, np.int64), DECISIONS)})
    capacity = {r: f.capacity_gpus for r, f in run.regions.items()}
    return SimulationResult(scenario, jobs, timeline, decisions, capacity, w.origin_utc, w.notes,
                            w.observed_end_s, latency_slo_ms=run.latency_slo_ms, segments=_segments(run, jobs),
                            teams=_teams(run), queue_classes=queue_table(sharing.queues), quotas=_quotas(run),
                            relaxations=relaxations, clusters=_clusters(run), roles=_roles(run),
                            **run.processes.result())


def _roles(run) -> pd.DataFrame | None:
    """The [roles] of the run's regions, one row each: region, roles (joined by ","; "" none); None without [roles]."""
    roles = run.world.roles if run.world is not None else None
    if roles is None:
        return None
    names = list(run.regions)
    return pd.DataFrame({"region": names, "roles": [",".join(roles.of(name)) for name in names]})


def _relaxations(run, jobs: pd.DataFrame, regions: list[str]) -> pd.DataFrame | None:
    """The soft constraints the router relaxed, one row each (None when its policy relaxes nothing)."""
    if run.router is None or not run.router.relaxes:
        return None
    records = run.router.relaxed
    time_s, row, region, constraint, cost = (list(c) for c in zip(*records)) if records else ([],) * 5
    row = np.asarray(row, np.int64)
    code = np.fromiter(map(_SOFT_CODE.__getitem__, constraint), np.int64, len(constraint))
    return pd.DataFrame({
        "row": row, "job_id": jobs["job_id"].to_numpy()[row], "team": jobs["team"].to_numpy()[row],
        "home_region": jobs["home_region"].to_numpy()[row], "time_s": np.asarray(time_s, np.float64),
        "region": labels(region, regions), "constraint": labels(code, SOFT_CONSTRAINTS),
        "cost": np.asarray(cost, np.float64), "cost_unit": labels(code, [COST_UNITS[c] for c in SOFT_CONSTRAINTS]),
    }, columns=RELAXATION_COLUMNS)


def _joined(records: list[tuple], n: int) -> list[str]:
    """Per job row, the constraints relaxed for it joined by ";" in the order they were recorded ("" none)."""
    by_row: dict[int, list[str]] = {}
    for _, row, _, constraint, _ in records:
        by_row.setdefault(row, []).append(constraint)
    return [";".join(by_row[i]) if i in by_row else "" for i in range(n)]


def labels(codes, names) -> pd.api.extensions.ExtensionArray:
    """names[codes] as a pandas `str` array (codes: integers, names: a sequence of str)."""
    return pd.array(pa.array(list(names), pa.large_string()).take(pa.array(np.asarray(codes, np.int64))),
                    dtype="str")


def _text(values: np.ndarray) -> pd.api.extensions.ExtensionArray:
    """A column of str values with few distinct ones (the workload classes) as a pandas `str` array."""
    codes, names = pd.factorize(values)
    return labels(codes, names.tolist())


def _region_codes(run) -> np.ndarray:
    """Each job's region (where it ran, or its home) as an index into the run's regions."""
    return np.fromiter(map(run.region_index.__getitem__, run.region_name), np.int64, len(run.region_name))


def _node_lists(run, region: np.ndarray) -> pd.api.extensions.ExtensionArray:
    """Each job's node names joined by ";" ("" for a job that never started); `region`: each job's
    region index (its nodes are that region's)."""
    held = run.nodes_of
    jobs = np.fromiter(held, np.int64, len(held))
    at = np.full(len(run.w), -1, np.int64)  # each job's position in `held`
    at[jobs] = np.arange(len(jobs))
    names = joined_names(run, region[jobs], list(held.values()))
    return pd.array(names.take(pa.array(at, mask=at < 0)).fill_null(""), dtype="str")


def joined_names(run, region: np.ndarray, held: list) -> pa.Array:
    """The names of the nodes of each of `held` (node indices in the run's region of index `region`
    at the same position) joined by ";", in one pass over all of them."""
    fleets = run.regions.values()
    first = np.cumsum([0, *(len(fleet.name_list) for fleet in fleets)])  # each region's first name in `names`
    names = pa.array(list(chain.from_iterable(fleet.name_list for fleet in fleets)), pa.large_string())
    lists = pa.array(held, pa.large_list(pa.int64()))  # Python lists (one node, often) and arrays, read in one pass
    nodes = lists.values.to_numpy() + np.repeat(first[region], np.diff(lists.offsets.to_numpy()))
    return pc.binary_join(pa.LargeListArray.from_arrays(lists.offsets, names.take(pa.array(nodes))), SEPARATOR)


def _timeline(run, regions: list[str]) -> pd.DataFrame:
    time_s, region, busy, queued = run.timeline
    return pd.DataFrame({"time_s": np.array(time_s, np.float64), "region": labels(region, regions),
                         "busy_gpus": np.array(busy, np.float64), "queue_length": np.array(queued, np.int64)})


def _segments(run, jobs: pd.DataFrame) -> pd.DataFrame:
    """Pieces stopped before their end (evicted: "preempted"; out of memory under right-sizing:
    "out-of-memory"), then the last piece of each job that ended or is still running (a job stopped
    and waiting at the end has no piece after it)."""
    sharing = run.sharing
    evicted = pd.DataFrame(sharing.segments, columns=["job", "region", "nodes", "start_s", "end_s",
                                                      "gpus_allocated", "lost_s", "outcome"])
    rows = evicted.pop("job").to_numpy(np.int64)
    if len(evicted):  # the node indices each piece held, as their names
        region = np.fromiter(map(run.region_index.__getitem__, evicted["region"]), np.int64, len(evicted))
        evicted["nodes"] = pd.array(joined_names(run, region, evicted["nodes"].tolist()), dtype="str")
    evicted.insert(0, "row", rows)
    evicted.insert(1, "job_id", jobs["job_id"].array.take(rows))
    started = np.flatnonzero(np.isfinite(run.end) & ~np.isin(np.arange(len(jobs)), list(run.pods)))
    running = np.asarray(sorted(run.pods), np.int64)
    last = np.concatenate([started, running])
    last.sort()
    end = run.end[last]
    failed = run.w.failed[last]
    outcome = labels(np.where(np.isnan(end), 0, np.where(failed, 1, 2)), ("running", "failed", "completed"))
    final = pd.DataFrame({"row": last, **{name: jobs[name].array.take(last) for name in ("job_id", "region", "nodes")},
                          "start_s": np.asarray(sharing.seg_start, np.float64)[last], "end_s": end,
                          "gpus_allocated": run.alloc_gpus[last], "outcome": outcome, "lost_s": 0.0})
    if not len(evicted):
        return final[SEGMENT_COLUMNS]
    both = pd.concat([evicted[SEGMENT_COLUMNS], final[SEGMENT_COLUMNS]], ignore_index=True)
    return both.sort_values(["start_s", "row"], kind="stable").reset_index(drop=True)


def _clusters(run) -> pd.DataFrame:
    """One row per node of the run's fleet (rented burst nodes included): region, cluster, node, gpus."""
    frames = [pd.DataFrame({"region": region, "cluster": labels(fleet.cluster_codes, fleet.cluster_names),
                            "node": pd.array(fleet.name_list, dtype="str"), "gpus": fleet.state.gpu_count})
              for region, fleet in run.regions.items()]
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=CLUSTER_COLUMNS)


def _teams(run) -> pd.DataFrame:
    ledger, sharing = run.sharing.ledger, run.sharing
    weight = ledger.weight
    nominal = np.full(len(ledger.teams), np.nan)
    if sharing.gated and not sharing.by_queue:
        nominal = np.sum([book.nominal for book in sharing.gate.books], axis=0)
        nominal = np.where(np.isfinite(nominal), nominal, np.nan)
    return pd.DataFrame({"team": list(ledger.teams), "weight": weight,
                         "entitlement": weight / weight.sum() if weight.sum() > 0 else weight,
                         "nominal_gpus": nominal})


def _quotas(run) -> pd.DataFrame | None:
    """QUOTA_COLUMNS per region and quota holder, from the quota gate's books; None without a gate."""
    sharing = run.sharing
    if not sharing.gated:
        return None
    gate, by = sharing.gate, "queue" if sharing.by_queue else "team"
    frames = []
    for r, (region, book) in enumerate(zip(run.regions, gate.books)):
        frames.append(pd.DataFrame({
            "region": region, "holder": list(gate.holders), "by": by, "nominal_gpus": book.nominal,
            "borrowing_limit_gpus": book.borrow, "lending_limit_gpus": book.lend, "cap_gpus": book.cap,
            "most_gpus": gate.most[r]}))
    return pd.concat(frames, ignore_index=True)[QUOTA_COLUMNS]
