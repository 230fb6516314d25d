"""The services' refusals write rates as the pages' charts do (backend.model.rates for the
services, which may not import components; components.charts for the pages)."""

import numpy as np
import pytest

from backend.errors import BadInput
from backend.model.rates import rate_text
from backend.services import plan_preview
from components import charts


def test_the_services_write_rates_as_the_charts_do():
    values = np.concatenate(([0, 1, 950, 999.6e3, 2e12, 2e15, 12.5e9, -3e6],
                             np.geomspace(0.5, 1e16, 400)))
    for v in values.tolist():
        assert rate_text(v) == charts.rate_text(v), v


def test_refuse_past_network_is_a_service_both_pages_ask():
    plan_preview.refuse_past_network(12_500, None)  # 100 Gbit/s exactly
    with pytest.raises(BadInput, match=r"^throttle: 12,500.5 MB/s is 12.5 GB/s, more than"):
        plan_preview.refuse_past_network(12_500.5, None)
    plan_preview.refuse_past_network(40_000, 50e9)  # a cluster that says it has more
    with pytest.raises(BadInput, match=r"^network capacity: 60,000 MB/s is 60 GB/s, more "
                                       r"than a broker's network carries \(50 GB/s, this "
                                       r"cluster's network_capacity\)"):
        plan_preview.refuse_past_network(60_000, 50e9, "network capacity")
