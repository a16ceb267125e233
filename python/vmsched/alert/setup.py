"""The paper's setup of ALERT: targets, run lengths, Dom0's allocation and load, the
measurement windows' phase."""

from __future__ import annotations

# ----- the paper's setup ---------------------------------------------------------------

#: Dom1's allocation targets in the paper: 1..10 % by 1, 20..90 % by 10 (18 points).
PAPER_TARGETS_PCT: tuple[float, ...] = (*range(1, 11), *range(20, 100, 10))
#: Targets of `--quick`.
QUICK_TARGETS_PCT: tuple[float, ...] = (1, 5, 10, 50, 90)
#: Length of one target's experiment in the paper ("each experiment i continues for 3 min").
PAPER_DURATION_S = 180.0
#: Length of the SMP experiment in the paper ("Each experiment is performed for 10 min").
SMP_DURATION_S = 600.0
#: Length of each run under `--quick`.
QUICK_DURATION_S = 10.0
#: Sampling interval ("we sample CPU usage of Dom1 at the second time scale").
SAMPLE_MS = 1000
#: Dom0's allocation ("a fixed, 6% CPU share ... more than sufficient to run XenMon").
DOM0_ALLOCATION_PCT = 6.0
#: Allocation of each of the three domains in the SMP variant ("allocated 66% of CPU").
SMP_TARGET_PCT = 66.0
#: PCPUs of the two variants.
PCPUS, SMP_PCPUS = 1, 2
#: The paper ran Xen 3.0.3; its Credit debited credit by sampling at the 10 ms tick.
PAPER_XEN_VERSION = "3.0.3"
#: xenbaked (XenMon's collector) polls the trace buffers every 100 ms by default (`-s`).
XENBAKED_POLL_MS = 100.0
#: Dom0's CPU demand under the default `xenmon` load: an assumption (the paper gives
#: none), a third of its 6 % allocation so that 6 % is "more than sufficient".
DOM0_XENMON_UTIL_PCT = 2.0
#: Time simulated before measurement starts, so the first sample is not the start-up.
WARMUP_S = 1.0
#: Replications (seeds SEED, SEED+1, ...) of each target by default, and with --quick.
REPLICATIONS = 3
QUICK_REPLICATIONS = 2


def window_phase_s(seed: int, target_pct: float, sample_ms: float) -> float:
    """Where the 1-s measurement windows start relative to the schedulers' periods: a
    phase in [0, sample_ms) added to the warm-up, drawn from the run's seed and the target.

    A real sampler (xenbaked polling the trace buffers) is not synchronised with the
    scheduler's periods and ticks; windows that start exactly on a multiple of every period
    would see the same part of each period every time. The phase is deterministic (same seed
    and target, same phase) and rounded to the microsecond."""
    import random

    rng = random.Random(f"alert-window-phase/{seed}/{target_pct!r}")
    return round(rng.random() * sample_ms / 1000.0, 6)


#: Error bands reported as "fraction of samples within ±x %".
WITHIN_PCT: tuple[int, ...] = (1, 2, 5, 10)
#: What Dom0 runs in the single-PCPU variant (see docs/alert.md, "Dom0").
DOM0_LOADS = ("xenmon", "hog", "idle")
#: The workload manager the paper has in mind needs errors of "typically, 1–2%".
MANAGER_ERROR_PCT = 2


def _fmt_pct(x: float) -> str:
    return f"{x:g}"
