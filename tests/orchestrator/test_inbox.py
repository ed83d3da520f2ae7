"""The inbox: a message appears whole or not at all."""

from __future__ import annotations

import threading
from pathlib import Path

from orchestrator.agents.inbox import post


def test_a_message_appears_whole_or_not_at_all(tmp_path: Path) -> None:
    """A reader polling for 001.md while a large message is posted never sees part of it."""
    text = "x" * 4_000_000 + "\nTHE END\n"
    message = tmp_path / ".changeup" / "inbox" / "001.md"
    seen: list[int] = []
    stop = threading.Event()

    def poll() -> None:
        while not stop.is_set():
            try:
                seen.append(len(message.read_text()))
            except FileNotFoundError:
                continue

    reader = threading.Thread(target=poll)
    reader.start()
    try:
        done = post(tmp_path, 1, text)
    finally:
        stop.set()
        reader.join()
    assert done == tmp_path / ".changeup" / "inbox" / "001.done"
    assert message.read_text() == text
    assert set(seen) <= {len(text)}, "a reader saw a message half written"
    assert [p.name for p in message.parent.iterdir()] == ["001.md"]  # nothing left over
