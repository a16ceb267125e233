"""`python -m vmsched`: the same as the `vmsched` command."""

from vmsched.cli import entry

raise SystemExit(entry())
