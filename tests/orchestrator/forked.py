"""What the fork server's tests have their children do (``tests/orchestrator/test_forkserver.py``)."""

from __future__ import annotations

import subprocess
import sys
import time
from typing import Any


def behave(request: dict[str, Any]) -> int:
    """Say ``say`` on standard output; start ``leave`` (a command, in a session of its own, left
    running); ``sleep`` that many seconds; raise ``raise``; else exit with ``exit``."""
    if "say" in request:
        print(request["say"], flush=True)
    if "leave" in request:
        subprocess.Popen(request["leave"], start_new_session=True)
    time.sleep(request.get("sleep", 0))
    if "raise" in request:
        raise RuntimeError(request["raise"])
    print("done", file=sys.stderr, flush=True)
    return int(request.get("exit", 0))
