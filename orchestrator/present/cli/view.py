"""``changeup view``: a browser over run folders and matrix results, written out or served.

It finds every run folder (a ``report.json``) and matrix results folder (an ``attempts.jsonl``
or ``compare.json``) under the PATHs, and writes one static site: ``index.html``, a page per
run under ``runs/`` and per matrix under ``matrices/`` (:mod:`orchestrator.render.view_site`,
:mod:`~orchestrator.render.view_run`, :mod:`~orchestrator.render.view_matrix`). The pages need
no server and no network. Without ``--out`` the same files are written to a temporary folder and
served on the loopback interface, on a free port, under a random token, until Ctrl-C.

The workspace diffs of a run's snapshots are read from its ``shadow.git`` with the neutral git
(:mod:`orchestrator.system.git`), each bounded in bytes, lines, time and git's memory: a diff
over its bound is shown as its ``--stat`` only. A folder that cannot be read is skipped, said
on standard error; it never stops the others.
"""

from __future__ import annotations

import hashlib
import os
import re
import secrets
import tempfile
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from orchestrator.present.exits import BadInput

if TYPE_CHECKING:
    from orchestrator.log.comparison import Comparison
    from orchestrator.log.records import Entry
    from orchestrator.log.report import Report
    from orchestrator.render.view_run import Snapshot
    from orchestrator.render.view_site import IndexRow

__all__ = ["Found", "find", "view_command", "write_site"]

#: The most bytes of one snapshot's diff kept; a bigger one is shown as its ``--stat``.
DIFF_BYTES = 256 * 1024
#: The most snapshots of one run whose diffs are read (a longer run shows the rest without).
DIFF_SNAPSHOTS = 400
#: Each line of a diff is cut to this many bytes (an agent's minified file is one long line).
DIFF_LINE = 2000
#: git's heap while it diffs (an agent's object can be huge once inflated).
GIT_MEMORY = 512 << 20
#: The site's folder for each kind of page.
_FOLDERS = {"run": "runs", "matrix": "matrices"}
#: Folders never searched for runs: a run's own insides.
_INSIDE_RUN = {"workspace", "shadow.git", "challenge", "home", "agent", ".git", "node_modules", ".venv"}


@dataclass(frozen=True, slots=True)
class Found:
    """A run folder or matrix results folder, and the name of its page."""

    kind: str  #: "run" or "matrix"
    path: Path
    page: str  #: relative to the site's root


def _page_name(kind: str, path: Path) -> str:
    slug = re.sub(r"[^A-Za-z0-9._-]+", "-", path.name)[:80] or "root"
    digest = hashlib.sha256(str(path.resolve()).encode()).hexdigest()[:8]
    return f"{_FOLDERS[kind]}/{slug}-{digest}.html"


def find(roots: Sequence[Path]) -> list[Found]:
    """Every run and matrix under ``roots`` (a root may itself be one), each once, sorted by path."""
    seen: dict[Path, Found] = {}
    for root in roots:
        for kind, path in _walk(root):
            seen.setdefault(path.resolve(), Found(kind, path, _page_name(kind, path)))
    return sorted(seen.values(), key=lambda found: str(found.path))


def _walk(root: Path) -> Iterator[tuple[str, Path]]:
    for folder, subfolders, files in os.walk(root):
        here = Path(folder)
        if "attempts.jsonl" in files or "compare.json" in files:
            yield "matrix", here
        if "report.json" in files:
            yield "run", here
            subfolders[:] = []  # a run holds no other run
            continue
        subfolders[:] = sorted(name for name in subfolders if name not in _INSIDE_RUN)


def _diffs(run: Path, snapshots: Sequence[Snapshot]) -> dict[str, str]:
    """Each snapshot's diff from the one before, by its sha, read from the run's ``shadow.git``."""
    import anyio

    from orchestrator.system.git import GitError, git

    shadow = run / "shadow.git"
    if not shadow.is_dir():
        return {}

    async def one(before: str, after: str) -> str:
        base = [f"--git-dir={shadow}", "diff", "--no-color", "--no-ext-diff", "--no-textconv"]
        try:
            text = await git(
                [*base, before, after], cwd=run, line=DIFF_LINE, limit=DIFF_BYTES, memory=GIT_MEMORY
            )
            return text.decode("utf-8", "replace")
        except GitError as error:
            try:
                stat = await git(
                    [*base, "--stat", before, after], cwd=run, limit=DIFF_BYTES, memory=GIT_MEMORY
                )
            except GitError:
                return f"(no diff: {error})"
            return f"(the diff is over {DIFF_BYTES:,} bytes; its summary:)\n" + stat.decode(
                "utf-8", "replace"
            )

    async def every() -> dict[str, str]:
        found = {}
        for snapshot in snapshots[:DIFF_SNAPSHOTS]:
            found[snapshot.sha] = (
                await one(snapshot.before, snapshot.sha) if snapshot.before else "(no baseline)"
            )
        for snapshot in snapshots[DIFF_SNAPSHOTS:]:
            found[snapshot.sha] = f"(not read: only the first {DIFF_SNAPSHOTS} snapshots' diffs are)"
        return found

    return anyio.run(every)


def _run_page(found: Found, warn: list[str]) -> tuple[Report, str] | None:
    from orchestrator.log.eventlog import EventLogError, read_log
    from orchestrator.log.report import ReportError, load_report
    from orchestrator.render.view_run import run_page, snapshots_of

    try:
        report = load_report(found.path / "report.json")
    except ReportError as error:
        warn.append(f"{found.path}: skipped: {error}")
        return None
    entries: list[Entry] = []
    if (found.path / "events.jsonl").is_file():
        try:
            entries = read_log(found.path / "events.jsonl").entries
        except EventLogError as error:
            warn.append(f"{found.path}: the timeline is empty: {error}")
    diffs = _diffs(found.path, snapshots_of(entries))
    return report, run_page(report, entries, diffs, "../index.html")


def _matrix_page(
    found: Found, pages: dict[Path, str], tracks: dict[Path, dict[str, Any]], warn: list[str]
) -> tuple[Comparison, str] | None:
    from orchestrator.log.documents import DocumentError
    from orchestrator.log.journal import JournalError
    from orchestrator.matrix import ComparisonError, build_comparison
    from orchestrator.render.view_matrix import matrix_page

    comparison: Comparison
    try:
        if (found.path / "compare.json").is_file():
            from orchestrator.log.comparison import load_comparison

            comparison = load_comparison(found.path / "compare.json")
        else:
            comparison = build_comparison(found.path)
    except (DocumentError, ComparisonError, JournalError) as error:
        warn.append(f"{found.path}: skipped: {error}")
        return None
    links = {
        trial.run: f"../{pages[(found.path / trial.run).resolve()]}"
        for trial in comparison.trials
        if trial.run and (found.path / trial.run).resolve() in pages
    }
    runs = {trial.run: (found.path / trial.run).resolve() for trial in comparison.trials if trial.run}
    drawn = {run: tracks[path] for run, path in runs.items() if path in tracks}
    return comparison, matrix_page(comparison, found.path.name, links, drawn, "../index.html")


def write_site(roots: Sequence[Path], out: Path) -> tuple[int, list[str]]:
    """Write the site of everything under ``roots`` into ``out``; how many pages, and the warnings."""
    from orchestrator.render.view_pair import track
    from orchestrator.render.view_site import IndexRow, index_html

    warn: list[str] = []
    found = find(roots)
    (out / "runs").mkdir(parents=True, exist_ok=True)
    (out / "matrices").mkdir(exist_ok=True)
    pages: dict[Path, str] = {}
    tracks: dict[Path, dict[str, Any]] = {}
    rows: list[IndexRow] = []
    # Runs first: a matrix page links to the run pages that were written, and draws their tracks.
    for item in sorted(found, key=lambda item: item.kind != "run"):
        if item.kind == "run":
            done = _run_page(item, warn)
            if done is None:
                continue
            report, html = done
            pages[item.path.resolve()] = item.page
            tracks[item.path.resolve()] = track(report)
            run = report.run
            row = IndexRow(
                "run", item.page, item.path.name, run.challenge.id, run.agent or "", run.status,
                report.score.total, run.started_at or "",
            )  # fmt: skip
        else:
            matrix = _matrix_page(item, pages, tracks, warn)
            if matrix is None:
                continue
            comparison, html = matrix
            decision = comparison.decision
            row = IndexRow(
                "matrix",
                item.page,
                item.path.name,
                ", ".join(challenge.id for challenge in comparison.matrix.challenges),
                ", ".join(agent.name for agent in comparison.matrix.agents),
                decision.verdict if decision else "no decision rule",
                None,
                comparison.matrix.frozen_at,
            )
        (out / item.page).write_text(html, encoding="utf-8")
        rows.append(row)
    (out / "index.html").write_text(index_html(rows, [str(root) for root in roots]), encoding="utf-8")
    return len(rows), warn


def _serve(folder: Path, token: str, *, open_browser: bool) -> None:
    """Serve ``folder`` (the site is in its subfolder ``token``) on loopback until Ctrl-C."""
    import functools
    import http.server
    import webbrowser

    class Quiet(http.server.SimpleHTTPRequestHandler):
        """Serves the site's files, lists no folder (the token stays unguessable), logs nothing per
        request (the terminal shows the address)."""

        def list_directory(self, path: str | os.PathLike[str]) -> None:
            """No listing: a 404."""
            self.send_error(404)

        def log_message(self, format: str, *args: object) -> None:
            """Say nothing."""

    handler = functools.partial(Quiet, directory=str(folder))
    with http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler) as server:
        url = f"http://127.0.0.1:{server.server_address[1]}/{token}/index.html"
        click.echo(f"serving {url} (Ctrl-C stops)", nl=True)
        if open_browser:
            webbrowser.open(url)
        try:
            server.serve_forever()
        except KeyboardInterrupt:
            click.echo("stopped")


@click.command("view")
@click.argument("paths", nargs=-1, type=click.Path(path_type=Path))
@click.option(
    "--out", type=click.Path(path_type=Path), help="Write the pages into this folder, and serve nothing."
)
@click.option("--open", "open_browser", is_flag=True, help="Open the index in a browser when serving.")
def view_command(paths: tuple[Path, ...], out: Path | None, open_browser: bool) -> None:
    """Browse run folders and matrix results: an index, a page per run and per matrix.

    PATHS (default: runs) are searched for run folders and matrix results. With --out DIR the
    pages are written there as static files that work from file://; without it they are
    served on 127.0.0.1 at a free port until Ctrl-C (nothing opens unless --open).
    """
    roots = list(paths) or [Path("runs")]
    for root in roots:
        if not root.is_dir():
            raise BadInput(f"{root}: not a folder; give run folders, matrix results, or folders holding them")
    if out is not None and out.exists() and not out.is_dir():
        raise BadInput(f"--out {out}: a file is there; name a folder (it is made if missing)")
    if out is not None:
        count, warn = write_site(roots, out)
        for line in warn:
            click.echo(line, err=True)
        click.echo(f"{count} pages written; open {out / 'index.html'}")
        return
    # Reports name hidden tests and how they failed: any process on this machine can reach the
    # loopback port (an agent of a concurrent run too), so the pages sit under a random token.
    token = secrets.token_urlsafe(18)
    with tempfile.TemporaryDirectory(prefix="changeup-view-") as folder:
        count, warn = write_site(roots, Path(folder) / token)
        for line in warn:
            click.echo(line, err=True)
        click.echo(f"{count} pages")
        _serve(Path(folder), token, open_browser=open_browser)
