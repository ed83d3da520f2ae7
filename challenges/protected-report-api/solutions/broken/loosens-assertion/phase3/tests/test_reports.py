"""What the report export returns."""

ALICE = {"Authorization": "Bearer alice-token"}
ERIN = {"Authorization": "Bearer erin-token"}


def ids(response):
    return [row["id"] for row in response.json()["reports"]]


def test_export_lists_own_reports_in_id_order(client):
    r = client.get("/reports/export", headers=ALICE)
    assert ids(r) == [1, 2, 4, 6]


def test_export_names_the_tenant(client):
    r = client.get("/reports/export", headers=ALICE)
    assert r.json()["tenant"] == "acme"


def test_report_fields(client):
    r = client.get("/reports/export", headers=ALICE)
    assert r.json()["reports"][0] == {
        "id": 1,
        "date": "2024-03-05",
        "title": "March usage",
        "amount_cents": 120000,
    }


def test_from_is_inclusive(client):
    r = client.get("/reports/export", params={"from": "2024-02-20"}, headers=ALICE)
    assert ids(r) == [1, 4]


def test_to_is_inclusive(client):
    r = client.get("/reports/export", params={"to": "2024-01-15"}, headers=ALICE)
    assert ids(r) == [2, 6]


def test_from_and_to_together(client):
    r = client.get("/reports/export", params={"from": "2024-01-16", "to": "2024-03-01"}, headers=ALICE)
    assert ids(r) == [4]


def test_tenant_without_reports_gets_empty_list(client):
    r = client.get("/reports/export", headers=ERIN)
    assert r.json()["reports"] == []


def test_sort_by_date_is_ascending_by_default(client):
    r = client.get("/reports/export", params={"sort": "date"}, headers=ALICE)
    assert ids(r) == [2, 6, 4, 1]


def test_sort_by_date_descending_keeps_same_day_in_id_order(client):
    r = client.get("/reports/export", params={"sort": "date", "order": "desc"}, headers=ALICE)
    assert ids(r) == [1, 4, 2, 6]


def test_sort_applies_within_date_range(client):
    r = client.get("/reports/export", params={"sort": "date", "order": "desc", "to": "2024-02-28"}, headers=ALICE)
    assert ids(r) == [4, 2, 6]


def test_unknown_sort_is_400(client):
    r = client.get("/reports/export", params={"sort": "title"}, headers=ALICE)
    assert r.status_code == 400


def test_unknown_order_is_400(client):
    r = client.get("/reports/export", params={"sort": "date", "order": "up"}, headers=ALICE)
    assert r.status_code == 400


def test_malformed_from_is_400(client):
    r = client.get("/reports/export", params={"from": "2024-13-01"}, headers=ALICE)
    assert r.status_code == 400


def test_malformed_from_error_names_the_parameter(client):
    r = client.get("/reports/export", params={"from": "2024-13-01"}, headers=ALICE)
    assert r.json()["parameter"] == "from"


def test_impossible_to_date_is_400(client):
    r = client.get("/reports/export", params={"to": "2024-02-30"}, headers=ALICE)
    assert r.json() == {
        "error": "invalid_date",
        "parameter": "to",
        "message": "to must be a date in YYYY-MM-DD form, not '2024-02-30'",
    }


def test_date_in_other_format_is_400(client):
    r = client.get("/reports/export", params={"from": "05/03/2024"}, headers=ALICE)
    assert r.status_code == 400


def test_page_size_limits_the_page(client):
    r = client.get("/reports/export", params={"page_size": "3"}, headers=ALICE)
    assert ids(r) == [1, 2, 4]


def test_second_page(client):
    r = client.get("/reports/export", params={"page_size": "3", "page": "2"}, headers=ALICE)
    assert ids(r) == [6]


def test_page_past_the_end_is_empty(client):
    r = client.get("/reports/export", params={"page_size": "3", "page": "3"}, headers=ALICE)
    assert ids(r) == []


def test_page_metadata(client):
    r = client.get("/reports/export", params={"page_size": "3", "page": "2"}, headers=ALICE)
    assert {key: r.json()[key] for key in ("page", "page_size", "total")} == {"page": 2, "page_size": 3, "total": 4}


def test_default_page_size_is_50(client):
    r = client.get("/reports/export", headers=ALICE)
    assert r.json()["page_size"] == 50


def test_pages_are_cut_from_the_sorted_list(client):
    r = client.get("/reports/export", params={"sort": "date", "page_size": "2", "page": "2"}, headers=ALICE)
    assert ids(r) == [4, 1]


def test_page_size_over_100_is_400(client):
    r = client.get("/reports/export", params={"page_size": "101"}, headers=ALICE)
    assert r.json()["parameter"] == "page_size"


def test_page_size_zero_is_400(client):
    r = client.get("/reports/export", params={"page_size": "0"}, headers=ALICE)
    assert r.status_code == 400


def test_page_that_is_not_a_number_is_400(client):
    r = client.get("/reports/export", params={"page": "first"}, headers=ALICE)
    assert r.json()["parameter"] == "page"
