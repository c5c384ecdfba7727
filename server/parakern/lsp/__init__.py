"""The parakern language server (pygls 2).

Layout:
  server.py     pygls handlers (thin): LSP types in, LSP types out
  engine.py     documents, debounce, cache, jobs, publishing (no pygls import)
  jobs.py       process pool (spawn) with a time limit per job
  worker.py     what runs in the pool: one schedule -> a ScheduleSummary
  analysis.py   pure: pipeline results -> picklable, JSON-able summaries and texts
  dispatcher.py pure: the `// parakern:begin/end` region edit
  positions.py  code points <-> the client's position encoding
  settings.py   the "parakern" settings section

`parakern serve` (cli.py) and `python -m parakern.lsp` start it.
"""


def serve(argv=None) -> int:
    from parakern.lsp.command import main
    return main(argv)
