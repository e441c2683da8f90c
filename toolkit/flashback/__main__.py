import sys

from flashback.cli import main

sys.exit(main())
