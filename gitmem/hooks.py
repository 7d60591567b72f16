"""Hook scripts installed by gitmem 0.1 run `python -m gitmem.hooks`; `gitmem hooks install`
rewrites them to call gitmem.githooks. Until then this keeps their commits working."""

import sys

from gitmem.githooks.run import main

if __name__ == "__main__":
    sys.exit(main())
