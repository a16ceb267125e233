"""ALERT, the ALlocation ERror Test of Cherkasova, Gupta and Vahdat (2007, §5.2).

What it measures. One PCPU; Dom0 is allocated a fixed 6 % of it; Dom1 runs a
CPU-hungry loop whose allocation is fixed to a target A. Every second the CPU
usage U of Dom1 is sampled and its relative allocation error

    Er = (U - A) / A        (positive = the domain got more than allocated)

is recorded, for A = 1..10 % and 20..90 %, 3 minutes per target. The paper
prints Er = (A - U)/A, but that form cannot exceed +100 % and does not fit the
errors its text reports; (U - A)/A is the one that does, so it is the one
used here.

"Allocated A %" means "A % of one PCPU and never more, even when the PCPU is
otherwise idle" (NWC mode). Each scheduler says that in its own parameters, and
declares how in its own registration (`allocation` in the catalogue: Credit:
cap = A; SEDF: slice = A % of a 10 ms period, no extra time; ARINC 653: a frame
of A % of a 10 ms major frame; a Python scheduler's `allocation` attribute).
That is configuration, the same for every target and for Dom0's 6 %, never a
correction. Any scheduler that declares one runs here, a user's included.

    from vmsched.alert import run_alert, compare
    r = run_alert("credit", quick=True)          # AlertResult
    r.targets                                    # per-target statistics (DataFrame)
    r.save("results/alert")                      # CSVs, summary.json, report.md, plots
    compare(["credit@3.0.3", "credit@4.22"], quick=True).save("results/alert-cmp")

The command line is `vmsched alert` (see docs/alert.md).

The package, by concept: `setup` (the paper's setup), `allocation` (each scheduler's
allocation rule and the Xen version), `runs` (one run's scenario, the batch layer),
`results` (statistics, AlertResult, files), `experiment` (planning, running, `compare`),
`plots`, `report` (report.md) and `cli` (`vmsched alert`).
"""

from vmsched.alert.allocation import (
    Allocation,
    Quantity,
    allocations,
    resolve_version,
)
from vmsched.alert.cli import (
    add_parser,
    main,
)
from vmsched.alert.experiment import (
    CompareResult,
    compare,
    run_alert,
)
from vmsched.alert.plots import (
    COMPARE_PLOT_FILES,
    PLOT_FILES,
    SMP_TIMESERIES_PLOT,
)
from vmsched.alert.results import (
    SAMPLE_COLUMNS,
    TARGET_COLUMNS,
    AlertResult,
    relative_error_pct,
)
from vmsched.alert.runs import (
    Where,
    build_scenario,
    measured_domains,
)
from vmsched.alert.setup import (
    DOM0_ALLOCATION_PCT,
    DOM0_LOADS,
    DOM0_XENMON_UTIL_PCT,
    MANAGER_ERROR_PCT,
    PAPER_DURATION_S,
    PAPER_TARGETS_PCT,
    PAPER_XEN_VERSION,
    PCPUS,
    QUICK_DURATION_S,
    QUICK_REPLICATIONS,
    QUICK_TARGETS_PCT,
    REPLICATIONS,
    SAMPLE_MS,
    SMP_DURATION_S,
    SMP_PCPUS,
    SMP_TARGET_PCT,
    WARMUP_S,
    WITHIN_PCT,
    XENBAKED_POLL_MS,
    window_phase_s,
)

__all__ = [
    "PAPER_TARGETS_PCT",
    "QUICK_TARGETS_PCT",
    "PAPER_DURATION_S",
    "SMP_DURATION_S",
    "QUICK_DURATION_S",
    "SAMPLE_MS",
    "DOM0_ALLOCATION_PCT",
    "SMP_TARGET_PCT",
    "PCPUS",
    "SMP_PCPUS",
    "PAPER_XEN_VERSION",
    "XENBAKED_POLL_MS",
    "DOM0_XENMON_UTIL_PCT",
    "WARMUP_S",
    "REPLICATIONS",
    "QUICK_REPLICATIONS",
    "window_phase_s",
    "WITHIN_PCT",
    "DOM0_LOADS",
    "MANAGER_ERROR_PCT",
    "Quantity",
    "Allocation",
    "relative_error_pct",
    "allocations",
    "resolve_version",
    "build_scenario",
    "measured_domains",
    "Where",
    "SAMPLE_COLUMNS",
    "TARGET_COLUMNS",
    "AlertResult",
    "run_alert",
    "CompareResult",
    "compare",
    "PLOT_FILES",
    "SMP_TIMESERIES_PLOT",
    "COMPARE_PLOT_FILES",
    "add_parser",
    "main",
]
