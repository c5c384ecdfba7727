"""Independence of meta_for iterations: every sample is proved independent, real
collisions are errors at the meta_for that carries them with both accesses as related
information, undecided ones are warnings; serial loops for granularity reduction."""
from parakern.analysis.dependence import iterations_independent
from unit.test_dependence import snippet


def test_serial_loop_writing_one_element_is_dependent(tmp_path):
    _, s = snippet(tmp_path, "                for (int k = 0; k < 4; k++) a[i * B + j] += k;")
    assert iterations_independent(s, "k") == "refuted"
    _, s = snippet(tmp_path, "                for (int k = 0; k < 4; k++) a[4 * (i * B + j) + k] = k;")
    assert iterations_independent(s, "k") == "proved"
