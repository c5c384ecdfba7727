import dataclasses

import pytest

from parakern.machine.devices import CC_LIMITS, PROFILES, Device, get_profile, machine_values

REQUIRED = {"v100": (7, 0), "t4": (7, 5), "a100": (8, 0), "l4": (8, 9),
            "h100": (9, 0), "h200": (9, 0), "rtx4090": (8, 9)}


def test_required_profiles_present_with_their_capability():
    for key, cc in REQUIRED.items():
        assert PROFILES[key].compute_capability == cc


@pytest.mark.parametrize("key", sorted(PROFILES))
def test_profile_is_sourced_and_consistent(key):
    p = PROFILES[key]
    assert key == key.lower()
    major, minor = p.compute_capability
    assert p.source.strip()
    assert f"cc {major}.{minor}" in p.source
    assert p.compute_capability in CC_LIMITS
    assert p.max_warps_per_sm * p.warp_size == p.max_threads_per_sm
    assert p.max_registers_per_thread == 255
    assert p.max_threads_per_block == 1024
    assert p.max_shared_memory_per_block_default == 48 * 1024
    assert p.max_shared_memory_per_block >= p.max_shared_memory_per_block_default
    # One block at the opt-in maximum, plus its reserve, must fit the largest carveout.
    assert (p.max_shared_memory_per_block + p.reserved_shared_memory_per_block
            <= p.shared_memory_per_sm)
    assert list(p.shared_memory_carveouts) == sorted(p.shared_memory_carveouts)
    assert p.shared_memory_carveouts[-1] == p.shared_memory_per_sm
    assert p.reserved_shared_memory_per_block == (1024 if major >= 8 else 0)
    assert p.sm_count > 0
    assert p.sm_version == f"sm_{major}{minor}"


def test_capability_limits_are_not_repeated_per_gpu():
    # Two parts of one capability share every limit, and differ in part facts.
    h100, h200 = PROFILES["h100"], PROFILES["h200"]
    part_fields = {"name", "sm_count", "memory_bandwidth_gbps", "boost_clock_mhz", "source", "key"}
    for f in dataclasses.fields(Device):
        if f.name not in part_fields:
            assert getattr(h100, f.name) == getattr(h200, f.name), f.name
    assert h200.memory_bandwidth_gbps > h100.memory_bandwidth_gbps


def test_machine_values():
    assert machine_values(PROFILES["h100"]) == {"R_B": 65536, "Z": 232448, "T": 1024}
    assert machine_values(PROFILES["a100"]) == {"R_B": 65536, "Z": 166912, "T": 1024}
    assert machine_values(PROFILES["v100"]) == {"R_B": 65536, "Z": 98304, "T": 1024}
    assert machine_values(PROFILES["t4"]) == {"R_B": 65536, "Z": 65536, "T": 1024}
    assert machine_values(PROFILES["l4"])["Z"] == 101376
    for p in PROFILES.values():
        values = machine_values(p)
        assert set(values) == {"R_B", "Z", "T"}
        assert all(isinstance(v, int) for v in values.values())


def test_get_profile():
    assert get_profile("h100") is PROFILES["h100"]
    assert get_profile(" A100 ") is PROFILES["a100"]


def test_get_profile_unknown_lists_known_names():
    with pytest.raises(KeyError) as info:
        get_profile("gtx480")
    message = str(info.value)
    assert "gtx480" in message
    for key in PROFILES:
        assert key in message


def test_profiles_are_frozen():
    with pytest.raises(dataclasses.FrozenInstanceError):
        PROFILES["h100"].sm_count = 1


def test_one_device_type_from_a_profile_from_properties_or_emulated():
    """A GPU is one type, built from a profile, from what a device reports at run time, or as an
    emulated device with other limits; R_B, Z, T are what the dispatcher reads of each."""
    from parakern.machine.devices import emulated, from_properties
    h100 = PROFILES["h100"]
    assert (h100.key, h100.R_B, h100.Z, h100.T) == ("h100", 65536, 232448, 1024)
    assert h100.bandwidth == 3350e9 and h100.clock == 1980e6
    # a known part read at run time: its datasheet speeds, the limits it reports
    read = from_properties({"major": 9, "minor": 0, "regsPerBlock": 65536, "sharedMemPerBlockOptin": 232448,
                            "sharedMemPerBlock": 49152, "maxThreadsPerBlock": 1024}, "NVIDIA H100 80GB HBM3")
    assert read.key == "h100" and read.name == "NVIDIA H100 80GB HBM3" and read.bandwidth == h100.bandwidth
    assert read.properties() == {"regsPerBlock": 65536, "sharedMemPerBlockOptin": 232448,
                                 "sharedMemPerBlock": 49152, "maxThreadsPerBlock": 1024}
    # an unknown part: its capability's limits, its own SM count and speeds (DDR: twice the memory clock)
    other = from_properties({"major": 8, "minor": 7, "regsPerBlock": 65536, "sharedMemPerBlockOptin": 166912,
                             "maxThreadsPerBlock": 1024, "multiProcessorCount": 16, "clockRate": 1300000,
                             "memoryClockRate": 1600000, "memoryBusWidth": 256, "l2CacheSize": 4 << 20},
                            "Jetson Orin")
    assert other.key == "" and other.compute_capability == (8, 7) and other.sm_count == 16
    assert other.max_warps_per_sm == CC_LIMITS[(8, 6)].max_warps_per_sm and other.l2_cache_bytes == 4 << 20
    assert other.bandwidth == 2 * 1600000e3 * 256 / 8 and other.clock == 1300e6
    with pytest.raises(KeyError, match="older than any"):
        from_properties({"major": 6, "minor": 1, "regsPerBlock": 1, "sharedMemPerBlockOptin": 1,
                         "maxThreadsPerBlock": 1, "multiProcessorCount": 1}, "GTX 1080")
    small = emulated(h100, 2048, 100, 100, 64)
    assert (small.R_B, small.Z, small.T, small.key) == (2048, 100, 64, "")
    assert small.sm_count == h100.sm_count
