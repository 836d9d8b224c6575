"""`python -m prism_experiments.bench` (`make bench`, `make bench-quick`)."""

import sys

from prism_experiments.bench.cli import main

sys.exit(main())
