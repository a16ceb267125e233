//! dd through a Linux 2.6.16 guest's page cache: the read-ahead's
//! asynchronous ahead window keeps the disk busy while the guest copies,
//! windows are split into the block front end's requests, and a reader
//! slower than the disk is bound by its own copying.

mod common;
use common::*;
use serde_json::Value as Json;

/// A host with an idle Dom0 and a guest running `dd` (`extra` lines in its
/// workload), on the `cherkasova2007` profile with `profile_edit` applied to
/// its text (`(from, to)` replacements).
fn dd(pcpus: u32, extra: &str, profile_edit: &[(&str, &str)], secs: f64) -> String {
    let mut profile = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/profiles/cherkasova2007.toml"
    ))
    .unwrap();
    for (from, to) in profile_edit {
        assert!(profile.contains(from), "{from} not in the profile");
        profile = profile.replace(from, to);
    }
    format!(
        r#"
[host]
pcpus = {pcpus}
[host.profile]
{profile}
[scheduler]
name = "credit"
xen_version = "3.0.3"
[run]
duration_s = {secs}
warmup_s = 0.5
[[domain]]
name = "dom0"
[domain.workload]
kind = "idle"
[[domain]]
name = "dom1"
[domain.workload]
kind = "disk-read"
blocks = 0
{extra}
"#
    )
}

fn wl(s: &Json, key: &str) -> f64 {
    domain(s, "dom1")["workload"][key].as_f64().unwrap()
}

fn disk_busy(s: &Json) -> f64 {
    s["host"]["io"]["disk_busy_pct"].as_f64().unwrap()
}

/// The disk's rate for 128-KiB windows, each `reqs` disk requests that pay
/// the controller overhead once each.
fn disk_bound_kib_s(s: &Json, reqs: f64) -> f64 {
    let media = s["host"]["io"]["disk_transfer_mb_s"].as_f64().unwrap() * 1e6;
    let window_s = reqs * 100e-6 + 131_072.0 / media;
    128.0 / window_s
}

#[test]
fn the_ahead_window_keeps_the_disk_busy_while_the_guest_copies() {
    // dd with 1-KiB blocks copies a 128-KiB window in well under the
    // 2.7 ms the disk takes to read the next: with the ahead window in
    // flight the disk never waits for the reader (the reading model of the
    // earlier rounds, one window at a time, left it 27 % idle).
    let s = run_checked(&dd(1, "", &[], 4.0), 50);
    let busy = disk_busy(&s);
    assert!(busy > 99.0, "disk busy {busy:.2} %");
    // The driver domain merges a window's requests into one disk request.
    let got = wl(&s, "throughput_kb_s");
    let bound = disk_bound_kib_s(&s, 1.0);
    assert!(
        got > 0.98 * bound && got < 1.02 * bound,
        "{got:.0} KiB/s against the disk's {bound:.0}"
    );
    // Three front-end requests per 128-KiB window (44 KiB = 11 segments
    // at most), and the reader stalls on each window as it reaches it.
    let (reqs, windows) = (wl(&s, "requests"), wl(&s, "windows"));
    assert!(
        (reqs - 3.0 * windows).abs() <= 3.0,
        "{reqs} requests for {windows} windows"
    );
    let kib = got * 3.5;
    assert!(
        (windows - kib / 128.0).abs() <= 3.0,
        "{windows} windows for {kib:.0} KiB"
    );
    assert!((wl(&s, "waits") - windows).abs() <= 2.0);
}

#[test]
fn the_driver_domain_merges_a_windows_requests_unless_told_not_to() {
    // Without merging, each of a window's three front-end requests pays
    // the controller's overhead; with it (the profile's 128 KiB), one does,
    // the same as a front end that issues the window as one request.
    let off = [("disk_max_request_kb = 128.0", "disk_max_request_kb = 0.0")];
    let unmerged = run_checked(&dd(1, "", &off, 3.0), 50);
    let merged = run_checked(&dd(1, "", &[], 3.0), 50);
    let one = run_checked(&dd(1, "max_request_kb = 128", &off, 3.0), 50);
    let t = |s: &Json| wl(s, "throughput_kb_s");
    assert_near(
        "unmerged",
        t(&unmerged) / disk_bound_kib_s(&unmerged, 3.0),
        1.0,
        0.02,
    );
    assert_near(
        "merged",
        t(&merged) / disk_bound_kib_s(&merged, 1.0),
        1.0,
        0.02,
    );
    assert_near("one request", t(&one) / t(&merged), 1.0, 0.02);
    assert!(
        (wl(&one, "requests") - wl(&one, "windows")).abs() <= 1.0,
        "one request per window"
    );
}

#[test]
fn a_reader_slower_than_the_disk_is_bound_by_its_copy() {
    // At 100 µs per KiB copied the reader needs 13 ms per 128-KiB window,
    // the disk 2.9 ms: dd runs at the copy's rate and the disk idles.
    let s = run_checked(
        &dd(
            2,
            "",
            &[("guest_copy_kb_ns = 2500", "guest_copy_kb_ns = 100000")],
            4.0,
        ),
        50,
    );
    let got = wl(&s, "throughput_kb_s");
    // Per 1-KiB block: the read() and write() calls plus the copy; per
    // 128 blocks, three requests' front-end CPU (20 µs each) besides.
    let per_block_s = (2_000.0 + 100_000.0 + 3.0 * 20_000.0 / 128.0) * 1e-9;
    let want = 1.0 / per_block_s;
    assert!(
        got < want && got > 0.95 * want,
        "{got:.0} KiB/s, the copy allows {want:.0}"
    );
    let busy = disk_busy(&s);
    assert!(busy < 30.0, "disk busy {busy:.1} %");
}

#[test]
fn without_read_ahead_each_page_is_read_alone() {
    // readahead_kb = 0: every page missing from the cache is one request
    // of 4 KiB, and the three other 1-KiB blocks of the page hit the cache.
    let s = run_checked(&dd(1, "readahead_kb = 0", &[], 2.0), 50);
    let kib = wl(&s, "throughput_kb_s") * 1.5;
    let reqs = wl(&s, "requests");
    assert!(
        (reqs - kib / 4.0).abs() <= 2.0,
        "{reqs} requests, {kib:.0} KiB"
    );
    assert_eq!(wl(&s, "windows"), reqs);
}
