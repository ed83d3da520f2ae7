"""``python -m orchestrator`` runs the changeup command line."""

from orchestrator.present.cli import main

main()
