"""`python -m vmsched.alert`: the `vmsched alert` command on its own."""

from vmsched.alert.cli import _standalone

raise SystemExit(_standalone())
