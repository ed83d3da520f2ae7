"""Case-level listing by collection (issue 17): real pytest in the grading environment, with
the challenge's ini, options and support folder, parametrized cases and their markers."""

from __future__ import annotations

from pathlib import Path

import pytest

from orchestrator.challenge.loader import load_challenge
from orchestrator.grading.collect import CollectionError, collect, listing
from orchestrator.system.venvs import grading_environment
from tests.orchestrator.test_i17_testing_options import challenge_with_options

pytestmark = pytest.mark.slow

CASES = """\
import pytest

from tags import normalize_tags as normalize


@pytest.mark.core
@pytest.mark.parametrize("raw", ["a", pytest.param("b", marks=pytest.mark.error, id="err-b")])
def test_case(raw):
    assert normalize([raw]) == [raw]
"""


def test_collection_lists_cases_with_their_markers_under_the_challenges_options(tmp_path: Path) -> None:
    """Each parametrized case is its own id with its own markers, the support conftest's required
    options and each phase's arguments apply (else pytest would not start), and the listing is
    cached: a second call reads it without running pytest."""
    root = challenge_with_options(tmp_path)
    (root / "tests" / "phase1" / "test_cases.py").write_text(CASES)
    challenge = load_challenge(root)
    listing = collect(challenge, grading_environment([]), challenge.reference / "phase1")
    cases = {k: v for k, v in listing.tests["phase1"].items() if "test_cases" in k}
    assert cases == {
        "phase1/test_cases.py::test_case[a]": frozenset({"core", "parametrize"}),
        "phase1/test_cases.py::test_case[err-b]": frozenset({"core", "parametrize", "error"}),
    }
    assert "phase2/test_options.py::test_options" in listing.ids("phase2")
    assert listing.errors == {}
    (root / "tests" / "phase1" / "test_cases.py").unlink()  # the cache key sees the change
    again = collect(load_challenge(root), grading_environment([]), challenge.reference / "phase1")
    assert not any("test_cases" in k for k in again.tests["phase1"])


def test_a_file_that_will_not_import_is_an_error_of_its_phase(tmp_path: Path) -> None:
    """Collecting against the untouched starter, a test file importing what is not there yet
    is listed as an error of its phase, not silently dropped."""
    root = challenge_with_options(tmp_path)
    (root / "tests" / "phase1" / "test_later.py").write_text(
        "from not_yet import x\n\ndef test_x():\n    pass\n"
    )
    challenge = load_challenge(root)
    listing = collect(challenge, grading_environment([]), challenge.workspace)
    assert listing.errors["phase1"] == ["test_later.py: ModuleNotFoundError: No module named 'not_yet'"]


def test_a_harness_that_cannot_start_is_a_collection_error(tmp_path: Path) -> None:
    """Without the required --entrypoint, the support conftest stops pytest before collection."""
    root = challenge_with_options(tmp_path)
    yaml = root / "challenge.yaml"
    yaml.write_text(yaml.read_text().replace('args: ["--entrypoint", "tags.py"]', "args: []"))
    with pytest.raises(CollectionError, match="could not start to collect the tests of phase1"):
        collect(load_challenge(root), grading_environment([]), load_challenge(root).workspace)


def test_the_listing_collects_each_phase_as_the_reference_reaches_it(tmp_path: Path) -> None:
    """A phase-2 test importing a module only phase 2's reference adds collects in the listing
    (the reference of phases 1 and 2 laid over the starter), while against the starter it would
    not import; phase 1 is collected before phase 2's solution exists, so its own test of the
    module's absence passes collection too."""
    root = challenge_with_options(tmp_path)
    (root / "solutions" / "reference" / "phase2" / "later.py").write_text("VALUE = 2\n")
    (root / "tests" / "phase2" / "test_later.py").write_text(
        "import pytest\nfrom later import VALUE\n\n"
        "@pytest.mark.parametrize('n', [1, 2])\ndef test_later(n):\n    assert VALUE\n"
    )
    (root / "tests" / "phase1" / "test_before.py").write_text(
        "import importlib.util\n\nassert importlib.util.find_spec('later') is None\n\n"
        "def test_before():\n    pass\n"
    )
    challenge = load_challenge(root)
    found = listing(challenge, grading_environment([]))
    assert found.errors == {}
    assert "phase1/test_before.py::test_before" in found.ids("phase1")
    assert [i for i in found.ids("phase2") if "test_later.py" in i] == [
        "phase2/test_later.py::test_later[1]",
        "phase2/test_later.py::test_later[2]",
    ]
    starter = collect(challenge, grading_environment([]), challenge.workspace)
    assert starter.errors["phase2"] == ["test_later.py: ModuleNotFoundError: No module named 'later'"]


def test_collections_of_one_key_at_once_in_one_process_all_land(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Calibration collects the same phases from several threads at once: each writes the cache
    under a name of its own, so none loses its file to another's rename (a shared
    ``<pid>.tmp`` did: FileNotFoundError in CI)."""
    from concurrent.futures import ThreadPoolExecutor

    monkeypatch.setenv("CHANGEUP_CACHE", str(tmp_path / "cache"))
    root = challenge_with_options(tmp_path)
    challenge = load_challenge(root)
    environment = grading_environment([])
    with ThreadPoolExecutor(4) as pool:
        runs = [pool.submit(collect, challenge, environment, challenge.workspace) for _ in range(4)]
        listings = [run.result() for run in runs]
    assert all(listing.tests == listings[0].tests for listing in listings)
    assert [p.suffix for p in (tmp_path / "cache" / "collect").iterdir()] == [".json"]
