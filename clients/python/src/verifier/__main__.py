"""`python -m verifier …`: the command line tool, for an environment without its `verifier` script."""

from verifier.cli import main

raise SystemExit(main())
