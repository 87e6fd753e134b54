import sys

from emb_s_core.cli import main

sys.exit(main())
