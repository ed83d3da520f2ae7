"""Where an imported task is public: the repository, path and commit of its source folder.

A task from a public benchmark may be in a model's training data with its solution; the
challenge records where it came from (``imported_from:``), so ``compare`` can show results on
it apart. What git says of the source folder is read with changeup's neutral git (nothing of
the source repository's configuration runs); a folder outside any clone records its path only.
"""

from __future__ import annotations

import re
from pathlib import Path

__all__ = ["imported_from"]

#: ``user:password@`` in a remote URL: never copied into a challenge.
_CREDENTIALS = re.compile(r"(?<=://)[^/@]+@")


def _git(source: Path, *args: str) -> str:
    from orchestrator.system.git import git_sync  # loaded by an import, not by `import --help`

    return git_sync(args, cwd=source).strip()


def imported_from(format: str, source: Path) -> dict[str, str]:
    """The ``imported_from:`` mapping for the task folder ``source``: its remote (``origin``),
    its path inside the clone and the commit checked out, where git knows them; else its path."""
    from orchestrator.system.git import GitError

    try:
        prefix = _git(source, "rev-parse", "--show-prefix")
        commit = _git(source, "rev-parse", "HEAD")
    except GitError:
        return {"format": format, "path": str(source.resolve())}
    try:
        remote = _CREDENTIALS.sub("", _git(source, "config", "--get", "remote.origin.url"))
    except GitError:  # no remote called origin: git config exits 1
        remote = ""
    return {
        "format": format,
        **({"repository": remote} if remote else {}),
        "path": prefix.rstrip("/") or ".",
        "commit": commit,
    }
