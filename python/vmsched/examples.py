"""`vmsched examples`: the example scenarios that come with the package.

The README's and the docs' examples run `scenarios/NAME.toml`; after `pip
install` there is no checkout, so the package carries those files (in a
source checkout `python/vmsched/scenarios` is a link to `scenarios/`; a wheel
holds the files themselves, `[tool.maturin] include` in pyproject.toml).
`vmsched examples` lists them and `--copy DIR` puts them where the commands
of the docs expect them (`vmsched examples --copy .` makes `./scenarios/`).
"""

from __future__ import annotations

import argparse
import shutil
import tomllib
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from vmsched.errors import ScenarioError, unknown_name

#: Where the package keeps the example scenarios.
EXAMPLES_DIR = Path(__file__).resolve().parent / "scenarios"


def examples() -> dict[str, Path]:
    """The example scenarios by name (file name without `.toml`)."""
    return {p.stem: p for p in sorted(EXAMPLES_DIR.glob("*.toml"))}


def title(path: Path) -> str:
    """A scenario's `title`, or "" if it has none."""
    try:
        t = tomllib.loads(path.read_text(encoding="utf-8")).get("title", "")
    except (OSError, tomllib.TOMLDecodeError):
        return ""
    return t if isinstance(t, str) else ""


def main(args: argparse.Namespace) -> int:
    """List the examples, or copy them into DIR/scenarios/."""
    found = examples()
    names = args.names or list(found)
    for n in names:
        if n not in found:
            raise unknown_name("example", n, list(found), path="NAME")
    if args.copy is None:
        for n in names:
            print(f"{n}: {title(found[n])}")
        return 0
    target = Path(args.copy) / "scenarios"
    try:
        target.mkdir(parents=True, exist_ok=True)
        for n in names:
            dest = target / found[n].name
            if not dest.exists():
                shutil.copyfile(found[n], dest)
    except OSError as exc:
        raise ScenarioError(
            f"cannot be written ({exc.strerror}); expected a writable folder", file=str(target)
        ) from None
    print(f"{len(names)} example scenarios in {target}/ (files already there were kept)")
    return 0


def add_parser(subparsers: Any, parents: Sequence[argparse.ArgumentParser] = ()) -> Any:
    """Register `vmsched examples` on an argparse subparsers object."""
    about = "list the example scenarios that come with vmsched, or copy them (--copy DIR)"
    p = subparsers.add_parser("examples", parents=list(parents), help=about, description=about)
    p.add_argument("names", metavar="NAME", nargs="*", help="only these examples")
    p.add_argument(
        "--copy",
        metavar="DIR",
        help="copy them into DIR/scenarios/ (existing files are kept), so that the docs' "
        "commands (vmsched run scenarios/NAME.toml) work from DIR",
    )
    p.set_defaults(func=main)
    return p
