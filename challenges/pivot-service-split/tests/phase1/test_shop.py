"""Phase 1: the shop in one process, through Shop."""

import pytest

from shop import OutOfStock, Shop


def plain(value):
    """``value`` checked to be plain data all the way down (a subclass with its own ``==`` is not)."""
    if type(value) is dict:
        assert all(type(key) is str for key in value), value
        return {key: plain(item) for key, item in value.items()}
    if type(value) is list:
        return [plain(item) for item in value]
    assert type(value) in (str, int), f"not plain data: {type(value)!r}"
    return value


@pytest.fixture
def db_path(tmp_path):
    """A database file nobody has used yet."""
    return str(tmp_path / "shop.db")


@pytest.fixture
def shop(db_path):
    """A shop on a fresh file, with one product."""
    shop = Shop(db_path)
    shop.add_product("mug", 1200, 5)
    return shop


def test_products(shop):
    """add_product returns the product; product reads it back."""
    assert plain(shop.add_product("tee", 2500, 0)) == {"sku": "tee", "price": 2500, "stock": 0}
    assert plain(shop.product("mug")) == {"sku": "mug", "price": 1200, "stock": 5}
    with pytest.raises(KeyError):
        shop.product("nothing")


@pytest.mark.parametrize(
    "sku, price, stock", [("", 1, 1), ("  ", 1, 1), (7, 1, 1), ("x", -1, 1), ("x", 1, -1), ("x", 1.5, 1), ("x", True, 1), ("mug", 1, 1)]
)
def test_bad_products_are_value_errors(shop, sku, price, stock):
    """Bad values, and a sku that exists, are ValueErrors; nothing changes."""
    with pytest.raises(ValueError):
        shop.add_product(sku, price, stock)
    assert plain(shop.product("mug")) == {"sku": "mug", "price": 1200, "stock": 5}


def test_order_takes_stock_and_is_recorded(shop):
    """An order takes from stock, costs qty * price, and is listed."""
    first = plain(shop.order("mug", 2))
    assert first == {"id": first["id"], "sku": "mug", "qty": 2, "total": 2400}
    second = plain(shop.order("mug", 3))
    assert plain(shop.product("mug"))["stock"] == 0
    assert plain(shop.orders()) == [first, second]
    assert first["id"] != second["id"]


def test_out_of_stock_changes_nothing(shop):
    """An order for more than is in stock raises OutOfStock; stock and orders stay."""
    with pytest.raises(OutOfStock):
        shop.order("mug", 6)
    assert plain(shop.product("mug"))["stock"] == 5
    assert plain(shop.orders()) == []


def test_bad_orders(shop):
    """An unknown sku is a KeyError; a quantity that is not a positive int a ValueError."""
    with pytest.raises(KeyError):
        shop.order("nothing", 1)
    for qty in (0, -1, 1.0, "1", True):
        with pytest.raises(ValueError):
            shop.order("mug", qty)
    assert plain(shop.orders()) == []


def test_restock(shop):
    """restock adds to the stock and returns the product."""
    assert plain(shop.restock("mug", 10)) == {"sku": "mug", "price": 1200, "stock": 15}
    with pytest.raises(KeyError):
        shop.restock("nothing", 1)
    with pytest.raises(ValueError):
        shop.restock("mug", 0)


def test_two_shops_on_one_file_share_everything(db_path, shop):
    """A second shop on the file sees the products, stock and orders."""
    other = Shop(db_path)
    order = plain(other.order("mug", 1))
    assert plain(shop.product("mug"))["stock"] == 4
    assert plain(shop.orders()) == [order]
