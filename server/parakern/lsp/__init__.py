"""The parakern language server (pygls 2).

Layout:
  server.py       pygls handlers (thin): LSP types in, LSP types out
  engine.py       documents, debounce, rounds, the results cache, jobs, publishing (no pygls import)
  documents.py    an open document, its front-end snapshot, AnalysisError
  emitcache.py    the dispatcher edit, its code generated once in a worker and kept
  benchcommand.py parakern.bench: one bench at a time, progress, its one-line message
  benchjob.py     the bench request and the process it runs in
  jobs.py         process pool (spawn) with a time limit per job
  worker.py       what runs in the pool: an AnalysisJob -> a ScheduleSummary (or dispatcher code)
  summary.py      worker side: pipeline result -> picklable, JSON-able summary; cache keys
  views.py        the editor's view of a front-end schedule; the token under the cursor
  texts.py        pure: hover markdown, lens titles, case messages, from a summary
  ranges.py       code-point ranges: spans -> ranges, shifts, containment
  dispatcher.py   pure: the `// parakern:begin/end` region edit
  positions.py    code points <-> the client's position encoding
  settings.py     the "parakern" settings section
  start.py        how the server starts: its options, a private directory, the pool, then pygls

`parakern serve` (commands/cli.py) and `python -m parakern.lsp` start it.
"""


def serve(argv=None) -> int:
    from parakern.lsp.start import main   # deferred: `import parakern.lsp` stays light (no pygls)
    return main(argv)
