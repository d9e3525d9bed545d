"""`python -m mock_server`, the same command as `shop-mock`."""

import sys

from mock_server.cli import main

sys.exit(main())
