"""The ledger's views: fields computed at their first read, the same figures as the decay formula."""
import dataclasses
import math
from types import SimpleNamespace

import numpy as np
import pytest

from engine.core.views import ShareView
from engine.sim.state.ledger import Ledger, codes

H = 3_600.0


def _ledger(members=True):
    region = SimpleNamespace(capacity_gpus=8.0, state=SimpleNamespace(cpu_total=np.array([64_000.0]),
                                                                      memory_total=np.array([512 * 1024.0])))
    return Ledger(np.array(["a", "b", "a"], object), np.array(["u1", "u2", "u3"], object),
                  np.array(["p", "p", "q"], object), np.zeros(3, np.int64), 1, [region], {"b": 2.0}, {}, H, 7,
                  [4.0, 8.0, 2.0], [16.0, 32.0, 8.0], members)


def test_a_view_has_the_figures_of_its_moment():
    ledger = _ledger()
    ledger.hold(0, 0, 2.0, 0.0, +1)
    ledger.hold(1, 0, 1.0, 100.0, +1)
    ledger.hold(0, 0, 2.0, 1_000.0, -1)
    view = ledger.view(0, 4_600.0)
    used_a = 2.0 * H / math.log(2) * (1 - 2 ** (-1_000 / H)) * 2 ** (-3_600 / H)
    used_b = 1.0 * H / math.log(2) * (1 - 2 ** (-4_500 / H))
    np.testing.assert_allclose(view.usage_gpu_s, [used_a, used_b], rtol=1e-12)
    np.testing.assert_array_equal(view.served_gpu_s, [2_000.0, 4_500.0])
    np.testing.assert_array_equal(view.running_gpus, [0.0, 1.0])
    np.testing.assert_array_equal(view.running_cpus, [0.0, 8.0])
    np.testing.assert_array_equal(view.running_memory_gib, [0.0, 32.0])
    np.testing.assert_allclose(view.user_usage_gpu_s, [used_a, used_b, 0.0], rtol=1e-12)
    np.testing.assert_allclose(view.project_usage_gpu_s, [used_a + used_b, 0.0], rtol=1e-12)
    assert (view.teams, view.weight.tolist(), view.capacity_gpus, view.capacity_cpus, view.seed) == \
        (("a", "b"), [1.0, 2.0], 8.0, 64.0, 7)
    plain = dataclasses.replace(view)  # every field read: an ordinary view
    assert plain == view and isinstance(plain, ShareView)


def test_members_usage_stays_zero_when_no_order_reads_it():
    ledger = _ledger(members=False)
    ledger.hold(2, 0, 1.0, 0.0, +1)
    view = ledger.view(0, 50.0)
    np.testing.assert_array_equal(view.user_usage_gpu_s, [0.0, 0.0, 0.0])
    assert view.usage_gpu_s[0] > 0


def test_a_view_read_after_the_ledger_changed_raises():
    ledger = _ledger()
    view = ledger.view(0, 10.0)
    kept = view.usage_gpu_s  # read before the change: kept
    ledger.hold(1, 0, 1.0, 20.0, +1)
    assert view.usage_gpu_s is kept
    later = ledger.view(0, 30.0)
    ledger.hold(1, 0, 1.0, 40.0, -1)
    ledger.hold(0, 0, 4.0, 50.0, +1)
    moment = _ledger()  # the teams' usage is that of the view's moment, read after later changes too
    moment.hold(1, 0, 1.0, 20.0, +1)
    assert later.usage_gpu_s.tolist() == moment.view(0, 30.0).usage_gpu_s.tolist()
    with pytest.raises(RuntimeError, match="served_gpu_s read after the ledger changed"):
        view.served_gpu_s
    with pytest.raises(AttributeError):
        view.no_such_field


@pytest.mark.parametrize("values", [["b", "a", "b"], ["b", None, "", "a", math.nan], [None], [], ["", "a"]])
def test_codes_name_a_missing_value_the_empty_name(values):
    """A missing value (None, NaN) is coded as the name "", with the values named "" when there are any."""
    expected = ["" if v is None or v != v else v for v in values]
    names_sorted = sorted(set(expected))
    got, names = codes(np.array(values, object))
    assert names == tuple(names_sorted)
    assert got.dtype == np.int64 and got.tolist() == [names_sorted.index(v) for v in expected]
