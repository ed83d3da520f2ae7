"""``python -m orchestrator`` runs the changeup command line."""

from orchestrator.cli import main

main()
