"""`vmsched reproduce` as a pipeline: each experiment's figures are drawn as soon as its
own runs are back, in the same worker pool, while the other experiments' runs go on.

Simulating every experiment with one pool of workers and then drawing every figure
with another leaves the main process's work (each experiment's table, verdicts,
figure data and report) in a phase of its own at the end. Here one pool does both:
the runs of all experiments are queued first; when the last run of an experiment
comes back, the main process makes its table and verdicts and queues its figures
behind the runs still queued; when its last figure is back, `on_done` gets the
experiment (the command writes its report then, while the workers draw the other
experiments' figures). Results are the same as `run_experiments` followed by
`figures.draw_all`: every run has a fixed seed and is put back in grid order, and a
figure depends only on its experiment's table.

With one job, or on Ray, the two phases simply run one after the other.
"""

from __future__ import annotations

import functools
import time
from collections import deque
from collections.abc import Callable, Sequence
from typing import Any

from vmsched.batch import Failure, RunStore, Workers, _run_batch, batch_sizes
from vmsched.progress import RunsProgress
from vmsched.reproduce.figures import draw, draw_all, figure_data
from vmsched.reproduce.framework import (
    Experiment,
    Reproduction,
    _simulate,
    default_jobs,
    plan_experiments,
    run_batch_size,
    run_experiments,
    unique_scenarios,
)

#: on_done(k, reproduction, {file: PNG bytes}): experiment k is complete.
OnDone = Callable[[int, Reproduction, dict[str, bytes]], None]


def run_and_draw(
    experiments: Sequence[Experiment],
    *,
    quick: bool = False,
    replications: int | None = None,
    figures: bool = True,
    on_done: OnDone | None = None,
    progress: bool = True,
    backend: str = "local",
    jobs: int | None = None,
    address: str | None = None,
    store: RunStore | None = None,
) -> tuple[list[Reproduction], list[dict[str, bytes]]]:
    """Simulate `experiments` and draw their figures (none without `figures`); per
    experiment, its Reproduction and {file: PNG bytes}, in the order given. `on_done`
    is called once per experiment, in the order they complete."""
    n_jobs = default_jobs(jobs)
    if backend != "local" or n_jobs <= 1:
        reps = run_experiments(
            experiments,
            quick=quick,
            jobs=n_jobs,
            progress=progress,
            replications=replications,
            backend=backend,
            address=address,
            store=store,
        )
        pngs = (
            draw_all(reps, backend=backend, jobs=n_jobs, address=address)
            if figures
            else [{} for _ in reps]
        )
        for k, (rep, png) in enumerate(zip(reps, pngs, strict=True)):
            if on_done is not None:
                on_done(k, rep, png)
        return reps, pngs
    return _Pipeline(experiments, quick, replications, figures, on_done, n_jobs, store).run(
        progress
    )


class _Pipeline:
    def __init__(
        self,
        experiments: Sequence[Experiment],
        quick: bool,
        replications: int | None,
        figures: bool,
        on_done: OnDone | None,
        jobs: int,
        store: RunStore | None,
    ) -> None:
        self.quick = quick
        self.figures = figures
        self.on_done = on_done
        self.jobs = jobs
        self.store = store
        self.plans, trees = plan_experiments(experiments, quick, replications)
        self.label = "reproduce " + (experiments[0].id if len(experiments) == 1 else "experiments")
        self.unique, self.where = unique_scenarios(trees)
        self.summaries: list[Any] = [None] * len(self.unique)
        # Per experiment: the distinct runs it needs (`left`: how many are still out).
        self.needs = [sorted(set(self.where[p.first : p.first + len(p.runs)])) for p in self.plans]
        self.users: dict[int, list[int]] = {}
        for k, needed in enumerate(self.needs):
            for i in needed:
                self.users.setdefault(i, []).append(k)
        self.left = [len(n) for n in self.needs]
        self.reps: list[Reproduction | None] = [None] * len(self.plans)
        self.pngs: list[dict[str, bytes]] = [{} for _ in self.plans]
        self.figs_left = [0] * len(self.plans)
        self.queue: deque[tuple[Any, Callable[[Any], Any], Any]] = deque()
        self.t0 = time.perf_counter()

    def run(self, progress: bool) -> tuple[list[Reproduction], list[dict[str, bytes]]]:
        keys: list[str] = []
        skip: set[int] = set()
        if self.store is not None:
            keys = [self.store.key(_simulate, tree) for tree in self.unique]
            for i, key in enumerate(keys):
                found, result = self.store.load(key)
                if found:
                    self.summaries[i] = result
                    skip.add(i)
            self.store.reused = len(skip)
        todo = [i for i in range(len(self.unique)) if i not in skip]
        sizes = batch_sizes(len(todo), self.jobs, run_batch_size(len(self.unique), self.jobs))
        simulate_batch = functools.partial(_run_batch, _simulate)
        k = 0
        for size in sizes:
            batch = [(i, self.unique[i]) for i in todo[k : k + size]]
            self.queue.append((("runs", None), simulate_batch, batch))
            k += size
        bar = RunsProgress(len(self.unique), self.label, progress)
        done, failed = len(skip), 0
        with Workers("local", self.jobs) as workers:
            try:
                bar.update(done)
                for k, needed in enumerate(self.needs):
                    if not needed:  # no run at all: complete already
                        self._experiment_done(k)
                for i in sorted(skip):
                    self._run_done(i)
                for (kind, k), value in workers.pool.imap_queue(self.queue):
                    if kind == "figure":
                        file, png = value
                        self._figure_done(k, file, png)
                        continue
                    kept = {}
                    first_failure = None
                    for index, summary in value:
                        done += 1
                        if isinstance(summary, Failure):
                            failed += 1
                            first_failure = first_failure or summary
                            continue
                        self.summaries[index] = summary
                        if self.store is not None:
                            kept[keys[index]] = summary
                    if self.store is not None:
                        self.store.save(kept)
                    if first_failure is not None:
                        raise first_failure.exception or RuntimeError(str(first_failure))
                    bar.update(done, failed)
                    for index, _ in value:
                        self._run_done(index)
            finally:
                bar.close()
        if any(rep is None for rep in self.reps) or any(self.figs_left):
            raise RuntimeError("reproduce pipeline: an experiment did not complete (a bug)")
        return [rep for rep in self.reps if rep is not None], self.pngs

    def _run_done(self, index: int) -> None:
        for k in self.users.get(index, []):
            self.left[k] -= 1
            if self.left[k] == 0:
                self._experiment_done(k)

    def _experiment_done(self, k: int) -> None:
        plan = self.plans[k]
        mine = [self.summaries[i] for i in self.where[plan.first : plan.first + len(plan.runs)]]
        # Its wall_s: from the start of the whole batch until this experiment's own runs
        # were back (not the batch's total, nor this experiment's own cost).
        rep = plan.reproduction(mine, self.quick, time.perf_counter() - self.t0, self.jobs)
        self.reps[k] = rep
        figs = rep.experiment.figures if self.figures else []
        if not figs:
            self._complete(k)
            return
        self.figs_left[k] = len(figs)
        data = [figure_data(rep, f) for f in figs]
        # Behind the runs still queued (drawn between runs, figures cost about 10 % more
        # CPU in all, measured: the workers alternate between the engine and
        # matplotlib), the figures with most panels (the longest to draw) first.
        for d in sorted(data, key=lambda d: -len(d.panels)):
            self.queue.append((("figure", k), _draw_named, d))

    def _figure_done(self, k: int, file: str, png: bytes) -> None:
        self.pngs[k][file] = png
        self.figs_left[k] -= 1
        if self.figs_left[k] == 0:
            self._complete(k)

    def _complete(self, k: int) -> None:
        rep = self.reps[k]
        assert rep is not None
        # The figures in the experiment's order, as draw_all gives them.
        order = [f.file for f in rep.experiment.figures] if self.figures else []
        self.pngs[k] = {file: self.pngs[k][file] for file in order}
        if self.on_done is not None:
            self.on_done(k, rep, self.pngs[k])


def _draw_named(data: Any) -> tuple[str, bytes]:
    """(file, PNG bytes) of one figure (in a worker)."""
    return data.file, draw(data)
