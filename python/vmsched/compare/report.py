"""The report of a comparison: its tables, report.html and results.csv."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from vmsched.api import prepare_out_dir, write_atomic
from vmsched.compare.metrics import SAME_LATENCY_US, SAME_PCT_POINTS, SAME_REL, workload_metrics
from vmsched.compare.port import _fmt_value
from vmsched.compare.spec import (
    FIG_CPU_SHARE,
    FIG_CPU_TIME,
    FIG_LATENCY,
    FIG_WORKLOAD,
    MAX_METRIC_PANELS,
    REPLICATION_COLUMNS,
    REPORT_HTML,
    RESULT_COLUMNS,
    RESULTS_CSV,
)


class Report:
    """The report of a `Comparison` (a base class of it)."""

    def _tables(self):
        import pandas as pd

        from vmsched.plot import LATENCY_STATS, latency_entries

        names = self._domain_names()
        cpu = pd.DataFrame(
            {"domain": names}
            | {r.label: [float(d["cpu_pct"]) for d in r.summary["domains"]] for r in self.runs}
        )
        lat_rows = []
        entries = [latency_entries(r.summary) for r in self.runs]
        for k, e in enumerate(entries[0]):
            for stat in LATENCY_STATS:
                row = {"domain": e.label, "statistic": stat}
                for r, es in zip(self.runs, entries, strict=True):
                    row[r.label] = es[k].stats[stat] if es[k].wakeups else None
                lat_rows.append(row)
            row = {"domain": e.label, "statistic": "wake-ups"}
            for r, es in zip(self.runs, entries, strict=True):
                row[r.label] = es[k].wakeups
            lat_rows.append(row)
        work_rows = []
        for metric in self._workload_metrics():
            for i, n in enumerate(names):
                row = {"domain": n, "metric": metric}
                vals = [workload_metrics(r.summary["domains"][i]).get(metric) for r in self.runs]
                if all(v is None for v in vals):
                    continue
                row |= {r.label: v for r, v in zip(self.runs, vals, strict=True)}
                work_rows.append(row)
        params = pd.DataFrame(
            {"domain": names}
            | {
                r.label: [
                    ", ".join(f"{k}={_fmt_value(v)}" for k, v in d.get("sched", {}).items()) or "—"
                    for d in r.summary["domains"]
                ]
                for r in self.runs
            }
        )
        return cpu, pd.DataFrame(lat_rows), pd.DataFrame(work_rows), params

    def report_blocks(self, figures: dict[str, Any] | None = None) -> list[Any]:
        """The report as htmlreport blocks."""
        import pandas as pd

        from vmsched import htmlreport as h

        figs = figures if figures is not None else self.figures()
        s0 = self.runs[0].summary
        host = s0["host"]
        scen = self.source or "a scenario given as Python objects"
        quick = (
            f" With --quick, the run was compressed in time by a factor of "
            f"{self.quick_factor:.3g} (duration, warm-up, sampling interval and action times)."
            if self.quick_factor != 1.0
            else ""
        )
        blocks: list[Any] = [
            h.Paragraph(
                f"{len(self.runs)} runs of {scen} ({s0['title'] or 'untitled'}): "
                f"{host['pcpus']} PCPUs, {s0['measured_s']:g} s measured after a "
                f"{s0['warmup_s']:g} s warm-up, {self._seeds_text()}. CPU % follows xentop: "
                f"100 = one PCPU.{quick}"
            ),
            h.Code(self.command),
            h.Heading("Runs"),
        ]
        run_rows = [
            {
                "run": r.label,
                "scheduler": r.spec.scheduler,
                "scheduler parameters as used": ", ".join(
                    f"{k}={_fmt_value(v)}" for k, v in r.summary["scheduler_params"].items()
                )
                or "—",
                "events": int(r.summary["events"]),
                "wall s": float(r.summary["wall_s"]),
            }
            for r in self.runs
        ]
        cpu, lat, work, params = self._tables()
        blocks += [
            h.Table(pd.DataFrame(run_rows)),
            h.Table(params, caption="Per-domain scheduler parameters as used"),
            h.Heading("Parameters adjusted"),
        ]
        adjusted = [r for r in self.runs if r.notes]
        if adjusted:
            blocks.append(
                h.Paragraph(
                    "Scheduler parameters are Xen's own and differ between schedulers. Each run "
                    "keeps the scenario's parameters that its scheduler declares (converting "
                    "time units), and drops the others, which then take that scheduler's "
                    "defaults:"
                )
            )
            for r in adjusted:
                items = [h.Verdict(n, "warn" if " dropped:" in n else "info") for n in r.notes]
                blocks.append(h.Verdicts(items, title=r.label))
        else:
            blocks.append(
                h.Paragraph("None: every parameter of the scenario applies unchanged to every run.")
            )
        blocks.append(h.Heading("Verdicts"))
        blocks.append(
            h.Paragraph(
                "For each metric, the runs with the best and worst value (or the highest and "
                "lowest, for a metric with no better side). Values within "
                f"{SAME_REL:.0%} of each other count as the same, and so do percentages "
                f"within {SAME_PCT_POINTS:g} points and latencies within {SAME_LATENCY_US:g} µs."
                + (
                    " With several replications, two runs also count as the same unless "
                    "the 95 % intervals of their means separate."
                    if self.replications > 1
                    else ""
                )
            )
        )
        for metric, sentences in self.verdicts():
            blocks.append(h.Verdicts(sentences, title=metric))
        blocks += [
            h.Heading("CPU share"),
            h.Figure(
                figs.get(FIG_CPU_TIME),
                "CPU % per domain over time, one panel per run; each sample is a step over "
                "the interval it covers.",
                FIG_CPU_TIME,
            ),
            h.Figure(
                figs.get(FIG_CPU_SHARE), "CPU % per domain over the measured run.", FIG_CPU_SHARE
            ),
            h.Table(cpu, caption="CPU % per domain (100 = one PCPU)"),
            h.Heading("Wake-up latency"),
            h.Paragraph(
                "Time from a wake-up (the VCPU leaves blocked because its guest got work) to "
                "the moment a PCPU switches to it, in µs; percentiles within 1/16 of the true "
                "value, max exact (docs/metrics.md). Domains whose VCPUs never blocked have "
                "none. A domain with several VCPUs is shown per VCPU."
            ),
            h.Figure(
                figs.get(FIG_LATENCY),
                "Wake-up latency p50, p95, p99 and max (µs, symmetric-log scale), per run.",
                FIG_LATENCY,
            ),
            h.Table(lat, caption="Wake-up latency (µs) and number of wake-ups"),
            h.Heading("Application metrics"),
        ]
        if FIG_WORKLOAD in figs or (not figs and len(work)):
            blocks += [
                h.Figure(
                    figs.get(FIG_WORKLOAD),
                    "Each workload's numeric metrics (docs/workloads.md), per domain and run"
                    + (
                        f"; the first {MAX_METRIC_PANELS} panels."
                        if len(work) > MAX_METRIC_PANELS
                        else "."
                    ),
                    FIG_WORKLOAD,
                ),
                h.Table(work, caption="Workload metrics"),
            ]
        else:
            blocks.append(h.Paragraph("No workload in this scenario reports a numeric metric."))
        blocks += [
            h.Heading("Files"),
            h.Paragraph(
                f"{RESULTS_CSV}: one row per run, domain and metric (wake-up metrics per VCPU), "
                f"columns {', '.join(RESULT_COLUMNS + REPLICATION_COLUMNS)}: value is the mean "
                "over the replications, ci95_low and ci95_high the 95 % interval of that mean "
                "(empty with one replication). The figures are also PNG files beside this "
                "report."
            ),
        ]
        if not figs:
            # --no-figures: the tables stand alone.
            blocks = [b for b in blocks if not (isinstance(b, h.Figure) and b.figure is None)]
        return blocks

    def save(self, out: str | Path, figures: bool = True) -> Path:
        """Write report.html, its PNGs and results.csv into `out`; returns the folder.
        `figures=False` leaves the figures out of the report (and writes no PNGs)."""
        from vmsched.htmlreport import write_report

        out_dir = prepare_out_dir(out)
        # %.12g: whole numbers without ".0", others to the precision they were measured.
        csv = self.results().to_csv(index=False, float_format="%.12g")
        write_atomic(out_dir / RESULTS_CSV, csv)
        title = "Scheduler comparison: " + (
            self.runs[0].summary["title"] or Path(self.source or "scenario").name
        )
        figs = self.figure_pngs() if figures else {}
        write_report(out_dir / REPORT_HTML, title, self.report_blocks(figs))
        return out_dir
