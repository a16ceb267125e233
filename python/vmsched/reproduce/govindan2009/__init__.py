"""Govindan et al. 2009: communication-aware CPU scheduling and I/O accounting for
Xen, against "default Xen" (SEDF with Dom0's (15 ms, 20 ms) reservation) and BVT's
low-latency dispatch .

- `govindan2009-tpcw`: Figs 1 and 7 (E002-1, E002-2): the two TPC-W tiers on
  dedicated servers, then consolidated with five CPU-bound domains under SEDF,
  the communication-aware SEDF and BVT with warp.
- `govindan2009-nas`: E002-3, E002-4: NAS SP and LU, one process per VM on each of
  four hosts, each with three CPU-bound neighbours (a cluster scenario).
- `govindan2009-streaming`: Fig. 8 (E002-5, E002-6): a media server streaming to
  45 clients at 3 Mbit/s beside seven CPU-bound domains; clients served within
  the SLO of at most one discontinuity, as the number of clients grows.
- `govindan2009-ablation`: Table 2 (E002-7): Dom0 preference only, anticipatory
  sender scheduling only, both.
- `govindan2009-consolidation`: Fig. 9 (E002-8): TPC-W beside 0-8 CPU-bound
  domains against a 1-s average-response SLO.
- `govindan2009-fairness`: Fig. 10, Table 3 (E002-9): the CPU-bound domains'
  CPU under both schedulers, against their reservations.
- `govindan2009-accounting`: Table 4 (E002-10): TPC-W, the media server and a
  CPU-bound domain with Dom0 reserved (1.5, 20), without and with I/O accounting.
- `govindan2009-context-switches`: E002-11: domain context switches, media server
  and seven CPU-bound domains.

The schedulers: `sedf` (Xen 3.0.2's, the paper's "default Xen"), `sedf-comm`
(the paper's scheduler on the same SEDF, with its three preferences and optional
I/O accounting) and `bvt` (Xen 3.0's BVT, the communicating domains warped). The
workloads `tiered`, `streaming` and `bsp`; the setup shared by every experiment
is in `COMMON_DECISIONS`.
"""

from __future__ import annotations

from vmsched.reproduce.govindan2009.ablation import ABLATION_EXP
from vmsched.reproduce.govindan2009.accounting import ACCOUNTING
from vmsched.reproduce.govindan2009.fairness import FAIRNESS
from vmsched.reproduce.govindan2009.nas import NAS
from vmsched.reproduce.govindan2009.streaming import CONTEXT_SWITCHES, STREAMING
from vmsched.reproduce.govindan2009.tpcw import CONSOLIDATION, TPCW

EXPERIMENTS = (
    TPCW,
    NAS,
    STREAMING,
    ABLATION_EXP,
    CONSOLIDATION,
    FAIRNESS,
    ACCOUNTING,
    CONTEXT_SWITCHES,
)
