"""The bench times the default dispatcher (`<function>_<index>_dispatch`, the time model's fastest
case that fits) beside the tree's: its calls under "dispatcher_default" in the JSON, its plan's
choice beside the tree's, and a "default dispatcher" row on the GPU page (bench/gpu_page.py)."""
import json
import subprocess
import sys
from pathlib import Path

from parakern import dispatch
from parakern.analysis.facts import substitutions
from parakern.bench import plan as planning
from parakern.bench import report
from parakern.machine.devices import get_profile
from parakern.pipeline import analyze

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = ROOT / "samples"


def test_gpu_page_has_a_default_dispatcher_row(tmp_path):
    """A run with the default dispatcher's calls: its own target row and its own line, apart from
    the tree dispatcher's (which the committed stencil run misses the target with)."""
    source = ROOT / "docs" / "bench" / "h100" / "stencil2d_N8192.json"   # committed
    doc = json.loads(source.read_text())
    default = []
    for d in doc["dispatcher"]:
        here = [r for r in doc["results"] if r["values"] == d["values"] and r.get("gpu_s") and r.get("correct")]
        best = min(here, key=lambda r: r["gpu_s"])
        default.append({**d, "case": best["case"], "cases": [best["case"]], "dispatch_s": best["gpu_s"] * 1.05,
                        "kind": report.DEFAULT})
    doc["dispatcher_default"] = default
    (tmp_path / source.name).write_text(json.dumps(doc))
    out = tmp_path / "page.md"
    done = subprocess.run([sys.executable, str(ROOT / "bench" / "gpu_page.py"), str(tmp_path), "--out", str(out)],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    page = out.read_text()
    rows = {line.split(" | ")[0].lstrip("| "): line for line in page.splitlines()
            if line.startswith(("| stencil2d_N8192: ", "| stencil2d: "))}
    # the default dispatcher's row is the sample's (every size of it: issue 33), the others the run's
    assert rows["stencil2d: default dispatcher >= 90 % of the best case, every point"].endswith("| yes |")
    assert rows["stencil2d_N8192: tree dispatcher >= 90 % of the best case, every point"].endswith("| **no** |")
    n = len(default)
    assert f"Default dispatcher (the time model's fastest case that fits): the fastest case at {n} of {n}" in page


def test_plan_keeps_the_default_and_the_tree_choice():
    """The plan's case is the default dispatcher's (dispatch.choose's), its tree_case the tree's; the
    JSON and the text carry both."""
    result = analyze((SAMPLES / "jacobi1d.c").read_text(), "samples/jacobi1d.c").results[0]
    plan = planning.make_plan(result, {"N": [1 << 20], "T": [4]}, {"B": [256], "s": [1, 4]}, get_profile("h100"))
    points = [p for p in plan.points if p.case is not None]
    assert points
    for p in points:
        subs = substitutions(result.schedule, p.values, as_run=True)
        choice = dispatch.choose(result.tree, get_profile("h100"), subs)
        assert (p.case, p.tree_case) == (choice.case, choice.tree)
    as_json = plan.as_dict()["points"]
    assert all("tree_case" in p for p in as_json)
