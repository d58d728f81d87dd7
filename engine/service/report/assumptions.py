"""The editable assumptions behind the report's dollar and carbon figures, each stated in the report.

The cost and carbon ones are engine.analysis.runs.cost.CostAssumptions' (what `meridian compare` uses at
their defaults); the report adds what turns capacity into dollars: the purchase price of one GPU
and the years it is amortised over.
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from dataclasses import fields as dataclass_fields

from engine.analysis.runs.cost import DEFAULT_KW_OTHER, DEFAULT_KW_PER_GPU, DEFAULT_PUE, CostAssumptions
from engine.world.grid import DEFAULT_G_CO2E_PER_KWH


@dataclass(frozen=True)
class ReportAssumptions:
    """Every assumption the report's dollars and emissions rest on (units in `fields()`)."""

    annualisation_days: float = field(default=365.0, metadata={
        "label": "Days per year", "unit": "days", "help": "a figure measured over the window, per year: "
        "x days / window days"})
    gpu_capex_usd: float = field(default=30_000.0, metadata={
        "label": "Price of one GPU", "unit": "USD", "help": "purchase price of one GPU (with its share of the "
        "server); GPU clusters cost $25-40K per GPU"})
    amortisation_years: float = field(default=3.0, metadata={
        "label": "Amortisation", "unit": "years", "help": "years a GPU bought is written off over: turns GPUs "
        "not bought into dollars per year"})
    pue: float = field(default=DEFAULT_PUE, metadata={
        "label": "PUE", "unit": "facility kW / IT kW", "help": "data-centre power usage effectiveness"})
    kw_per_gpu: Mapping[str, float] = field(default_factory=lambda: dict(DEFAULT_KW_PER_GPU), metadata={
        "label": "Power per GPU", "unit": "kW by GPU type", "help": "board power drawn while a job holds the "
        "GPU, matched by the longest prefix of the GPU type"})
    kw_other: float = field(default=DEFAULT_KW_OTHER, metadata={
        "label": "Power per other GPU", "unit": "kW", "help": "GPU types kw_per_gpu does not name"})
    default_g_co2e_per_kwh: float = field(default=DEFAULT_G_CO2E_PER_KWH, metadata={
        "label": "Grid intensity without a profile", "unit": "gCO2e/kWh", "help": "regions the carbon "
        "table lacks"})
    price_overrides: Mapping[tuple[str, str, str], float] = field(default_factory=dict, metadata={
        "label": "Price overrides", "unit": "USD per GPU-hour", "help": "(region, gpu_type, tier) -> price; "
        "'*' matches anything"})

    def __post_init__(self) -> None:
        if not self.gpu_capex_usd >= 0:
            raise ValueError(f"gpu_capex_usd must be non-negative, got {self.gpu_capex_usd!r}")
        if not self.amortisation_years > 0:
            raise ValueError(f"amortisation_years must be positive, got {self.amortisation_years!r}")
        self.cost()   # CostAssumptions checks the rest

    def cost(self) -> CostAssumptions:
        """The cost and carbon assumptions world_kpis uses."""
        return CostAssumptions(pue=self.pue, kw_per_gpu=dict(self.kw_per_gpu), kw_other=self.kw_other,
                               annualisation_days=self.annualisation_days,
                               price_overrides=dict(self.price_overrides),
                               default_g_co2e_per_kwh=self.default_g_co2e_per_kwh)

    @classmethod
    def fields(cls) -> list[dict]:
        """One dict per assumption, for a UI to build inputs: name, label, unit, help, default,
        kind ("number" or "mapping")."""
        defaults = cls()
        return [{"name": f.name, "label": f.metadata["label"], "unit": f.metadata["unit"],
                 "help": f.metadata["help"], "default": getattr(defaults, f.name),
                 "kind": "mapping" if isinstance(getattr(defaults, f.name), Mapping) else "number"}
                for f in dataclass_fields(cls)]

    def rows(self) -> list[tuple[str, str, str]]:
        """(assumption, value, unit) rows as the report states them."""
        rows = [("Days per year (annualisation)", f"{self.annualisation_days:g}", "days"),
                ("Price of one GPU", f"${self.gpu_capex_usd:,.0f}", "USD"),
                ("Amortisation", f"{self.amortisation_years:g}", "years"),
                ("PUE", f"{self.pue:g}", "facility kW / IT kW"),
                *((f"Power per {name} GPU", f"{kw:g}", "kW") for name, kw in sorted(self.kw_per_gpu.items())),
                ("Power per other GPU", f"{self.kw_other:g}", "kW"),
                ("Grid intensity without a profile", f"{self.default_g_co2e_per_kwh:g}", "gCO2e/kWh"),
                *((f"Price {' / '.join(key)}", f"${usd:,.2f}", "USD per GPU-hour")
                  for key, usd in sorted(self.price_overrides.items()))]
        return rows
