"""The scenario builder's [rightsize] and [elastic_scaling] sections.

Their numbers and switches are drawn from the declarations of engine.scenario.rightsize.RightSize and
engine.world.elastic.ElasticScaling (each field's label, unit, range and help: dashboard.forms.declared);
the two text fields are a choice of workload classes and a choice of model. Each returns only what
differs from the defaults, checked by the scenario parser (an invalid section shows the parser's
message and adds nothing). Widget keys "{prefix}:rightsize:{field}" and "{prefix}:elastic:{field}".
"""
from __future__ import annotations

from dataclasses import fields

import streamlit as st

from dashboard.forms.declared import checked, declared_input, field_of, label_of
from engine.core.errors import ScenarioError
from engine.core.vocabulary import WORKLOAD_CLASSES
from engine.scenario.rightsize import ALL_CLASSES, RightSize, parse_rightsize
from engine.world.elastic import MODELS, NUMERIC, ElasticScaling, parse_elastic


def rightsize_section(prefix: str) -> dict:
    """The [rightsize] table: off unless ticked; then the quantile, margin, failure time, memory sizing and
    classes that differ from the defaults."""
    st.caption("Give each job the GPUs the GPU-need model predicts it will use (trained on the measured jobs "
               "before the window), rounded up to whole GPUs or nodes. A job given less than its measured peak "
               "runs out of memory part-way and restarts with its full request. With memory sizing, jobs are given the "
               "host memory the memory-need model predicts too (plus its margin), and one given less than its "
               "measured peak memory fails the same way.")
    defaults, entry = RightSize(), {}
    left, right = st.columns(2)
    numbers = [f for f in fields(RightSize) if f.name != "classes"]
    for i, spec in enumerate(numbers):
        with left if i < (len(numbers) + 1) // 2 else right:
            value = declared_input(spec, f"{prefix}:rightsize:{spec.name}", getattr(defaults, spec.name))
        if value != getattr(defaults, spec.name):
            entry[spec.name] = value
    known = [c for c in WORKLOAD_CLASSES if c != "unknown"]
    spec = field_of(RightSize, "classes")
    chosen = st.multiselect(label_of(spec), known, default=known, key=f"{prefix}:rightsize:classes",
                            help=spec.metadata.get("help"))
    if ",".join(chosen) != ALL_CLASSES:
        entry["classes"] = ",".join(chosen)
    if not entry.pop("enabled", False):
        return {}
    return checked({"enabled": True, **entry}, parse_rightsize, "[rightsize]")


def elastic_section(prefix: str) -> dict:
    """The [elastic_scaling] table: perfect scaling unless Amdahl or fitted is chosen; then each class's
    serial fraction that differs from the documented default."""
    st.caption("An elastic job admitted on fewer nodes (the controls admission policy) runs runtime x asked / "
               "given under perfect scaling, or by Amdahl's law with its class's serial fraction: the defaults "
               "below, or (fitted) fractions fitted from the dataset's jobs of one project run at several "
               "GPU counts, the defaults where too few (the README, on `[elastic_scaling]`).")
    spec, defaults = field_of(ElasticScaling, "model"), ElasticScaling()
    model = st.radio(label_of(spec), MODELS, horizontal=True, key=f"{prefix}:elastic:model",
                     help=spec.metadata.get("help"))
    entry = {}
    left, right = st.columns(2)
    for i, spec in enumerate(NUMERIC):
        with (left if i % 2 == 0 else right):
            value = declared_input(spec, f"{prefix}:elastic:{spec.name}", getattr(defaults, spec.name))
        if value != getattr(defaults, spec.name):
            entry[spec.name] = value
    if model == "perfect":
        return {}
    return checked({"model": model, **entry}, lambda table, what: parse_elastic(table, what, ScenarioError),
                   "[elastic_scaling]")
