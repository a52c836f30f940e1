"""`python -m ripplemem`: the same command line as the `ripplemem` script."""

from ripplemem.cli import main

raise SystemExit(main())
