import sys

from kernlens.cli import main

sys.exit(main())
