"""Declared tools and data resolved on this machine, and what each brings (``system/toolsets.py``,
``system/closure.py``): real programs (``/bin/bash``, git), the real package database, no run."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from orchestrator.system.closure import debian_owner, mirror, shared_libraries, shebang
from orchestrator.system.toolsets import Needs, contents, resolve
from orchestrator.system.venvs import EnvironmentFailure

needs_dpkg = pytest.mark.skipif(
    shutil.which("dpkg-query") is None, reason="LOUD SKIP: no Debian package database on this machine"
)
needs_git = pytest.mark.skipif(shutil.which("git") is None, reason="LOUD SKIP: git is not installed here")
needs_npm = pytest.mark.skipif(shutil.which("npm") is None, reason="LOUD SKIP: npm is not installed here")
needs_go = pytest.mark.skipif(shutil.which("go") is None, reason="LOUD SKIP: go is not installed here")


def test_bash_loads_libc_through_the_dynamic_loader() -> None:
    """ldd's closure of a real program: the C library and the loader that maps it."""
    found = {path.name for path in shared_libraries([Path("/bin/bash")])}
    assert "libc.so.6" in found
    assert any(name.startswith("ld-linux") for name in found)


def test_a_script_names_its_interpreter_and_a_program_has_none(tmp_path: Path) -> None:
    """``#!/usr/bin/env node`` → its words; an ELF program or a plain file → nothing."""
    script = tmp_path / "tool"
    script.write_text("#!/usr/bin/env -S node --no-warnings\nconsole.log(1)\n")
    assert shebang(script) == ["/usr/bin/env", "-S", "node", "--no-warnings"]
    assert shebang(Path(os.path.realpath("/bin/bash"))) == []
    assert shebang(tmp_path / "absent") == []


def test_mirror_recreates_every_link_on_the_way(tmp_path: Path) -> None:
    """A file reached through links is copied at its real place, each link re-created as it is."""
    (tmp_path / "host" / "real").mkdir(parents=True)
    (tmp_path / "host" / "real" / "prog").write_text("#!/bin/sh\n")
    (tmp_path / "host" / "alias").symlink_to("real")
    (tmp_path / "host" / "real" / "name").symlink_to("prog")
    root = tmp_path / "root"
    mirror(tmp_path / "host" / "alias" / "name", root)
    copy = root / tmp_path.relative_to("/") / "host"
    assert os.readlink(copy / "alias") == "real"
    assert os.readlink(copy / "real" / "name") == "prog"
    assert (copy / "real" / "prog").read_text() == "#!/bin/sh\n"


@needs_dpkg
def test_dpkg_knows_bash_by_its_merged_usr_twin() -> None:
    """dpkg lists /bin/bash; the program found on PATH is /usr/bin/bash on a merged-/usr machine."""
    assert debian_owner(Path(os.path.realpath(shutil.which("bash") or "/bin/bash"))) == "bash"
    assert debian_owner(Path("/no/such/file")) is None


def test_bash_resolves_on_path_and_brings_its_libraries() -> None:
    """A name is found on PATH and keeps its place; the program is an ELF object whose libraries
    the builder adds; /bin/bash is brought too, where scripts' #! lines look."""
    toolset = resolve(Needs(("bash",)))
    (tool,) = toolset.tools
    assert tool.path == Path(shutil.which("bash") or "")
    assert str(tool.path.parent) in toolset.path
    brought = contents(toolset)
    assert tool.path in brought.files
    assert Path("/bin/bash") in brought.files
    assert Path(os.path.realpath(tool.path)) in brought.objects


def test_a_tool_the_machine_lacks_is_named() -> None:
    """An environment failure that names the tool and where it was looked for."""
    with pytest.raises(EnvironmentFailure, match=r"'no-such-tool-26' .* is not on this machine's PATH"):
        resolve(Needs(("bash", "no-such-tool-26")))
    with pytest.raises(EnvironmentFailure, match=r"'/opt/none/prog' .* is not an executable file"):
        resolve(Needs(("/opt/none/prog",)))


def test_python_is_always_the_grading_interpreter() -> None:
    """python, python3 and python3.X are never copied from the machine."""
    assert resolve(Needs(("python", "python3", "python3.11"))).tools == ()


@needs_git
@needs_dpkg
def test_git_brings_its_helpers_and_templates_not_its_docs() -> None:
    """git's package: the helpers it executes from /usr/lib/git-core and the templates of git init;
    not its manual, and not the package's other programs."""
    brought = contents(resolve(Needs(("git",))))
    files = {str(path) for path in brought.files}
    assert any(f.startswith("/usr/lib/git-core/git-") for f in files)
    assert any(f.startswith("/usr/share/git-core/templates/") for f in files)
    assert not any(f.startswith("/usr/share/doc/") for f in files)
    assert "/usr/bin/git-shell" not in files


@needs_go
@needs_dpkg
def test_go_brings_the_sources_of_its_standard_library() -> None:
    """Debian's go links its GOROOT's src to another package (golang-*-src): its kit brings that
    package's files, which every build reads, and a change of kit changes the root's identity."""
    toolset = resolve(Needs(("go",)))
    files = {str(path) for path in contents(toolset).files}
    assert any(f.startswith("/usr/share/go-") and f.endswith("/src/fmt/print.go") for f in files)
    (tool,) = toolset.tools
    assert tool.kit is not None
    bare = type(toolset)((type(tool)(tool.name, tool.path, tool.folders, None),), path=toolset.path)
    assert bare.identity() != toolset.identity()


@needs_npm
def test_npm_brings_node_through_its_shebang_and_its_home() -> None:
    """npm is a script (#!/usr/bin/env node): env and node come with it, and its installation,
    <home>/bin/npm-cli.js, brings the whole of <home> as it is."""
    toolset = resolve(Needs(("npm",)))
    (tool,) = toolset.tools
    home = Path(os.path.realpath(tool.path)).parent.parent
    assert tool.folders == (home,)
    brought = contents(toolset)
    assert Path("/usr/bin/env") in brought.files
    assert Path(shutil.which("node") or "") in brought.files
    assert [folder for folder, _, _ in brought.folders] == [home]


def test_zoneinfo_points_python_and_the_c_library_at_its_copy() -> None:
    """Data sets are named, found on the machine, and set the variables that find them."""
    toolset = resolve(Needs(data=("zoneinfo",)))
    assert toolset.env["TZDIR"] == toolset.env["PYTHONTZPATH"]
    assert Path(toolset.env["TZDIR"], "Europe", "Paris").is_file()
    assert (Path(toolset.env["TZDIR"]), (), False) in contents(toolset).folders


def test_a_shell_script_brings_the_program_beside_it_that_it_execs(tmp_path: Path) -> None:
    """A tool written as ``exec helper ...`` (as zcat is ``exec gzip -cd "$@"``) brings ``helper``
    from its own folder, and with it what ``helper`` needs; a program beside it that it does not
    run stays behind."""
    folder = tmp_path / "bin"
    folder.mkdir()
    unpack = folder / "unpack"
    unpack.write_text('#!/bin/sh\ncase $1 in --help) echo usage; exit;; esac\nexec helper -cd "$@"\n')
    helper = folder / "helper"
    helper.write_text("#!/bin/bash\ncat\n")
    unrelated = folder / "unrelated"
    unrelated.write_text("#!/bin/sh\n")
    for program in (unpack, helper, unrelated):
        program.chmod(0o755)
    brought = contents(resolve(Needs(("unpack",), ()), search=str(folder)))
    assert {unpack, helper, Path("/bin/sh"), Path("/bin/bash")} <= brought.files
    assert unrelated not in brought.files
