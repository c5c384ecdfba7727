"""`python -m parakern.lsp`: the language server, started with the current directory off
sys.path (parakern.isolation) before anything else is imported."""
from parakern.isolation import scrub_sys_path

scrub_sys_path()

from parakern.lsp import serve  # noqa: E402

raise SystemExit(serve())
