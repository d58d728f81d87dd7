"""The one way a page draws a chart: `plot(st, figure, ...)` hands Streamlit a copy of the figure whose
data strings (trace values, names, text, category axes) are escaped for plotly's labels
(engine.core.escaping.plotly_figure), so a region, team or job called "<a href=...>" is drawn as
written. The figure itself is left as it is: cached figures are shared between sessions.
"""
from __future__ import annotations

import plotly.graph_objects as go

from engine.core.escaping import plotly_figure


def plot(container, figure: go.Figure, **kwargs):
    """`container.plotly_chart` (container: st, a column, a tab...) of the escaped copy of `figure`."""
    return container.plotly_chart(plotly_figure(figure.to_dict()), **kwargs)
