"""Telemetry tables -> the simulator's numpy arrays (no Store involved).

`build_workload(jobs, fleet)` takes the schema's jobs and fleet DataFrames. Per job it keeps what
the scheduler may know at submit time (request, requested runtime, priority, deadline) and,
separately, the true runtime from the telemetry (end - start), which only the simulator reads.

Units: times are seconds from the earliest submit (`origin_utc`); CPU in milli-cores, memory in
MiB, GPU shares in milli-GPU. A job asks for `nodes` pods; each pod asks for `num_gpu` GPUs of
`gpu_milli` each (gpu_milli < 1000 shares one GPU), cpu_milli and memory_mib. Jobs with nodes > 1
are gang jobs that take whole free nodes.

True runtime: end - start when both are recorded. A job still running when the data ends (status
running, start set, no end) runs until the data's observed end (`observed_end_s`: the latest submit,
start or end in the jobs table), so its true runtime is observed end - start, censored: it may
really have run longer. It needs no requested runtime; policies still see only the request (+inf when
NULL). Otherwise (pending jobs) the requested runtime when known (the user's request,
`user_requested_runtime_s`, when predictions replaced `requested_runtime_s`: engine.predict.runtime_source);
otherwise the job is skipped. With predictions, `overrun_s` is the user's request where it is longer
than the prediction: what the scheduler expects of a job once it outlives its prediction (Tsafrir,
Etsion and Feitelson's correction), NaN elsewhere. A `fail_prob` column (engine.predict.failure_source)
becomes `fail_prob`, what failure-aware orders read. Patience: a job recorded as cancelled before it
started (status cancelled, no start, an end) waited end - submit seconds before its user withdrew it;
`patience_s` holds that (NaN elsewhere), and the simulator lets it give up then (engine.sim.cycle.patience).
`notes` counts each case. Staged workflows: a `depends_on` column (the job id each job waits for) and a
`checkpoint_gb` column become `predecessor` and `checkpoint_gb` (engine.core.chain_links checks them;
a named job outside the table, before a scenario's window, leaves its successor without a predecessor).

Right-sizing at submit (engine.scenario.rightsize): a `sized_gpus` column (GPUs a job is given, NaN:
its request) makes a sized job's `num_gpu` and `nodes` the given shape (r GPUs on one node when r
fits one of its nodes, else r / GPUs-per-node whole nodes; CPU and memory per pod as asked), and
keeps the request in `asked_num_gpu` and `asked_nodes`, and the measured peak (`gpus_used_max`) in
`used_gpus`: engine.sim.processes.oom_restarts restarts a job given less than that with its request.
With a `sized_memory_gib` column too (memory right-sized: GiB a job is given over its nodes, NaN: its
request) each pod asks for sized_memory_gib / the pods it is given (in MiB, rounded up), at most what a pod
asked for, so node fit sees the sized memory; `asked_memory_mib` keeps each pod's request and
`used_memory_mib` the measured peak over the job (`memory_used_gib_max`, NaN: unmeasured).
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from engine.core.chain_links import checkpoints, predecessors
from engine.core.vocabulary import DEFAULT_REGION


@dataclass(frozen=True)
class Workload:
    """Per-job arrays (index = stable job id 0..n-1, sorted by submit then job_id) and the fleet."""

    job_id: np.ndarray
    submit_s: np.ndarray
    run_s: np.ndarray
    requested_s: np.ndarray
    priority: np.ndarray
    deadline_s: np.ndarray
    region: np.ndarray
    nodes: np.ndarray
    num_gpu: np.ndarray
    gpu_milli: np.ndarray
    cpu_milli: np.ndarray
    memory_mib: np.ndarray
    gpu_type: np.ndarray
    failed: np.ndarray
    workload_class: np.ndarray
    team: np.ndarray
    fleet: pd.DataFrame
    origin_utc: pd.Timestamp
    notes: tuple[str, ...] = field(default=())
    observed_end_s: float = 0.0
    residency: np.ndarray | None = None  # data-residency tag per job (engine.world.residency), None: untagged
    user: np.ndarray | None = None  # submitting user, project and recorded QoS per job ("" when unknown)
    project: np.ndarray | None = None
    qos: np.ndarray | None = None
    data_location: np.ndarray | None = None  # region holding each job's input data (None: unknown)
    data_size_gb: np.ndarray | None = None  # size of that data, GB (0: none)
    dataset: np.ndarray | None = None  # the dataset each job names (None: no dataset column; engine.world.datasets)
    overrun_s: np.ndarray | None = None  # runtime to expect once a job outlives requested_s (None: none)
    fail_prob: np.ndarray | None = None  # predicted P(fail or cancel), 0-1, 0 where unknown (None: not predicted)
    patience_s: np.ndarray | None = None  # seconds its user waits before giving up (NaN: forever; None: no one gives up)
    predecessor: np.ndarray | None = None  # index of the job each one waits for (-1: none; engine.sim.processes.chains)
    checkpoint_gb: np.ndarray | None = None  # the predecessor's checkpoint it receives, GB (None: no chains)
    asked_num_gpu: np.ndarray | None = None  # the request of right-sized jobs (None: every job runs as asked)
    asked_nodes: np.ndarray | None = None
    used_gpus: np.ndarray | None = None  # measured peak of GPUs busy at once (NaN: unmeasured; None: not sized)
    gpu_util_pct: np.ndarray | None = None  # measured mean utilisation of its GPUs, % (NaN: unmeasured; None: no column)
    asked_memory_mib: np.ndarray | None = None  # memory per pod asked for, of memory-sized runs (None: not sized)
    used_memory_mib: np.ndarray | None = None  # measured peak memory over the job, MiB (NaN: unmeasured)

    def __len__(self) -> int:
        return len(self.job_id)

    @property
    def asked_gpus(self) -> np.ndarray:
        """GPU equivalents asked for per job, before any right-sizing."""
        if self.asked_num_gpu is None:
            return self.gpus
        return self.asked_nodes * self.asked_num_gpu * self.gpu_milli / 1000.0

    @property
    def gpus(self) -> np.ndarray:
        """GPU equivalents asked for per job (0.5 = half a GPU)."""
        return self.nodes * self.num_gpu * self.gpu_milli / 1000.0


def _col(frame: pd.DataFrame, name: str, default) -> pd.Series:
    return frame[name] if name in frame else pd.Series(default, index=frame.index)


def _seconds(times: pd.Series, origin: pd.Timestamp) -> np.ndarray:
    return ((pd.to_datetime(times) - origin).dt.total_seconds()).to_numpy(np.float64)


def normalise_fleet(fleet: pd.DataFrame) -> pd.DataFrame:
    """Fleet rows in a stable order with cpu_milli, memory_mib, gpu, model and rack id columns."""
    out = fleet.copy()
    out["region"] = _col(out, "region", DEFAULT_REGION).fillna(DEFAULT_REGION)
    out = out.sort_values(["region", "node"], kind="stable").reset_index(drop=True)
    out["gpu"] = out["gpus"].fillna(0).astype(np.int64)
    out["cpu_milli"] = np.rint(_col(out, "cpus", 0.0).fillna(0) * 1000).astype(np.int64)
    out["memory_mib"] = np.rint(_col(out, "memory_gib", 0.0).fillna(0) * 1024).astype(np.int64)
    out["model"] = _col(out, "gpu_type", None).where(lambda s: s.notna(), None)
    racks = _col(out, "rack", None).astype(object).where(lambda s: s.notna(), "").astype(str)
    out["rack_id"] = pd.factorize(racks, sort=True)[0].astype(np.int64)
    return out


def build_workload(jobs: pd.DataFrame, fleet: pd.DataFrame) -> Workload:
    """Arrays for the simulator from the jobs and fleet tables (see the module docstring)."""
    notes = []
    jobs = _in_submit_order(jobs)
    origin = pd.to_datetime(jobs["submit_utc"]).min() if len(jobs) else pd.Timestamp("1970-01-01")
    submit = _seconds(jobs["submit_utc"], origin)
    requested = _col(jobs, "requested_runtime_s", np.nan).astype(np.float64).to_numpy()
    start, end = _col(jobs, "start_utc", pd.NaT), _col(jobs, "end_utc", pd.NaT)
    recorded = (pd.to_datetime(end) - pd.to_datetime(start)).dt.total_seconds().to_numpy(np.float64)
    observed_end = max((float(np.nanmax(v)) for v in (submit, _seconds(start, origin), _seconds(end, origin))
                        if np.isfinite(v).any()), default=0.0)
    running = ((_col(jobs, "status", "completed") == "running").to_numpy(bool)
               & pd.to_datetime(start).notna().to_numpy() & pd.to_datetime(end).isna().to_numpy())
    recorded = np.where(running, observed_end - _seconds(start, origin), recorded)
    has_recorded = np.isfinite(recorded)
    asked = _col(jobs, "user_requested_runtime_s", np.nan).astype(np.float64).to_numpy() \
        if "user_requested_runtime_s" in jobs else requested  # the request, when a prediction replaced it
    run = np.where(has_recorded, np.maximum(recorded, 0.0), asked)
    withdrawn = ((_col(jobs, "status", "completed") == "cancelled").to_numpy(bool)
                 & pd.to_datetime(start).isna().to_numpy() & pd.to_datetime(end).notna().to_numpy())
    patience = np.where(withdrawn, np.maximum(_seconds(end, origin) - submit, 0.0), np.nan)
    keep = np.isfinite(run)
    if running.sum():
        notes.append(f"{int(running.sum())} jobs still running at the data's end run until it "
                     "(observed end - start: a censored, lower-bound runtime)")
    estimated = int((~has_recorded & keep).sum())
    if estimated:
        notes.append(f"{estimated} jobs without a recorded start and end run for their requested runtime")
    if (withdrawn & keep).sum():
        notes.append(f"{int((withdrawn & keep).sum())} jobs cancelled before they started give up after their "
                     "recorded wait unless they start sooner")
    if (~keep).sum():
        notes.append(f"{int((~keep).sum())} jobs without a recorded start and end or a requested runtime skipped")
    if not keep.all():  # (a filter copies the whole table)
        jobs, submit, run, requested, asked, patience = (jobs[keep].reset_index(drop=True), submit[keep], run[keep],
                                                         requested[keep], asked[keep], patience[keep])

    nodes = np.maximum(_col(jobs, "nodes", 1).fillna(1).to_numpy(np.int64), 1)
    gpus = jobs["gpus"].fillna(0).to_numpy(np.float64)
    share = _col(jobs, "gpu_milli", np.nan).to_numpy(np.float64)
    sharing = (gpus > 0) & (gpus < 1) & (nodes == 1)
    gpu_milli = np.where(gpus <= 0, 0, np.where(sharing, np.where(np.isfinite(share), share,
                                                                   np.rint(gpus * 1000)), 1000))
    num_gpu = np.where(gpus <= 0, 0, np.where(sharing, 1, np.ceil(gpus / nodes - 1e-9)))
    sized = _sized_shape(jobs, nodes, num_gpu) if "sized_gpus" in jobs or "sized_memory_gib" in jobs else None
    memory_mib = np.rint(_col(jobs, "memory_gib", 0.0).fillna(0).to_numpy(np.float64) * 1024 / nodes
                         ).astype(np.int64)
    memory = _sized_memory(jobs, memory_mib, nodes if sized is None else sized[1]) \
        if "sized_memory_gib" in jobs else {}
    deadline = _col(jobs, "deadline_utc", pd.NaT)
    deadline_s = np.where(pd.to_datetime(deadline).notna(), _seconds(deadline, origin), np.inf)
    return Workload(
        job_id=jobs["job_id"].astype(str).to_numpy(),
        submit_s=submit,
        run_s=run,
        requested_s=np.where(np.isfinite(requested) & (requested > 0), requested, np.inf),
        priority=_col(jobs, "priority", 0.0).fillna(0).to_numpy(np.float64),
        deadline_s=deadline_s.astype(np.float64),
        region=_labels(_col(jobs, "region", DEFAULT_REGION), DEFAULT_REGION),
        nodes=nodes if sized is None else sized[1],
        num_gpu=num_gpu.astype(np.int64) if sized is None else sized[0],
        gpu_milli=gpu_milli.astype(np.int64),
        cpu_milli=np.rint(_col(jobs, "cpus", 0.0).fillna(0).to_numpy(np.float64) * 1000 / nodes).astype(np.int64),
        memory_mib=memory.pop("memory_mib", memory_mib),
        gpu_type=_labels(_col(jobs, "gpu_type", None), None, as_text=False),
        failed=(_col(jobs, "status", "completed") == "failed").to_numpy(bool),
        workload_class=_labels(_col(jobs, "workload_class", "unknown"), "unknown"),
        team=_labels(_col(jobs, "team", ""), ""),
        fleet=normalise_fleet(fleet),
        origin_utc=origin,
        notes=tuple(notes),
        observed_end_s=observed_end,
        residency=_labels(_col(jobs, "residency", None), None, as_text=False),
        user=_text(jobs, "user_name"),
        project=_text(jobs, "project"),
        qos=_text(jobs, "qos"),
        data_location=_labels(_col(jobs, "data_location", None), None, as_text=False),
        data_size_gb=pd.to_numeric(_col(jobs, "data_size_gb", 0.0), errors="coerce").fillna(0.0).to_numpy(np.float64),
        dataset=_text(jobs, "dataset") if "dataset" in jobs else None,
        overrun_s=np.where(np.isfinite(asked) & (asked > requested), asked, np.nan)
        if "user_requested_runtime_s" in jobs else None,
        fail_prob=pd.to_numeric(jobs["fail_prob"], errors="coerce").fillna(0.0).to_numpy(np.float64)
        if "fail_prob" in jobs else None,
        patience_s=patience if np.isfinite(patience).any() else None,
        asked_num_gpu=None if sized is None else num_gpu.astype(np.int64),
        asked_nodes=None if sized is None else nodes,
        used_gpus=None if sized is None else pd.to_numeric(_col(jobs, "gpus_used_max", np.nan),
                                                           errors="coerce").to_numpy(np.float64),
        gpu_util_pct=pd.to_numeric(jobs["gpu_util_pct"], errors="coerce").to_numpy(np.float64)
        if "gpu_util_pct" in jobs else None,
        **_chains(jobs),
        **memory,
    )


def _sized_memory(jobs: pd.DataFrame, asked: np.ndarray, pods: np.ndarray) -> dict:
    """memory_mib (per pod, given), asked_memory_mib and used_memory_mib of a memory-sized workload."""
    given = pd.to_numeric(jobs["sized_memory_gib"], errors="coerce").to_numpy(np.float64) * 1024
    per_pod = np.where(np.isfinite(given), np.ceil(given / pods - 1e-9), asked)
    used = pd.to_numeric(_col(jobs, "memory_used_gib_max", np.nan), errors="coerce").to_numpy(np.float64)
    return {"memory_mib": np.minimum(per_pod, asked).astype(np.int64), "asked_memory_mib": asked,
            "used_memory_mib": used * 1024}


def _chains(jobs: pd.DataFrame) -> dict:
    """predecessor and checkpoint_gb from the depends_on and checkpoint_gb columns ({} without depends_on)."""
    if "depends_on" not in jobs or not jobs["depends_on"].notna().any():
        return {}
    row = np.arange(len(jobs)) + 2  # a table without source lines: its rows, counted as in a CSV file
    given = pd.to_numeric(jobs["source_line"], errors="coerce").to_numpy(np.float64) if "source_line" in jobs else row
    lines = np.where(np.isfinite(given), given, row).astype(np.int64)
    pred = predecessors(jobs["job_id"].astype(str).to_numpy(), jobs["depends_on"], lines, missing_ok=True)
    return {"predecessor": pred, "checkpoint_gb": checkpoints(jobs.get("checkpoint_gb"), pred, lines)}


def _sized_shape(jobs: pd.DataFrame, nodes: np.ndarray, num_gpu: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(GPUs per pod, pods) each job is given under right-sizing (see the module docstring)."""
    given = pd.to_numeric(_col(jobs, "sized_gpus", np.nan), errors="coerce").to_numpy(np.float64)
    asked = nodes * num_gpu
    sized = np.isfinite(given) & (given >= 1) & (given < asked) & (num_gpu >= 1)
    r = np.where(sized, np.rint(given), asked)
    one_node = r <= num_gpu
    pods = np.where(sized, np.where(one_node, 1, np.ceil(r / np.maximum(num_gpu, 1) - 1e-9)), nodes)
    per_pod = np.where(sized & one_node, r, num_gpu)
    return per_pod.astype(np.int64), pods.astype(np.int64)


def _in_submit_order(jobs: pd.DataFrame) -> pd.DataFrame:
    """`jobs` sorted by submit time then job id (stable), with a fresh index; a table already in
    that order (as logs usually are) is only checked, which costs a fraction of the sort."""
    submit, ids = jobs["submit_utc"].to_numpy(), jobs["job_id"].to_numpy(object)
    try:
        ties = submit[1:] == submit[:-1]
        ordered = bool((submit[1:] >= submit[:-1]).all() and (ids[:-1][ties] <= ids[1:][ties]).all())
    except TypeError:  # values that do not compare (missing ones): sort
        ordered = False
    if not ordered:
        jobs = jobs.sort_values(["submit_utc", "job_id"], kind="stable")
    return jobs.reset_index(drop=True)


def _text(jobs: pd.DataFrame, name: str) -> np.ndarray:
    return _labels(_col(jobs, name, ""), "")


def _labels(values: pd.Series, missing, as_text: bool = True) -> np.ndarray:
    """`values` as an object array in which equal values are one Python object (a million jobs
    name a few regions, classes and teams: one str each, not a million), missing ones `missing`;
    `as_text`: every value as str."""
    codes, uniques = pd.factorize(values)
    names = [*map(str, uniques)] if as_text else list(uniques)
    return np.array([*names, missing], dtype=object)[codes]  # code -1 (missing) -> the last
