"""`parakern.bench` from the editor: the request from the settings and the command's
arguments, one bench at a time (two on one GPU would time each other), its process's
events as cancellable work-done progress, and the one-line message. No pygls: the
progress goes through the engine's Client."""
from __future__ import annotations

import uuid
from typing import TYPE_CHECKING

from parakern.frontend.generated import mask_generated
from parakern.lsp import benchjob
from parakern.lsp.documents import AnalysisError, analysed_text
from parakern.lsp.settings import Settings

if TYPE_CHECKING:
    from parakern.lsp.engine import Client


class BenchCommand:
    def __init__(self, client: "Client"):
        self.client = client
        self.running: "str | None" = None      # the schedule id of the bench under way
        self.process: "benchjob.BenchProcess | None" = None

    async def run(self, file: str, text: str, schedule_id: str, settings: Settings, override=None) -> dict:
        """Runs the bench of one schedule in its own process, with cancellable progress.
        {"status": done | missing | error | cancelled | busy, "message": one line, ...the results}."""
        base = {"text": mask_generated(analysed_text(text)), "file": file, "schedule": schedule_id,
                "target": settings.target,
                "strategies": None if settings.strategies is None else list(settings.strategies)}
        try:
            request = benchjob.request_from(settings.bench, override, base)
        except benchjob.BenchSettingsError as exc:
            raise AnalysisError(str(exc)) from None
        if self.running is not None:
            return {"status": "busy", "message": f"parakern bench: the bench of {self.running} is still "
                    "running; wait for it or cancel it from its progress notification"}
        self.running = schedule_id
        token = f"parakern-bench-{uuid.uuid4()}"
        process, shown, ending = None, False, "stopped"
        try:
            process = self.process = benchjob.BenchProcess(request)
            shown = self.client.progress_supported() and await self.client.progress_begin(
                token, f"parakern bench: {schedule_id}", "building the kernels and the serial C", cancellable=True)
            plan = ""
            while True:
                if shown and self.client.progress_cancelled(token):
                    return {"status": "cancelled", "message": f"bench of {schedule_id} stopped", "plan": plan}
                event = await process.next_event()
                if event is None:
                    continue
                kind = event[0]
                if kind == "plan":
                    plan = event[1]
                elif kind == "progress":
                    done, total, what = event[1:]
                    if shown:
                        self.client.progress_report(token, f"{done}/{total} {what}", int(100 * done / max(total, 1)))
                elif kind == "done":
                    ending = "done"
                    return {"status": "done", "message": bench_message(schedule_id, event[1]), "plan": plan,
                            **event[1]}
                else:  # missing, error
                    ending = event[1]
                    return {"status": kind, "message": f"parakern bench: {event[1]}", "plan": plan}
        finally:
            if process is not None:
                process.stop()
            self.running, self.process = None, None
            if shown:
                self.client.progress_end(token, ending)

    def close(self) -> None:
        """Stops the bench under way (the server is ending)."""
        if self.process is not None:
            self.process.kill()


def bench_message(schedule_id: str, result: dict) -> str:
    """The one line the editor shows for a finished bench."""
    lines = result.get("summary") or []
    head = f"parakern bench {schedule_id} on {result.get('device', 'the GPU')}"
    if not result.get("correct", True):
        head += ": some results differ from the serial C (marked WRONG)"
    defaulted = result.get("defaulted") or []
    if defaulted:
        given = {**result.get("data", {}), **result.get("sweep", {})}
        head += " (defaults: " + ", ".join(f"{n}={given[n]}" for n in defaulted) + \
            "; set parakern.bench.data / .sweep to choose)"
    return head + (": " + "; ".join(lines) if lines else "")
