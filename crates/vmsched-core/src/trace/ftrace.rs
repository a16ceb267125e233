//! The Linux ftrace text format (`trace.txt`), as the Perfetto UI reads it.
//!
//! A `# tracer: nop` header, then one line per event:
//!
//! ```text
//!          dom1.v0-101     [001] d..2     5.000123: sched_switch: prev_comm=dom1.v0 prev_pid=101 prev_prio=120 prev_state=S ==> next_comm=<idle> next_pid=0 next_prio=120
//!           <idle>-0       [000] d..2     5.000150: sched_waking: comm=dom1.v0 pid=101 prio=120 target_cpu=001
//!           <idle>-0       [000] d..2     5.000150: sched_wakeup: comm=dom1.v0 pid=101 prio=120 target_cpu=001
//! ```
//!
//! One CPU per PCPU; the task columns are the VCPU the PCPU runs at the
//! event (`<idle>-0` when idle). Timestamps are simulated seconds since the
//! start of the run, to the microsecond. The flags column is always `d..2`
//! (four characters: the Perfetto releases before 5-character flags accept
//! no more). `prev_state` says why the VCPU left ([`prev_state`]). A wake-up
//! is written as `sched_waking` (which current Perfetto reads) followed by
//! `sched_wakeup` (which older tools read), as Linux does with both events on.

use super::{
    vcpu_comms, vcpu_pid, CounterEvent, Output, RunstateEvent, SchedEvent, TraceError, TraceSink,
    TraceStart,
};
use crate::domain::{RunState, Vcpu};
use crate::ids::{PcpuId, VcpuId};
use crate::time::{Time, NS_PER_S, NS_PER_US};
use std::io;

/// The flags column of every line.
pub const FLAGS: &str = "d..2";
/// The priority of every task (a nice-0 Linux task).
pub const PRIO: &str = "120";
/// The process the scheduler's counters belong to (`C|1|...`): Perfetto
/// shows them as counter tracks of process 1, which no VCPU is.
pub const COUNTER_PID: u32 = 1;

/// What `prev_state` says about a VCPU switched out now, from the state it
/// goes to:
///
/// | state after the switch | `prev_state` |
/// |---|---|
/// | runnable (preempted, yielded, slice over, being migrated) | `R` |
/// | blocked (its guest halted: no work) | `S` |
/// | paused by the toolstack (`xl pause`) | `T` |
/// | parked by its scheduler (e.g. a cap: Xen's VCPU pause count) | `D` |
/// | offline (hot-unplugged, `xl vcpu-set`) | `P` |
///
/// Offline wins over paused, paused over parked; blocked wins over all
/// three, as in the run-state accounting (a halted paused VCPU is blocked).
pub fn prev_state(v: &Vcpu) -> &'static str {
    match v.off_cpu_state() {
        RunState::Runnable | RunState::Running => "R",
        RunState::Blocked => "S",
        RunState::Offline if !v.online => "P",
        RunState::Offline if v.domain_pause > 0 => "T",
        RunState::Offline => "D",
    }
}

/// A task as the lines name it, formatted once.
struct Task {
    /// The task columns: `comm` right-aligned in 16, `-`, pid left-aligned in 7.
    column: String,
    comm: String,
    pid: String,
}

impl Task {
    fn new(comm: &str, pid: u32) -> Task {
        Task {
            column: format!("{comm:>16}-{pid:<7}"),
            comm: comm.to_string(),
            pid: pid.to_string(),
        }
    }
}

/// Append `n` in decimal, at least `width` digits (zero-padded).
fn push_decimal(buf: &mut Vec<u8>, mut n: u64, width: usize) {
    let mut digits = [0u8; 20];
    let mut i = digits.len();
    loop {
        i -= 1;
        digits[i] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    let len = digits.len() - i;
    buf.resize(buf.len() + width.saturating_sub(len), b'0');
    buf.extend_from_slice(&digits[i..]);
}

/// Writes the ftrace text of a run into `O`. Each line is assembled in a
/// reusable buffer from pieces formatted once (task columns, CPU columns),
/// then written with one call.
pub struct Ftrace<O: Output> {
    out: O,
    err: Option<io::Error>,
    /// Every VCPU, then the idle task last.
    tasks: Vec<Task>,
    /// Per PCPU: `` [CCC] d..2 ``.
    cpu_columns: Vec<String>,
    /// What each PCPU runs, for the task columns.
    current: Vec<Option<VcpuId>>,
    line: Vec<u8>,
    lines: u64,
    /// The scheduler's name, prefix of its counters' names.
    scheduler: String,
    /// Each counter's value as last written.
    counters: Vec<Option<u64>>,
}

impl<O: Output> Ftrace<O> {
    pub fn new(out: O) -> Ftrace<O> {
        Ftrace {
            out,
            err: None,
            tasks: Vec::new(),
            cpu_columns: Vec::new(),
            current: Vec::new(),
            line: Vec::with_capacity(256),
            lines: 0,
            scheduler: String::new(),
            counters: Vec::new(),
        }
    }

    /// Event lines written so far.
    pub fn lines(&self) -> u64 {
        self.lines
    }

    fn task(&self, v: Option<VcpuId>) -> &Task {
        match v {
            Some(v) => &self.tasks[v.idx()],
            None => self.tasks.last().expect("begun"),
        }
    }

    /// Start a line: the columns before the event name, with the task
    /// `cpu` runs and the time (seconds, 5 wide, and 6 digits of µs).
    fn start_line(&mut self, cpu: PcpuId, now: Time) {
        let mut line = std::mem::take(&mut self.line);
        line.clear();
        line.extend_from_slice(self.task(self.current[cpu.idx()]).column.as_bytes());
        line.extend_from_slice(self.cpu_columns[cpu.idx()].as_bytes());
        let s = now.0 / NS_PER_S;
        let digits = if s == 0 { 1 } else { s.ilog10() as usize + 1 };
        line.resize(line.len() + 5usize.saturating_sub(digits), b' ');
        push_decimal(&mut line, s, 1);
        line.push(b'.');
        push_decimal(&mut line, now.0 % NS_PER_S / NS_PER_US, 6);
        line.extend_from_slice(b": ");
        self.line = line;
    }

    /// Write the line assembled.
    fn end_line(&mut self) -> io::Result<()> {
        self.line.push(b'\n');
        self.lines += 1;
        self.out.write_all(&self.line)
    }

    fn header(&mut self, start: &TraceStart<'_>) -> io::Result<()> {
        let t = start.now;
        let (s, us) = (t.0 / NS_PER_S, t.0 % NS_PER_S / NS_PER_US);
        let n = start.pcpus.len();
        let version = env!("CARGO_PKG_VERSION");
        let header = format!(
            "# tracer: nop
#
# vmsched {version}: scheduler {}, {n} PCPUs (#P:{n}); traced from {s}.{us:06} s (the start of measurement)
# one CPU per PCPU; task <domain>.v<n> is a VCPU, pid 100 + its VCPU id; <idle>-0 is the PCPU's idle VCPU
#
#                              _-----=> irqs-off
#                             / _----=> need-resched
#                            | / _---=> hardirq/softirq
#                            || / _--=> preempt-depth
#                            ||| /     delay
#           TASK-PID   CPU#  ||||    TIMESTAMP  FUNCTION
#              | |       |   ||||       |         |
",
            start.scheduler
        );
        let mut counters = String::new();
        for (name, what) in &start.counters {
            counters += &format!(
                "# counter {}.{name} (tracing_mark_write: C|{COUNTER_PID}|{}.{name}|VALUE): {what}\n",
                start.scheduler, start.scheduler
            );
        }
        let (top, rest) = header.split_at(header.find("#\n#    ").unwrap_or(header.len()));
        self.out.write_all(top.as_bytes())?;
        self.out.write_all(counters.as_bytes())?;
        self.out.write_all(rest.as_bytes())
    }

    /// One `tracing_mark_write` counter line (Perfetto's `C|pid|name|value`)
    /// per counter that changed since it was last written.
    fn counter_lines(&mut self, ev: &CounterEvent<'_>) -> io::Result<()> {
        if self.counters.len() < ev.counters.len() {
            self.counters.resize(ev.counters.len(), None);
        }
        for (i, &(name, value)) in ev.counters.iter().enumerate() {
            if self.counters[i] == Some(value) {
                continue;
            }
            self.counters[i] = Some(value);
            self.start_line(ev.pcpu, ev.now);
            let mut line = std::mem::take(&mut self.line);
            line.extend_from_slice(b"tracing_mark_write: C|");
            push_decimal(&mut line, u64::from(COUNTER_PID), 1);
            line.push(b'|');
            line.extend_from_slice(self.scheduler.as_bytes());
            line.push(b'.');
            line.extend_from_slice(name.as_bytes());
            line.push(b'|');
            push_decimal(&mut line, value, 1);
            self.line = line;
            self.end_line()?;
        }
        Ok(())
    }

    fn switch(&mut self, ev: &SchedEvent<'_>) -> io::Result<()> {
        self.start_line(ev.pcpu, ev.now);
        let state = ev.prev.map_or("R", |v| prev_state(&ev.vcpus[v.idx()]));
        let mut line = std::mem::take(&mut self.line);
        let (prev, next) = (self.task(ev.prev), self.task(ev.next));
        for piece in [
            "sched_switch: prev_comm=",
            &prev.comm,
            " prev_pid=",
            &prev.pid,
            " prev_prio=",
            PRIO,
            " prev_state=",
            state,
            " ==> next_comm=",
            &next.comm,
            " next_pid=",
            &next.pid,
            " next_prio=",
            PRIO,
        ] {
            line.extend_from_slice(piece.as_bytes());
        }
        self.line = line;
        self.current[ev.pcpu.idx()] = ev.next;
        self.end_line()
    }

    fn wake(&mut self, ev: &RunstateEvent<'_>) -> io::Result<()> {
        let cpu = ev.record_cpu();
        for name in ["sched_waking: comm=", "sched_wakeup: comm="] {
            self.start_line(cpu, ev.now);
            let mut line = std::mem::take(&mut self.line);
            let task = self.task(Some(ev.vcpu));
            for piece in [
                name,
                &task.comm,
                " pid=",
                &task.pid,
                " prio=",
                PRIO,
                " target_cpu=",
            ] {
                line.extend_from_slice(piece.as_bytes());
            }
            push_decimal(&mut line, u64::from(ev.v.processor.0), 3);
            self.line = line;
            self.end_line()?;
        }
        Ok(())
    }

    fn keep(&mut self, r: io::Result<()>) {
        if let Err(e) = r {
            self.err = Some(e);
        }
    }
}

impl<O: Output> TraceSink for Ftrace<O> {
    fn begin(&mut self, start: &TraceStart<'_>) {
        self.tasks = vcpu_comms(start.domains, start.vcpus)
            .iter()
            .enumerate()
            .map(|(i, comm)| Task::new(comm, vcpu_pid(VcpuId(i as u32))))
            .collect();
        self.tasks.push(Task::new("<idle>", 0));
        self.cpu_columns = (0..start.pcpus.len())
            .map(|p| format!(" [{p:03}] {FLAGS} "))
            .collect();
        self.current = start.pcpus.iter().map(|&(v, _)| v).collect();
        self.scheduler = start.scheduler.replace(['|', ' '], "_");
        let r = self.header(start);
        self.keep(r);
    }

    fn counters(&mut self, ev: &CounterEvent<'_>) {
        if self.err.is_some() {
            return;
        }
        let r = self.counter_lines(ev);
        self.keep(r);
    }

    fn schedule(&mut self, ev: &SchedEvent<'_>) {
        if ev.prev == ev.next || self.err.is_some() {
            return;
        }
        let r = self.switch(ev);
        self.keep(r);
    }

    fn runstate(&mut self, ev: &RunstateEvent<'_>) {
        if ev.at_switch() || self.err.is_some() {
            return;
        }
        if ev.v.state == RunState::Runnable
            && matches!(ev.old, RunState::Blocked | RunState::Offline)
        {
            let r = self.wake(ev);
            self.keep(r);
        }
    }

    fn finish(self: Box<Self>) -> Result<(), TraceError> {
        let me = *self;
        match me.err {
            Some(e) => Err(me.out.fail(e)),
            None => me.out.finish(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::{RunstateEvent, SchedEvent, TraceStart};

    #[test]
    fn lines_are_exactly_the_ftrace_text() {
        let sc = crate::Scenario::from_toml_str(
            "[host]\npcpus = 2\n[scheduler]\nname = \"credit\"\n[[domain]]\nname = \"a\"\n[domain.workload]\nkind = \"cpu-hog\"\n[[domain]]\nname = \"web\"\nvcpus = 2\n[domain.workload]\nkind = \"cpu-hog\"\n",
        )
        .unwrap();
        let sim = crate::Simulation::new(&sc).unwrap();
        let mut vcpus = sim.vcpus().to_vec();
        let mut f = Ftrace::new(Vec::new());
        f.begin(&TraceStart {
            now: Time(1_500_000),
            scheduler: "credit",
            domains: sim.domains(),
            vcpus: &vcpus,
            pcpus: vec![(None, Time(0)), (Some(VcpuId(0)), Time(0))],
            counters: vec![],
        });
        vcpus[0].running_on = Some(PcpuId(1));
        vcpus[0].blocked = true;
        f.schedule(&SchedEvent {
            now: Time(12_345_678_901),
            pcpu: PcpuId(1),
            prev: Some(VcpuId(0)),
            next: None,
            slice_ns: None,
            vcpus: &vcpus,
        });
        vcpus[2].blocked = false;
        vcpus[2].state = RunState::Runnable;
        vcpus[2].processor = PcpuId(1);
        f.runstate(&RunstateEvent {
            now: Time(100_000_000_000),
            cpu: None,
            vcpu: VcpuId(2),
            old: RunState::Blocked,
            v: &vcpus[2],
        });
        assert_eq!(f.lines(), 3);
        let text = String::from_utf8(f.out).unwrap();
        let lines: Vec<&str> = text.lines().filter(|l| !l.starts_with('#')).collect();
        assert_eq!(
            lines,
            [
                "            a.v0-100     [001] d..2    12.345678: sched_switch: prev_comm=a.v0 prev_pid=100 prev_prio=120 prev_state=S ==> next_comm=<idle> next_pid=0 next_prio=120",
                "          <idle>-0       [001] d..2   100.000000: sched_waking: comm=web.v1 pid=102 prio=120 target_cpu=001",
                "          <idle>-0       [001] d..2   100.000000: sched_wakeup: comm=web.v1 pid=102 prio=120 target_cpu=001",
            ]
        );
        assert!(text.starts_with("# tracer: nop\n#\n# vmsched "));
        assert!(text.contains("2 PCPUs (#P:2); traced from 0.001500 s"));
    }

    #[test]
    fn prev_state_follows_the_documented_mapping() {
        let sc = crate::Scenario::from_toml_str(
            "[host]\npcpus = 1\n[scheduler]\nname = \"credit\"\n[[domain]]\nname = \"a\"\n[domain.workload]\nkind = \"cpu-hog\"\n",
        )
        .unwrap();
        let sim = crate::Simulation::new(&sc).unwrap();
        let mut v = sim.vcpus()[0].clone();
        v.blocked = false;
        v.running_on = Some(PcpuId(0));
        assert_eq!(prev_state(&v), "R");
        v.pause_count = 1;
        assert_eq!(prev_state(&v), "D");
        v.domain_pause = 1;
        assert_eq!(prev_state(&v), "T");
        v.online = false;
        assert_eq!(prev_state(&v), "P");
        v.online = true;
        v.blocked = true;
        assert_eq!(prev_state(&v), "S", "blocked wins over paused");
    }
}
