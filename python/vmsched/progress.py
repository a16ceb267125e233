"""A progress bar over a batch of runs (sweeps, ALERT, compare, reproduce).

Shown on stderr when it is a terminal (stdout carries the results), once the
work has taken `after_s` seconds: runs done of all, runs failed, time elapsed
and time left. A callable `progress` receives (done, total) instead.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable


class RunsProgress:
    """`update(done, failed)` after each batch of runs, `close()` at the end."""

    def __init__(
        self,
        total: int,
        label: str,
        progress: bool | Callable[[int, int], None],
        after_s: float | None = None,
        initial: int = 0,
    ):
        from vmsched import api

        self.total = total
        self.label = label
        self.callback = progress if callable(progress) else None
        self.enabled = progress is True and sys.stderr.isatty()
        self.after_s = api.PROGRESS_AFTER_S if after_s is None else after_s
        #: Runs already done before this bar started (a resumed sweep): the time left
        #: is estimated from the runs done since.
        self.initial = initial
        self.start = time.monotonic()
        self.bar = None
        self.task = None

    def update(self, done: int, failed: int = 0) -> None:
        if self.callback is not None:
            self.callback(done, self.total)
        if not self.enabled:
            return
        if self.bar is None:
            if done >= self.total or time.monotonic() - self.start < self.after_s:
                return
            from rich.console import Console
            from rich.progress import (
                BarColumn,
                Progress,
                TextColumn,
                TimeElapsedColumn,
                TimeRemainingColumn,
            )

            self.bar = Progress(
                TextColumn("{task.description}"),
                BarColumn(),
                TextColumn("{task.completed}/{task.total} runs"),
                TextColumn("{task.fields[failed]}"),
                TimeElapsedColumn(),
                TimeRemainingColumn(),
                console=Console(stderr=True),
                transient=True,
            )
            self.bar.start()
            self.task = self.bar.add_task(
                self.label, total=self.total, completed=self.initial, failed=""
            )
        self.bar.update(self.task, completed=done, failed=f"{failed} failed" if failed else "")

    def close(self) -> None:
        if self.bar is not None:
            self.bar.stop()
