import sys

from gitmem.githooks.run import main

sys.exit(main())
