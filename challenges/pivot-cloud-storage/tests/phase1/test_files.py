"""Phase 1: blobs as files under a root folder, through FileStore."""

import pytest

from storage import FileStore

BAD_KEYS = ["", "/a", "a/", "a//b", "./a", "a/../b", "..", "a\\b", "a\0b", "x" * 1025, 7, None]


def exactly_bytes(value):
    """``value`` checked to be real bytes (a subclass with its own ``==`` is not)."""
    assert type(value) is bytes, f"not bytes: {type(value)!r}"
    return value


def keys(value):
    """``value`` checked to be a real list of real str."""
    assert type(value) is list and all(type(key) is str for key in value), f"not a list of str: {value!r}"
    return value


@pytest.fixture
def root(tmp_path):
    """A folder nobody has used yet (not created: the store makes it)."""
    return tmp_path / "blobs"


@pytest.fixture
def store(root):
    """A store on a fresh folder."""
    return FileStore(str(root))


def test_put_then_get(store):
    """get returns exactly the bytes put, for flat and nested keys and empty blobs."""
    store.put("readme.txt", b"hello")
    store.put("reports/2026/q1.csv", b"a,b\n1,2\n")
    store.put("empty", b"")
    assert exactly_bytes(store.get("readme.txt")) == b"hello"
    assert exactly_bytes(store.get("reports/2026/q1.csv")) == b"a,b\n1,2\n"
    assert exactly_bytes(store.get("empty")) == b""


def test_put_replaces(store):
    """A second put under a key replaces the blob."""
    store.put("k", b"first")
    store.put("k", b"second")
    assert exactly_bytes(store.get("k")) == b"second"


def test_blobs_are_files_under_the_root(store, root):
    """The blob of a/b.txt is the file root/a/b.txt, which other tools read."""
    store.put("a/b.txt", b"\x00\xffbinary")
    assert (root / "a" / "b.txt").read_bytes() == b"\x00\xffbinary"


def test_files_put_by_others_are_blobs(store, root):
    """A file another tool writes under the root is a blob of its path."""
    (root / "inbox").mkdir()
    (root / "inbox" / "note.txt").write_bytes(b"dropped in")
    assert exactly_bytes(store.get("inbox/note.txt")) == b"dropped in"
    assert store.exists("inbox/note.txt") is True


def test_missing_keys_are_key_errors(store):
    """get and delete of a key with no blob raise KeyError; exists is False."""
    with pytest.raises(KeyError):
        store.get("nothing/here")
    with pytest.raises(KeyError):
        store.delete("nothing/here")
    assert store.exists("nothing/here") is False


def test_delete_removes_the_blob(store):
    """A deleted blob is gone; the others stay."""
    store.put("keep", b"1")
    store.put("gone/soon", b"2")
    assert store.delete("gone/soon") is None
    assert store.exists("gone/soon") is False
    assert keys(store.list()) == ["keep"]


def test_list_filters_by_prefix_and_sorts(store):
    """list returns every key starting with the prefix, sorted; folders are not keys."""
    for key in ["b.txt", "a/2.txt", "a/1.txt", "ab.txt", "a/deep/3.txt"]:
        store.put(key, b"x")
    assert keys(store.list()) == ["a/1.txt", "a/2.txt", "a/deep/3.txt", "ab.txt", "b.txt"]
    assert keys(store.list("a/")) == ["a/1.txt", "a/2.txt", "a/deep/3.txt"]
    assert keys(store.list("a")) == ["a/1.txt", "a/2.txt", "a/deep/3.txt", "ab.txt"]
    assert keys(store.list("zzz")) == []


@pytest.mark.parametrize("key", BAD_KEYS, ids=repr)
def test_bad_keys_are_value_errors(store, root, key):
    """Every method refuses a bad key with ValueError, and nothing is written."""
    for call in (lambda: store.put(key, b"x"), lambda: store.get(key), lambda: store.exists(key), lambda: store.delete(key)):
        with pytest.raises(ValueError):
            call()
    assert [p for p in root.rglob("*")] == []


def test_data_must_be_bytes(store):
    """put of anything but bytes is a TypeError and stores nothing."""
    for data in ("text", bytearray(b"x"), None, 5):
        with pytest.raises(TypeError):
            store.put("k", data)
    assert store.exists("k") is False


def test_two_stores_on_one_root_share_blobs(root, tmp_path):
    """Stores on one folder see each other's blobs at once; another folder shares nothing."""
    first, second = FileStore(str(root)), FileStore(str(root))
    first.put("shared", b"1")
    assert exactly_bytes(second.get("shared")) == b"1"
    second.delete("shared")
    assert first.exists("shared") is False
    assert keys(FileStore(str(tmp_path / "other")).list()) == []
