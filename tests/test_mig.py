"""MIG profiles and their valid placements (engine.world.mig), checked against NVIDIA's published
tables, and the packing of instances on one GPU, never overlapping (a property test)."""
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.world.mig import COMPUTE, FULL, PROFILES, SIZES, SLICES, first_start, part_of, profile

# NVIDIA Multi-Instance GPU User Guide, "Supported MIG Profiles" and `nvidia-smi mig -lgipp`:
# name -> (compute slices, memory slices, valid starts, number of instances available)
A100_40GB = {"1g.5gb": (1, 1, (0, 1, 2, 3, 4, 5, 6), 7), "1g.10gb": (1, 2, (0, 2, 4, 6), 4),
             "2g.10gb": (2, 2, (0, 2, 4), 3), "3g.20gb": (3, 4, (0, 4), 2), "4g.20gb": (4, 4, (0,), 1),
             "7g.40gb": (7, 8, (0,), 1)}
GB80 = {"1g.10gb": (1, 1, (0, 1, 2, 3, 4, 5, 6), 7), "1g.20gb": (1, 2, (0, 2, 4, 6), 4),
        "2g.20gb": (2, 2, (0, 2, 4), 3), "3g.40gb": (3, 4, (0, 4), 2), "4g.40gb": (4, 4, (0,), 1),
        "7g.80gb": (7, 8, (0,), 1)}
PUBLISHED = {"A100-40GB": A100_40GB, "A100-80GB": GB80, "H100-80GB": GB80}


def test_the_profiles_are_the_published_ones_with_their_valid_starts():
    for part, table in PUBLISHED.items():
        assert {p.name: (p.compute, p.size, p.starts) for p in PROFILES[part]} == {
            name: row[:3] for name, row in table.items()}, part


def test_packing_one_profile_alone_fits_the_published_number_of_instances():
    # placing the same profile at its lowest free valid start until none is left gives, on an empty
    # GPU, the guide's "number of instances available" (7 x 1g.5gb, 4 x 1g.10gb, 3 x 2g, 2 x 3g, ...)
    for part, table in PUBLISHED.items():
        for prof in PROFILES[part]:
            occupied, count = 0, 0
            while (start := first_start(occupied, prof)) >= 0:
                occupied |= prof.mask(start)
                count += 1
            assert count == table[prof.name][3], (part, prof.name)


def test_a_size_names_the_least_memory_profile_and_plain_models_are_the_80gb_parts():
    assert profile("A100-40GB", "1g").name == "1g.5gb" and profile("H100-80GB", "3g").name == "3g.40gb"
    assert [profile("A100-80GB", s).name for s in SIZES] == ["1g.10gb", "2g.20gb", "3g.40gb", "4g.40gb", "7g.80gb"]
    assert part_of("A100") == "A100-80GB" and part_of("H100") == "H100-80GB" and part_of("L4") is None
    assert part_of("A100", {"A100": "A100-40GB"}) == "A100-40GB" and part_of("H100-80GB") == "H100-80GB"


def test_a_4g_and_a_3g_share_a_gpu_but_a_3g_at_0_leaves_no_4g():
    part = PROFILES["A100-40GB"]
    four, three = part[4], part[3]
    assert first_start(four.mask(0), three) == 4  # 4g.20gb at 0-3, 3g.20gb at 4-7: the whole GPU
    assert first_start(three.mask(0), four) == -1
    assert first_start(part[0].mask(6), part[1]) == 0  # a 1g.5gb at 6 blocks 1g.10gb at 6, not at 0


@settings(max_examples=300, deadline=None)
@given(part=st.sampled_from(sorted(PROFILES)),
       steps=st.lists(st.tuples(st.booleans(), st.integers(0, 5), st.integers(0, 20)), max_size=40))
def test_instances_sit_at_valid_starts_and_never_overlap(part, steps):
    """Any sequence of placements (lowest free valid start) and removals: every instance at one of
    its profile's valid starts, no two sharing a memory slice, at most 7 compute slices in use."""
    profiles = PROFILES[part]
    placed: list[tuple] = []  # (profile, start)
    occupied = 0
    for place, which, pick in steps:
        if place or not placed:
            prof = profiles[which]
            start = first_start(occupied, prof)
            if start < 0:  # no valid start free: every valid start overlaps something placed
                assert all(occupied & prof.mask(s) for s in prof.starts)
                continue
            assert start in prof.starts and start + prof.size <= SLICES
            occupied |= prof.mask(start)
            placed.append((prof, start))
        else:
            prof, start = placed.pop(pick % len(placed))
            occupied &= ~prof.mask(start)
        masks = [p.mask(s) for p, s in placed]
        assert sum(bin(m).count("1") for m in masks) == bin(occupied).count("1")  # pairwise disjoint
        assert occupied & ~FULL == 0
        assert sum(p.compute for p, _ in placed) <= COMPUTE
