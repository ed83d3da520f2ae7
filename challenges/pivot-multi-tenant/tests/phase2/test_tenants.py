"""Phase 2: one file, many tenants, and no tenant ever reaches another's notes."""

import pytest

from notes import NoteStore


def plain(value):
    """``value`` checked to be plain data all the way down (a subclass with its own ``==`` is not)."""
    if type(value) is dict:
        assert all(type(key) is str for key in value), value
        return {key: plain(item) for key, item in value.items()}
    if type(value) is list:
        return [plain(item) for item in value]
    assert type(value) in (str, int, bool), f"not plain data: {type(value)!r}"
    return value


@pytest.fixture
def db_path(tmp_path):
    """A database file nobody has used yet."""
    return str(tmp_path / "notes.db")


@pytest.fixture
def acme(db_path):
    """The tenant acme's store."""
    return NoteStore(db_path, tenant="acme")


@pytest.fixture
def globex(db_path):
    """The tenant globex's store, on the same file."""
    return NoteStore(db_path, tenant="globex")


def test_the_default_tenant_is_the_single_user_store(db_path):
    """A store made without a tenant is the tenant "default", on the same notes."""
    single = NoteStore(db_path)
    assert plain(single.tenant) == "default"
    note = plain(single.add("old habits", tags=["x"]))
    default = NoteStore(db_path, tenant="default")
    assert plain(default.tenant) == "default"
    assert plain(default.list()) == [note]
    assert plain(default.get(note["id"])) == note


def test_notes_keep_their_shape(acme):
    """A tenant's notes have exactly the fields they had before tenants existed."""
    note = plain(acme.add("Roadmap", "Q3", ["plan"]))
    assert sorted(note) == ["body", "id", "tags", "title"]
    assert plain(acme.get(note["id"])) == note


def test_each_tenant_lists_only_its_own(db_path, acme, globex):
    """list shows a tenant its notes and nobody else's, the default tenant included."""
    a = plain(acme.add("acme plan"))
    g = plain(globex.add("globex plan"))
    d = plain(NoteStore(db_path).add("mine"))
    assert plain(acme.list()) == [a]
    assert plain(globex.list()) == [g]
    assert plain(NoteStore(db_path).list()) == [d]


def test_another_tenants_note_cannot_be_read(acme, globex):
    """get of another tenant's id is a KeyError, as for a note that does not exist."""
    secret = plain(globex.add("salaries", "confidential"))
    with pytest.raises(KeyError):
        acme.get(secret["id"])


def test_another_tenants_note_cannot_be_changed(acme, globex):
    """update of another tenant's id is a KeyError and changes nothing."""
    secret = plain(globex.add("salaries", "confidential", ["hr"]))
    with pytest.raises(KeyError):
        acme.update(secret["id"], title="mine now", tags=["stolen"])
    assert plain(globex.get(secret["id"])) == secret


def test_another_tenants_note_cannot_be_deleted(acme, globex):
    """delete of another tenant's id is a KeyError and removes nothing."""
    secret = plain(globex.add("salaries"))
    with pytest.raises(KeyError):
        acme.delete(secret["id"])
    assert plain(globex.list()) == [secret]


def test_search_is_scoped(acme, globex):
    """search finds only the searching tenant's notes."""
    a = plain(acme.add("merger talks", "with globex"))
    globex.add("Merger talks", "with acme")
    assert plain(acme.search("merger")) == [a]


def test_tagged_is_scoped(acme, globex):
    """tagged finds only the asking tenant's notes."""
    globex.add("budget", tags=["finance"])
    a = plain(acme.add("invoice", tags=["finance"]))
    assert plain(acme.tagged("finance")) == [a]


def test_ids_are_unique_across_tenants(acme, globex):
    """A note id names one note in the whole file, whichever tenant made it."""
    ids = [plain(store.add(f"note {n}"))["id"] for n in range(3) for store in (acme, globex)]
    assert len(set(ids)) == 6


def test_a_tenant_sees_its_notes_from_any_store(db_path, acme):
    """Two stores of one tenant on one file share its notes, changes included."""
    note = plain(acme.add("shared"))
    again = NoteStore(db_path, tenant="acme")
    again.update(note["id"], body="edited")
    assert plain(acme.get(note["id"]))["body"] == "edited"
    assert [n["id"] for n in plain(again.list())] == [note["id"]]


@pytest.mark.parametrize("tenant", ["", "Acme", "a b", "../acme", "x" * 41, 7, None])
def test_bad_tenant_names_are_value_errors(db_path, tenant):
    """A tenant name is 1-40 characters of a-z, 0-9 and -: anything else is a ValueError."""
    with pytest.raises(ValueError):
        NoteStore(db_path, tenant=tenant)
