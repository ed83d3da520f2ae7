"""The first code of a hidden test *command* inside the sandbox, as root: drop, then run the command.

``python -I -S launch.py UID GID -- PROGRAM ARGS...``: becomes the test user with the
bootstrap's own ``drop`` (no groups, nothing in the bounding set, no new privileges), clears
every capability set as the warm interpreter does for a pytest run (``zygote.py``), checks
that none is left, and only then replaces itself with the program. A pytest run drops in its
bootstrap; a command has none, and the private root holds no ``setpriv``, so this script
(copied beside the bootstrap into the run's harness folder) does it. Standard library only.
"""

from __future__ import annotations

import ctypes
import importlib.util
import os
import struct
import sys
from typing import NoReturn

_PR_CAP_AMBIENT = 47
_PR_CAP_AMBIENT_CLEAR_ALL = 4


def _refuse(why: str) -> NoReturn:
    """Stop before the command ran: the shell's "cannot execute" (126), which the runner reads as
    a command that could not start (the grader's failure, never the agent's)."""
    print(f"launch.py: {why}", file=sys.stderr)
    sys.exit(126)


def main(argv: list[str]) -> None:
    """Drop to ``argv[1]:argv[2]`` and run what follows ``--``."""
    uid, gid, separator, *command = argv[1:]
    if separator != "--" or not command:
        _refuse("usage: launch.py UID GID -- PROGRAM [ARGS...]")
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "bootstrap.py")  # the harness's copy
    spec = importlib.util.spec_from_file_location("bootstrap", path)
    if spec is None or spec.loader is None:
        _refuse(f"cannot load the bootstrap from {path}")
    bootstrap = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bootstrap)
    bootstrap.drop([int(uid), int(gid)])
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(_PR_CAP_AMBIENT, _PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0)
    header = struct.pack("Ii", 0x20080522, 0)  # _LINUX_CAPABILITY_VERSION_3, this process
    if libc.capset(header, ctypes.create_string_buffer(24)) != 0:  # every set empty
        _refuse(f"capset failed: {os.strerror(ctypes.get_errno())}")
    with open("/proc/self/status") as status:
        held = [line.strip() for line in status if line.startswith("Cap") and int(line.split()[1], 16)]
    if held:
        _refuse(f"capabilities left after dropping them: {held}")
    os.execvp(command[0], command)


if __name__ == "__main__":
    main(sys.argv)
