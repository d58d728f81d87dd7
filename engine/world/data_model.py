"""How jobs' input data moves between regions: the values of a scenario's [data] table
(engine.scenario.data parses and documents them; engine.sim.cycle.data_moves applies them)."""
from __future__ import annotations

from dataclasses import dataclass, field

from engine.core.bounds import bounded_field


@dataclass(frozen=True)
class DataModel:
    """The [data] table's values (engine.scenario.data's docstring explains each); `moves` says whether any mechanism beyond
    the plain transfer delay is on, so the simulator tracks datasets, replicas and transfers. Each field's
    metadata gives its unit, range, help and label (the scenario builder draws its widgets from them)."""

    transfer_gbps: float = bounded_field(0.0, "Gbit/s", 0.0, 1e6, "bandwidth between regions (0: instant)",
                                         "Bandwidth between regions")
    replicate_after: int = bounded_field(0, "jobs", 0, 1e9, "replicate a dataset to a region after this many jobs "
                                                            "there needed it (0: never)", "Replicate a dataset after")
    storage_usd_per_gb_month: float = bounded_field(0.023, "USD per GB-month", 0.0, 1000.0, "a replica's storage price",
                                                    "Replica storage")
    prefetch: bool = field(default=False, metadata={"help": "start the transfer when the job is queued",
                                                    "label": "Prefetch while queued"})
    compression_ratio: float = bounded_field(1.0, "x", 1.0, 1000.0, "raw size / size moved", "Compression ratio")
    compress_s_per_gb: float = bounded_field(0.0, "CPU-s per GB", 0.0, 86_400.0,
                                             "CPU seconds to compress and decompress a GB of raw data",
                                             "Compression CPU")
    incremental: bool = field(default=False, metadata={"help": "repeat jobs move only the changed fraction",
                                                       "label": "Incremental sync"})
    changed_fraction: float = bounded_field(0.1, "fraction", 0.0, 1.0, "share of a dataset changed between two jobs",
                                            "Changed between two jobs")

    @property
    def moves(self) -> bool:
        return (self.replicate_after > 0 or self.prefetch or self.compression_ratio > 1.0
                or self.compress_s_per_gb > 0.0 or self.incremental)
