"""What the fork server's tests have their children do (``tests/orchestrator/test_forkserver.py``)."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path
from typing import Any

#: Puts itself in the v1 freezer group ``$1`` and becomes ``sleep $2``, killed when its parent dies
#: (as a sandbox with bubblewrap's ``--die-with-parent``).
FROZEN = 'echo $$ > "$1/cgroup.procs" && exec setpriv --pdeathsig KILL sleep "$2"'


def behave(request: dict[str, Any]) -> int:
    """Say ``say`` on standard output; start ``leave`` (a command, in a session of its own, left
    running); with ``freeze`` (a v1 freezer group's folder, and a number of seconds), start a
    sleeper in that group, freeze it and say ``frozen``; ``sleep`` that many seconds; raise
    ``raise``; else exit with ``exit``."""
    if "say" in request:
        print(request["say"], flush=True)
    if "freeze" in request:
        group, seconds = request["freeze"]
        subprocess.Popen(["sh", "-c", FROZEN, "frozen", group, seconds], start_new_session=True)
        while not Path(group, "cgroup.procs").read_text().split():
            time.sleep(0.01)
        Path(group, "freezer.state").write_text("FROZEN")
        while Path(group, "freezer.state").read_text().strip() != "FROZEN":
            time.sleep(0.01)
        print("frozen", flush=True)
    if "leave" in request:
        subprocess.Popen(request["leave"], start_new_session=True)
    time.sleep(request.get("sleep", 0))
    if "raise" in request:
        raise RuntimeError(request["raise"])
    print("done", file=sys.stderr, flush=True)
    return int(request.get("exit", 0))
