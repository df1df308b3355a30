import sys

from workbench.cli import main  # the core's one import of workbench (pyproject.toml says why)

sys.exit(main())
