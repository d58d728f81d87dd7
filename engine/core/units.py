"""What a dataset's fleet counts, in words: GPUs, or the processors of a CPU log.

Meridian schedules slots: a GPU fleet's GPUs, or an SWF log's processors (stored as GPU type "cpu", one
slot per processor). Every figure is the same arithmetic either way; only the words differ, so a page
or a table says "processor-hours" for a CPU log where it says "GPU-hours" for a GPU fleet. `of` picks
the unit from the fleet's GPU types, and `say` puts any text into it.
"""
from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

CPU_TYPES = frozenset({"cpu"})   # the GPU type of a CPU log's processors (engine.telemetry.importers.swf)
_GPU_WORD = re.compile(r"\bGPU(s?)\b")
_GPU_LOWER = re.compile(r"\bgpu(s?)\b")


@dataclass(frozen=True)
class ResourceUnit:
    """one: "GPU" or "processor"; many: its plural."""

    one: str
    many: str

    @property
    def is_gpu(self) -> bool:
        return self.one == "GPU"

    def count(self, n: float) -> str:
        """'1 GPU', '2.5 GPUs', '8 processors'."""
        return f"{n:g} {self.one if n == 1 else self.many}"

    def say(self, text: str) -> str:
        """`text` with its GPU words in this unit ("Idle GPU-hours" -> "Idle processor-hours", "4 GPUs" ->
        "4 processors", "gpus" -> "processors"); unchanged for GPUs. Column keys (gpu_hours) are left alone."""
        if self.is_gpu:
            return text
        text = _GPU_WORD.sub(lambda m: self.many if m.group(1) else self.one, text)
        return _GPU_LOWER.sub(lambda m: self.many if m.group(1) else self.one, text)


GPU = ResourceUnit("GPU", "GPUs")
PROCESSOR = ResourceUnit("processor", "processors")


def of(gpu_types: Iterable) -> ResourceUnit:
    """PROCESSOR when every (known) GPU type is a CPU log's processor, else GPU."""
    types = {str(t).lower() for t in gpu_types if t is not None and t == t}
    return PROCESSOR if types and types <= CPU_TYPES else GPU
