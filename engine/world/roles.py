"""Region roles: what each region is for, the values of a scenario's [roles] table
(engine.scenario.roles parses and documents them; the router and engine.sim.processes.archive apply them).

A region may hold several roles. `primary`: a home of work (every region whose teams submit jobs is
one; listing them only names them in the run's roles table). `overflow`: when listed, the only
regions work routed away from its home may go to (besides edge regions for inference and disaster
recovery regions while home is down); unlisted, any region (what the routing policies do without
[roles]). `disaster_recovery`: when listed, where work goes while its home is down (an [[outage]]),
instead of the overflow regions. `edge`: small inference fleets near users: only inference (and a
region's own jobs) runs there, and the `latency-aware` router tries them first for inference.
`archive`: where checkpoints go when `checkpoints = "archive"`: an evicted job's checkpoint is
stored there at `storage_usd_per_gb_month` until the job's turn comes again, when it is restored
(`restore_delay_s`, then the transfer back at the [data] bandwidth) and, when the job resumes
outside the archive, moved out at the archive's egress price. Datasets (engine.world.datasets) go to the
archive too with `datasets` ("all", or "named": those of `dataset_names`; "none", the default, keeps
every dataset hot): each in the archive region nearest its home, billed at `storage_usd_per_gb_month`;
a job that needs one while it is archived waits for its restore to the dataset's home
(engine.sim.processes.dataset_archive). With `dataset_idle_days` 0 each chosen dataset is archived from
the run's start and stays hot once restored; with N > 0 each is hot from its first use and goes to the
archive once no job has used it for N days (a job running on it uses it). Writing a dataset into an
archive in another region pays its home's egress, restoring it the archive's.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from engine.core.bounds import bounded_field

ROLE_NAMES = ("primary", "overflow", "disaster_recovery", "edge", "archive")
CHECKPOINT_PLACES = ("local", "archive")
DATASET_CHOICES = ("none", "all", "named")
# S3 Glacier Flexible Retrieval, us-east-1 list price (aws.amazon.com/s3/pricing, 2024): $0.0036 per
# GB-month; its standard retrieval takes 3-5 hours (the low end as the default delay).
GLACIER_USD_PER_GB_MONTH = 0.0036
GLACIER_RESTORE_S = 3 * 3600.0
# Mixed-precision Adam keeps 16 bytes per parameter (ZeRO, Rajbhandari et al., SC'20): a 7B-parameter
# model trained on 8 GPUs checkpoints 112 GB, 14 GB per GPU.
CHECKPOINT_GB_PER_GPU = 14.0


def _regions(label: str, what: str):
    return field(default=(), metadata={"label": label, "help": what, "kind": "regions"})


def _bounded(default: float, unit: str, high: float, label: str, what: str):
    return bounded_field(default, unit, 0.0, high, what, label)


@dataclass(frozen=True)
class Roles:
    """The [roles] table's values (the module docstring explains each). Each field's metadata gives its
    label and help, and the numbers' unit and range (the parser checks them, the What-if builder draws them)."""

    primary: tuple[str, ...] = _regions("Primary", "homes of work (named in the roles table only)")
    overflow: tuple[str, ...] = _regions("Overflow", "the only regions moved work may go to (none listed: any)")
    disaster_recovery: tuple[str, ...] = _regions(
        "Disaster recovery", "where work goes while its home is down (none listed: the overflow regions)")
    edge: tuple[str, ...] = _regions("Edge", "inference only; latency-aware routing tries them first")
    archive: tuple[str, ...] = _regions("Archive", "where checkpoints of evicted jobs are stored")
    checkpoints: str = field(default="local", metadata={
        "label": "Checkpoints of evicted jobs", "help": "local: where the job ran, free and at once (as without "
                                                        "[roles]); archive: in the nearest archive region",
        "choices": CHECKPOINT_PLACES})
    storage_usd_per_gb_month: float = _bounded(GLACIER_USD_PER_GB_MONTH, "USD per GB-month", 1000.0,
                                               "Archive storage", "price of storing a GB in an archive region")
    restore_delay_s: float = _bounded(GLACIER_RESTORE_S, "s", 7 * 86_400.0, "Restore delay",
                                      "from asking for an archived checkpoint to its being readable")
    checkpoint_gb_per_gpu: float = _bounded(CHECKPOINT_GB_PER_GPU, "GB per GPU", 10_000.0, "Checkpoint size",
                                            "size of a checkpoint per GPU the job holds")
    datasets: str = field(default="none", metadata={
        "label": "Datasets in the archive", "help": "none: every dataset stays hot (as without [roles]); all: every "
                                                    "dataset; named: those listed under dataset names",
        "choices": DATASET_CHOICES})
    dataset_names: tuple[str, ...] = field(default=(), metadata={
        "label": "Dataset names", "help": "the datasets archived when datasets = named (a job's dataset column, "
                                          "else project@data_location)", "kind": "names"})
    dataset_idle_days: float = _bounded(0.0, "days", 3650.0, "Archive after idle days",
                                        "0: archived from the start until first used; N: archived once no job "
                                        "used it for N days")

    @property
    def archives(self) -> bool:
        """Checkpoints of evicted jobs go to an archive region."""
        return self.checkpoints == "archive" and bool(self.archive)

    @property
    def archives_datasets(self) -> bool:
        """Some datasets go to an archive region."""
        return self.datasets != "none" and bool(self.archive)

    def named(self) -> list[str]:
        """Every region a role names, sorted."""
        return sorted({r for role in ROLE_NAMES for r in getattr(self, role)})

    def of(self, region: str) -> list[str]:
        """The roles `region` holds, in ROLE_NAMES order."""
        return [role for role in ROLE_NAMES if region in getattr(self, role)]


class RoleMasks:
    """The roles as masks over the simulator's regions `names`, for the router: `edge` (bool per region), and
    `may_go` (where a job may be routed)."""

    def __init__(self, roles: Roles, names: list[str]) -> None:
        self.edge = np.isin(names, roles.edge)
        self.overflow = np.isin(names, roles.overflow) if roles.overflow else None
        self.recovery = np.isin(names, roles.disaster_recovery) if roles.disaster_recovery else None

    def may_go(self, home: int, inference: bool, home_down: bool) -> np.ndarray:
        """Per region: may a job of region `home` be routed there. Home, always; elsewhere, while home is down
        the disaster recovery regions (when listed), else the overflow regions (when listed), else any;
        never an edge region for work other than inference, and every edge region for inference."""
        away = self.recovery if home_down and self.recovery is not None else self.overflow
        out = np.ones(len(self.edge), bool) if away is None else away.copy()
        out = (out & ~self.edge) | self.edge if inference else out & ~self.edge
        out[home] = True
        return out
