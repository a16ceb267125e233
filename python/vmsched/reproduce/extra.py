"""`vmsched reproduce ID --with file.py:Class`: a paper's experiment with your scheduler
added as a column beside the paper's numbers and the built-in schedulers.

Each scheduler added runs every run of the experiment's reference scheduler (Credit when
the grid has it, else the grid's first scheduler) again: the same scenario moved to it as
`vmsched compare` moves one (parameters carried where they mean the same, dropped
otherwise), under the same varied parameters, so its rows sit beside the reference's in
results.csv, the report's tables and the figures that draw every scheduler. The paper's
claims are about its own schedulers and are judged as before.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from vmsched.reproduce.framework import Experiment, Run, Timing
from vmsched.scheduler import register


def reference_scheduler(runs: Sequence[Run]) -> str:
    """The scheduler whose runs an added scheduler repeats: Credit, else the first."""
    names = [r.scheduler for r in runs]
    return "credit" if "credit" in names else names[0]


def with_schedulers(exp: Experiment, specs: Sequence[str]) -> Experiment:
    """`exp` with each scheduler of `specs` (a user's `file.py:Class`, or a built-in
    name) added as described in the module's docstring."""
    for spec in specs:
        if ":" in spec:
            register(spec, where="--with")

    def grid(timing: Timing) -> list[Run]:
        from vmsched.compare import RunSpec, port

        runs = exp.grid(timing)
        ref = reference_scheduler(runs)
        added = []
        for spec in specs:
            for r in runs:
                if r.scheduler == ref:
                    scenario, _notes = port(r.scenario.validate(), RunSpec(spec, spec))
                    added.append(Run(spec, r.params, scenario))
        return runs + added

    return dataclasses.replace(exp, grid=grid)
