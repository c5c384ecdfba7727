"""Summaries on disk between editor sessions: read back equal, kept apart per code version,
never a failure, never a partial or a failed analysis."""
from __future__ import annotations

from pathlib import Path

import pytest

from parakern.frontend import analyze_source
from parakern.lsp import cachedir, diskcache, tasks
from parakern.lsp.settings import Settings
from parakern.lsp.summary import cache_key

ROOT = Path(__file__).resolve().parents[2]


def _job(name: str) -> tasks.AnalysisJob:
    path = ROOT / "samples" / f"{name}.c"
    text = path.read_text()
    (schedule,) = analyze_source(text, str(path)).schedules
    settings = Settings()
    key = cache_key(text.split("\n"), schedule, settings.analysis_part(schedule.function))
    return tasks.AnalysisJob(text=text, file=str(path), id=schedule.id, key=key,
                              profiles=settings.gpu_profiles)


@pytest.mark.parametrize("value, megabytes", [("", 100.0), ("nonsense", 100.0), ("-3", 100.0), ("inf", 100.0),
                                              ("0.5", 0.5), ("0", 0.0)])
def test_the_bound_of_the_folder_is_a_setting(monkeypatch, value, megabytes):
    monkeypatch.setenv(diskcache.SIZE_ENV, value)
    assert diskcache.size_limit() == int(megabytes * 2 ** 20)


def test_a_relative_cache_folder_is_made_absolute_before_the_server_leaves_its_directory(tmp_path, monkeypatch):
    """The server works in a private directory (issue 34): a relative PARAKERN_CACHE_DIR or
    XDG_CACHE_HOME would have been a new, empty cache there every session."""
    monkeypatch.chdir(tmp_path)
    environ = {cachedir.ENV: "cache", "XDG_CACHE_HOME": "xdg"}
    cachedir.pin_root(environ)
    assert environ == {cachedir.ENV: str(tmp_path / "cache"), "XDG_CACHE_HOME": str(tmp_path / "xdg")}
    for kept in ({cachedir.ENV: "off"}, {cachedir.ENV: "/abs/cache"}, {}):
        before = dict(kept)
        cachedir.pin_root(kept)
        assert kept == before

