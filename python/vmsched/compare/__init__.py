"""`vmsched compare`: one scenario under several schedulers and parameter variants, side by side.

    vmsched compare scenarios/credit-three-vms.toml --schedulers credit,credit2,sedf \
        --variant 'credit:tslice_ms=5' --variant 'credit:web.cap=50' --out results/cmp

Each run is the scenario moved to one scheduler (a *port*, below) with the variant's
settings applied; the runs are simulated in parallel processes and the folder gets
`report.html` (self-contained), its figures as PNGs and `results.csv` (one row per
run x domain x metric). From Python::

    from vmsched.compare import compare
    c = compare("scenarios/credit-three-vms.toml", schedulers=["credit", "credit2"],
                variants=["credit:tslice_ms=5"])
    c.results()                  # the rows of results.csv (DataFrame)
    c.verdicts()                 # [(metric, [sentences])]
    c.save("results/cmp")

**Variants.** `SCHED[:SETTING,SETTING,...]`; a SETTING is `PARAM=VALUE` for a
pool-wide parameter (`[scheduler]`) or `DOMAIN.PARAM=VALUE` for one domain's
(`[domain.sched]`). Values are TOML values (`5`, `2.5`, `true`, `[...]`); parameters
declared as strings (`xen_version`, `runqueue`) take the text as it is. The label of
a run is its variant as written (normalised), or the scheduler's name.

**Porting a scenario to another scheduler.** Scheduler parameters are Xen's own and
differ between schedulers, so a parameter of the scenario (in `[scheduler]`,
`[[domain]]`/`[domain.sched]` or an `[[action]]`) is

- kept when the target scheduler declares it in the same scope and unit;
- converted when it declares it in another time unit (SEDF's `period` in ms is
  RTDS's `period` in us); dropped if the value is then not whole where the target
  needs an integer;
- dropped when the target does not declare it (Credit's `tslice_ms` under SEDF),
  and also when the target's validation rejects the carried value (a `xen_version`
  the target does not have, a parameter the variant's `xen_version` lacks);
- an action left with nothing to do is dropped.

Every change is listed in the report ("Parameters adjusted") with its reason; a kept
parameter whose default differs between the two schedulers (SEDF's `weight` is not
Credit's) is pointed out too. The variant's own settings are never dropped: a wrong
one is bad input.

The package, by concept: `spec` (run specifications and variants), `port` (porting a
scenario to a scheduler), `running` (`prepare`, `compare`, the replications), `metrics`
(metrics, directions, verdict sentences), `comparison` (`Comparison`), `figures`,
`report` and `cli` (`vmsched compare`).
"""

from vmsched.compare.cli import (
    add_parser,
    main,
)
from vmsched.compare.comparison import (
    Comparison,
)
from vmsched.compare.metrics import (
    DOMAIN_METRICS,
    HIGHER_IS_BETTER_WORDS,
    LATENCY_METRICS,
    LOWER_IS_BETTER_WORDS,
    METRIC_DIRECTION,
    RATE_WORDS,
    SAME_LATENCY_US,
    SAME_PCT_POINTS,
    SAME_REL,
    MetricValues,
    differs,
    direction,
    verdict_sentence,
    workload_metrics,
)
from vmsched.compare.port import (
    port,
    shorten,
)
from vmsched.compare.running import (
    Prepared,
    combine,
    compare,
    prepare,
)
from vmsched.compare.spec import (
    ACTION_KEYS,
    DOMAIN_SHORTHANDS,
    FIG_CPU_SHARE,
    FIG_CPU_TIME,
    FIG_LATENCY,
    FIG_WORKLOAD,
    MAX_METRIC_PANELS,
    MIN_SAMPLE_MS,
    NS_PER_UNIT,
    QUICK_DURATION_S,
    QUICK_REPLICATIONS,
    REPLICATION_COLUMNS,
    REPLICATIONS,
    REPORT_HTML,
    RESULT_COLUMNS,
    RESULTS_CSV,
    Backend,
    Run,
    RunSpec,
    parse_variant,
    plan_runs,
)

__all__ = [
    "QUICK_DURATION_S",
    "MIN_SAMPLE_MS",
    "ACTION_KEYS",
    "DOMAIN_SHORTHANDS",
    "NS_PER_UNIT",
    "SAME_REL",
    "SAME_PCT_POINTS",
    "SAME_LATENCY_US",
    "REPLICATIONS",
    "QUICK_REPLICATIONS",
    "MAX_METRIC_PANELS",
    "REPORT_HTML",
    "RESULTS_CSV",
    "FIG_CPU_TIME",
    "FIG_CPU_SHARE",
    "FIG_LATENCY",
    "FIG_WORKLOAD",
    "RESULT_COLUMNS",
    "REPLICATION_COLUMNS",
    "METRIC_DIRECTION",
    "LOWER_IS_BETTER_WORDS",
    "HIGHER_IS_BETTER_WORDS",
    "RunSpec",
    "parse_variant",
    "plan_runs",
    "port",
    "shorten",
    "Run",
    "Backend",
    "combine",
    "Prepared",
    "prepare",
    "compare",
    "RATE_WORDS",
    "workload_metrics",
    "direction",
    "DOMAIN_METRICS",
    "LATENCY_METRICS",
    "MetricValues",
    "Comparison",
    "differs",
    "verdict_sentence",
    "add_parser",
    "main",
]
