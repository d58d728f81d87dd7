"""How an elastic job's speed depends on the GPUs it is given: perfect scaling, or Amdahl's law per class.

Admission may start an elastic gang job on fewer nodes than it asked for (engine.policies.admission,
"degraded"). Without an `[elastic_scaling]` table it then runs its runtime x asked / given: perfect
scaling, every GPU adding its full share. With

    [elastic_scaling]
    model = "amdahl"                   # "perfect" (the default), "amdahl" or "fitted"
    training_serial_fraction = 0.05    # per workload class: training, hpo, batch, development,
    batch_serial_fraction = 0.1        # inference, unknown (the defaults below)

a job of class c whose serial fraction is s, asked for a GPUs and given g, runs

    runtime x (s + (1 - s) / g) / (s + (1 - s) / a)

(Amdahl, "Validity of the single processor approach to achieving large scale computing
capabilities", AFIPS 1967: on n GPUs a job runs its one-GPU time x (s + (1 - s) / n)). With s = 0 it
is perfect scaling. A job that scales imperfectly loses less by running on fewer GPUs than perfect
scaling says: its extra GPUs were worth less. Training asked 16 GPUs and given 8 runs
(0.05 + 0.95 / 8) / (0.05 + 0.95 / 16) = 1.54x its runtime instead of 2x.

Defaults are assumptions, not measurements: training 0.05 and hpo 0.05 (data-parallel steps, the
all-reduce and input pipeline serial: a speed-up that levels off at 20x), batch 0.1, development 0.2
(interactive work scales poorly), inference 0 (independent replicas), unknown 0.1. The sample cannot
fit them: every job in it ran at one size only, and its telemetry records GPU utilisation and the
peak of GPUs busy, not throughput, so no job's speed at two GPU counts is known.

With `model = "fitted"` each class's serial fraction is fitted from the dataset's jobs of one project
and class that ran at different GPU counts (engine.predict.scaling_fit: least squares under Amdahl's
law, on the jobs that ended before the window's start, or all of them without one); a class with too
few such jobs keeps its `*_serial_fraction` (the Amdahl defaults above unless set). The run's world
then carries the fitted values in `fitted` (class, fraction) pairs; a world built without the dataset's
jobs (a queue replay) uses the configured fractions, as "amdahl" does.
"""
from __future__ import annotations

from dataclasses import dataclass, field, fields

from engine.core.bounds import checked_numbers
from engine.core.vocabulary import WORKLOAD_CLASSES, class_label

MODELS = ("perfect", "amdahl", "fitted")


def _serial(default: float, workload_class: str):
    return field(default=default, metadata={"unit": "fraction", "min": 0.0, "max": 1.0,
                                            "label": f"{class_label(workload_class)}: serial fraction",
                                            "help": "of its one-GPU run time that more GPUs do not shorten"})


@dataclass(frozen=True)
class ElasticScaling:
    """The scaling model of degraded elastic jobs and each class's serial fraction (see the module docstring)."""

    model: str = field(default="perfect", metadata={"label": "Scaling of elastic jobs",
                                                    "help": "perfect: runtime x asked / given; amdahl: a serial "
                                                            "fraction per class; fitted: fitted from jobs of one "
                                                            "project at different GPU counts, the fraction "
                                                            "below where too few"})
    training_serial_fraction: float = _serial(0.05, "training")
    hpo_serial_fraction: float = _serial(0.05, "hpo")
    batch_serial_fraction: float = _serial(0.1, "batch")
    development_serial_fraction: float = _serial(0.2, "development")
    inference_serial_fraction: float = _serial(0.0, "inference")
    unknown_serial_fraction: float = _serial(0.1, "unknown")
    fitted: tuple[tuple[str, float], ...] = field(default=(), metadata={
        "help": "model fitted: (class, fraction) fitted from the dataset's jobs (not a key of the table)"})

    @property
    def perfect(self) -> bool:
        return self.model == "perfect"

    def serial_fraction(self, workload_class: str) -> float:
        """The class's serial fraction (a class not in the vocabulary counts as unknown)."""
        name = workload_class if workload_class in WORKLOAD_CLASSES else "unknown"
        fitted = dict(self.fitted)
        return float(fitted[name]) if name in fitted else float(getattr(self, f"{name}_serial_fraction"))

    def runtime_scale(self, workload_class: str, asked_gpus: float, given_gpus: float) -> float:
        """Run time on `given_gpus` over run time on `asked_gpus` (asked / given when perfect)."""
        if self.perfect:
            return asked_gpus / given_gpus
        s = self.serial_fraction(workload_class)
        return (s + (1.0 - s) / given_gpus) / (s + (1.0 - s) / asked_gpus)


NUMERIC = tuple(f for f in fields(ElasticScaling) if f.name not in ("model", "fitted"))


def parse_elastic(spec: object, source: str, error=ValueError) -> ElasticScaling:
    """An `[elastic_scaling]` table (see the module docstring); every fraction in 0-1. `error` is the
    exception class to raise."""
    if not isinstance(spec, dict):
        raise error(f"{source}: [elastic_scaling] must be a table, got {spec!r}")
    valid = {"model"} | {f.name for f in NUMERIC}
    extra = sorted(set(spec) - valid)
    if extra:
        raise error(f"{source}: unknown [elastic_scaling] key {', '.join(extra)}; valid: {', '.join(sorted(valid))}")
    model = spec.get("model", "perfect")
    if model not in MODELS:
        raise error(f"{source}: [elastic_scaling] model {model!r} is unknown; choose from {', '.join(MODELS)}")
    return ElasticScaling(model=model, **checked_numbers(spec, NUMERIC, "[elastic_scaling]", source, error))
