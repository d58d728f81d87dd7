"""The network between a multi-node job's GPUs, and how much slower the job runs when its nodes are far apart.

A scenario turns it on with an `[interconnect]` table (off without one: every job runs for its
recorded time, wherever its nodes are):

    [interconnect]
    rack_gbps = 400                  # per GPU, between nodes under one leaf switch (a rack)
    cluster_gbps = 200               # per GPU, between racks of one cluster (through the spine)
    cross_cluster_gbps = 50          # per GPU, between clusters of a region (data-centre Ethernet)
    training_comm_fraction = 0.3     # share of a training job's run time spent communicating in one rack
    hpo_comm_fraction = 0.3          # likewise per workload class: hpo, batch, development, inference,
    batch_comm_fraction = 0.05       # unknown (the defaults below)

Levels, by the farthest pair of a job's nodes (the fleet's `rack` and `cluster` columns; a fleet
without racks is one rack, without clusters one cluster per region):

    0 node      one node: its GPUs talk over NVLink (H100 SXM: 900 GB/s = 7,200 Gbit/s per GPU,
                NVIDIA H100 Tensor Core GPU datasheet, 2023), 18x a 400 Gbit/s network port
    1 rack      nodes under one leaf switch
    2 cluster   racks of one cluster
    3 region    clusters of one region (a job never spans regions)

The model. Data-parallel jobs exchange their gradients by ring all-reduce, whose time for M bytes
over p GPUs is 2 (p - 1) / p * M / B, B the bandwidth of the ring's slowest link (Patarasuk and
Yuan, "Bandwidth optimal all-reduce algorithms for clusters of workstations", JPDC 69(2), 2009):
the communication time scales as 1 / B of the farthest level. A job that spends a share c of its
run time communicating when its nodes share a rack, placed at level L, runs

    slowdown = (1 - c) + c * rack_gbps / bandwidth(L)        (1 at the node and rack levels)

times its recorded time. The recorded time of a multi-node job is taken as that of the best
placement a multi-node job can have (one rack), so the model only ever slows a job down; a one-node
job (NVLink) runs for its recorded time. Defaults, per GPU:

- rack_gbps 400: NDR InfiniBand, one 400 Gbit/s ConnectX-7 port per GPU in a DGX H100 (NVIDIA DGX
  H100 datasheet: 8 single-port ConnectX-7, 400 Gb/s each), non-blocking under its leaf switch.
- cluster_gbps 200: the same fabric across racks through a spine oversubscribed 2:1 (an assumption:
  a common leaf-spine saving; a non-blocking fat tree such as NVIDIA's DGX SuperPOD reference
  architecture would be 400, and cross-rack placement would then cost nothing).
- cross_cluster_gbps 50: across clusters over the data-centre Ethernet, a 400 Gbit/s front-end link
  per 8-GPU node (DGX H100's front-end ConnectX-7 ports run at up to 400 Gb/s) shared by its GPUs.
- comm fractions: training and hpo 0.3, batch and development 0.05, unknown 0.05, inference 0. These
  are assumptions, not measurements: studies of production GPU clusters report that distributed
  training slows when its GPUs are spread (Jeon et al., "Analysis of large-scale multi-tenant GPU
  clusters for DNN training workloads", USENIX ATC'19: locality lowers GPU utilisation; Gu et al.,
  "Tiresias", NSDI'19: models with large tensors such as VGG are sensitive to consolidation, ResNets
  much less), while inference replicas do not talk to each other. With the defaults a training job
  runs 1.3x its time across racks (0.7 + 0.3 x 400 / 200) and 3.1x across clusters (0.7 + 0.3 x 8).
"""
from __future__ import annotations

from dataclasses import dataclass, field, fields

from engine.core.bounds import checked_numbers
from engine.core.vocabulary import WORKLOAD_CLASSES, class_label

LEVELS = ("node", "rack", "cluster", "region")
NODE, RACK, CLUSTER, REGION = range(4)
_GBPS = {"unit": "Gbit/s per GPU", "min": 0.001, "max": 1e6}


def _gbps(default: float, label: str):
    return field(default=default, metadata={**_GBPS, "label": label})


def _share(default: float, workload_class: str):
    return field(default=default, metadata={"label": f"{class_label(workload_class)}: share of time communicating",
                                            "help": "of its run time in one rack"})


@dataclass(frozen=True)
class Interconnect:
    """Per-GPU bandwidths of the levels (Gbit/s) and each workload class's communication share (see
    the module docstring); `enabled` False (the default object): no job is slowed. The fields' labels
    (metadata) are the scenario builder's (dashboard.forms.world_sections)."""

    enabled: bool = field(default=False, metadata={"label": "Model the interconnect",
                                                    "help": "multi-node jobs slow down when their nodes span "
                                                            "racks or clusters"})
    rack_gbps: float = _gbps(400.0, "Within a rack")
    cluster_gbps: float = _gbps(200.0, "Across racks of a cluster")
    cross_cluster_gbps: float = _gbps(50.0, "Across clusters")
    training_comm_fraction: float = _share(0.3, "training")
    hpo_comm_fraction: float = _share(0.3, "hpo")
    batch_comm_fraction: float = _share(0.05, "batch")
    development_comm_fraction: float = _share(0.05, "development")
    inference_comm_fraction: float = _share(0.0, "inference")
    unknown_comm_fraction: float = _share(0.05, "unknown")

    def comm_fraction(self, workload_class: str) -> float:
        """The share of a job's run time spent communicating in one rack (a class not in the
        vocabulary counts as unknown)."""
        name = workload_class if workload_class in WORKLOAD_CLASSES else "unknown"
        return float(getattr(self, f"{name}_comm_fraction"))

    def bandwidth_gbps(self, level: int) -> float:
        """Per-GPU bandwidth of the slowest link at `level` (node and rack: rack_gbps, the reference)."""
        return (self.rack_gbps, self.rack_gbps, self.cluster_gbps, self.cross_cluster_gbps)[level]

    def slowdown(self, level: int, comm_fraction: float) -> float:
        """Run time on a placement at `level` over the recorded run time: (1 - c) + c * rack / B(level)."""
        if level <= RACK:
            return 1.0
        return (1.0 - comm_fraction) + comm_fraction * self.rack_gbps / self.bandwidth_gbps(level)


NUMERIC = tuple(f for f in fields(Interconnect) if f.name != "enabled")


def parse_interconnect(spec: object, source: str, error=ValueError) -> Interconnect:
    """An `[interconnect]` table (see the module docstring) as an enabled Interconnect (`enabled =
    false` keeps it off); every number within its unit's range (engine.core.bounds), bandwidths not
    rising with the spread. `error` is the exception class to raise."""
    if not isinstance(spec, dict):
        raise error(f"{source}: [interconnect] must be a table, got {spec!r}")
    valid = {"enabled"} | {f.name for f in NUMERIC}
    extra = sorted(set(spec) - valid)
    if extra:
        raise error(f"{source}: unknown [interconnect] key {', '.join(extra)}; valid: {', '.join(sorted(valid))}")
    enabled = spec.get("enabled", True)
    if not isinstance(enabled, bool):
        raise error(f"{source}: [interconnect] enabled must be true or false, got {enabled!r}")
    model = Interconnect(enabled=enabled, **checked_numbers(spec, NUMERIC, "[interconnect]", source, error))
    if not model.rack_gbps >= model.cluster_gbps >= model.cross_cluster_gbps:
        raise error(f"{source}: [interconnect] bandwidths must not rise with the spread: rack_gbps "
                    f"{model.rack_gbps:g} >= cluster_gbps {model.cluster_gbps:g} >= cross_cluster_gbps "
                    f"{model.cross_cluster_gbps:g}")
    return model
