"""`python -m ripplemem`: the same command line as the `ripplemem` script."""

from ripplemem.interfaces.cli.main import main

raise SystemExit(main())
