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
