"""A run's output folder: every file appears, or none does.

The files of a run (summary.json, timeseries.parquet, the traces) are written
into a hidden staging folder inside the output folder, `DIR/.vmsched-partial-*`,
and moved into `DIR` together once all of them are complete. Whatever stops the
run before that, an error, a full disk, Ctrl-C or SIGTERM, removes the staging
folder, so nothing partial is left behind (an output folder the run made
stays, empty). The moves themselves are renames within one
folder (no data is copied, no space is needed) and run with SIGINT and SIGTERM
held back, so a signal cannot split the set either.

    with OutputSet("results/run1") as staged:
        write_atomic(staged.path("summary.json"), text)
    # here results/run1/summary.json exists, or the exception went on

`install_signal_handlers` makes SIGTERM (and SIGINT) raise `Interrupted`, so
that these clean-ups run for the command line as they do for Ctrl-C.
"""

from __future__ import annotations

import errno
import os
import signal
from collections.abc import Callable
from types import TracebackType

from vmsched.errors import Interrupted, OutputError, ScenarioError

# `pathlib` (about a seventh of `vmsched run`'s start-up, with the
# `urllib.parse` it imports) is not loaded by `vmsched run --out`: the set
# works on the paths as text, written as pathlib writes them (`pure`), and
# gives Paths (`out`, `staging`, `path`, `final`) only when asked for them.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from pathlib import Path


def pure(path: str | os.PathLike[str]) -> str:
    """`str(pathlib.Path(path))` without pathlib: the parts without empty
    ones and `.`, after the root (`/`, or `//` exactly, as POSIX allows)."""
    text = os.fspath(path)
    if text.startswith("/"):
        root = "//" if text.startswith("//") and not text.startswith("///") else "/"
    else:
        root = ""
    parts = [part for part in text.split("/") if part and part != "."]
    return root + "/".join(parts) if root or parts else "."


def join(folder: str, name: str) -> str:
    """`str(pathlib.Path(folder) / name)` for a `pure` folder and a plain name."""
    if folder == ".":
        return name
    return folder + name if folder.endswith("/") else f"{folder}/{name}"


def _parents(path: str) -> list[str]:
    """`[str(p) for p in pathlib.Path(path).parents]` for a `pure` path."""
    out = []
    while True:
        if path in (".", "/", "//"):
            return out
        head = path.rpartition("/")[0]
        if not head:
            parent = "/" if path.startswith("/") else "."
        elif path.startswith("//") and head == "/":
            parent = "//"
        else:
            parent = head
        out.append(parent)
        path = parent


def _as_path(text: str) -> Path:
    from pathlib import Path

    return Path(text)


#: The prefix of a staging folder; one left by a run killed with SIGKILL (which
#: nothing can catch) can be removed by hand.
STAGING_PREFIX = ".vmsched-partial-"

_HELD_SIGNALS = {signal.SIGINT, signal.SIGTERM}


def check_out_path(out: str | Path) -> Path:
    """`out` as a Path, refused (ScenarioError) if empty or an existing
    non-folder. Creates nothing."""
    return _as_path(check_out(out))


def check_out(out: str | Path) -> str:
    """`check_out_path`, giving the path as text (`pure`)."""
    if str(out) == "":
        raise ScenarioError(
            '"" is empty; expected the path of an output folder (such as results/run1)',
            path="--out",
        )
    p = pure(out)
    if os.path.exists(p) and not os.path.isdir(p):
        raise ScenarioError("exists and is not a folder; expected an output folder", file=str(out))
    return p


#: Tries at an unused random name before giving up (as tempfile does).
_NAME_TRIES = 100


def _unused_name(folder: str, prefix: str, make: Callable[[str], None]) -> str:
    """`make(folder/NAME)` for a new random NAME starting with `prefix`,
    retried while the name is taken: tempfile's mkdtemp and mkstemp, without
    the cost of importing tempfile (and shutil, random) at every start."""
    for _ in range(_NAME_TRIES):
        path = join(folder, f"{prefix}{os.urandom(6).hex()}")
        try:
            make(path)
        except FileExistsError:
            continue
        return path
    raise FileExistsError(errno.EEXIST, "no unused file name", join(folder, prefix))


def make_private_dir(folder: str | Path, prefix: str) -> str:
    """A new folder (mode 0700) with a random name in `folder` (its path as text)."""
    return _unused_name(pure(folder), prefix, lambda p: os.mkdir(p, 0o700))


def make_private_file(folder: str | Path, prefix: str) -> str:
    """A new empty file (mode 0600) with a random name in `folder` (its path as text)."""
    return _unused_name(
        pure(folder),
        prefix,
        lambda p: os.close(os.open(p, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)),
    )


def probe_writable(folder: str | Path) -> None:
    """Create a file in `folder` and remove it: OSError if it cannot be written."""
    os.unlink(make_private_file(folder, ".vmsched-probe-"))


def make_out_dir(out: str | Path) -> tuple[str, list[str]]:
    """Create the output folder (and its parents) if needed and check that it
    can be written; returns it and the folders this created (outermost
    first), as text (`pure`). Raises ScenarioError, having removed what it
    created."""
    p = check_out(out)
    created = [d for d in (p, *_parents(p)) if not os.path.exists(d)][::-1]
    try:
        os.makedirs(p, exist_ok=True)
        probe_writable(p)
    except OSError as exc:
        remove_empty(created)
        raise ScenarioError(
            f"cannot be written ({exc.strerror}); expected a writable output folder", file=str(out)
        ) from None
    return p, created


def remove_empty(folders: list[str] | list[Path]) -> None:
    """Remove the folders (innermost last in the list) that are empty."""
    for d in reversed(folders):
        try:
            os.rmdir(d)
        except OSError:
            return


def unwritable(exc: OSError, file: str | Path | None = None) -> OutputError:
    """A write that failed after simulating: `could not be written (No space
    left on device)`."""
    why = exc.strerror or str(exc)
    hint = "; free some space or choose another --out" if exc.errno == errno.ENOSPC else ""
    name = file if file is not None else exc.filename
    return OutputError(
        f"could not be written ({why}); nothing of the run was kept{hint}",
        file=str(name) if name is not None else None,
    )


class OutputSet:
    """The staging folder of one run's files inside `out` (see the module doc)."""

    def __init__(self, out: str | Path) -> None:
        self._out, self._created = make_out_dir(out)
        try:
            self._staging = make_private_dir(self._out, STAGING_PREFIX)
        except OSError as exc:
            remove_empty(self._created)
            raise ScenarioError(
                f"cannot be written ({exc.strerror}); expected a writable output folder",
                file=str(out),
            ) from None
        self.committed = False

    @property
    def out(self) -> Path:
        """The output folder."""
        return _as_path(self._out)

    @property
    def staging(self) -> Path:
        """The staging folder."""
        return _as_path(self._staging)

    def path(self, name: str) -> Path:
        """Where to write the file `name` of the set."""
        return _as_path(self.path_text(name))

    def path_text(self, name: str) -> str:
        """`path(name)` as text."""
        return join(self._staging, name)

    def final(self, name: str) -> Path:
        """Where the file `name` will be once the set is committed."""
        return _as_path(self.final_text(name))

    def final_text(self, name: str) -> str:
        """`final(name)` as text."""
        return join(self._out, name)

    def commit(self) -> list[str]:
        """Move every staged file into the output folder; returns their paths
        (as text)."""
        names = sorted(os.listdir(self._staging))
        with held_signals():
            for name in names:
                os.replace(join(self._staging, name), join(self._out, name))
            os.rmdir(self._staging)
            self.committed = True
        return [join(self._out, n) for n in names]

    def discard(self) -> None:
        """Remove the staging folder (the output folder stays, as `run`
        checked and made it before simulating)."""
        import shutil

        shutil.rmtree(self._staging, ignore_errors=True)

    def check_free(self, name: str, expected: str) -> None:
        """Refuse (ScenarioError, the set discarded) a file name the set
        could not take at commit: a folder already there."""
        final = self.final_text(name)
        if os.path.isdir(final):
            self.discard()
            raise ScenarioError(
                f"cannot be written (it is a folder); expected {expected}", file=final
            )

    def __enter__(self) -> OutputSet:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if exc is None:
            try:
                self.commit()
            except OSError as err:
                self.discard()
                raise unwritable(err, self._out) from None
        else:
            self.discard()
            if isinstance(exc, OSError) and not isinstance(exc, OutputError):
                raise unwritable(exc) from None


class held_signals:
    """Hold SIGINT and SIGTERM back (they are delivered on exit) for a few
    renames that must not be split."""

    def __enter__(self) -> None:
        self._old = None
        if hasattr(signal, "pthread_sigmask"):
            self._old = signal.pthread_sigmask(signal.SIG_BLOCK, _HELD_SIGNALS)

    def __exit__(self, *exc: object) -> None:
        if self._old is not None:
            signal.pthread_sigmask(signal.SIG_SETMASK, self._old)


def install_signal_handlers() -> Callable[[], None]:
    """Make SIGTERM and SIGINT raise `Interrupted` in the main thread (the
    command line's way to clean up on either); returns a function that puts
    the previous handlers back. Does nothing outside the main thread. A
    process forked from this one (a worker of a pool) keeps the default
    action: it dies of the signal as before."""
    owner = os.getpid()

    def handler(signum: int, _frame: object) -> None:
        if os.getpid() != owner:
            signal.signal(signum, signal.SIG_DFL)
            os.kill(os.getpid(), signum)
            return
        raise Interrupted(signum)

    try:
        old = {s: signal.signal(s, handler) for s in _HELD_SIGNALS}
    except ValueError:
        # signal.signal refuses exactly when this is not the main thread
        # (of the main interpreter): nothing was changed.
        return lambda: None

    def restore() -> None:
        for s, h in old.items():
            signal.signal(s, h)

    return restore
