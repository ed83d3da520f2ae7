"""Folders as parcels: what goes in comes out, links stay links, and nothing lands outside its folder."""

from __future__ import annotations

import io
import os
import tarfile
from pathlib import Path

import pytest

from orchestrator.matrix.parcel import ParcelError, pack, unpack


def tar_of(members: list[tuple[tarfile.TarInfo, bytes]]) -> bytes:
    """A gzipped tar made by hand, as a hostile sender could."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as tar:
        for info, data in members:
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data) if data else None)
    return buffer.getvalue()


def link(name: str, target: str) -> tarfile.TarInfo:
    """A symbolic link member."""
    info = tarfile.TarInfo(name)
    info.type, info.linkname = tarfile.SYMTYPE, target
    return info


def test_a_folder_comes_back_whole_with_its_modes_and_links_as_links(tmp_path: Path) -> None:
    """Files, empty folders, an executable bit and links (one to /etc/passwd) arrive as they were
    packed; the link is not followed, so the file it names does not travel."""
    source = tmp_path / "source"
    (source / "a" / "b").mkdir(parents=True)
    (source / "empty").mkdir()
    (source / "a" / "b" / "data.txt").write_text("hello")
    (source / "run.sh").write_text("#!/bin/sh\n")
    (source / "run.sh").chmod(0o755)
    (source / "passwd").symlink_to("/etc/passwd")
    (source / "inner").symlink_to("a/b/data.txt")
    dest = unpack(pack(source), tmp_path / "dest")
    assert (dest / "a" / "b" / "data.txt").read_text() == "hello"
    assert (dest / "empty").is_dir()
    assert os.access(dest / "run.sh", os.X_OK)
    assert os.readlink(dest / "passwd") == "/etc/passwd"
    assert (dest / "inner").read_text() == "hello"
    assert sorted(p.name for p in dest.iterdir()) == sorted(p.name for p in source.iterdir())


def test_skipped_paths_stay_behind(tmp_path: Path) -> None:
    """A skipped folder leaves with nothing under it; the rest travels."""
    source = tmp_path / "source"
    (source / "__pycache__").mkdir(parents=True)
    (source / "__pycache__" / "x.pyc").write_bytes(b"\0")
    (source / "kept.py").write_text("x = 1\n")
    dest = unpack(pack(source, skip=lambda path: "__pycache__" in path.split("/")), tmp_path / "dest")
    assert [p.name for p in dest.iterdir()] == ["kept.py"]


def test_a_parcel_is_unpacked_only_as_a_new_folder(tmp_path: Path) -> None:
    """An existing destination is refused, untouched."""
    source, dest = tmp_path / "source", tmp_path / "dest"
    source.mkdir()
    dest.mkdir()
    (dest / "mine").write_text("kept")
    with pytest.raises(ParcelError, match="exists already"):
        unpack(pack(source), dest)
    assert (dest / "mine").read_text() == "kept"


@pytest.mark.parametrize(
    "members",
    [
        [(tarfile.TarInfo("../escaped"), b"x")],
        [(link("out", "../.."), b""), (tarfile.TarInfo("out/escaped"), b"x")],
    ],
    ids=["dot-dot", "through-a-link"],
)
def test_nothing_lands_outside_the_folder(
    tmp_path: Path, members: list[tuple[tarfile.TarInfo, bytes]]
) -> None:
    """A member named outside, or written through a link that leads outside, is refused and the
    half-unpacked folder removed."""
    place = tmp_path / "deep" / "place"
    place.mkdir(parents=True)
    with pytest.raises(ParcelError, match="cannot unpack"):
        unpack(tar_of(members), place / "dest")
    assert list(place.iterdir()) == []
    assert not (tmp_path / "deep" / "escaped").exists()
    assert not (tmp_path / "escaped").exists()


def test_an_absolute_name_lands_inside_the_folder(tmp_path: Path) -> None:
    """``/x/y`` is unpacked as ``dest/x/y``, never at ``/x/y``."""
    target = tmp_path / "outside"
    dest = unpack(tar_of([(tarfile.TarInfo(str(target)), b"x")]), tmp_path / "dest")
    assert not target.exists()
    assert (dest / str(target).lstrip("/")).read_bytes() == b"x"
