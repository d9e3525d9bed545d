"""`python -m contract_tests` runs the same as the `shop-contract` command."""

from contract_tests.cli import main

raise SystemExit(main())
