"""Summaries on disk between editor sessions: read back equal, kept apart per code version,
never a failure, never a partial or a failed analysis."""
from __future__ import annotations

import dataclasses
from pathlib import Path

from parakern.frontend import analyze_source
from parakern.lsp import diskcache, worker
from parakern.lsp.settings import Settings
from parakern.lsp.summary import cache_key

ROOT = Path(__file__).resolve().parents[1]


def _job(name: str) -> worker.AnalysisJob:
    path = ROOT / "samples" / f"{name}.c"
    text = path.read_text()
    (schedule,) = analyze_source(text, str(path)).schedules
    settings = Settings()
    key = cache_key(text.split("\n"), schedule, settings.analysis_part(schedule.function))
    return worker.AnalysisJob(text=text, file=str(path), id=schedule.id, key=key,
                              profiles=settings.gpu_profiles)


def test_a_summary_reads_back_equal_and_is_used(tmp_path, monkeypatch):
    monkeypatch.setenv(diskcache.ENV, str(tmp_path))
    job = _job("jacobi1d")
    first = worker.analyse(job)
    assert first.status == "ok" and diskcache.load(job.key) == first
    (stored,) = (tmp_path / "summaries" / diskcache.code_version()).glob("*.json")
    assert stored.name == f"{job.key}.json"
    # the next analysis of the same key is the stored one (its timing says so)
    again = worker.analyse(job)
    assert again == first and again.seconds == first.seconds


def test_off_damaged_or_foreign_files_are_misses(tmp_path, monkeypatch):
    monkeypatch.setenv(diskcache.ENV, str(tmp_path))
    job = _job("saxpy")
    summary = worker.analyse(job)
    path = tmp_path / "summaries" / diskcache.code_version() / f"{job.key}.json"
    path.write_text(path.read_text()[:100])
    assert diskcache.load(job.key) is None
    path.write_text('{"__type": "os.system", "key": "x"}')
    assert diskcache.load(job.key) is None
    assert diskcache.load("../../etc/passwd") is None
    monkeypatch.setenv(diskcache.ENV, "off")
    diskcache.store(summary)
    assert diskcache.load(job.key) is None


def test_failures_and_unencodable_text_are_not_kept(tmp_path, monkeypatch):
    monkeypatch.setenv(diskcache.ENV, str(tmp_path))
    job = _job("saxpy")
    summary = worker.analyse(job)
    for bad in (dataclasses.replace(summary, key="a1", status="timeout"),
                dataclasses.replace(summary, key="a2", message="\udfff")):
        diskcache.store(bad)
        assert diskcache.load(bad.key) is None
    folder = tmp_path / "summaries" / diskcache.code_version()
    assert not list(folder.glob("*.tmp"))


def test_a_summary_with_its_recommendations_reads_back_equal(tmp_path, monkeypatch):
    monkeypatch.setenv(diskcache.ENV, str(tmp_path))
    job = _job("saxpy")
    summary = worker.analyse(job)
    found = worker.tune(job)
    assert found and all(t.predicted for t in found)
    assert diskcache.load(job.key) == dataclasses.replace(summary, tuning=found)
