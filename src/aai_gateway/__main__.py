from aai_gateway.cli.entry import main

raise SystemExit(main())
