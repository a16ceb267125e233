//! The physical host: PCPU topology and the platform profile (costs).

use crate::cpumask::{CpuMask, MAX_PCPUS};
use crate::error::ScenarioError;
use crate::ids::PcpuId;
use crate::params::{self, Default, ParamKind, ParamScope, ParamSpec, Params};

/// Sockets × cores × threads. PCPU numbers run thread-fastest, so the SMT
/// siblings of a core are adjacent: `pcpu = (socket*cores + core)*threads + thread`.
#[derive(Clone, Debug, PartialEq)]
pub struct Topology {
    pub sockets: u32,
    pub cores_per_socket: u32,
    pub threads_per_core: u32,
    sibling: Vec<CpuMask>,
    socket: Vec<CpuMask>,
    /// Global core number of each PCPU (looked up, not divided, on the hot
    /// paths: the switch model, Credit's balancing, Credit 2's run queues).
    core_of: Vec<u32>,
    /// Socket number of each PCPU.
    socket_of: Vec<u32>,
}

impl Topology {
    /// A host of `sockets × cores × threads` PCPUs.
    pub fn new(sockets: u32, cores_per_socket: u32, threads_per_core: u32) -> Topology {
        let n = (sockets * cores_per_socket * threads_per_core) as usize;
        assert!(
            (1..=MAX_PCPUS).contains(&n),
            "topology size checked by the scenario"
        );
        let mut sibling = Vec::with_capacity(n);
        let mut socket = Vec::with_capacity(n);
        for p in 0..n as u32 {
            let core_first = p - p % threads_per_core;
            let mut sm = CpuMask::empty();
            for t in 0..threads_per_core {
                sm.set(PcpuId(core_first + t));
            }
            sibling.push(sm);
            let per_socket = cores_per_socket * threads_per_core;
            let socket_first = p - p % per_socket;
            let mut km = CpuMask::empty();
            for t in 0..per_socket {
                km.set(PcpuId(socket_first + t));
            }
            socket.push(km);
        }
        let core_of = (0..n as u32).map(|p| p / threads_per_core).collect();
        let socket_of = (0..n as u32)
            .map(|p| p / (cores_per_socket * threads_per_core))
            .collect();
        Topology {
            sockets,
            cores_per_socket,
            threads_per_core,
            sibling,
            socket,
            core_of,
            socket_of,
        }
    }

    /// `n` single-thread cores on one socket (`pcpus = n` in a scenario).
    pub fn flat(n: u32) -> Topology {
        Topology::new(1, n, 1)
    }

    /// Number of PCPUs.
    #[inline]
    pub fn npcpus(&self) -> usize {
        self.sibling.len()
    }

    /// All PCPUs.
    pub fn all(&self) -> CpuMask {
        CpuMask::first_n(self.npcpus())
    }

    /// The SMT threads of `p`'s core, `p` included (Xen's `sibling_mask`).
    #[inline]
    pub fn sibling_mask(&self, p: PcpuId) -> &CpuMask {
        &self.sibling[p.idx()]
    }

    /// All PCPUs of `p`'s socket (Xen's `core_mask`: the package).
    #[inline]
    pub fn socket_mask(&self, p: PcpuId) -> &CpuMask {
        &self.socket[p.idx()]
    }

    /// Socket number of `p`; vmsched models one NUMA node per socket.
    #[inline]
    pub fn socket_of(&self, p: PcpuId) -> u32 {
        self.socket_of[p.idx()]
    }

    /// Global core number of `p`.
    #[inline]
    pub fn core_of(&self, p: PcpuId) -> u32 {
        self.core_of[p.idx()]
    }
}

/// The costs of the simulated platform. Loaded from a profile (TOML), the same
/// for every scheduler: differences between schedulers come from their
/// algorithms alone.
#[derive(Clone, Debug, PartialEq)]
pub struct Platform {
    /// Profile name.
    pub name: String,
    /// Time a PCPU spends switching from one VCPU to another (ns). The incoming
    /// VCPU's work starts progressing only after it.
    pub ctx_switch_ns: u64,
    /// Delay from a tickle (reschedule IPI) to the target PCPU running its scheduler (ns).
    pub ipi_latency_ns: u64,
    /// Costs of the split-driver I/O path and the devices.
    pub io: IoCosts,
    /// What a switch leaves behind (TLB, caches) and the scheduler's own
    /// run time ([`SwitchCosts`]).
    pub switch: SwitchCosts,
}

/// The indirect costs of a domain switch and the scheduler's own run time
/// (`docs/switch-cost.md`). Each is off at its zero value (`lazy_idle_switch`
/// at `false`), which gives the results of the model without it.
#[derive(Clone, Debug, PartialEq)]
pub struct SwitchCosts {
    /// Xen's lazy switch: a PCPU returning from idle to the VCPU still
    /// loaded on it does no switch and pays nothing.
    pub lazy_idle_switch: bool,
    /// CPU the switched-in VCPU spends refilling its TLB, L1 caches and
    /// branch predictors after an address-space switch, ns.
    pub switch_refill_ns: u64,
    /// Bytes per cache line (turns a working set in KB into lines).
    pub cache_line_bytes: u64,
    /// Lines of the cache each core keeps a VCPU's working set in (L2).
    pub l2_lines: u64,
    /// CPU to bring one line back into that cache, ns (0 = no L2 model).
    pub l2_fill_ns: u64,
    /// Lines of the last-level cache each socket shares (L3; 0 = none).
    pub l3_lines: u64,
    /// Extra CPU for a line that has also left the L3 (memory instead of
    /// L3), ns.
    pub l3_fill_ns: u64,
    /// CPU of one scheduling decision (`do_schedule` and its softirq), ns.
    pub sched_invoke_ns: u64,
    /// CPU of one run-queue insertion or removal, ns.
    pub sched_queue_op_ns: u64,
}

/// The I/O costs of a platform: what the driver domain's backends, the
/// guests' front ends and the devices charge. All times in ns.
#[derive(Clone, Debug, PartialEq)]
pub struct IoCosts {
    /// Driver-domain CPU per backend batch (one pass woken by an event
    /// channel: entering the backend, checking the rings, notifying).
    pub batch_ns: u64,
    /// Driver-domain CPU per packet received for a guest (bridge, netback rx, grant copy).
    pub net_rx_ns: u64,
    /// Driver-domain CPU per packet a guest sends (netback tx, bridge, NIC driver).
    pub net_tx_ns: u64,
    /// Driver-domain CPU per disk read request, charged on submission and on completion.
    pub disk_read_ns: u64,
    /// Driver-domain CPU per disk write request, charged on submission and on completion.
    pub disk_write_ns: u64,
    /// Guest CPU per packet in its front end and network stack (either direction).
    pub guest_pkt_ns: u64,
    /// Guest CPU per disk request in its block front end (issue plus completion).
    pub guest_disk_ns: u64,
    /// Guest CPU per read() call of a file through the page cache, besides
    /// the copy: the system call, the page-cache lookup, and (dd) the
    /// write() to /dev/null that follows it.
    pub guest_read_call_ns: u64,
    /// Guest CPU per KiB copied from the page cache to user space.
    pub guest_copy_kb_ns: u64,
    /// Guest CPU per web request besides its packets (the web server's work).
    pub web_request_ns: u64,
    /// Guest CPU per OLTP transaction besides its disk requests (the database's work).
    pub oltp_txn_ns: u64,
    /// Fidelity of the I/O path: the guest front end's per-batch work, NIC
    /// interrupt moderation, and cost variability ([`crate::io::IoFidelity`]).
    pub fid: crate::io::IoFidelity,
    /// NIC line rate, bits per second.
    pub nic_bps: u64,
    /// One-way latency from the NIC to the remote peers and back into their stack, ns.
    pub nic_latency_ns: u64,
    /// Maximum transmission unit, bytes (payload per packet = MTU − 40
    /// bytes of TCP/IP headers − `tcp_options` bytes).
    pub mtu: u32,
    /// TCP option bytes on every segment of an established connection
    /// (Linux's default timestamp option: 10 bytes padded to 12).
    pub tcp_options: u32,
    /// Average seek time of a random disk access, ns.
    pub disk_seek_ns: u64,
    /// Average rotational latency of a random access (half a revolution), ns.
    pub disk_rotation_ns: u64,
    /// Sustained media transfer rate, bytes per second.
    pub disk_bps: u64,
    /// Fixed controller and command overhead per disk request, ns.
    pub disk_request_ns: u64,
    /// Largest disk request the driver domain's block layer merges queued
    /// requests into, bytes (0: no merging).
    pub disk_max_request: u64,
    /// The driver domain's backends run as kernel threads (`true`: they
    /// preempt the driver domain's own processes only at its next
    /// scheduler tick) rather than in softirq context (`false`: at once).
    pub backend_thread: bool,
    /// The guests' scheduler tick (1/HZ), ns.
    pub guest_tick_ns: u64,
}

impl IoCosts {
    /// TCP/IP header bytes per segment inside the MTU: the fixed 40 plus
    /// the TCP options every segment carries.
    #[inline]
    pub fn tcpip_header(&self) -> u64 {
        crate::io::TCPIP_HEADER + self.tcp_options as u64
    }

    /// Payload bytes per full segment (the MSS): the MTU less the headers.
    #[inline]
    pub fn mss(&self) -> u64 {
        (self.mtu as u64).saturating_sub(self.tcpip_header()).max(1)
    }
}

/// The platform profile's numbers (besides its free-text `name` and `description`).
pub const PROFILE_PARAMS: &[ParamSpec] = &[
    ParamSpec {
        name: "ctx_switch_ns",
        unit: "ns",
        kind: ParamKind::Int {
            min: 0,
            max: 10_000_000,
        },
        default: Default::Required,
        scope: ParamScope::Global,
        doc: "Cost of switching a PCPU from one VCPU to another.",
    },
    ParamSpec {
        name: "ipi_latency_ns",
        unit: "ns",
        kind: ParamKind::Int {
            min: 0,
            max: 10_000_000,
        },
        default: Default::Required,
        scope: ParamScope::Global,
        doc: "Delay from a reschedule IPI to the target PCPU's scheduler running.",
    },
    cost(
        "io_batch_ns",
        "ns",
        0,
        "Driver-domain CPU per backend batch (event-channel wake-up, ring checks, notifications).",
    ),
    cost(
        "net_rx_ns",
        "ns",
        0,
        "Driver-domain CPU per packet received for a guest.",
    ),
    cost(
        "net_tx_ns",
        "ns",
        0,
        "Driver-domain CPU per packet a guest sends.",
    ),
    cost(
        "disk_read_ns",
        "ns",
        0,
        "Driver-domain CPU per disk read request, charged on submission and on completion.",
    ),
    cost(
        "disk_write_ns",
        "ns",
        0,
        "Driver-domain CPU per disk write request, charged on submission and on completion.",
    ),
    cost(
        "guest_pkt_ns",
        "ns",
        0,
        "Guest CPU per packet (front end and network stack).",
    ),
    cost(
        "guest_disk_ns",
        "ns",
        0,
        "Guest CPU per disk request (block front end, issue and completion).",
    ),
    cost(
        "guest_read_call_ns",
        "ns",
        0,
        "Guest CPU per read() of a file through the page cache besides the copy (system call, page-cache lookup; dd's write() to /dev/null with it).",
    ),
    cost(
        "guest_copy_kb_ns",
        "ns",
        0,
        "Guest CPU per KiB copied from the page cache to user space.",
    ),
    cost(
        "web_request_ns",
        "ns",
        0,
        "Guest CPU per web request besides its packets.",
    ),
    cost(
        "oltp_txn_ns",
        "ns",
        0,
        "Guest CPU per OLTP transaction besides its disk requests.",
    ),
    crate::io::PROFILE_GUEST_BATCH,
    crate::io::PROFILE_NIC_RX_IRQ,
    crate::io::PROFILE_NIC_IRQ_INTERVAL,
    crate::io::PROFILE_REQUEST_CPU_CV,
    crate::io::PROFILE_IO_COST_CV,
    crate::io::PROFILE_DISK_SERVICE_CV,
    ParamSpec {
        name: "lazy_idle_switch",
        unit: "",
        kind: ParamKind::Bool,
        default: Default::Bool(false),
        scope: ParamScope::Global,
        doc: "Xen's lazy switch: a PCPU returning from idle to the VCPU still loaded on it pays no switch (false = every dispatch pays).",
    },
    cost(
        "switch_refill_ns",
        "ns",
        0,
        "CPU the switched-in VCPU spends refilling TLB, L1 and branch predictors after each real switch.",
    ),
    ParamSpec {
        name: "cache_line_bytes",
        unit: "bytes",
        kind: ParamKind::Int { min: 8, max: 4096 },
        default: Default::Int(64),
        scope: ParamScope::Global,
        doc: "Bytes per cache line (a working set in KB is this many lines).",
    },
    ParamSpec {
        name: "l2_lines",
        unit: "lines",
        kind: ParamKind::Int {
            min: 0,
            max: 1 << 30,
        },
        default: Default::Int(0),
        scope: ParamScope::Global,
        doc: "Lines of each core's L2 cache (the footprint model's N).",
    },
    cost(
        "l2_fill_ns",
        "ns",
        0,
        "CPU to refill one L2 line a VCPU lost while others ran (0 = no L2 model).",
    ),
    ParamSpec {
        name: "l3_lines",
        unit: "lines",
        kind: ParamKind::Int {
            min: 0,
            max: 1 << 30,
        },
        default: Default::Int(0),
        scope: ParamScope::Global,
        doc: "Lines of each socket's shared last-level cache (L3; 0 = none).",
    },
    cost(
        "l3_fill_ns",
        "ns",
        0,
        "Extra CPU for a refilled line that has also left the L3 (memory instead of L3).",
    ),
    cost(
        "sched_invoke_ns",
        "ns",
        0,
        "CPU of one scheduling decision (the softirq and do_schedule), charged to the VCPU it dispatches.",
    ),
    cost(
        "sched_queue_op_ns",
        "ns",
        0,
        "CPU of one run-queue insertion or removal, charged at that PCPU's next decision.",
    ),
    ParamSpec {
        name: "backend_context",
        unit: "",
        kind: ParamKind::Choice(&["softirq", "thread"]),
        default: Default::Str("softirq"),
        scope: ParamScope::Global,
        doc: "Where the driver domain's backends run: softirq (tasklets: they preempt its processes at once) or thread (kernel threads: at its next scheduler tick).",
    },
    ParamSpec {
        name: "guest_tick_ms",
        unit: "ms",
        kind: ParamKind::Float { min: 0.0, max: 1000.0 },
        default: Default::Float(4.0),
        scope: ParamScope::Global,
        doc: "The guest kernels' scheduler tick (1/HZ; 4 ms for HZ = 250).",
    },
    ParamSpec {
        name: "nic_bandwidth_mbit",
        unit: "Mbit/s",
        kind: ParamKind::Float {
            min: 0.001,
            max: 1_000_000.0,
        },
        default: Default::Float(1000.0),
        scope: ParamScope::Global,
        doc: "NIC line rate.",
    },
    ParamSpec {
        name: "nic_latency_us",
        unit: "µs",
        kind: ParamKind::Float {
            min: 0.0,
            max: 10_000_000.0,
        },
        default: Default::Float(50.0),
        scope: ParamScope::Global,
        doc: "One-way latency from the NIC to the remote peers (wire, switch, the peer's stack).",
    },
    ParamSpec {
        name: "nic_mtu",
        unit: "bytes",
        kind: ParamKind::Int {
            min: 576,
            max: 65_536,
        },
        default: Default::Int(1500),
        scope: ParamScope::Global,
        doc: "Maximum transmission unit.",
    },
    ParamSpec {
        name: "tcp_options_bytes",
        unit: "bytes",
        kind: ParamKind::Int { min: 0, max: 40 },
        default: Default::Int(12),
        scope: ParamScope::Global,
        doc: "TCP option bytes on every segment (a multiple of 4): 12 for the timestamp option Linux sends by default (RFC 7323), 0 without options. They come out of each segment's payload (MSS = MTU - 40 - options) and go on the wire.",
    },
    ParamSpec {
        name: "disk_seek_ms",
        unit: "ms",
        kind: ParamKind::Float {
            min: 0.0,
            max: 1000.0,
        },
        default: Default::Float(8.5),
        scope: ParamScope::Global,
        doc: "Average seek time of a random access.",
    },
    ParamSpec {
        name: "disk_rpm",
        unit: "rpm",
        kind: ParamKind::Float {
            min: 0.0,
            max: 100_000.0,
        },
        default: Default::Float(7200.0),
        scope: ParamScope::Global,
        doc: "Spindle speed; a random access waits half a revolution on average (0 = solid state).",
    },
    ParamSpec {
        name: "disk_transfer_mb_s",
        unit: "MB/s",
        kind: ParamKind::Float {
            min: 0.001,
            max: 1_000_000.0,
        },
        default: Default::Float(100.0),
        scope: ParamScope::Global,
        doc: "Sustained media transfer rate (MB = 10^6 bytes).",
    },
    ParamSpec {
        name: "disk_request_us",
        unit: "µs",
        kind: ParamKind::Float {
            min: 0.0,
            max: 1_000_000.0,
        },
        default: Default::Float(50.0),
        scope: ParamScope::Global,
        doc: "Fixed controller and command overhead per request.",
    },
    ParamSpec {
        name: "disk_max_request_kb",
        unit: "KiB",
        kind: ParamKind::Float {
            min: 0.0,
            max: 1_048_576.0,
        },
        default: Default::Float(0.0),
        scope: ParamScope::Global,
        doc: "Largest request the driver domain's block layer builds by merging adjacent queued requests of one guest (the device's max_sectors_kb); 0 = no merging.",
    },
];

const fn cost(
    name: &'static str,
    unit: &'static str,
    default: i64,
    doc: &'static str,
) -> ParamSpec {
    ParamSpec {
        name,
        unit,
        kind: ParamKind::Int {
            min: 0,
            max: 1_000_000_000,
        },
        default: Default::Int(default),
        scope: ParamScope::Global,
        doc,
    }
}

/// `[host.nic]` and `[host.disk]` keys and the profile fields they override.
pub const DEVICE_OVERRIDES: &[(&str, &str, &str)] = &[
    ("nic", "bandwidth_mbit", "nic_bandwidth_mbit"),
    ("nic", "latency_us", "nic_latency_us"),
    ("nic", "mtu", "nic_mtu"),
    ("disk", "seek_ms", "disk_seek_ms"),
    ("disk", "rpm", "disk_rpm"),
    ("disk", "transfer_mb_s", "disk_transfer_mb_s"),
    ("disk", "request_us", "disk_request_us"),
    ("disk", "max_request_kb", "disk_max_request_kb"),
];

/// Built-in profiles: (name, TOML text).
pub const BUILTIN_PROFILES: &[(&str, &str)] = &[
    ("default", include_str!("../profiles/default.toml")),
    (
        "cherkasova2007",
        include_str!("../profiles/cherkasova2007.toml"),
    ),
    ("thesis2015", include_str!("../profiles/thesis2015.toml")),
    (
        "govindan2009",
        include_str!("../profiles/govindan2009.toml"),
    ),
];

impl Platform {
    /// Build a platform from a profile table (already parsed TOML/JSON).
    pub fn from_table(
        table: &serde_json::Map<String, serde_json::Value>,
        path: &str,
    ) -> Result<Platform, ScenarioError> {
        // `name`/`description` are free text; validate the numbers only.
        let mut numeric = table.clone();
        let name = match numeric.remove("name") {
            Some(serde_json::Value::String(s)) => s,
            Some(other) => {
                return Err(ScenarioError::new(
                    params::join_path(path, "name"),
                    format!(
                        "{} is not a string; expected the profile's name",
                        params::show(&other)
                    ),
                ))
            }
            None => "custom".into(),
        };
        numeric.remove("description");
        let p: Params = params::validate(PROFILE_PARAMS, &numeric, path, "a platform profile")?;
        let opts = p.int("tcp_options_bytes");
        if opts % 4 != 0 {
            return Err(ScenarioError::new(
                params::join_path(path, "tcp_options_bytes"),
                format!("{opts} is not a multiple of 4; expected TCP option bytes padded to 32-bit words (0..=40)"),
            ));
        }
        Ok(Platform::from_params(name, &p))
    }

    fn from_params(name: String, p: &Params) -> Platform {
        let ns = |k: &str| p.int(k) as u64;
        let f = |k: &str| p.float(k);
        let rpm = f("disk_rpm");
        Platform {
            name,
            ctx_switch_ns: ns("ctx_switch_ns"),
            ipi_latency_ns: ns("ipi_latency_ns"),
            io: IoCosts {
                batch_ns: ns("io_batch_ns"),
                net_rx_ns: ns("net_rx_ns"),
                net_tx_ns: ns("net_tx_ns"),
                disk_read_ns: ns("disk_read_ns"),
                disk_write_ns: ns("disk_write_ns"),
                guest_pkt_ns: ns("guest_pkt_ns"),
                guest_disk_ns: ns("guest_disk_ns"),
                guest_read_call_ns: ns("guest_read_call_ns"),
                guest_copy_kb_ns: ns("guest_copy_kb_ns"),
                web_request_ns: ns("web_request_ns"),
                oltp_txn_ns: ns("oltp_txn_ns"),
                fid: crate::io::IoFidelity::from_params(p),
                nic_bps: (f("nic_bandwidth_mbit") * 1e6).round() as u64,
                nic_latency_ns: (f("nic_latency_us") * 1e3).round() as u64,
                mtu: p.int("nic_mtu") as u32,
                tcp_options: p.int("tcp_options_bytes") as u32,
                disk_seek_ns: (f("disk_seek_ms") * 1e6).round() as u64,
                disk_rotation_ns: if rpm > 0.0 {
                    (30.0e9 / rpm).round() as u64
                } else {
                    0
                },
                disk_bps: (f("disk_transfer_mb_s") * 1e6).round() as u64,
                disk_request_ns: (f("disk_request_us") * 1e3).round() as u64,
                disk_max_request: (f("disk_max_request_kb") * 1024.0).round() as u64,
                backend_thread: p.str("backend_context") == "thread",
                guest_tick_ns: (f("guest_tick_ms") * 1e6).round() as u64,
            },
            switch: SwitchCosts {
                lazy_idle_switch: p.bool("lazy_idle_switch"),
                switch_refill_ns: ns("switch_refill_ns"),
                cache_line_bytes: ns("cache_line_bytes"),
                l2_lines: ns("l2_lines"),
                l2_fill_ns: ns("l2_fill_ns"),
                l3_lines: ns("l3_lines"),
                l3_fill_ns: ns("l3_fill_ns"),
                sched_invoke_ns: ns("sched_invoke_ns"),
                sched_queue_op_ns: ns("sched_queue_op_ns"),
            },
        }
    }

    /// Apply `[host.nic]` / `[host.disk]` overrides to a profile given as a
    /// table (`table` is the profile's numbers).
    pub fn with_overrides(
        name: String,
        mut table: serde_json::Map<String, serde_json::Value>,
        overrides: &[(&str, &serde_json::Map<String, serde_json::Value>)],
        path: &str,
    ) -> Result<Platform, ScenarioError> {
        table.remove("name");
        table.remove("description");
        for (dev, o) in overrides {
            let keys: Vec<&str> = DEVICE_OVERRIDES
                .iter()
                .filter(|(d, _, _)| d == dev)
                .map(|(_, k, _)| *k)
                .collect();
            for (k, v) in o.iter() {
                let Some((_, _, field)) = DEVICE_OVERRIDES
                    .iter()
                    .find(|(d, kk, _)| d == dev && kk == k)
                else {
                    return Err(ScenarioError::new(
                        format!("host.{dev}.{k}"),
                        format!(
                            "is not a known key; expected one of {}{}",
                            keys.join(", "),
                            crate::error::suggestion(k, keys.iter().copied())
                        ),
                    ));
                };
                let spec = PROFILE_PARAMS
                    .iter()
                    .find(|s| s.name == *field)
                    .expect("override targets a profile field");
                let one: serde_json::Map<String, serde_json::Value> =
                    [(spec.name.to_string(), v.clone())].into_iter().collect();
                // Validate under the override's own path, then merge.
                params::validate(
                    std::slice::from_ref(spec),
                    &one,
                    &format!("host.{dev}"),
                    "a device override",
                )
                .map_err(|mut e| {
                    e.path = e.path.replace(spec.name, k);
                    e
                })?;
                table.insert(field.to_string(), v.clone());
            }
        }
        let p: Params = params::validate(PROFILE_PARAMS, &table, path, "a platform profile")?;
        Ok(Platform::from_params(name, &p))
    }

    /// The numbers of a built-in profile, as a table.
    pub fn builtin_table(
        name: &str,
        path: &str,
    ) -> Result<serde_json::Map<String, serde_json::Value>, ScenarioError> {
        let Some((_, text)) = BUILTIN_PROFILES.iter().find(|(n, _)| *n == name) else {
            let known: Vec<&str> = BUILTIN_PROFILES.iter().map(|(n, _)| *n).collect();
            return Err(ScenarioError::new(
                path,
                format!(
                    "unknown profile \"{}\"; expected one of {} or a table of costs{}",
                    name.escape_debug(),
                    known.join(", "),
                    crate::error::suggestion(name, known.iter().copied())
                ),
            ));
        };
        Ok(toml::from_str(text).expect("built-in profiles are valid TOML"))
    }

    /// A built-in profile by name.
    pub fn builtin(name: &str, path: &str) -> Result<Platform, ScenarioError> {
        let Some((_, text)) = BUILTIN_PROFILES.iter().find(|(n, _)| *n == name) else {
            let known: Vec<&str> = BUILTIN_PROFILES.iter().map(|(n, _)| *n).collect();
            return Err(ScenarioError::new(
                path,
                format!(
                    "unknown profile \"{}\"; expected one of {} or a table of costs{}",
                    name.escape_debug(),
                    known.join(", "),
                    crate::error::suggestion(name, known.iter().copied())
                ),
            ));
        };
        let table: serde_json::Map<String, serde_json::Value> =
            toml::from_str(text).expect("built-in profiles are valid TOML");
        Platform::from_table(&table, path)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn topology_masks() {
        let t = Topology::new(2, 2, 2); // 8 pcpus
        assert_eq!(t.npcpus(), 8);
        assert_eq!(
            t.sibling_mask(PcpuId(3))
                .iter()
                .map(|p| p.0)
                .collect::<Vec<_>>(),
            vec![2, 3]
        );
        assert_eq!(
            t.socket_mask(PcpuId(5))
                .iter()
                .map(|p| p.0)
                .collect::<Vec<_>>(),
            vec![4, 5, 6, 7]
        );
        assert_eq!(t.socket_of(PcpuId(5)), 1);
        assert_eq!(t.core_of(PcpuId(5)), 2);
        // The tables hold the numbering's quotients for every PCPU.
        for (s, c, th) in [(1, 1, 1), (2, 2, 2), (4, 8, 2), (2, 3, 4), (1, 512, 1)] {
            let t = Topology::new(s, c, th);
            for p in 0..s * c * th {
                assert_eq!(t.core_of(PcpuId(p)), p / th);
                assert_eq!(t.socket_of(PcpuId(p)), p / (c * th));
            }
        }
    }

    #[test]
    fn builtin_default_profile_loads() {
        let p = Platform::builtin("default", "host.profile").unwrap();
        assert_eq!(p.name, "default");
        assert!(p.ctx_switch_ns > 0);
        assert!(Platform::builtin("defualt", "host.profile")
            .unwrap_err()
            .message
            .contains("did you mean"));
    }
}
