"""Phase 2: one interface over local files and an S3-compatible store, checked on both."""

import pytest

from storage import FileStore, S3Store, open_store

BAD_KEYS = ["", "/a", "a/", "a//b", "./a", "a/../b", "a\\b", 7]


def exactly_bytes(value):
    """``value`` checked to be real bytes (a subclass with its own ``==`` is not)."""
    assert type(value) is bytes, f"not bytes: {type(value)!r}"
    return value


def keys(value):
    """``value`` checked to be a real list of real str."""
    assert type(value) is list and all(type(key) is str for key in value), f"not a list of str: {value!r}"
    return value


@pytest.fixture(params=["file", "s3"])
def store(request, tmp_path):
    """A fresh store of each kind: the contract is the same."""
    if request.param == "file":
        return FileStore(str(tmp_path / "blobs"))
    return S3Store(request.getfixturevalue("bucket"), **request.getfixturevalue("credentials"))


def test_put_get_and_replace(store):
    """get returns exactly the bytes put; a second put replaces them."""
    store.put("reports/2026/q1.csv", b"a,b\n1,2\n")
    store.put("empty", b"")
    store.put("k", b"first")
    store.put("k", b"\x00\xffsecond")
    assert exactly_bytes(store.get("reports/2026/q1.csv")) == b"a,b\n1,2\n"
    assert exactly_bytes(store.get("empty")) == b""
    assert exactly_bytes(store.get("k")) == b"\x00\xffsecond"


def test_missing_keys_are_key_errors(store):
    """get and delete of a key with no blob raise KeyError; exists is False."""
    with pytest.raises(KeyError):
        store.get("nothing/here")
    with pytest.raises(KeyError):
        store.delete("nothing/here")
    assert store.exists("nothing/here") is False


def test_delete_and_exists(store):
    """exists follows put and delete; delete returns None."""
    store.put("a/b", b"1")
    assert store.exists("a/b") is True
    assert store.delete("a/b") is None
    assert store.exists("a/b") is False


def test_list_filters_by_prefix_and_sorts(store):
    """list returns every key starting with the prefix, at any depth, sorted."""
    for key in ["b.txt", "a/2.txt", "a/1.txt", "ab.txt", "a/deep/3.txt"]:
        store.put(key, b"x")
    assert keys(store.list()) == ["a/1.txt", "a/2.txt", "a/deep/3.txt", "ab.txt", "b.txt"]
    assert keys(store.list("a/")) == ["a/1.txt", "a/2.txt", "a/deep/3.txt"]
    assert keys(store.list("a")) == ["a/1.txt", "a/2.txt", "a/deep/3.txt", "ab.txt"]
    assert keys(store.list("zzz")) == []


@pytest.mark.parametrize("key", BAD_KEYS, ids=repr)
def test_bad_keys_are_value_errors(store, key):
    """Every method refuses a bad key with ValueError, and nothing is stored."""
    for call in (lambda: store.put(key, b"x"), lambda: store.get(key), lambda: store.exists(key), lambda: store.delete(key)):
        with pytest.raises(ValueError):
            call()
    assert keys(store.list()) == []


def test_data_must_be_bytes(store):
    """put of anything but bytes is a TypeError and stores nothing."""
    for data in ("text", None):
        with pytest.raises(TypeError):
            store.put("k", data)
    assert store.exists("k") is False


def test_blobs_are_objects_named_by_their_keys(bucket, credentials, s3):
    """The blob of a key is the bucket's object of that name: other services read and write it."""
    store = S3Store(bucket, **credentials)
    store.put("invoices/2026/07.pdf", b"%PDF-1.7")
    assert s3.get_object(Bucket=bucket, Key="invoices/2026/07.pdf")["Body"].read() == b"%PDF-1.7"
    s3.put_object(Bucket=bucket, Key="inbox/from-partner.txt", Body=b"hello")
    assert exactly_bytes(store.get("inbox/from-partner.txt")) == b"hello"
    assert keys(store.list()) == ["inbox/from-partner.txt", "invoices/2026/07.pdf"]


def test_two_stores_on_one_bucket_share_blobs(bucket, credentials):
    """Stores on one bucket see each other's blobs at once."""
    first, second = S3Store(bucket, **credentials), S3Store(bucket, **credentials)
    first.put("shared", b"1")
    assert exactly_bytes(second.get("shared")) == b"1"
    second.delete("shared")
    assert first.exists("shared") is False


def test_open_store_picks_the_kind_from_the_url(tmp_path, bucket, credentials, s3):
    """file:///folder opens a FileStore on the folder, s3://bucket an S3Store on the bucket."""
    local = open_store(f"file://{tmp_path / 'blobs'}")
    assert type(local) is FileStore
    local.put("x", b"local")
    assert (tmp_path / "blobs" / "x").read_bytes() == b"local"
    remote = open_store(f"s3://{bucket}", **credentials)
    assert type(remote) is S3Store
    remote.put("x", b"remote")
    assert s3.get_object(Bucket=bucket, Key="x")["Body"].read() == b"remote"


@pytest.mark.parametrize("url", ["ftp://host/x", "relative/folder", "s3://", "file://host/x"])
def test_open_store_refuses_other_urls(url):
    """Any other URL is a ValueError."""
    with pytest.raises(ValueError):
        open_store(url)
