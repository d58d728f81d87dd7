"""Multi-Instance GPU (MIG): the published profiles of the A100 and H100 and where on a GPU each may sit.

Source: NVIDIA Multi-Instance GPU User Guide, "Supported MIG Profiles" (the A100 and H100 profile
tables: fraction of memory, fraction of SMs, number of instances available) and "Getting Started
with MIG", "List GPU Instance Profiles" (`nvidia-smi mig -lgipp`, which prints each profile's valid
placements as {start positions}:size in memory slices). A MIG GPU has 8 memory slices (0-7) and 7
compute slices; a GPU instance of profile `Ng.Mgb` takes N compute slices and `size` consecutive
memory slices starting at one of the profile's valid start positions, and instances may not overlap
(the driver refuses a placement that overlaps an occupied memory slice: NVML
nvmlDeviceGetGpuInstancePossiblePlacements). Profiles with media extensions (+me) occupy the same
slices as their plain profile and are left out. The A100 40 GB's placements, as the guide lists them:

    1g.5gb   {0,1,2,3,4,5,6}:1      up to 7 instances
    1g.10gb  {0,2,4,6}:2            up to 4
    2g.10gb  {0,2,4}:2              up to 3
    3g.20gb  {0,4}:4                up to 2
    4g.20gb  {0}:4                  1
    7g.40gb  {0}:8                  1

The A100 80 GB and the H100 80 GB have the same slices with twice the memory per slice (1g.10gb,
1g.20gb, 2g.20gb, 3g.40gb, 4g.40gb, 7g.80gb). A GPU's occupancy is an 8-bit mask of its memory
slices (bit s set: slice s taken).
"""
from __future__ import annotations

from dataclasses import dataclass

SLICES = 8  # memory slices of a MIG GPU
COMPUTE = 7  # compute slices of a MIG GPU
FULL = (1 << SLICES) - 1


@dataclass(frozen=True)
class Profile:
    """A GPU instance profile: its name, compute slices (of 7), memory slices taken (of 8) and the
    first memory slice of each valid placement."""

    name: str
    compute: int
    size: int
    starts: tuple[int, ...]

    def mask(self, start: int) -> int:
        """The memory slices an instance placed at `start` takes, as a bit mask."""
        return ((1 << self.size) - 1) << start


def _table(gb: int) -> tuple[Profile, ...]:
    """The A100/H100 profile table for a GPU of 5 x `gb` GB (gb 1: the 40 GB A100, 2: 80 GB parts)."""
    return (Profile(f"1g.{5 * gb}gb", 1, 1, (0, 1, 2, 3, 4, 5, 6)),
            Profile(f"1g.{10 * gb}gb", 1, 2, (0, 2, 4, 6)),
            Profile(f"2g.{10 * gb}gb", 2, 2, (0, 2, 4)),
            Profile(f"3g.{20 * gb}gb", 3, 4, (0, 4)),
            Profile(f"4g.{20 * gb}gb", 4, 4, (0,)),
            Profile(f"7g.{40 * gb}gb", 7, 8, (0,)))


PROFILES: dict[str, tuple[Profile, ...]] = {"A100-40GB": _table(1), "A100-80GB": _table(2), "H100-80GB": _table(2)}
# a fleet's plain model names taken as these parts unless a scenario says otherwise ([partitions] gpu_models)
ALIASES = {"A100": "A100-80GB", "H100": "H100-80GB"}
SIZES = ("1g", "2g", "3g", "4g", "7g")  # how a scenario names a profile: its compute slices


def part_of(model: str, aliases: dict[str, str] | None = None) -> str | None:
    """The MIG part (a PROFILES key) of a fleet's GPU model name, or None when it has no MIG."""
    if model in PROFILES:
        return model
    return {**ALIASES, **(aliases or {})}.get(model)


def profile(part: str, size: str) -> Profile:
    """The profile of `part` with `size` compute slices ("1g" ... "7g"): the one with the least memory."""
    compute = int(size[:-1])
    return min((p for p in PROFILES[part] if p.compute == compute), key=lambda p: p.size)


def first_start(occupied: int, prof: Profile) -> int:
    """The lowest valid start at which `prof` fits a GPU whose taken slices are `occupied`; -1 when none does."""
    for start in prof.starts:
        if not occupied & prof.mask(start):
            return start
    return -1


def drain_for(instances: list[tuple[object, Profile, int]], prof: Profile, movable) -> tuple[int, list] | None:
    """How to make room for `prof` on a GPU holding `instances` ((key, profile, start) each) by draining
    some of them: (start, the keys drained) at the valid start whose overlapping instances are all
    `movable(key, profile)` and hold the fewest compute slices (then the fewest instances, then the
    lowest start); None when no valid start can be cleared. A start already free needs no drain: (start, [])."""
    best, best_key = None, None
    for start in prof.starts:
        mask = prof.mask(start)
        blocking = [(key, p) for key, p, s in instances if p.mask(s) & mask]
        if not all(movable(key, p) for key, p in blocking):
            continue
        rank = (sum(p.compute for _, p in blocking), len(blocking), start)
        if best_key is None or rank < best_key:
            best, best_key = (start, [key for key, _ in blocking]), rank
    return best
