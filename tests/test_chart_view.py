"""dashboard.charts.view: the escaped copy of a figure is made once per figure and unit (every session
drawing a cached figure shares it), is escaped and in the unit's words, and is forgotten with its figure."""
import gc

import plotly.graph_objects as go

from dashboard.charts import view
from engine.core.units import GPU, PROCESSOR

HOSTILE = "<b>x</b>"


class Recorder:
    """A stand-in container: what st.plotly_chart was handed."""

    def __init__(self):
        self.drawn = []

    def plotly_chart(self, figure, **kwargs):
        self.drawn.append(figure)


def _figure() -> go.Figure:
    return go.Figure(go.Bar(x=[HOSTILE, "b"], y=[1, 2], name="GPU-hours"), layout={"title": {"text": "Idle GPU-hours"}})


def test_the_escaped_copy_is_made_once_per_figure_and_shared():
    figure, first, second = _figure(), Recorder(), Recorder()
    view.plot(first, figure)
    view.plot(second, figure)
    assert first.drawn[0] is second.drawn[0]
    assert isinstance(first.drawn[0], go.Figure)
    assert first.drawn[0].data[0].x[0] != HOSTILE
    assert first.drawn[0].data[0].x[0] == view._escaped(_figure()).data[0].x[0]
    assert figure.data[0].x[0] == HOSTILE       # the cached figure itself is left as it is


def test_each_unit_has_its_own_copy_in_its_words():
    figure, gpu, cpu = _figure(), Recorder(), Recorder()
    view.plot(gpu, figure)
    token = view.UNIT.set(PROCESSOR)
    try:
        view.plot(cpu, figure)
    finally:
        view.UNIT.reset(token)
    assert gpu.drawn[0] is not cpu.drawn[0]
    assert cpu.drawn[0].layout.title.text == "Idle processor-hours"
    assert cpu.drawn[0].data[0].name == "processor-hours"
    assert gpu.drawn[0].layout.title.text == "Idle GPU-hours"
    assert view.UNIT.get() is GPU


def test_a_new_figure_is_escaped_afresh_and_a_dead_one_forgotten():
    gc.collect()
    before = len(view._SPECS)
    figure = _figure()
    recorder = Recorder()
    view.plot(recorder, figure)
    assert len(view._SPECS) == before + 1
    other = go.Figure(go.Bar(x=["c"], y=[3]))
    view.plot(recorder, other)
    assert list(recorder.drawn[1].data[0].x) == ["c"]
    del figure, other, recorder
    gc.collect()
    assert len(view._SPECS) == before
