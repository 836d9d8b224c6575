"""`python -m prism_experiments.chaos` (`make chaos`)."""

import sys

from prism_experiments.chaos.cli import main

sys.exit(main())
