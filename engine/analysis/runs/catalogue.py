"""The KPI catalogue: every key a run's KPI dictionary can hold, with its label, unit, direction and
display format, in one place. `meridian compare --json`, the What-if and Teams & fairness pages and
the tests read it; the README's KPI table documents the same keys (a test checks both ways).

Groups: "sim" (engine.analysis.runs.sim_metrics.kpis), "fragmentation" (only runs that sample it),
"relaxation" (engine.analysis.runs.relaxation, only runs whose routing relaxes soft constraints),
"interconnect" (engine.analysis.runs.interconnect, only runs with an [interconnect]), "handoff"
(engine.analysis.runs.handoff, only runs under [handoff]), "day_start" (engine.analysis.runs.handoff.day_start_kpis,
every run engine.service.compare makes: it needs the world's calendars), "partitions" (engine.analysis.runs.partitions,
only runs with [partitions]), "rightsize" (engine.analysis.runs.rightsize, only runs with [rightsize]),
"cluster" (engine.analysis.runs.clusters: the columns of a run's by-cluster table, one value per cluster),
"stranded" (engine.analysis.runs.stranded), "matching" (engine.analysis.runs.matching, only runs with
jobs of the sample's workload classes), "fairness" (engine.analysis.runs.fairness.fairness_kpis, part of
`kpis`), "world" (engine.analysis.runs.world_kpis.KPI_KEYS, for a priced fleet or on request), "data"
(engine.analysis.runs.data_kpis, with the world KPIs of a run whose [data] tracks datasets), "workflow"
(engine.analysis.runs.chain_kpis, only runs with chains), "experiments" (engine.scenario.experiments, only
runs whose scenario generates experiments), "roles" (engine.analysis.runs.roles_kpis, with the world KPIs of
a run whose [roles] names edge regions or archives checkpoints) and
"headroom" (engine.service.headroom, for compared candidates). `better` says which way is an
improvement ("higher", "lower", or "" when neither is); `fmt` how a page shows the value: "pct" a
0-1 share as a percentage, "duration" seconds as s/min/h, "int", "one" (one decimal), "two", "three",
"usd", "x" (a multiple). `heading` and `shown` turn a key and its value into the words a table prints,
so the report's appendix and the pages' tables name and format a KPI the same way.

`MONEY` is the one definition of every money figure: the Overview, What-if, Cost & carbon and Report
pages' "how computed" panels, the report's appendix and the README's KPI table give these words (a test
checks the README), and engine.analysis.runs.cost computes them.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import pandas as pd

from engine.core.text import hours


@dataclass(frozen=True)
class Kpi:
    key: str
    label: str
    unit: str
    better: str
    group: str
    fmt: str


def _rows(group: str, *rows: tuple) -> list[Kpi]:
    return [Kpi(key, label, unit, better, group, fmt) for key, label, unit, better, fmt in rows]


CATALOGUE: dict[str, Kpi] = {k.key: k for k in [
    *_rows("sim",
           ("utilization", "Utilisation", "0-1", "higher", "pct"),
           ("idle_gpu_hours", "Idle GPU-hours", "GPU-hours", "lower", "int"),
           ("served_gpu_hours", "Served GPU-hours", "GPU-hours", "higher", "int"),
           ("burst_rentals", "Burst rentals", "rentals", "", "int"),
           ("burst_gpu_hours", "Burst GPU-hours", "GPU-hours", "", "int"),
           ("latency_slo_attainment", "Latency SLO met", "0-1", "higher", "pct"),
           ("wait_mean_s", "Mean wait", "s", "lower", "duration"),
           ("wait_p50_s", "p50 wait", "s", "lower", "duration"),
           ("wait_p95_s", "p95 wait", "s", "lower", "duration"),
           ("wait_p99_s", "p99 wait", "s", "lower", "duration"),
           ("jct_mean_s", "Mean completion time", "s", "lower", "duration"),
           ("jct_p50_s", "p50 completion time", "s", "lower", "duration"),
           ("jct_p95_s", "p95 completion time", "s", "lower", "duration"),
           ("jct_p99_s", "p99 completion time", "s", "lower", "duration"),
           ("avg_bounded_slowdown", "Avg bounded slowdown", "ratio", "lower", "two"),
           ("makespan_s", "Makespan", "s", "", "duration"),
           ("jobs_completed", "Jobs completed", "jobs", "higher", "int"),
           ("jobs_failed", "Jobs failed", "jobs", "lower", "int"),
           ("jobs_not_run", "Jobs never run", "jobs", "lower", "int"),
           ("jobs_gave_up", "Jobs given up on", "jobs", "lower", "int"),
           ("throughput_jobs_per_hour", "Throughput", "jobs/h", "higher", "one")),
    *_rows("fragmentation",
           ("frag_gpus_mean", "Fragmented GPUs", "GPUs", "lower", "one"),
           ("frag_gpu_pct_of_idle", "Fragmented idle GPUs", "%", "lower", "one")),
    *_rows("relaxation",
           ("jobs_relaxed", "Jobs with a constraint relaxed", "jobs", "lower", "int"),
           ("relaxations", "Constraints relaxed", "relaxations", "lower", "int"),
           ("relaxed_data_locality_jobs", "Data locality relaxed", "jobs", "lower", "int"),
           ("relaxed_latency_jobs", "Latency relaxed", "jobs", "lower", "int"),
           ("relaxed_carbon_jobs", "Carbon relaxed", "jobs", "lower", "int"),
           ("relaxed_cost_jobs", "Cost preference relaxed", "jobs", "lower", "int"),
           ("relaxed_team_affinity_jobs", "Team affinity relaxed", "jobs", "lower", "int"),
           ("jobs_moved_region", "Jobs moved region", "jobs", "", "int"),
           ("relaxed_egress_usd", "Egress of relaxed locality", "USD", "lower", "usd")),
    *_rows("interconnect",
           ("multi_node_starts", "Multi-node starts", "starts", "", "int"),
           ("spread_starts", "Spread over racks", "starts", "lower", "int"),
           ("cross_cluster_starts", "Spread over clusters", "starts", "lower", "int"),
           ("interconnect_mean_slowdown", "Mean network slowdown", "x", "lower", "x"),
           ("interconnect_extra_gpu_hours", "GPU-hours lost to the network", "GPU-hours", "lower", "int")),
    *_rows("handoff",
           ("handoff_moves", "Hand-off moves", "moves", "", "int"),
           ("handoff_jobs", "Jobs handed off", "jobs", "", "int"),
           ("handoff_lost_gpu_hours", "GPU-hours lost to hand-offs", "GPU-hours", "lower", "one"),
           ("handoff_moved_gpu_hours", "GPU-hours handed off", "GPU-hours", "", "int")),
    *_rows("day_start",
           ("day_start_wait_jobs", "Home work waiting at a day start", "jobs", "lower", "int"),
           ("day_start_wait_mean_s", "Its mean wait", "s", "lower", "duration")),
    *_rows("partitions",
           ("mig_instances", "MIG instances", "instances", "", "int"),
           ("mig_slice_gpu_hours", "GPU-hours held on MIG instances", "GPU-hours", "", "int"),
           ("mig_mode_gpu_hours", "GPU-hours of GPUs in MIG mode", "GPU-hours", "", "int"),
           ("mig_slice_use", "MIG slices used", "0-1", "higher", "pct"),
           ("mig_gpu_hours_saved", "GPU-hours saved by MIG", "GPU-hours", "higher", "int"),
           ("mig_reconfigurations", "MIG reconfigurations", "switches", "lower", "int"),
           ("mig_drain_gpu_hours", "GPU-hours lost to reconfigurations", "GPU-hours", "lower", "one"),
           ("mig_repacks", "MIG layouts repacked", "repacks", "lower", "int"),
           ("mig_repack_drained", "Instances drained by repacks", "instances", "lower", "int"),
           ("mig_repack_drain_gpu_hours", "GPU-hours lost to repacks", "GPU-hours", "lower", "one"),
           ("shared_gpu_pieces", "Pieces run on a shared GPU", "pieces", "", "int"),
           ("interference_mean_slowdown", "Mean interference slowdown", "x", "lower", "x"),
           ("interference_extra_gpu_hours", "GPU-hours lost to interference", "GPU-hours", "lower", "int")),
    *_rows("rightsize",
           ("rightsized_jobs", "Jobs right-sized at submit", "jobs", "", "int"),
           ("gpus_saved_at_submit", "GPUs saved at submit", "GPUs", "higher", "int"),
           ("sized_freed_gpu_hours", "GPU-hours freed by sizing", "GPU-hours", "higher", "int"),
           ("oom_restarts", "Out-of-memory restarts", "restarts", "lower", "int"),
           ("oom_lost_gpu_hours", "GPU-hours lost to out of memory", "GPU-hours", "lower", "int"),
           ("net_freed_gpu_hours", "Net GPU-hours freed", "GPU-hours", "higher", "int"),
           ("memory_sized_jobs", "Jobs given less memory at submit", "jobs", "", "int"),
           ("gib_saved_at_submit", "Memory saved at submit", "GiB", "higher", "int"),
           ("sized_freed_gib_hours", "GiB-hours freed by memory sizing", "GiB-hours", "higher", "int"),
           ("oom_memory_restarts", "Restarts for memory", "restarts", "lower", "int"),
           ("oom_lost_gib_hours", "GiB-hours lost to out of memory", "GiB-hours", "lower", "int")),
    *_rows("cluster",
           ("cluster_jobs", "Jobs started in the cluster", "jobs", "", "int"),
           ("cluster_gpu_hours", "GPU-hours held in the cluster", "GPU-hours", "", "int"),
           ("cluster_utilization", "Cluster utilisation", "0-1", "higher", "pct"),
           ("cluster_wait_mean_s", "Mean wait in the cluster", "s", "lower", "duration"),
           ("cluster_wait_p95_s", "p95 wait in the cluster", "s", "lower", "duration")),
    *_rows("stranded",
           ("stranded_gpu_hours", "Stranded GPU-hours", "GPU-hours", "lower", "int"),
           ("stranded_order_gpu_hours", "Stranded by the order", "GPU-hours", "lower", "int"),
           ("stranded_elsewhere_gpu_hours", "Stranded elsewhere", "GPU-hours", "lower", "int"),
           ("stranded_fragmented_gpu_hours", "Stranded in fragments", "GPU-hours", "lower", "int"),
           ("nodes_in_use_mean", "Nodes in use", "nodes", "", "one"),
           ("partial_node_idle_gpu_hours", "Idle on partly used nodes", "GPU-hours", "lower", "int")),
    *_rows("fairness",
           ("jain_index", "Jain's index", "0-1", "higher", "three"),
           ("deadline_hit_rate", "Deadlines met", "0-1", "higher", "pct"),
           ("inference_guarantee_violations", "Inference misses", "jobs", "lower", "int"),
           ("max_wait_sla_attainment", "Within max wait", "0-1", "higher", "pct"),
           ("max_wait_sla_misses", "Max-wait misses", "jobs", "lower", "int"),
           ("preemptions", "Preemptions", "evictions", "lower", "int"),
           ("lost_gpu_hours", "Lost GPU-hours", "GPU-hours", "lower", "one"),
           ("starved_jobs", "Starved jobs", "jobs", "lower", "int")),
    *_rows("matching",
           ("resource_matching", "Resource matching", "0-1", "higher", "pct"),
           ("gpu_type_matching", "On a fit GPU type", "0-1", "higher", "pct"),
           ("queue_matching", "In a fit queue", "0-1", "higher", "pct")),
    *_rows("world",
           ("cost_usd", "Spend", "USD", "lower", "usd"),
           ("cost_reserved_usd", "Reserved spend", "USD", "lower", "usd"),
           ("cost_on_demand_usd", "On-demand spend", "USD", "lower", "usd"),
           ("cost_spot_usd", "Spot spend", "USD", "lower", "usd"),
           ("cost_burst_usd", "Burst spend", "USD", "lower", "usd"),
           ("burst_idle_gpu_hours", "Idle rented GPU-hours", "GPU-hours", "lower", "int"),
           ("idle_cost_usd", "Idle reserved cost", "USD", "lower", "usd"),
           ("cost_usd_per_year", "Spend a year", "USD/year", "lower", "usd"),
           ("idle_cost_usd_per_year", "Idle cost a year", "USD/year", "lower", "usd"),
           ("effective_usd_per_gpu_hour", "Effective $/GPU-hour", "USD per GPU-hour", "lower", "two"),
           ("productive_usd_per_gpu_hour", "Productive $/GPU-hour", "USD per GPU-hour", "lower", "two"),
           ("energy_kwh", "Energy", "kWh", "lower", "int"),
           ("carbon_kg", "Carbon", "kgCO2e", "lower", "int"),
           ("carbon_kg_per_year", "Carbon a year", "kgCO2e/year", "lower", "int"),
           ("residency_violations", "Residency violations", "jobs", "lower", "int"),
           ("egress_usd", "Egress", "USD", "lower", "usd")),
    *_rows("data",
           ("data_moved_gb", "Data moved", "GB", "lower", "int"),
           ("data_transfers", "Data transfers", "transfers", "lower", "int"),
           ("replicas_created", "Replicas created", "replicas", "", "int"),
           ("replica_storage_usd", "Replica storage", "USD", "lower", "usd"),
           ("replica_egress_usd", "Egress of replica copies", "USD", "lower", "usd"),
           ("replica_egress_saved_usd", "Egress saved by replicas", "USD", "higher", "usd"),
           ("compression_cpu_hours", "Compression CPU-hours", "CPU-hours", "lower", "one"),
           ("data_wait_hours", "Hours held by data", "h", "lower", "one"),
           ("data_hidden_hours", "Transfer hours hidden in the queue", "h", "higher", "one")),
    *_rows("workflow",
           ("chains", "Chains", "chains", "", "int"),
           ("chains_completed", "Chains completed", "chains", "higher", "int"),
           ("chain_makespan_mean_s", "Mean chain makespan", "s", "lower", "duration"),
           ("chain_predecessor_wait_hours", "Hours waiting for predecessors", "h", "lower", "one"),
           ("chain_handover_hours", "Hand-over transfer hours", "h", "lower", "one"),
           ("chain_handover_gb", "Checkpoints handed over", "GB", "", "int")),
    *_rows("experiments",
           ("experiments_jobs", "Experiment jobs generated", "jobs", "", "int"),
           ("experiments_gap_gpu_hours", "Forecast idle gap", "GPU-hours", "", "int"),
           ("experiments_planned_gpu_hours", "Experiment GPU-hours planned", "GPU-hours", "", "int"),
           ("experiments_filled_gpu_hours", "Idle gap filled", "GPU-hours", "higher", "int"),
           ("experiments_fill_share", "Share of the idle gap filled", "0-1", "higher", "pct")),
    *_rows("roles",
           ("request_hours", "Inference request-hours", "h", "", "int"),
           ("edge_request_share", "Request-hours at the edge", "0-1", "", "pct"),
           ("usd_per_request_hour", "Cost per request-hour", "USD per request-hour", "lower", "two"),
           ("checkpoints_archived", "Checkpoints archived", "checkpoints", "", "int"),
           ("checkpoint_storage_usd", "Checkpoint storage", "USD", "lower", "usd"),
           ("checkpoint_egress_usd", "Checkpoint egress", "USD", "lower", "usd"),
           ("restore_wait_hours", "Hours held by restores", "h", "lower", "one"),
           ("datasets_archived", "Datasets archived", "datasets", "", "int"),
           ("dataset_storage_usd", "Dataset archive storage", "USD", "lower", "usd"),
           ("dataset_storage_saved_usd", "Hot storage saved by archiving", "USD", "higher", "usd"),
           ("dataset_egress_usd", "Dataset archive egress", "USD", "lower", "usd"),
           ("dataset_restores", "Dataset restores", "restores", "lower", "int"),
           ("dataset_restore_wait_hours", "Hours held by dataset restores", "h", "lower", "one")),
    *_rows("headroom",
           ("load_headroom", "Load headroom", "x", "higher", "x"),
           ("load_headroom_min", "Load headroom (lowest seed)", "x", "higher", "x"),
           ("load_headroom_max", "Load headroom (highest seed)", "x", "higher", "x"),
           ("load_headroom_ratio", "Load headroom over the baseline's", "x", "higher", "x"),
           ("load_headroom_ratio_min", "Load headroom ratio (lowest seed)", "x", "higher", "x"),
           ("load_headroom_ratio_max", "Load headroom ratio (highest seed)", "x", "higher", "x"),
           ("needed_gpus", "GPUs needed", "GPUs", "lower", "int"),
           ("compaction_gpus", "GPUs spare at the level", "GPUs", "higher", "int"),
           ("compaction_usd_per_year", "Spare GPUs a year", "USD/year", "higher", "usd"),
           ("saved_gpus", "GPUs saved against the baseline", "GPUs", "higher", "int"),
           ("saved_usd_per_year", "Saved a year", "USD/year", "higher", "usd")),
]}


# Money figures: key -> the one definition of each (W: the measured window, see engine.analysis.runs.cost).
MONEY: dict[str, str] = {
    "cost_usd": "all spend over the window W: reserved GPUs x the hours of W x their price (paid every hour, used "
                "or not) + on-demand and spot GPU-hours held by jobs x their price (less any off-peak discount) + "
                "GPU-hours billed for rented burst nodes x the pool's price + `egress_usd` (the input data moved to where "
                "jobs ran) + storage (`replica_storage_usd`, `checkpoint_storage_usd`, `dataset_storage_usd`); prices per region, GPU type and "
                "tier",
    "cost_reserved_usd": "installed reserved GPUs x the hours of W x their price: the reserved part of `cost_usd`",
    "cost_on_demand_usd": "on-demand GPU-hours held by jobs inside W x their price: the on-demand part of "
                          "`cost_usd`",
    "cost_spot_usd": "spot GPU-hours held by jobs inside W x their price: the spot part of `cost_usd`",
    "cost_burst_usd": "GPU-hours billed for rented cloud burst nodes inside W, from renting to return, used or "
                      "not, x the pool's price: the burst part of `cost_usd`",
    "idle_cost_usd": "reserved and rented burst GPU-hours inside W that no job held x their price (idle on-demand "
                     "and spot GPUs are not billed)",
    "cost_usd_per_year": "`cost_usd` x the days of a year (365 unless edited) / the days of W",
    "idle_cost_usd_per_year": "`idle_cost_usd` x the days of a year (365 unless edited) / the days of W",
    "effective_usd_per_gpu_hour": "`cost_usd` / GPU-hours held by jobs inside W",
    "productive_usd_per_gpu_hour": "`cost_usd` / GPU-hours of jobs that completed (not failed) inside W, less the "
                                   "work evictions lost",
    "egress_usd": "input data moved to where jobs ran: for each started job that ran outside the region holding "
                  "its data (`data_location`), `data_size_gb` x the egress price of the data's region "
                  "(`regions.egress_usd_per_gb`), for each checkpoint a chain handed over between regions, its "
                  "`checkpoint_gb` x the egress price of the region it left, `checkpoint_egress_usd` and "
                  "`dataset_egress_usd`: the egress part of `cost_usd`",
    "replica_storage_usd": "for each replica a run made: the dataset's `size_gb` x `[data] storage_usd_per_gb_month` x "
                           "the months (30 days) from the copy being complete to the end of W: part of `cost_usd`",
    "replica_egress_usd": "the GB sent to make the replicas x the egress price of each dataset's home region: part of "
                          "`egress_usd`",
    "replica_egress_saved_usd": "for each job that read a replica instead of moving its own data: its `data_size_gb` / "
                                "`compression_ratio` x the egress price of the dataset's home region",
    "relaxed_egress_usd": "egress dollars of the data-locality relaxations: `data_size_gb` x the egress price of "
                          "the data's region, for each job sent away from its data",
    "usd_per_request_hour": "the spend of inference jobs (their GPU-hours inside W x their prices, egress included) "
                            "/ `request_hours` (the hours inference jobs served inside W)",
    "checkpoint_storage_usd": "for each checkpoint of an evicted job kept in an archive region ([roles]): its GB "
                              "(`checkpoint_gb_per_gpu` x the job's GPUs) x `storage_usd_per_gb_month` x the months (30 "
                              "days) it was stored inside W, until restored: part of `cost_usd`",
    "checkpoint_egress_usd": "for each archived checkpoint: its GB x the egress price of the region it was written "
                             "from, when the archive is elsewhere, plus its GB x the archive's egress price, when it "
                             "was read back into another region: part of `egress_usd`",
    "dataset_storage_usd": "for each period a dataset spent in an archive region ([roles] datasets): its `size_gb` x "
                           "`storage_usd_per_gb_month` x the months (30 days) it was stored inside W, until restored: "
                           "part of `cost_usd`",
    "dataset_storage_saved_usd": "the same GB-months as `dataset_storage_usd` at `[data] storage_usd_per_gb_month` (hot "
                                 "storage), less `dataset_storage_usd`: what keeping the datasets hot would have cost "
                                 "more (hot storage in a dataset's home is not in `cost_usd`)",
    "dataset_egress_usd": "for each dataset archived in a region other than its home: its `size_gb` x the home's "
                          "egress price for the write, plus `size_gb` x the archive's for a restore, booked to the "
                          "job that asked for the restore (to no job while never asked for): part of `egress_usd`",
    "compaction_usd_per_year": "`compaction_gpus` x the price of one GPU ($30,000 unless edited) / its "
                               "amortisation years (3 unless edited)",
    "saved_usd_per_year": "`saved_gpus` x the price of one GPU ($30,000 unless edited) / its amortisation years "
                          "(3 unless edited)",
}


def methods(*money_keys: str) -> str:
    """Markdown bullets "- **Label** (`key`) = definition", one per money key, from MONEY."""
    return "\n".join(f"- **{label(key)}** (`{key}`) = {MONEY[key]}" for key in money_keys)


def keys(*groups: str) -> set[str]:
    """The keys of the given groups (all keys without any)."""
    return {k for k, kpi in CATALOGUE.items() if not groups or kpi.group in groups}


def label(key: str) -> str:
    return CATALOGUE[key].label


def higher_is_better(key: str) -> bool:
    return CATALOGUE[key].better == "higher"


_DECIMALS = {"int": 0, "one": 1, "two": 2, "three": 3}
_UNITLESS = {"0-1", "ratio", "x"}


def heading(key: str, unit: str | None = None) -> str:
    """The key's label with the unit a table shows in brackets: `unit` when given (a page that shows
    seconds as hours passes "h"; "" for none), else the catalogue's unit when the shown value does not carry it and
    the label does not already say it: "Throughput (jobs/h)", "Carbon (kgCO2e)", "Idle GPU-hours"."""
    kpi = CATALOGUE[key]
    if unit is not None:
        return f"{kpi.label} ({unit})" if unit else kpi.label
    carried = kpi.fmt in ("pct", "duration", "usd", "x") or kpi.unit in _UNITLESS or kpi.unit == "%" \
        or kpi.unit.startswith("USD") or kpi.unit.lower() in kpi.label.lower()
    return kpi.label if carried else f"{kpi.label} ({kpi.unit})"


def shown(key: str, value: float | None) -> str:
    """`value` of `key` as a table prints it, by the key's format: "61.1 %", "16.1 h", "$1,234", "x0.826",
    "12,345", "1.23"; a unit of "%" follows the number, dollars lead it; "n/a" when missing."""
    kpi = CATALOGUE[key]
    if value is None or not math.isfinite(value):
        return "n/a"
    if kpi.fmt == "pct":
        return f"{100 * value:.1f} %"
    if kpi.fmt == "duration":
        return hours(value)
    if kpi.fmt == "x":
        return f"x{value:.3f}"
    if kpi.fmt == "usd":
        return f"-${-value:,.0f}" if value < 0 else f"${value:,.0f}"
    text = f"{value:,.{_DECIMALS[kpi.fmt]}f}"
    return f"${text}" if kpi.unit.startswith("USD") else (f"{text} %" if kpi.unit == "%" else text)


def signed(key: str, delta: float | None) -> str:
    """A change of `key`'s value as a table prints it: "+1.2 h", "-$50", "+1.5 pts" for a share, "0" for
    none, "n/a" when unknown."""
    if delta is None or not math.isfinite(delta):
        return "n/a"
    text = shown(key, abs(delta)) if key in CATALOGUE else f"{abs(delta):,.4g}"
    if delta == 0 or (key in CATALOGUE and text == shown(key, 0.0)):   # no change, or none the format shows
        return "0"
    if key in CATALOGUE and CATALOGUE[key].fmt == "pct":
        text = text.replace(" %", " pts")
    return ("+" if delta > 0 else "-") + text


def shown_comparison(table: pd.DataFrame) -> pd.DataFrame:
    """An engine.analysis.runs.sim_series.kpi_comparison table (index: KPI keys) as a page prints it, in
    text: "what" (the key's label), then each scenario's value in its key's format (`shown`; keys outside
    the catalogue to 4 significant digits), each "<name> Δ" signed (`signed`) and each "<name> Δ%" as
    "+12.3 %" ("" where the baseline is 0)."""
    rows = {}
    for key, values in table.iterrows():
        known = key in CATALOGUE
        row = {"what": label(key) if known else key}
        for column, value in values.items():
            if str(column).endswith(" Δ%"):
                row[column] = "" if not math.isfinite(value) else "0 %" if abs(value) < 0.05 else f"{value:+.1f} %"
            elif str(column).endswith(" Δ"):
                row[column] = signed(key, value)
            else:
                row[column] = shown(key, value) if known else ("n/a" if not math.isfinite(value) else f"{value:,.4g}")
        rows[key] = row
    out = pd.DataFrame.from_dict(rows, orient="index", columns=["what", *table.columns])
    out.index.name = table.index.name
    return out

