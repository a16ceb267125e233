"""A progress bar over a batch of runs (ALERT, compare, reproduce).

Shown on stderr when it is a terminal (stdout carries the results), once the
work has taken `after_s` seconds; a callable `progress` receives
(done, total) instead.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable


class RunsProgress:
    """`update(done)` after each run, `close()` at the end."""

    def __init__(
        self,
        total: int,
        label: str,
        progress: bool | Callable[[int, int], None],
        after_s: float | None = None,
    ):
        from vmsched import api

        self.total = total
        self.label = label
        self.callback = progress if callable(progress) else None
        self.enabled = progress is True and sys.stderr.isatty()
        self.after_s = api.PROGRESS_AFTER_S if after_s is None else after_s
        self.start = time.monotonic()
        self.bar = None
        self.task = None

    def update(self, done: int) -> None:
        if self.callback is not None:
            self.callback(done, self.total)
        if not self.enabled:
            return
        if self.bar is None:
            if done >= self.total or time.monotonic() - self.start < self.after_s:
                return
            from rich.console import Console
            from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

            self.bar = Progress(
                TextColumn("{task.description}"),
                BarColumn(),
                TextColumn("{task.completed}/{task.total} runs"),
                TimeElapsedColumn(),
                console=Console(stderr=True),
                transient=True,
            )
            self.bar.start()
            self.task = self.bar.add_task(self.label, total=self.total)
        self.bar.update(self.task, completed=done)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.stop()
