"""Many runs, one decision: a matrix of challenges x agents x modes x trials, resumable, compared.

``spec`` reads the matrix (a file or the command line), ``manifest`` freezes it, ``attempts``
keeps every attempt and says what a resumed matrix still needs, ``driver`` runs it through a
session runner (``local``: on this machine, each session in a process of its own,
``session_process``), ``outcomes`` and ``comparison`` turn the run
folders into ``compare.json``, with ``statistics`` for the uncertainty, ``decision`` for the
verdict of the declared rule, and ``review`` for a person's confirmations. docs/compare.md
documents all of it.
"""

from __future__ import annotations

from orchestrator.log.cells import Cell, SessionOrder
from orchestrator.matrix.attempts import ATTEMPTS, Attempt, AttemptsLog
from orchestrator.matrix.comparison import COMPARE_VERSION, ComparisonError, build_comparison
from orchestrator.matrix.driver import RUNS, Results, ResultsRefused, drive, open_results
from orchestrator.matrix.local import LocalBackend
from orchestrator.matrix.progress import Tally
from orchestrator.matrix.review import Item, Reviews
from orchestrator.matrix.spec import Matrix, MatrixError, load_matrix, matrix_from_command

__all__ = [
    "ATTEMPTS",
    "COMPARE_VERSION",
    "RUNS",
    "Attempt",
    "AttemptsLog",
    "Cell",
    "ComparisonError",
    "Item",
    "LocalBackend",
    "Matrix",
    "MatrixError",
    "Results",
    "ResultsRefused",
    "Reviews",
    "SessionOrder",
    "Tally",
    "build_comparison",
    "drive",
    "load_matrix",
    "matrix_from_command",
    "open_results",
]
