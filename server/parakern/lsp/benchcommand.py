"""`parakern.bench` from the editor: the request from the settings and the command's
arguments, one bench at a time (two on one GPU would time each other), its process's
events as cancellable work-done progress, and the one-line message. Where the bench
cannot run (no GPU, no pycuda), what needs no GPU is offered instead (OFFERS: the plan,
tune, on the parakern.gpuProfiles). No pygls: the progress goes through the engine's Client."""
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

    async def run(self, file: str, text: str, schedule_id: str, settings: Settings, override=None,
                  mode: str = "run") -> dict:
        """Runs the bench of one schedule (or, by `mode`, its plan or tune: a key of PROGRESS) in its
        own process, with cancellable progress.
        {"status": done | missing | error | cancelled | busy, "message": one line, ...the results};
        a missing one has "offers": the titles of OFFERS, what can be done without a GPU."""
        base = {"text": mask_generated(analysed_text(text)), "file": file, "schedule": schedule_id,
                "target": settings.target,
                "strategies": None if settings.strategies is None else list(settings.strategies),
                "mode": mode, "profiles": tuple(settings.gpu_profiles)}
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
            title, first = PROGRESS[mode]
            shown = self.client.progress_supported() and await self.client.progress_begin(
                token, f"{title}: {schedule_id}", first, cancellable=True)
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
                    message = bench_message(schedule_id, event[1]) if mode == "run" else \
                        offer_message(mode, schedule_id, event[1])
                    return {"status": "done", "message": message, "plan": plan, **event[1]}
                elif kind == "missing":
                    ending = event[1]["what"]
                    return {"status": "missing", "message": missing_message(event[1], settings.gpu_profiles),
                            "plan": plan, "offers": list(OFFERS)}
                else:  # error
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


# what needs no GPU, offered where the bench cannot run: button title -> mode
OFFERS = {"Show the plan": "plan", "Tune": "tune"}
PROGRESS = {"run": ("parakern bench", "building the kernels and the serial C"),
            "plan": ("parakern bench plan", "the case tree, then the case of each point"),
            "tune": ("parakern tune", "the case tree, then the time model of each configuration")}


def missing_message(lack: dict, profiles) -> str:
    """Why the bench cannot run here, what to do where something can be installed, and what
    the buttons do (plain text: an editor shows it as it is, backticks and all)."""
    head = f"parakern bench: {lack['what']}."
    if lack.get("advice"):
        head += f" To bench here, {lack['advice']}."
    return head + (f" Without a GPU: show the plan (the case each point runs) or tune (the time model's "
                   f"best values) for {', '.join(profiles)}.")


def offer_message(mode: str, schedule_id: str, result: dict) -> str:
    """The one line for a plan or a tune made instead of the bench."""
    what = "plan" if mode == "plan" else "tune"
    given = {**result.get("data", {}), **result.get("sweep", {})}
    defaulted = result.get("defaulted") or []
    at = f" (defaults: {', '.join(f'{n}={given[n]}' for n in defaulted)}; set parakern.bench.data / .sweep " \
        "to choose)" if defaulted else ""
    return f"parakern {what} of {schedule_id}{at}: " + "; ".join(result.get("summary") or [])


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
