"""`parakern.bench` end to end through the language server, on the emulated GPU.

The server runs with tests/fakes first on PYTHONPATH and PATH: a pycuda and an nvcc that
run the generated kernels on parakern's CPU emulation (see tests/fakes). Everything else
is the real thing: the bench process, the plan, the serial C baseline, the runner, the
host dispatcher, work-done progress and its cancellation.
"""
from __future__ import annotations

import asyncio
import os
import re
import shutil
import sys
from pathlib import Path

import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import ClientServerConfig, client_capabilities

HERE = Path(__file__).resolve().parents[1]   # tests/
sys.path.insert(0, str(HERE / "lsp"))
from harness import SERVER, Editor, make_editor, sample, server_env  # noqa: E402

FAKES = HERE / "fakes"
PROFILES = ["neovim", "visual_studio_code"]

pytestmark = [
    pytest.mark.asyncio(loop_scope="module"),
    pytest.mark.filterwarnings("error::pytest_lsp.LspSpecificationWarning"),
    pytest.mark.timeout(240),
]


def _env() -> dict:
    env = server_env()
    env["PYTHONPATH"] = os.pathsep.join([str(FAKES), env["PYTHONPATH"]])
    env["PATH"] = os.pathsep.join([str(FAKES / "bin"), env.get("PATH", "")])
    return env


@pytest_lsp.fixture(
    config=ClientServerConfig(server_command=SERVER, client_factory=make_editor, server_env=_env()),
    scope="module", params=PROFILES)
async def client(lsp_client: Editor, request):
    await lsp_client.start_session(request.param, client_capabilities(request.param), {"timeLimitSeconds": 60})
    yield
    await lsp_client.shutdown_session()


def _new_tokens(client: Editor, before: set) -> list:
    return [t for t, reports in client.progress_reports.items()
            if t not in before and reports and "bench" in (reports[0].title or "")]


async def test_bench_runs_every_case_with_progress(client: Editor):
    uri, text = sample("jacobi1d.c")
    client.open(uri, text)
    before = set(client.progress_reports)
    client.messages.clear()
    result = await client.command("parakern.bench", uri, "jacobi1d:0",
                                  {"data": {"N": 130}, "sweep": {"B": [16, 32], "s": [1, 4]}, "repeat": 2})
    assert result["status"] == "done", result["message"]
    assert result["device"] == "parakern CPU emulation" and result["correct"] is True
    # every case whose kernel fits is measured at every point (the default dispatcher chooses among
    # them); case 1's constraints hold at each (8Bs+8 <= 48 KiB): the tree's dispatcher launches it
    assert {(tuple(r["values"].values()), r["case"]) for r in result["results"]} == \
        {((130, b, s), k) for b in (16, 32) for s in (1, 4) for k in (1, 2, 3)}
    assert all(r["correct"] and r["speedup"] > 0 for r in result["results"])
    assert all(r["registers"] > 0 for r in result["results"]) or shutil.which("nvcc") is None  # ptxas's
    assert [d["case"] for d in result["dispatcher"]] == [1, 1, 1, 1]
    assert all(d["correct"] for d in result["dispatcher"])
    assert "**case 1, N=130: speedup over serial C**" in result["markdown"]
    assert "**default dispatcher, N=130" in result["markdown"] and "**tree dispatcher, N=130" in result["markdown"]
    assert "| B \\ s | 1 | 4 |" in result["markdown"]
    assert result["defaulted"] == []
    # progress: begin (cancellable), a report per launch, end
    (token,) = _new_tokens(client, before)
    reports = client.progress_reports[token]
    assert reports[0].kind == "begin" and reports[0].cancellable is True
    assert reports[-1].kind == "end" and reports[-1].message == "done"
    assert sum(1 for r in reports if r.kind == "report") >= 8
    await client.wait_for(lambda: client.messages, what="window/showMessage")
    message = client.messages[-1]
    assert message.type == types.MessageType.Info
    assert message.message.startswith("parakern bench jacobi1d:0 on parakern CPU emulation: case 1: best at")
    # which case is fastest on the CPU emulation is noise; which case each dispatcher launches is not
    for dispatcher in ("default dispatcher", "tree dispatcher"):
        assert re.search(rf"{dispatcher}: launched the fastest case at \d of 4 points; launched the case the plan "
                         r"expects at 4 of 4", message.message), message.message
    client.close(uri)


async def test_bench_fills_in_parameters_it_was_not_given(client: Editor):
    """No data and no sweep: the defaults, said in the message."""
    uri, text = sample("saxpy.c")
    client.open(uri, text)
    result = await client.command("parakern.bench", uri, "saxpy:0", {"repeat": 1, "sweep": {"B": [64, 128]}})
    assert result["status"] == "done", result["message"]
    assert result["data"] == {"n": [1024]} and result["defaulted"] == ["n"]
    assert "defaults: n=[1024]" in result["message"]
    assert len(result["results"]) == 2 and all(r["correct"] for r in result["results"])
    client.close(uri)


async def test_bench_is_cancelled_from_its_progress(client: Editor):
    uri, text = sample("jacobi1d.c")
    client.open(uri, text)
    before = set(client.progress_reports)
    task = asyncio.ensure_future(client.command(
        "parakern.bench", uri, "jacobi1d:0",
        {"data": {"N": 4098}, "sweep": {"B": [32, 64, 128, 256], "s": [1, 2, 4, 8]}, "repeat": 20}))
    await client.wait_for(lambda: any(r.kind == "report" for t in _new_tokens(client, before)
                                      for r in client.progress_reports[t]), timeout=120, what="a progress report")
    (token,) = _new_tokens(client, before)
    busy = await client.command("parakern.bench", uri, "jacobi1d:0", {"data": {"N": 130}, "repeat": 1})
    assert busy["status"] == "busy" and "the bench of jacobi1d:0 is still running" in busy["message"]
    client.window_work_done_progress_cancel(types.WorkDoneProgressCancelParams(token=token))
    result = await asyncio.wait_for(task, 30)
    assert result["status"] == "cancelled" and "stopped" in result["message"]
    assert client.progress_reports[token][-1].kind == "end"
    # the server is alive and answers at once
    hover = await client.hover(uri, 8, 12)
    assert hover is not None
    client.close(uri)


async def test_bench_beside_a_schedule_with_errors(client: Editor):
    """The broken schedule cannot be benched (it has no case tree); its good neighbour can."""
    uri, text = sample("wrong/one_bad_one_good.c")
    client.open(uri, text)
    bad = await client.command("parakern.bench", uri, "f:0")
    assert bad["status"] == "error" and "no meta_schedule 'f:0'" in bad["message"]
    good = await client.command("parakern.bench", uri, "f:1", {"data": {"n": 64}, "sweep": {"B": [16]}, "repeat": 1})
    assert good["status"] == "done", good["message"]
    assert [(r["case"], r["correct"]) for r in good["results"]] == [(1, True)]
    client.close(uri)
