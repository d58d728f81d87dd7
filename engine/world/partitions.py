"""GPU partitions: MIG instances, time-slicing and MPS, with interference between co-tenants and
process priority on a shared GPU.

A scenario turns it on with a `[partitions]` table (off without one: every job holds what it asks for,
and jobs sharing a GPU by milli-GPU run at their recorded speed):

    [partitions]
    mode = "mig"                     # "mig", "time-slicing" or "mps"
    inference_profile = "3g"         # the rule: a job of the class asking one GPU at most on one node
    development_profile = "1g"       #   gets this MIG profile ("1g" ... "7g"; "none": not partitioned)
    reconfigure_s = 300              # MIG: a GPU switching into or out of MIG mode is unusable so long
    idle_s = 3600                    # MIG: an empty MIG GPU returns to whole-GPU use after so long
    repack = "off"                   # MIG: "checkpoint" or "wait": reconfigure a GPU's layout for a profile
    replicas = 4                     # time-slicing, MPS: a GPU is shared by up to 4 of the rule's jobs
    time_slicing_interference = 0.15 # c per co-tenant: a job sharing its GPU with k others runs 1 + c k
    mps_interference = 0.08          #   times slower (its recorded time is that of a GPU of its own)
    inference_priority = true        # inference keeps its share: it counts only inference co-tenants
    gpu_models = { A100 = "A100-40GB" }   # optional: which MIG part a fleet's model name is

MIG (engine.world.mig: the published profiles and valid placements). A job of the rule needs a GPU
of a MIG part (A100, H100: a plain "A100" or "H100" is taken as the 80 GB part). It takes an instance
of its class's profile at the lowest valid free start on a GPU already in MIG mode (the GPU with the
most slices taken first, then the lowest node and GPU); with none, an idle whole GPU switches to MIG
mode: nothing runs on it for reconfigure_s (the drain cost of the reconfiguration), after which the
instances placed on it start their work. A GPU in MIG mode is held whole by the partition, unusable
by other jobs; once empty for idle_s it switches back (again reconfigure_s unusable). A job on an
instance holds compute/7 of a GPU (a 3g instance 3/7) and runs at the instance's speed: a job whose
measured GPU share (gpu_util_pct / 100 x the GPUs it asked for, at most one) is larger than the
instance's share (compute/7) is slowed by their ratio (its work needs share / (compute/7) times as
long on the instance); a job that fits its instance, or was never measured, runs for its recorded
time. Instances are isolated: no interference.

Repacking (`repack`, off by default). When the head of a queue asks for a profile that no GPU in MIG
mode has a free valid start for and no idle whole GPU can switch for, a GPU in MIG mode whose layout
could take it once some smaller instances are gone is reconfigured: the GPU (of the job's model, its
node with the job's CPU and memory) and valid start whose blocking instances hold the fewest compute
slices (engine.world.mig.drain_for; only instances of a smaller profile are drained, so repacks never
chase each other). With "checkpoint" the blocking instances' jobs checkpoint at once (no work lost)
and go back to their queue, and the new instance is ready reconfigure_s later (the layout change);
with "wait" the slices are reserved for the job (no other instance may take them) until the blocking
instances finish, and its instance is ready reconfigure_s after it is placed. The drain cost of a
repack is reconfigure_s of the new instance's slices held idle, plus under "wait" the reserved slices'
idle time while they waited (compute/7 GPU-hours per slice-hour). Under either mode a blocked head that
asks for whole GPUs may also get a GPU in MIG mode back whole: it takes no new instance, its node's idle
GPUs stay whole, and it switches back as soon as its instances end, without idle_s
(engine.sim.processes.mig_whole).

Time-slicing and MPS. A job of the rule asks for one replica, 1/replicas of a GPU (the Kubernetes
device plugin's time-slicing `replicas`), and milli-GPU placement packs it as any shared pod. Every job
on a GPU shared with others then runs 1 + c k times slower, k its co-tenants (with
inference_priority: an inference job counts only its inference co-tenants; development and the rest
count all of them, so they yield), re-paced exactly whenever a co-tenant arrives or leaves. Defaults:
c = 0.15 for time-slicing, 0.08 for MPS. They are assumptions to vary, not measurements: time-slicing
switches contexts between processes, while MPS runs the kernels of several processes at once on one
context (NVIDIA Multi-Process Service documentation, "Introduction": concurrent kernels, no context
switch between its clients), so its interference is the smaller; published measurements depend on the
models (Gilman and Walls, "Characterizing concurrency mechanisms for NVIDIA GPUs under deep learning
workloads", Performance Evaluation 151, 2021).
"""
from __future__ import annotations

from dataclasses import dataclass, field

from engine.core.vocabulary import class_label
from engine.world.mig import SIZES

MODES = ("mig", "time-slicing", "mps")
REPACKS = ("off", "checkpoint", "wait")
CLASSES = ("inference", "development")  # the classes the rule maps (their `*_profile` fields)
NONE = "none"


def _profile(default: str, workload_class: str):
    return field(default=default, metadata={"label": f"{class_label(workload_class)}: MIG profile",
                                            "choices": (*SIZES, NONE),
                                            "help": f"a {workload_class} job asking one GPU at most on one node "
                                                    "gets this instance ('none': not partitioned)"})


def _interference(default: float, mode: str):
    return field(default=default, metadata={"unit": "x per co-tenant", "min": 0.0, "max": 10.0,
                                            "label": f"{mode} interference",
                                            "help": "c: a job sharing its GPU with k others runs 1 + c k times slower"})


@dataclass(frozen=True)
class Partitions:
    """The [partitions] settings (see the module docstring); `enabled` False (the default object): no
    partitions and no interference. Field metadata (label, unit, range, choices) is the scenario
    builder's (dashboard.forms.partitions_section); engine.scenario.partitions reads the table."""

    enabled: bool = field(default=False, metadata={"label": "Partition GPUs",
                                                    "help": "MIG instances, or time-slicing or MPS with interference"})
    mode: str = field(default="mig", metadata={"label": "Sharing mode", "choices": MODES})
    inference_profile: str = _profile("3g", "inference")
    development_profile: str = _profile("1g", "development")
    repack: str = field(default="off", metadata={"label": "MIG repacking", "choices": REPACKS,
                                                  "help": "reconfigure a GPU's layout for a profile that fits no "
                                                          "free position: its blocking instances checkpoint and "
                                                          "requeue, or it waits for them"})
    reconfigure_s: float = field(default=300.0, metadata={"label": "MIG reconfiguration (drain) time",
                                                          "help": "a GPU switching MIG mode is unusable so long"})
    idle_s: float = field(default=3600.0, metadata={"label": "MIG idle time before going whole",
                                                    "help": "an empty MIG GPU returns to whole-GPU use after so long"})
    replicas: int = field(default=4, metadata={"unit": "jobs per GPU", "min": 2, "max": 48, "label": "Replicas per GPU",
                                               "help": "time-slicing and MPS: a rule's job asks 1/replicas of a GPU"})
    time_slicing_interference: float = _interference(0.15, "Time-slicing")
    mps_interference: float = _interference(0.08, "MPS")
    inference_priority: bool = field(default=True, metadata={"label": "Inference keeps its share",
                                                             "help": "on a shared GPU development and the rest yield"})
    gpu_models: tuple = field(default=(), metadata={"label": "MIG part of a fleet model"})  # (model, part) pairs

    def profile_of(self, workload_class: str) -> str:
        """The rule's profile size for a class ("none" for a class it does not map)."""
        return getattr(self, f"{workload_class}_profile") if workload_class in CLASSES else NONE

    @property
    def interference(self) -> float:
        """c of the mode (0 under MIG: instances are isolated)."""
        return {"mig": 0.0, "time-slicing": self.time_slicing_interference, "mps": self.mps_interference}[self.mode]

    def slowdown(self, co_tenants: int) -> float:
        """1 + c k for a job sharing its GPU with k co-tenants that count for it."""
        return 1.0 + self.interference * co_tenants
