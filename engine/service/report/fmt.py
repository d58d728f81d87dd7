"""How the report prints numbers: one function per kind, so tests can look for the same strings."""
from __future__ import annotations


def usd(value: float) -> str:
    """Dollars: $1.23M, $456K, $789 (sign in front: -$1.2M)."""
    sign, v = ("-" if value < 0 else ""), abs(float(value))
    if v >= 1e6:
        return f"{sign}${v / 1e6:,.2f}M"
    if v >= 1e4:
        return f"{sign}${v / 1e3:,.0f}K"
    return f"{sign}${v:,.0f}"


def signed_usd(value: float) -> str:
    """A change in dollars: +$1.23M or -$456K."""
    return ("+" if value >= 0 else "") + usd(value)


def pct(share: float) -> str:
    """A share 0-1 as a percentage with one decimal: 61.1%."""
    return f"{100.0 * float(share):.1f}%"



def tonnes(kg: float) -> str:
    """kgCO2e as tonnes: 1,234.5 t."""
    return f"{float(kg) / 1000.0:,.1f} t"


def gpus(count: float) -> str:
    """A GPU count to one decimal: 12.3 GPUs."""
    return f"{float(count):,.1f} GPUs"

