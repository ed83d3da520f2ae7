"""Phase 2: the inventory is its own process, reached over HTTP; the shop's API is unchanged."""

import pytest

from shop import OutOfStock


def plain(value):
    """``value`` checked to be plain data all the way down (a subclass with its own ``==`` is not)."""
    if type(value) is dict:
        assert all(type(key) is str for key in value), value
        return {key: plain(item) for key, item in value.items()}
    if type(value) is list:
        return [plain(item) for item in value]
    assert type(value) in (str, int), f"not plain data: {type(value)!r}"
    return value


def test_products_live_in_the_service(make_shop, service, call):
    """A product added through the shop is the service's, read over HTTP."""
    shop = make_shop()
    assert plain(shop.add_product("mug", 1200, 5)) == {"sku": "mug", "price": 1200, "stock": 5}
    assert call("GET", f"{service.url}/products/mug") == (200, {"sku": "mug", "price": 1200, "stock": 5})
    assert plain(shop.product("mug")) == {"sku": "mug", "price": 1200, "stock": 5}


def test_orders_take_stock_in_the_service(make_shop, service, call):
    """An order takes the stock in the service and is recorded by the shop."""
    shop = make_shop()
    shop.add_product("mug", 1200, 5)
    order = plain(shop.order("mug", 2))
    assert order == {"id": order["id"], "sku": "mug", "qty": 2, "total": 2400}
    assert call("GET", f"{service.url}/products/mug")[1]["stock"] == 3
    assert plain(shop.orders()) == [order]


def test_two_shops_share_one_inventory(make_shop):
    """Two shops with order files of their own share the service's stock, never overselling."""
    north, south = make_shop("north.db"), make_shop("south.db")
    north.add_product("mug", 1200, 3)
    north.order("mug", 2)
    with pytest.raises(OutOfStock):
        south.order("mug", 2)
    south_order = plain(south.order("mug", 1))
    assert plain(north.product("mug"))["stock"] == 0
    assert plain(south.orders()) == [south_order]
    assert len(plain(north.orders())) == 1


def test_changes_over_http_reach_the_shop(make_shop, service, call):
    """What another client of the service does, the shop sees."""
    shop = make_shop()
    assert call("POST", f"{service.url}/products", {"sku": "tee", "price": 2500, "stock": 1})[0] == 201
    assert call("POST", f"{service.url}/products/tee/restock", {"qty": 4})[1]["stock"] == 5
    assert plain(shop.order("tee", 5))["total"] == 12500
    assert call("POST", f"{service.url}/products/tee/take", {"qty": 1})[0] == 409


def test_the_shops_errors_are_unchanged(make_shop):
    """KeyError, ValueError and OutOfStock as before, and nothing changes on any of them."""
    shop = make_shop()
    shop.add_product("mug", 1200, 1)
    with pytest.raises(ValueError):
        shop.add_product("mug", 1, 1)
    with pytest.raises(ValueError):
        shop.add_product("x", -1, 1)
    with pytest.raises(KeyError):
        shop.product("nothing")
    with pytest.raises(KeyError):
        shop.order("nothing", 1)
    with pytest.raises(ValueError):
        shop.order("mug", 0)
    with pytest.raises(KeyError):
        shop.restock("nothing", 1)
    with pytest.raises(OutOfStock):
        shop.order("mug", 2)
    assert plain(shop.product("mug")) == {"sku": "mug", "price": 1200, "stock": 1}
    assert plain(shop.orders()) == []


def test_the_http_api(service, call):
    """The service's own routes and statuses."""
    url = service.url
    assert call("POST", f"{url}/products", {"sku": "a b/c", "price": 5, "stock": 2}) == (
        201,
        {"sku": "a b/c", "price": 5, "stock": 2},
    )
    assert call("POST", f"{url}/products", {"sku": "a b/c", "price": 5, "stock": 2})[0] == 409
    assert call("POST", f"{url}/products", {"sku": "", "price": 5, "stock": 2})[0] == 422
    assert call("GET", f"{url}/products/a%20b%2Fc")[1]["stock"] == 2
    assert call("GET", f"{url}/products/none")[0] == 404
    assert call("POST", f"{url}/products/a%20b%2Fc/take", {"qty": 2}) == (200, {"sku": "a b/c", "price": 5, "stock": 0})
    assert call("POST", f"{url}/products/a%20b%2Fc/take", {"qty": 1})[0] == 409
    assert call("POST", f"{url}/products/a%20b%2Fc/restock", {"qty": 0})[0] == 422
    assert call("POST", f"{url}/products/none/restock", {"qty": 1})[0] == 404


def test_the_inventory_outlives_its_process(start_service, make_shop, service):
    """Stock is in the service's file: a restarted service continues from it."""
    shop = make_shop()
    shop.add_product("mug", 1200, 5)
    shop.order("mug", 1)
    service.stop()
    again = start_service()
    assert plain(make_shop(url=again.url).product("mug"))["stock"] == 4


def test_an_unreachable_service_is_a_connection_error(make_shop, service):
    """With the service gone, an order raises ConnectionError and records nothing."""
    shop = make_shop()
    shop.add_product("mug", 1200, 5)
    service.stop()
    with pytest.raises(ConnectionError):
        shop.order("mug", 1)
    assert plain(shop.orders()) == []
