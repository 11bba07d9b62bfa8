import pytest

from reconciler import quantity


@pytest.mark.parametrize("text, exact, ceil", [
    ("4", 4, 4), ("2.5", 2.5, 3), ("2500m", 2.5, 3), ("0.7", 0.7, 1), ("3.7", 3.7, 4),
    ("500m", 0.5, 1), ("1m", 0.001, 1), ("16Gi", 16 * 2**30, 16 * 2**30), ("1k", 1000, 1000),
    ("1e3", 1000, 1000), (8, 8, 8), ("0", 0, 0),
])
def test_value_rounds_up_like_go(text, exact, ceil):
    assert float(quantity.parse(text)) == pytest.approx(exact)
    assert quantity.value(text) == ceil


@pytest.mark.parametrize("bad", ["", "abc", "1.2.3x", "--1", True])
def test_rejects_non_quantities(bad):
    with pytest.raises(quantity.QuantityError):
        quantity.parse(bad)
