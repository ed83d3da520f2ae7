"""bubblewrap's command line (``system/bubblewrap.py``), run for real: what it asks for is what a
process inside gets; and a machine without bubblewrap is told so."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path, PurePosixPath

import pytest

from orchestrator.system.bubblewrap import (
    DROP_TO_USER,
    SandboxUser,
    bind,
    bubblewrap_problem,
    bwrap,
    capabilities,
    cover,
    namespaces,
    read_only_system,
    setpriv,
    tmpfs,
)

PROBE = SandboxUser("probe", 65532, 65532)


def test_a_machine_without_bubblewrap_is_told_what_to_install(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """No ``bwrap`` on PATH: the problem names the package, and nothing is started."""
    monkeypatch.setenv("PATH", str(tmp_path))
    assert bubblewrap_problem(PROBE) == "bubblewrap is not installed (Debian package bubblewrap)"


@pytest.mark.slow
def test_the_command_line_gives_exactly_the_view_and_rights_it_names(tmp_path: Path) -> None:
    """Read-only system, a covered folder, a writable bind, a /tmp of a size, no network, no
    capability, and (as root) the user setpriv names: each checked from inside."""
    if shutil.which("bwrap") is None or bubblewrap_problem(PROBE):
        pytest.skip(f"LOUD SKIP: bubblewrap cannot run here: {bubblewrap_problem(PROBE)}")
    root = os.geteuid() == 0
    data = tmp_path / "data"
    data.mkdir()
    data.chmod(0o777)  # writable by the user setpriv switches to, as root
    mounts = [*read_only_system(("/usr", "/etc")), *cover([Path("/usr/share")]), "--dev", "/dev"]
    mounts += [
        "--proc",
        "/proc",
        *tmpfs("/tmp", 1024 * 1024),
        *bind(data, PurePosixPath("/x/data"), writable=True),
    ]
    script = (
        "touch /usr/nope 2>/dev/null && echo usr-writable; "
        "ls -A /usr/share | wc -l; "
        "echo hi > /x/data/out && echo data-writable; "
        "df -k /tmp | tail -1 | awk '{print $2}'; "
        "grep -c : /proc/net/dev; "
        "grep CapEff /proc/self/status; "
        "grep CapBnd /proc/self/status; "
        "id -u; id -g; id -G"
    )
    kept = DROP_TO_USER if root else capabilities()
    argv = [
        *bwrap(namespaces(network=False, user=not root), kept, mounts),
        "--",
        *setpriv(PROBE if root else None),
    ]
    done = subprocess.run(
        [*argv, "sh", "-c", script], capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 0, done.stderr
    lines = done.stdout.split()
    assert "usr-writable" not in lines
    assert lines[:2] == ["0", "data-writable"]  # /usr/share covered, the bind writable
    assert lines[2] == "1024"  # the /tmp of the size asked for
    assert lines[3] == "1"  # only the loopback: no network
    assert lines[4:6] == ["CapEff:", "0000000000000000"]
    if root:  # the user and group it names, no other group, and no capability it could regain
        assert lines[6:] == ["CapBnd:", "0000000000000000", str(PROBE.uid), str(PROBE.gid), str(PROBE.gid)]
    else:
        assert lines[8] == str(os.getuid())
    assert (data / "out").read_text() == "hi\n"
