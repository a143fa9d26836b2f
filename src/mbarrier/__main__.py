from mbarrier.cli import main

raise SystemExit(main())
