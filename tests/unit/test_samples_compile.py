"""Every sample is also plain serial C: metafork.h turns the constructs into C."""
from conftest import sample_files, wrong_files


def test_there_are_samples_beyond_the_paper():
    names = {p.stem for p in sample_files()}
    assert {"matadd", "matmul", "jacobi1d", "transpose", "polydiv"} <= names
    assert len(names) >= 8
    assert len(wrong_files()) >= 15

