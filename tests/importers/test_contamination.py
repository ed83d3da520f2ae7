"""Contamination notes on imports: an imported challenge records where its source is public
(``imported_from:``, validated), the import report recommends ``--agent-network model``, and
``compare`` shows imported challenges apart."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import yaml

from orchestrator.matrix import build_comparison
from orchestrator.render.comparison_html import comparison_html
from orchestrator.render.comparison_text import comparison_markdown
from tests.cli import REPO, changeup
from tests.importers.test_import import SOURCES, challenge_of
from tests.matrix.samples import V6_V7, results_of, v6_v7


def git(folder: Path, *args: str) -> str:
    """A plain git command in ``folder`` (the test's own repository, not an agent's)."""
    done = subprocess.run(["git", *args], cwd=folder, capture_output=True, text=True, check=True)
    return done.stdout.strip()


def test_a_task_from_a_clone_records_its_remote_path_and_commit(tmp_path: Path) -> None:
    """The remote (without its password), the folder inside the clone and HEAD land in
    challenge.yaml; the report says the source is public and recommends the model-only network."""
    clone = tmp_path / "bench"
    shutil.copytree(SOURCES["slopcode"], clone / "problems" / "wordstat")
    git(clone, "init", "-q")
    git(clone, "remote", "add", "origin", "https://someone:hunter2@example.org/bench.git")
    git(clone, "add", "-A")
    git(clone, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "tasks")
    head = git(clone, "rev-parse", "HEAD")
    dest = tmp_path / "challenge"
    result = changeup("import", "slopcode", str(clone / "problems" / "wordstat"), str(dest))
    assert result.returncode == 0, result.stderr
    assert challenge_of(dest)["imported_from"] == {
        "format": "slopcode",
        "repository": "https://example.org/bench.git",
        "path": "problems/wordstat",
        "commit": head,
    }
    assert "hunter2" not in (dest / "challenge.yaml").read_text() + result.stdout
    assert "## Contamination" in result.stdout
    assert "`--agent-network model`" in result.stdout
    assert "Not known from git" not in result.stdout
    checked = changeup("validate", str(dest))
    assert checked.returncode == 0, checked.stdout + checked.stderr


def test_a_task_outside_any_clone_records_its_path_and_asks_for_the_rest(tmp_path: Path) -> None:
    """No git: the folder's path only, and the report says which fields to fill in by hand."""
    source = tmp_path / "loose"
    shutil.copytree(SOURCES["harbor"], source)
    dest = tmp_path / "challenge"
    result = changeup("import", "harbor", str(source), str(dest))
    assert result.returncode == 0, result.stderr
    assert challenge_of(dest)["imported_from"] == {"format": "harbor", "path": str(source)}
    assert "Not known from git: repository and commit" in result.stdout
    assert "`--agent-network model`" in result.stdout


def test_a_malformed_source_record_is_refused_by_validate(tmp_path: Path) -> None:
    """A commit that is not a full hash is named, with the rule it breaks."""
    dest = tmp_path / "challenge"
    assert changeup("import", "saotri", str(SOURCES["saotri"]), str(dest)).returncode == 0
    data = yaml.safe_load((dest / "challenge.yaml").read_text())
    data["challenge"]["imported_from"]["commit"] = "main"
    (dest / "challenge.yaml").write_text(yaml.safe_dump(data, sort_keys=False))
    checked = changeup("validate", str(dest))
    assert checked.returncode != 0
    assert "imported_from.commit" in checked.stdout + checked.stderr


def test_compare_shows_an_imported_challenge_apart(tmp_path: Path) -> None:
    """A matrix over an imported copy of a shipped challenge: compare.json names its source,
    compare.md and compare.html give it a section of its own."""
    library = tmp_path / "library"
    shutil.copytree(REPO / "challenges" / "protected-report-api", library / "protected-report-api")
    path = library / "protected-report-api" / "challenge.yaml"
    data = yaml.safe_load(path.read_text())
    data["challenge"]["imported_from"] = {
        "format": "slopcode",
        "repository": "https://example.org/bench.git",
        "path": "problems/reports",
        "commit": "0123456789abcdef0123456789abcdef01234567",
    }
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    results, _ = results_of(tmp_path, v6_v7, V6_V7.replace("{challenges}", str(library)))
    comparison = build_comparison(results)
    said = "slopcode: https://example.org/bench.git, problems/reports @ 0123456789ab"
    assert [c.imported_from for c in comparison.matrix.challenges] == [said]
    markdown = comparison_markdown(comparison)
    assert "## Imported challenges" in markdown
    assert f"- protected-report-api (imported): {said}" in markdown
    assert said in comparison_html(comparison)


def test_compare_of_shipped_challenges_has_no_imported_section(tmp_path: Path) -> None:
    """No imported challenge: no section, and the field is null."""
    results, _ = results_of(tmp_path)
    comparison = build_comparison(results)
    assert comparison.matrix.challenges[0].imported_from is None
    assert "Imported challenges" not in comparison_markdown(comparison)
