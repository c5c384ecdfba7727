"""Definition 2 (ii) by execution without a GPU: every case of every schedule, run on a
CPU emulation of CUDA (parakern_cpu.h), against the serial C.

    verify_file(path, points=3) -> FileResult      (results.py: per schedule, case, point)
    verify_source(text, file, points=3, transform_cu=..., build_dir=..., races=True, tolerance=None)
                                                   races: shadow memory and a second thread order
                                                   (parakern_race.h, races.py); tolerance: the
                                                   floating bound instead of runner's rule
    Session(text, file, ...)                       analysed, emitted, built: .run(schedule id, values,
                                                   device(R_B, Z, T)) runs one point, .verify()
    text(result) / result.as_dict()                the report, as text or JSON
    ToolMissing                                    gcc or g++ is not on PATH
    HEADER                                         path of parakern_cpu.h
"""
from parakern.verify.build import HEADER, BuildError, ToolMissing
from parakern.verify.core import Session, verify_file, verify_source
from parakern.verify.points import Device, Point, build_model, device, expected_case, find_points
from parakern.verify.results import (TOLERANCE_NOTE, CaseResult, FileResult, PointResult, ScheduleResult,
                                     text)

__all__ = ["verify_file", "verify_source", "Session", "device", "text", "FileResult", "ScheduleResult", "CaseResult",
           "PointResult", "ToolMissing", "BuildError", "HEADER", "TOLERANCE_NOTE", "Device", "Point",
           "build_model", "find_points", "expected_case"]
