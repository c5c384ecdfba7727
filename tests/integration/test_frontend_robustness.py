"""Random edits to every sample: the front-end always answers, never raises, never hangs."""
import random
import time

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import sample_files, wrong_files
from parakern.frontend import analyze_source
from parakern.frontend.preprocess import prepare
from parakern.model import FrontendResult

SEED = 20261122
MUTANTS_PER_FILE = 80   # 32 files -> 2 560 mutated inputs per run
TIME_LIMIT_S = 2.0
_NOISE = "{}()[];,*/+-<=>#\"'\\\n\t metafor_schedulecache0123456789\x00\xff\u00e9\u2013"


def _mutate(text: str, rnd: random.Random) -> str:
    for _ in range(rnd.randint(1, 4)):
        n = len(text)
        i = rnd.randrange(n + 1)
        kind = rnd.randrange(7)
        if kind == 0 and n:                       # delete a character
            text = text[:i] + text[i + 1:]
        elif kind == 1 and n:                     # duplicate a slice
            j = min(n, i + rnd.randint(1, 40))
            text = text[:j] + text[i:j] + text[j:]
        elif kind == 2:                           # truncate
            text = text[:i]
        elif kind == 3:                           # unbalance braces / parens
            text = text[:i] + rnd.choice("{}()[]") + text[i:]
        elif kind == 4:                           # random bytes, decoded as text
            junk = bytes(rnd.randrange(256) for _ in range(rnd.randint(1, 8)))
            text = text[:i] + junk.decode("latin-1") + text[i:]
        elif kind == 5:                           # characters that matter to the scanner
            text = text[:i] + "".join(rnd.choice(_NOISE) for _ in range(rnd.randint(1, 6))) + text[i:]
        elif n:                                   # swap two lines
            lines = text.split("\n")
            a, b = rnd.randrange(len(lines)), rnd.randrange(len(lines))
            lines[a], lines[b] = lines[b], lines[a]
            text = "\n".join(lines)
    return text


def _check(text: str, name: str) -> FrontendResult:
    start = time.perf_counter()
    result = analyze_source(text, name)
    elapsed = time.perf_counter() - start
    assert isinstance(result, FrontendResult)
    assert elapsed < TIME_LIMIT_S, f"{elapsed:.2f}s on a mutant of {name}"
    internal = [d.format() for d in result.diagnostics if d.code == "PK099"]
    assert not internal, (internal, text)
    # A meta_schedule keyword in code (not in a comment) always yields a model or a diagnostic.
    assert result.schedules or result.diagnostics or not prepare(text, name).schedules
    for d in result.diagnostics:
        assert d.span.line >= 1 and d.span.col >= 1
    return result


def test_seeded_mutations_of_every_sample():
    rnd = random.Random(SEED)
    files = sample_files() + wrong_files()
    count = 0
    for path in files:
        original = path.read_text()
        for _ in range(MUTANTS_PER_FILE):
            _check(_mutate(original, rnd), path.name)
            count += 1
    assert count >= 2000


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(sample_files()), st.data())
def test_hypothesis_edits(path, data):
    text = path.read_text()
    i = data.draw(st.integers(0, len(text)))
    j = data.draw(st.integers(i, min(len(text), i + 60)))
    insert = data.draw(st.text(max_size=20))
    _check(text[:i] + insert + text[j:], path.name)


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=300))
def test_arbitrary_text(text):
    _check(text, "random.c")
