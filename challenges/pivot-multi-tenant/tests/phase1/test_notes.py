"""Phase 1: one user's notes in a SQLite file, through NoteStore."""

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
def store(db_path):
    """A store on a fresh file."""
    return NoteStore(db_path)


def test_add_returns_the_note(store):
    """A new note has a positive int id, the given fields, and tags cleaned and sorted."""
    note = plain(store.add("Groceries", "milk, eggs", [" Food", "errands ", "food", "  "]))
    assert note["id"] > 0
    assert note == {"id": note["id"], "title": "Groceries", "body": "milk, eggs", "tags": ["errands", "food"]}


def test_add_defaults(store):
    """body defaults to "" and tags to none."""
    note = plain(store.add("Bare"))
    assert (note["body"], note["tags"]) == ("", [])


def test_every_method_returns_notes_of_exactly_four_fields(store):
    """Whatever returns notes returns dicts of id, title, body and tags, and nothing more."""
    note = plain(store.add("Shape", "of a note", ["form"]))
    returned = [
        note,
        plain(store.get(note["id"])),
        plain(store.update(note["id"], body="still a note")),
        *plain(store.list()),
        *plain(store.search("shape")),
        *plain(store.tagged("form")),
    ]
    assert [sorted(n) for n in returned] == [["body", "id", "tags", "title"]] * 6


def test_ids_are_unique(store):
    """Every note gets an id of its own."""
    ids = [plain(store.add(f"note {n}"))["id"] for n in range(5)]
    assert len(set(ids)) == 5


def test_get_and_list(store):
    """get returns what add returned; list returns every note in id order."""
    first, second = plain(store.add("one")), plain(store.add("two", tags=["x"]))
    assert plain(store.get(second["id"])) == second
    assert plain(store.list()) == [first, second]


def test_get_missing_is_key_error(store):
    """A note that does not exist is a KeyError."""
    with pytest.raises(KeyError):
        store.get(4242)


def test_update_changes_only_given_fields(store):
    """update replaces the fields it is given and keeps the others."""
    note = plain(store.add("Draft", "first words", ["work"]))
    updated = plain(store.update(note["id"], body="second words"))
    assert updated == {**note, "body": "second words"}
    updated = plain(store.update(note["id"], title="Final", tags=["Done", "work"]))
    assert updated == {**note, "title": "Final", "body": "second words", "tags": ["done", "work"]}
    assert plain(store.get(note["id"])) == updated


def test_update_and_delete_missing_are_key_errors(store):
    """update and delete of a note that does not exist are KeyErrors."""
    with pytest.raises(KeyError):
        store.update(4242, title="ghost")
    with pytest.raises(KeyError):
        store.delete(4242)


def test_delete_removes_the_note(store):
    """A deleted note is gone; the others stay."""
    keep, gone = plain(store.add("keep")), plain(store.add("gone"))
    assert store.delete(gone["id"]) is None
    with pytest.raises(KeyError):
        store.get(gone["id"])
    assert plain(store.list()) == [keep]


@pytest.mark.parametrize(
    "arguments",
    [
        {"title": ""},
        {"title": "   "},
        {"title": 7},
        {"title": "ok", "body": 5},
        {"title": "ok", "tags": "not-a-list"},
        {"title": "ok", "tags": ["a,b"]},
        {"title": "ok", "tags": [1]},
    ],
)
def test_invalid_notes_are_value_errors(store, arguments):
    """Invalid fields raise ValueError and store nothing, on add and on update."""
    note = plain(store.add("valid", "body", ["t"]))
    with pytest.raises(ValueError):
        store.add(**arguments)
    with pytest.raises(ValueError):
        store.update(note["id"], **arguments)
    assert plain(store.list()) == [note]


def test_search_matches_title_or_body_ignoring_case(store):
    """search finds the text in titles or bodies, case-insensitively, in id order."""
    a = plain(store.add("Call the PLUMBER"))
    store.add("Groceries", "bread")
    c = plain(store.add("Weekend", "ask the plumber about the sink"))
    assert plain(store.search("plumber")) == [a, c]
    assert plain(store.search("100%")) == []


def test_tagged_filters_by_tag(store):
    """tagged returns the notes carrying the tag, however it is written."""
    a = plain(store.add("a", tags=["home"]))
    store.add("b", tags=["work"])
    c = plain(store.add("c", tags=["work", "home"]))
    assert plain(store.tagged(" Home ")) == [a, c]
    assert plain(store.tagged("garden")) == []


def test_two_stores_on_one_file_share_notes(db_path, tmp_path):
    """Stores on one file see each other's changes at once; another file shares nothing."""
    first, second = NoteStore(db_path), NoteStore(db_path)
    note = plain(first.add("shared"))
    assert plain(second.get(note["id"])) == note
    second.update(note["id"], body="seen")
    assert plain(first.get(note["id"]))["body"] == "seen"
    assert plain(NoteStore(str(tmp_path / "other.db")).list()) == []
