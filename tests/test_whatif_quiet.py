"""The What-if page's notes on scenario sections that changed nothing (dashboard.sections.quiet)."""
from dashboard.sections.quiet import quiet_notes


def test_a_section_on_with_all_its_figures_zero_gets_a_note_and_only_that_one():
    # a: [handoff] on (its KPIs present) and no move; [rightsize] on and 3 jobs sized; partitions with a shared
    # GPU piece but no MIG instance did something. b: no section on (none of the keys), so no note.
    a = {"handoff_moves": 0.0, "handoff_jobs": 0.0, "rightsized_jobs": 3.0, "mig_instances": 0.0,
         "shared_gpu_pieces": 2.0}
    b = {"utilization": 0.5}
    notes = quiet_notes(["a", "b"], [a, b])
    assert len(notes) == 1 and notes[0].startswith("a: [handoff] moved no running work")


def test_every_quiet_section_is_named():
    zero = {key: 0.0 for key in ("handoff_moves", "rightsized_jobs", "mig_instances", "shared_gpu_pieces",
                                 "experiments_jobs", "chains")}
    assert [note.split(":")[1].strip().split(" ")[0] for note in quiet_notes(["s"], [zero])] == [
        "[handoff]", "[rightsize]", "[partitions]", "[experiments]", "[[chain]]"]
