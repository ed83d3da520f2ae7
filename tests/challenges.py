"""Copies of built-in challenges changed for a test, made once here for every test that needs one."""

from __future__ import annotations

import shutil
from pathlib import Path

import yaml


def without_deadline(source: Path, dest: Path) -> Path:
    """A copy of the challenge at ``source`` in ``dest``, minus its trigger ``deadline``.

    An agent that leaves phase 1 failing would otherwise get the deadline's message (its
    session skips to it): a test whose agent must end, or must never see a later phase's
    requirements, runs on this copy.
    """
    shutil.copytree(source, dest)
    file = dest / "challenge.yaml"
    data = yaml.safe_load(file.read_text())
    triggers = data["challenge"]["triggers"]
    kept = [trigger for trigger in triggers if trigger["id"] != "deadline"]
    assert len(kept) == len(triggers) - 1, f"{source} has no trigger 'deadline'"
    data["challenge"]["triggers"] = kept
    file.write_text(yaml.safe_dump(data, sort_keys=False))
    return dest
