//! Faults become diagnoses: with the chip in a child process (the default), a kernel or an
//! orchestration that crashes, aborts, exits or hangs makes `pto replay` fail with exit
//! code 2 and an error naming what ran, and `pto` itself survives to say so.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use common::text;

/// The vector_add example with the fault-injecting kernel and orchestration of
/// `tests/faults/` (the fault is chosen per run by an environment variable).
fn faulty_build(name: &str) -> PathBuf {
    let dir = common::example("faults", "vector_add", name);
    let fixtures = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/faults");
    std::fs::copy(
        fixtures.join("kernel_add.cpp"),
        dir.join("kernels/aiv/kernel_add.cpp"),
    )
    .unwrap();
    std::fs::copy(
        fixtures.join("vector_add.cpp"),
        dir.join("orchestration/vector_add.cpp"),
    )
    .unwrap();
    dir
}

fn replay(dir: &Path, env: &[(&str, &str)], extra: &[&str]) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_pto"));
    cmd.args([
        "replay",
        dir.to_str().unwrap(),
        "--validate",
        "--scheduler-timeout-ms",
        "1500",
    ])
    .args(extra)
    .env("NO_COLOR", "1")
    .env_remove("PTO_IN_PROCESS");
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.output().unwrap()
}

#[test]
fn every_kernel_fault_kind_is_named() {
    let dir = faulty_build("kernel");
    let ok = replay(&dir, &[], &[]);
    assert_eq!(ok.status.code(), Some(0), "no fault: {}", text(&ok));
    let common_parts = [
        "kernel 0 'kernel_add'",
        "func_id 0",
        "AIV core AIV_",
        "arguments: [0] INPUT FLOAT32 [2048]",
    ];
    let cases: [(&str, &[&str]); 11] = [
        (
            "segv",
            &["killed by SIGSEGV at address 0x0", "unmapped memory"],
        ),
        ("bus", &["killed by SIGBUS"]),
        ("fpe", &["killed by SIGFPE", "division by zero"]),
        ("ill", &["killed by SIGILL"]),
        ("abort", &["killed by SIGABRT", "abort()"]),
        (
            "terminate",
            &["killed by SIGABRT", "uncaught C++ exception"],
        ),
        ("throw", &["uncaught C++ exception: index 9 of 8"]),
        ("exit", &["exited with status 0", "called exit()"]),
        ("_exit", &["exited with status 3"]),
        (
            "pthread_exit",
            &["killed by SIGABRT", "the kernel called pthread_exit()"],
        ),
        ("hang", &["PTO2_ERROR_SCHEDULER_TIMEOUT", "has run for"]),
    ];
    for (kind, needles) in cases {
        let o = replay(&dir, &[("PTO_TEST_FAULT", kind)], &[]);
        let t = text(&o);
        assert_eq!(o.status.code(), Some(2), "{kind}: {t}");
        for n in needles.iter().chain(if kind == "hang" {
            &common_parts[..1]
        } else {
            &common_parts[..]
        }) {
            assert!(t.contains(n), "{kind}: {n:?} missing in: {t}");
        }
        assert!(!t.contains("PASS"), "{kind}: {t}");
        // abort() is a signal a thread sends itself: its siginfo holds a pid, no address.
        if ["abort", "terminate", "pthread_exit"].contains(&kind) {
            assert!(!t.contains("at address"), "{kind}: {t}");
        }
    }
}

#[test]
fn orchestration_faults_name_the_last_submit() {
    let dir = faulty_build("orchestration");
    let o = replay(&dir, &[("PTO_TEST_ORCH_FAULT", "segv")], &[]);
    let t = text(&o);
    assert_eq!(o.status.code(), Some(2), "{t}");
    assert!(
        t.contains("SIGSEGV")
            && t.contains("in the orchestration")
            && t.contains("vector_add.cpp:29"),
        "{t}"
    );
    let o = replay(&dir, &[("PTO_TEST_ORCH_FAULT", "exit")], &[]);
    let t = text(&o);
    assert_eq!(o.status.code(), Some(2), "{t}");
    assert!(
        t.contains("exited with status 0")
            && t.contains("in the orchestration")
            && t.contains("vector_add.cpp:29")
            && !t.contains("in task"),
        "{t}"
    );
    let o = replay(&dir, &[("PTO_TEST_ORCH_FAULT", "pthread_exit")], &[]);
    let t = text(&o);
    assert_eq!(o.status.code(), Some(2), "{t}");
    assert!(
        t.contains("the orchestration called pthread_exit()") && t.contains("vector_add.cpp:29"),
        "{t}"
    );
    let o = replay(
        &dir,
        &[
            ("PTO_TEST_ORCH_FAULT", "hang"),
            ("PTO_ORCHESTRATION_TIMEOUT_MS", "500"),
        ],
        &[],
    );
    let t = text(&o);
    assert_eq!(o.status.code(), Some(2), "{t}");
    assert!(
        t.contains("the orchestration has neither returned") && t.contains("vector_add.cpp:29"),
        "{t}"
    );
}

#[test]
fn in_process_mode_is_still_available() {
    let dir = faulty_build("in_process");
    let o = replay(&dir, &[], &["--in-process"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let o = replay(
        &dir,
        &[("PTO_TEST_FAULT", "throw"), ("PTO_IN_PROCESS", "1")],
        &[],
    );
    assert!(
        text(&o).contains("uncaught C++ exception: index 9 of 8"),
        "{}",
        text(&o)
    );
}

/// The files of `dfx_outputs/`, relative, sorted (the lock file excluded).
fn dfx_files(dir: &Path) -> Vec<String> {
    fn walk(root: &Path, d: &Path, out: &mut Vec<String>) {
        for e in std::fs::read_dir(d).into_iter().flatten().flatten() {
            let p = e.path();
            if p.is_dir() {
                walk(root, &p, out);
            } else if let Ok(rel) = p.strip_prefix(root) {
                out.push(rel.to_string_lossy().into_owned());
            }
        }
    }
    let mut out = Vec::new();
    let root = dir.join("dfx_outputs");
    walk(&root, &root, &mut out);
    out.retain(|f| f != ".lock");
    out.sort();
    out
}

/// `args_dump.json` and `args.bin` agree: every record's bytes lie inside the file.
fn dump_is_consistent(dir: &Path) -> Result<(), String> {
    let d = dir.join("dfx_outputs/args_dump");
    let json: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(d.join("args_dump.json")).map_err(|e| e.to_string())?,
    )
    .map_err(|e| e.to_string())?;
    let args = json["args"].as_array().ok_or("no args")?;
    // A dump that captured no payload (level 1 without dump() marks) names no args.bin, and
    // the one of an earlier run is gone with it.
    if json.get("bin_file") == Some(&serde_json::Value::Null) {
        return match d.join("args.bin").exists() {
            true => Err("an args.bin beside a manifest that names none".to_string()),
            false
                if args
                    .iter()
                    .any(|a| a["bin_size"].as_u64().is_some_and(|n| n > 0)) =>
            {
                Err("payload records without an args.bin".to_string())
            }
            false => Ok(()),
        };
    }
    let bin = std::fs::metadata(d.join("args.bin"))
        .map_err(|e| e.to_string())?
        .len();
    for a in args {
        if let (Some(off), Some(size)) = (a["bin_offset"].as_u64(), a["bin_size"].as_u64()) {
            if off + size > bin {
                return Err(format!(
                    "record at {off}+{size} outside the {bin}-byte args.bin"
                ));
            }
        }
    }
    Ok(())
}

#[test]
fn concurrent_replays_leave_one_consistent_artifact_set() {
    let dir = common::example("faults", "paged_attention", "concurrent");
    // Warm the build so the runs overlap in their execution, not their compile.
    assert_eq!(
        replay(&dir, &[], &["--dump-args", "2"]).status.code(),
        Some(0)
    );
    let kinds: [&[&str]; 4] = [
        &["--dump-args", "2", "--swimlane", "--pmu"],
        &["--dump-args", "3", "--dep-gen"],
        &["--dump-args", "2", "--scope-stats"],
        &["--dump-args", "1", "--swimlane", "2"],
    ];
    let children: Vec<_> = kinds
        .iter()
        .map(|extra| {
            Command::new(env!("CARGO_BIN_EXE_pto"))
                .args(["replay", dir.to_str().unwrap(), "--validate"])
                .args(*extra)
                .env("NO_COLOR", "1")
                .stdout(std::process::Stdio::null())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    for c in children {
        let o = c.wait_with_output().unwrap();
        assert_eq!(
            o.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&o.stderr)
        );
    }
    let files = dfx_files(&dir);
    assert!(
        files
            .iter()
            .all(|f| !f.starts_with(".run-") && !f.ends_with(".tmp")),
        "{files:?}"
    );
    dump_is_consistent(&dir).unwrap();
    let o = Command::new(env!("CARGO_BIN_EXE_pto"))
        .args([
            "dump-viewer",
            dir.join("dfx_outputs/args_dump").to_str().unwrap(),
            "--list",
        ])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
}

#[test]
fn a_killed_run_leaves_the_previous_complete_set() {
    let dir = common::example("faults", "paged_attention", "killed");
    assert_eq!(
        replay(&dir, &[], &["--dump-args", "2"]).status.code(),
        Some(0)
    );
    let before = dfx_files(&dir);
    for delay_ms in [5u64, 40, 120] {
        let mut child = Command::new(env!("CARGO_BIN_EXE_pto"))
            .args([
                "replay",
                dir.to_str().unwrap(),
                "--dump-args",
                "2",
                "--swimlane",
            ])
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        std::thread::sleep(std::time::Duration::from_millis(delay_ms));
        // SAFETY: killing our own child's process group (the chip process included).
        unsafe { libc_kill(child.id() as i32) };
        let _ = child.wait();
        std::thread::sleep(std::time::Duration::from_millis(50));
        let files = dfx_files(&dir);
        // Either the old set, or (if the kill came after publishing) a complete new one.
        dump_is_consistent(&dir)
            .unwrap_or_else(|e| panic!("after a kill at {delay_ms} ms: {e}; {files:?}"));
        assert!(files.iter().all(|f| !f.ends_with(".tmp")), "{files:?}");
    }
    // The next run sweeps staging directories of the killed processes.
    assert_eq!(
        replay(&dir, &[], &["--dump-args", "2"]).status.code(),
        Some(0)
    );
    let files = dfx_files(&dir);
    assert!(files.iter().all(|f| !f.starts_with(".run-")), "{files:?}");
    dump_is_consistent(&dir).unwrap();
    assert!(
        before.iter().all(|f| files.contains(f)),
        "{before:?} vs {files:?}"
    );
}

extern "C" {
    #[link_name = "kill"]
    fn libc_kill_raw(pid: i32, sig: i32) -> i32;
}

/// SIGKILL to `pid` and, after it is gone, to any chip process it left (its children are in
/// their own process groups and notice the closed channel; give them a moment).
unsafe fn libc_kill(pid: i32) {
    // SAFETY: plain signal to our own child.
    unsafe { libc_kill_raw(pid, 9) };
}

/// A read-only bind mount of `src` (unmounted on drop), or `None` where this process may
/// not mount (not root, or no mount namespace permission).
struct ReadOnlyMount(PathBuf);

impl ReadOnlyMount {
    fn of(src: &Path) -> Option<ReadOnlyMount> {
        let dst = src.with_extension("ro");
        std::fs::create_dir_all(&dst).unwrap();
        let ok = |args: &[&std::ffi::OsStr]| {
            Command::new("mount")
                .args(args)
                .output()
                .is_ok_and(|o| o.status.success())
        };
        if !ok(&["--bind".as_ref(), src.as_os_str(), dst.as_os_str()]) {
            return None;
        }
        let m = ReadOnlyMount(dst);
        ok(&["-o".as_ref(), "remount,ro,bind".as_ref(), m.0.as_os_str()]).then_some(m)
    }
}

impl Drop for ReadOnlyMount {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(&self.0).status();
    }
}

#[test]
fn a_read_only_build_directory_still_runs_and_validates() {
    let dir = common::example("faults", "vector_add", "read_only");
    let first = replay(&dir, &[], &[]);
    assert_eq!(first.status.code(), Some(0), "{}", text(&first));
    let Some(ro) = ReadOnlyMount::of(&dir) else {
        eprintln!("skipped: this process cannot make a read-only bind mount (needs root)");
        return;
    };
    for extra in [&["--no-recompile"][..], &[][..]] {
        let o = replay(&ro.0, &[], extra);
        let t = text(&o);
        assert_eq!(o.status.code(), Some(0), "{extra:?}: {t}");
        assert!(
            t.contains("PASS")
                && t.contains("actual outputs not written")
                && t.contains("is read-only"),
            "{extra:?}: {t}"
        );
    }
    let o = replay(&ro.0, &[], &["--swimlane"]);
    let t = text(&o);
    assert_eq!(o.status.code(), Some(2), "{t}");
    assert!(
        t.contains("is not writable, so the diagnostics cannot be written"),
        "{t}"
    );
}

/// A small tmpfs mounted at a fresh directory (unmounted on drop), or `None` where this
/// process may not mount one.
struct SmallTmpfs(PathBuf);

impl SmallTmpfs {
    fn mount(name: &str, size: &str) -> Option<SmallTmpfs> {
        let dir = common::scratch("faults", name);
        let ok = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"])
            .arg(&dir)
            .output()
            .is_ok_and(|o| o.status.success());
        ok.then_some(SmallTmpfs(dir))
    }

    /// Fills the file system with `filler`, then frees `keep` bytes of it again.
    fn fill(&self, keep: u64) -> PathBuf {
        use std::io::Write as _;
        let filler = self.0.join("filler");
        let mut f = std::fs::File::create(&filler).unwrap();
        // tmpfs allocates on write (set_len would make a sparse file): write until full.
        let chunk = vec![0u8; 1 << 16];
        let mut len = 0u64;
        while f.write_all(&chunk).is_ok() {
            len += chunk.len() as u64;
        }
        let _ = f.flush();
        f.set_len(len.saturating_sub(keep)).unwrap();
        filler
    }
}

impl Drop for SmallTmpfs {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(&self.0).status();
    }
}

/// A full disk during a run with diagnostics: the run fails naming the file and the
/// cause, the previous complete set of artifacts stays, nothing truncated appears under a
/// final name, and once there is room again the next run succeeds and sweeps the rest.
#[test]
fn a_full_disk_fails_cleanly_and_keeps_the_previous_set() {
    let Some(fs) = SmallTmpfs::mount("disk_full", "24m") else {
        eprintln!("skipped: this process cannot mount a tmpfs (needs root)");
        return;
    };
    let dir = fs.0.join("paged_attention");
    common::copy_dir(
        &PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../examples/paged_attention"),
        &dir,
    );
    let first = replay(&dir, &[], &["--dump-args", "2"]);
    assert_eq!(first.status.code(), Some(0), "{}", text(&first));
    let before = dfx_files(&dir);
    let filler = fs.fill(64 << 10);
    let o = replay(
        &dir,
        &[],
        &["--dump-args", "2", "--swimlane", "--no-recompile"],
    );
    let t = text(&o);
    assert_eq!(o.status.code(), Some(2), "{t}");
    assert!(t.contains("No space left on device"), "{t}");
    assert!(!t.contains("PASS"), "{t}");
    let files = dfx_files(&dir);
    assert!(files.iter().all(|f| !f.ends_with(".tmp")), "{files:?}");
    dump_is_consistent(&dir).unwrap();
    assert!(
        before.iter().all(|f| files.contains(f)),
        "the previous set is gone: {before:?} vs {files:?}"
    );
    std::fs::remove_file(filler).unwrap();
    let o = replay(
        &dir,
        &[],
        &["--dump-args", "2", "--swimlane", "--no-recompile"],
    );
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let files = dfx_files(&dir);
    assert!(files.iter().all(|f| !f.starts_with(".run-")), "{files:?}");
    dump_is_consistent(&dir).unwrap();
}

/// A replay killed while it compiles and installs binaries (each round edits the kernel so
/// it must be rebuilt) never leaves a binary that a later `--no-recompile` run would load
/// stale or truncated: that run rebuilds what it must and validates.
#[test]
fn a_replay_killed_while_it_builds_leaves_nothing_stale() {
    let dir = common::example("faults", "vector_add", "killed_build");
    let kernel = dir.join("kernels/aiv/kernel_add.cpp");
    let original = std::fs::read_to_string(&kernel).unwrap();
    for (round, delay_ms) in [30u64, 150, 400, 900].into_iter().enumerate() {
        std::fs::write(&kernel, format!("{original}\n// round {round}\n")).unwrap();
        let mut child = Command::new(env!("CARGO_BIN_EXE_pto"))
            .args(["replay", dir.to_str().unwrap(), "--no-recompile"])
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        std::thread::sleep(std::time::Duration::from_millis(delay_ms));
        // SAFETY: killing our own child's process group (its compilers included).
        unsafe { libc_kill(child.id() as i32) };
        let _ = child.wait();
        let o = replay(&dir, &[], &["--no-recompile"]);
        let t = text(&o);
        assert_eq!(
            o.status.code(),
            Some(0),
            "after a kill at {delay_ms} ms: {t}"
        );
        assert!(t.contains("PASS"), "{t}");
    }
}

/// The pids of `parent`'s child processes (from `/proc/<pid>/stat`).
fn children_of(parent: u32) -> Vec<i32> {
    let mut kids = Vec::new();
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = e.file_name().to_string_lossy().parse::<i32>() else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(e.path().join("stat")) else {
            continue;
        };
        // `pid (comm) state ppid ...`: the fields after the last `)`.
        let after = stat.rsplit_once(')').map_or("", |(_, r)| r);
        let ppid = after
            .split_whitespace()
            .nth(1)
            .and_then(|p| p.parse::<u32>().ok());
        if ppid == Some(parent) {
            kids.push(pid);
        }
    }
    kids
}

fn alive(pid: i32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|s| {
        !s.rsplit_once(')')
            .is_some_and(|(_, r)| r.trim_start().starts_with('Z'))
    })
}

/// A chip process dies with the host that started it (it is in a process group of its own,
/// so a signal to the host's group does not reach it) and never publishes a killed run's
/// diagnostics: a slow kernel (3 s) whose host is killed after 1 s leaves no swimlane.
#[test]
fn a_chip_process_dies_with_its_host_and_publishes_nothing() {
    for (fault, what) in [("sleep", "a slow kernel"), ("hang", "a hanging kernel")] {
        let dir = faulty_build(&format!("orphan_{fault}"));
        let mut pto = Command::new(env!("CARGO_BIN_EXE_pto"))
            .args([
                "replay",
                dir.to_str().unwrap(),
                "--swimlane",
                "--scheduler-timeout-ms",
                "60000",
            ])
            .env("PTO_TEST_FAULT", fault)
            .env_remove("PTO_IN_PROCESS")
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        // Wait for the chip process to be running the kernel (the compile comes first).
        let started = std::time::Instant::now();
        let chip = loop {
            let kids = children_of(pto.id());
            let running = kids.into_iter().find(|&k| {
                std::fs::read_to_string(format!("/proc/{k}/environ"))
                    .is_ok_and(|e| e.split('\0').any(|v| v == "PTO_CHIP_WORKER=1"))
            });
            if let (Some(k), true) = (running, dir.join("dfx_outputs").is_dir()) {
                break k;
            }
            assert!(
                started.elapsed() < std::time::Duration::from_secs(120),
                "no chip process started for {what}"
            );
            std::thread::sleep(std::time::Duration::from_millis(20));
        };
        std::thread::sleep(std::time::Duration::from_millis(500));
        // SAFETY: SIGKILL to our own child.
        unsafe { libc_kill(pto.id() as i32) };
        let _ = pto.wait();
        let killed = std::time::Instant::now();
        while alive(chip) && killed.elapsed() < std::time::Duration::from_secs(2) {
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        assert!(
            !alive(chip),
            "the chip process of {what} outlived its host by 2 s"
        );
        std::thread::sleep(std::time::Duration::from_millis(3500));
        let files = dfx_files(&dir);
        assert!(
            !files.iter().any(|f| f.starts_with("chip_swimlane")),
            "{what}: a killed run published {files:?}"
        );
    }
}
