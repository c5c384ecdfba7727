"""Summaries on disk between editor sessions: read back equal, kept apart per code version,
never a failure, never a partial or a failed analysis."""
from __future__ import annotations

import dataclasses

from parakern.lsp import cachedir, diskcache, worker
from unit.test_diskcache import _job


def test_a_summary_reads_back_equal_and_is_used(tmp_path, monkeypatch):
    monkeypatch.setenv(cachedir.ENV, str(tmp_path))
    job = _job("jacobi1d")
    first = worker.analyse(job)
    assert first.status == "ok" and diskcache.load(job.key) == first
    (stored,) = (tmp_path / "summaries" / diskcache.code_version()).glob("*.json")
    assert stored.name == f"{job.key}.json"
    # the next analysis of the same key is the stored one (its timing says so)
    again = worker.analyse(job)
    assert again == first and again.seconds == first.seconds


def test_off_damaged_or_foreign_files_are_misses(tmp_path, monkeypatch):
    monkeypatch.setenv(cachedir.ENV, str(tmp_path))
    job = _job("saxpy")
    summary = worker.analyse(job)
    path = tmp_path / "summaries" / diskcache.code_version() / f"{job.key}.json"
    path.write_text(path.read_text()[:100])
    assert diskcache.load(job.key) is None
    path.write_text('{"__type": "os.system", "key": "x"}')
    assert diskcache.load(job.key) is None
    assert diskcache.load("../../etc/passwd") is None
    monkeypatch.setenv(cachedir.ENV, "off")
    diskcache.store(summary)
    assert diskcache.load(job.key) is None


def test_failures_and_unencodable_text_are_not_kept(tmp_path, monkeypatch):
    monkeypatch.setenv(cachedir.ENV, str(tmp_path))
    job = _job("saxpy")
    summary = worker.analyse(job)
    for bad in (dataclasses.replace(summary, key="a1", status="timeout"),
                dataclasses.replace(summary, key="a2", message="\udfff")):
        diskcache.store(bad)
        assert diskcache.load(bad.key) is None
    folder = tmp_path / "summaries" / diskcache.code_version()
    assert not list(folder.glob("*.tmp"))


def test_a_summary_with_its_recommendations_reads_back_equal(tmp_path, monkeypatch):
    monkeypatch.setenv(cachedir.ENV, str(tmp_path))
    job = _job("saxpy")
    summary = worker.analyse(job)
    found = worker.tune(job)
    assert found and all(t.predicted for t in found)
    assert diskcache.load(job.key) == dataclasses.replace(summary, tuning=found)


def test_the_folder_keeps_within_its_bound_the_least_recently_used_going_first(tmp_path, monkeypatch):
    """It grew without end (541 files after one fuzz campaign): past PARAKERN_CACHE_MB the
    summaries of earlier versions go first, then the least recently used of this one (a
    summary read is a use)."""
    import os
    import time
    monkeypatch.setenv(cachedir.ENV, str(tmp_path))
    monkeypatch.setattr(diskcache, "_counted", {})
    summary = worker.analyse(_job("saxpy"))
    folder = tmp_path / "summaries" / diskcache.code_version()
    earlier = tmp_path / "summaries" / ("0" * 24)
    earlier.mkdir()
    (earlier / "e0.json").write_bytes((folder / f"{summary.key}.json").read_bytes())
    (folder / f"{summary.key}.json").unlink()
    one = len((earlier / "e0.json").read_bytes())
    monkeypatch.setenv(diskcache.SIZE_ENV, str(10.5 * one / 2 ** 20))     # room for ten summaries
    past = time.time() - 10_000
    for k in range(30):
        key = f"k{k:02d}"
        diskcache.store(dataclasses.replace(summary, key=key))
        if (folder / f"{key}.json").exists():
            os.utime(folder / f"{key}.json", (past + k, past + k))     # stored in this order
        if k == 5:
            assert diskcache.load("k00") is not None                  # k00 used again now
        total = sum(p.stat().st_size for p in (tmp_path / "summaries").rglob("*.json"))
        assert total <= diskcache.size_limit(), (k, total)
    assert not earlier.exists()                                       # an earlier version's go first
    kept = sorted(p.stem for p in folder.glob("*.json"))
    assert "k00" in kept and "k01" not in kept and "k29" in kept and len(kept) <= 10, kept
    assert diskcache.load("k01") is None and diskcache.load("k00") is not None


def test_a_bound_of_zero_keeps_nothing(tmp_path, monkeypatch):
    monkeypatch.setenv(cachedir.ENV, str(tmp_path))
    monkeypatch.setenv(diskcache.SIZE_ENV, "0")
    job = _job("saxpy")
    worker.analyse(job)
    assert diskcache.load(job.key) is None and not list(tmp_path.rglob("*.json"))
