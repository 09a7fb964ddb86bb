from aai_gateway.cli.main import main

raise SystemExit(main())
