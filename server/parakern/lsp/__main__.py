"""`python -m parakern.lsp`: the language server, started with the current directory off
sys.path (parakern.process.isolation) before anything else is imported."""
from parakern.process.isolation import scrub_sys_path

scrub_sys_path()

from parakern.lsp import serve  # noqa: E402

raise SystemExit(serve())
