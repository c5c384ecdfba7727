from parakern.cli import main

raise SystemExit(main())
