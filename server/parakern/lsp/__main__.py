from parakern.lsp import serve

raise SystemExit(serve())
