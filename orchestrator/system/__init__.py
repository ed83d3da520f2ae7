"""System plumbing: mechanisms with no policy (files, programs, packages), used by the layers above.

Nothing here imports the rest of ``orchestrator``: it takes paths and names and gives paths back.
"""

from __future__ import annotations

from orchestrator.system.closure import (
    DebianPackage,
    copy_folder,
    debian_files,
    debian_owner,
    debian_packages,
    is_elf,
    mirror,
    shared_libraries,
    shebang,
)

__all__ = [
    "DebianPackage",
    "copy_folder",
    "debian_files",
    "debian_owner",
    "debian_packages",
    "is_elf",
    "mirror",
    "shared_libraries",
    "shebang",
]
