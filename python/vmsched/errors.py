"""Errors a vmsched user can meet.

`ScenarioError` is bad input: it names the file, the field path, the value and
what was expected, and the CLI exits with status 2 on it; so is `SchedulerError`,
the failure of a scheduler written in Python (its traceback, or the hook and the
value it returned). `OutputError` is a result that could not be written once the
simulation ran (a full disk): status 3, and nothing of the run is left behind.
`InternalError` is a bug in vmsched (or in a scheduler): it says so and how to
report it. `Interrupted` is SIGINT or SIGTERM turned into an exception, so that
partial files are removed on the way out.
"""

from __future__ import annotations

from vmsched import _core


class VmschedError(Exception):
    """Base class of vmsched's errors."""


class ScenarioError(VmschedError, ValueError):
    """A mistake in a scenario or command; nothing was simulated."""

    def __init__(self, message: str, *, file: str | None = None, path: str = "") -> None:
        self.file = file
        self.path = path
        self.message = message
        super().__init__(self.__str__())

    def __str__(self) -> str:
        where = ": ".join(x for x in (self.file, self.path) if x)
        return one_line(f"{where}: {self.message}" if where else self.message)


def one_line(text: str) -> str:
    """`text` with its control characters (a newline in a domain name, a
    file name or a TOML error) escaped, so that an error is one line."""
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() else c.encode("unicode_escape").decode() for c in text)


class OutputError(VmschedError, OSError):
    """A run's results could not be written (disk full, folder gone): the run
    was simulated, nothing of it was kept."""

    def __init__(self, message: str, *, file: str | None = None) -> None:
        self.file = file
        self.message = message
        super().__init__(self.__str__())

    def __str__(self) -> str:
        return one_line(f"{self.file}: {self.message}" if self.file else self.message)


class Interrupted(KeyboardInterrupt):
    """SIGINT or SIGTERM arrived: the run stops and removes what it had begun
    to write. `signum` is the signal's number. A KeyboardInterrupt, so that no
    `except Exception` swallows it."""

    def __init__(self, signum: int) -> None:
        self.signum = signum
        super().__init__(f"interrupted by signal {signum}")


def unknown_name(what: str, name: str, known: list[str], *, path: str = "") -> ScenarioError:
    """`unknown scheduler "x"; expected one of a, b; did you mean 'a'?`"""
    import difflib  # only when a name is wrong

    close = difflib.get_close_matches(name, known, n=1)
    hint = f"; did you mean '{close[0]}'?" if close else ""
    return ScenarioError(
        f'unknown {what} "{name}"; expected one of {", ".join(known)}{hint}', path=path
    )


class SchedulerError(ScenarioError):
    """A scheduler written in Python failed: it raised (its traceback is in the
    message), returned what a hook must not, did not return in time, or broke
    a rule the engine checks. Like bad input, the CLI exits with status 2."""


class WorkerLost(VmschedError, RuntimeError):
    """A worker process ended before returning its batch (killed, or out of memory): not
    a bug in vmsched. The CLI says so in one line and exits with status 1; the runs that
    finished are kept where the command keeps them, and `--resume` goes on from there."""


class InternalError(VmschedError, RuntimeError):
    """A bug in vmsched or in a scheduler (an invariant broke)."""


def from_core(exc: BaseException, file: str | None) -> VmschedError:
    """Translate an exception raised by the Rust core."""
    if isinstance(exc, _core.ScenarioError):
        path, message = exc.args
        return ScenarioError(message, file=file, path=path)
    if isinstance(exc, _core.SchedulerFault):
        return _scheduler_error(exc, file)
    if isinstance(exc, _core.InternalError):
        return InternalError(str(exc))
    return InternalError(
        f"internal error: {type(exc).__name__}: {exc} "
        "(this is a bug in vmsched; please report it with the scenario that triggers it)"
    )


def _scheduler_error(exc: BaseException, file: str | None) -> SchedulerError:
    """The fault of a Python scheduler, with the user's traceback when it raised."""
    import traceback

    cause = exc.__cause__
    text = str(exc)
    if cause is not None:
        frames = traceback.extract_tb(cause.__traceback__)
        shown = "".join(traceback.format_list(frames)).rstrip()
        text += "\nTraceback (most recent call last):\n" + shown if shown else ""
        text += f"\n{type(cause).__name__}: {cause}"
    return SchedulerError(text, file=file)
