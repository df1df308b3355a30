import sys

from graphrag.cli import main

sys.exit(main())
