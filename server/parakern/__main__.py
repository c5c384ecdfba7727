"""`python -m parakern` and the `parakern` script (pyproject.toml): the command line, started
with the current directory off sys.path (parakern.process.isolation) before anything else is imported."""
from parakern.process.isolation import scrub_sys_path

scrub_sys_path()

from parakern.commands import main  # noqa: E402

if __name__ == "__main__":
    raise SystemExit(main())
