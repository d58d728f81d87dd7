"""Sharing.make_room asks the preemption policy again only when its answer can differ: a blocked head
asked about again with nothing started or stopped in its region, no fleet move, and a moment of the same
time key (engine.sim.state.running_view) fails again without asking."""
import pandas as pd
from sim_helpers import fleet, job

from engine.scenario.spec import Scenario
from engine.service.run import run_scenario
from engine.sim.state.running_view import RunningViews


def test_a_blocked_head_is_asked_about_again_only_once_its_victims_can_differ(monkeypatch):
    asked = []
    choose = RunningViews.choose

    def counted(self, region, now, h, request):
        asked.append(now)
        return choose(self, region, now, h, request)

    monkeypatch.setattr(RunningViews, "choose", counted)
    # an hpo trial (preemptible) 0-1000 on all 4 GPUs; a training job at 300; a pass every 100 s. The trial
    # may be evicted once it has run 600 s (min_runtime_s): the passes at 400 and 500 find the same
    # running job short of it (the same time key) and are not asked; at 600 it is evicted (and is asked about
    # itself, back in the queue: nothing it may evict runs).
    jobs = [job(0, 0, 1000, 4, workload_class="hpo"), job(1, 300, 100, 4)]
    data = {"name": "t", "policies": {"preemption": "priority"}, "timer_s": 100}
    result = run_scenario(Scenario.from_dict(data), pd.DataFrame(jobs), fleet(4))
    assert result.jobs.set_index("job_id")["start_s"].to_dict() == {"j0": 0.0, "j1": 600.0}
    assert asked == [300.0, 600.0, 600.0]
