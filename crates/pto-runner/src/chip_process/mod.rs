//! The chip in a child process: a kernel that crashes, aborts, calls `exit()` or hangs takes
//! down a disposable process, not the host, and the host turns the death into a diagnosis
//! naming the task, kernel, core, signal and arguments.
//!
//! # Shape
//!
//! The host spawns the worker command (`pto __chip-worker`, or the Python package's
//! `python -m pypto.runtime._chip_worker`; front ends register it with
//! [`set_worker_command`]) with two inherited descriptors: fd 3, a Unix stream socket (the
//! control channel, [`protocol`]), and fd 4, a `memfd` shared file ([`shm`]) holding the
//! status board ([`board`]) and, after it, the tensor area. One worker serves one build
//! directory and platform and is reused for later runs of it (benchmark rounds, repeated
//! calls); a worker that died or timed out is discarded and the next run starts a new one.
//!
//! A run: the host copies the input tensors into the tensor area, sends `run`, and waits,
//! polling the child's heartbeat and the caller's interrupt check; the child binds the
//! tensors *in place* (no second copy), runs the build exactly as an in-process run would
//! (diagnostics are written by the child into `dfx_outputs/`), and answers `done` with the
//! run summary; the host copies the outputs back. If the child dies instead, the host reads
//! the board (the signal handler recorded the signal, its address and the thread; every
//! thread keeps its current task and arguments there) and builds the error.
//!
//! A chip process is started in its own process group; stopping it kills the group, so no
//! thread or process of a timed-out run keeps running.

pub mod board;
mod child;
pub mod fdpass;
mod l3_child;
pub(crate) mod parent;
pub mod protocol;
pub mod shm;
pub mod signals;

use std::sync::Mutex;

pub use child::{host_alive, serve};
pub use parent::{describe_death, execute, execute_pass, prestart, shutdown_all, DeathContext};

static WORKER_COMMAND: Mutex<Option<Vec<String>>> = Mutex::new(None);

/// Registers the command that starts a chip process (the program and its arguments); the
/// front ends call this once (`pto` with itself and `__chip-worker`, the Python package with
/// its interpreter). Without one — a library user, a test — runs stay in-process.
pub fn set_worker_command(command: Vec<String>) {
    if let Ok(mut c) = WORKER_COMMAND.lock() {
        *c = (!command.is_empty()).then_some(command);
    }
}

/// The registered worker command (`PTO_CHIP_WORKER_COMMAND`, whitespace-separated, wins).
pub fn worker_command() -> Option<Vec<String>> {
    if let Ok(text) = std::env::var("PTO_CHIP_WORKER_COMMAND") {
        let parts: Vec<String> = text.split_whitespace().map(str::to_string).collect();
        if !parts.is_empty() {
            return Some(parts);
        }
    }
    WORKER_COMMAND.lock().ok().and_then(|c| c.clone())
}

/// Whether runs isolate the chip by default: a worker command is known and
/// `PTO_IN_PROCESS` is not set to a true value (`1`, `true`, `yes`).
pub fn isolated_by_default() -> bool {
    let forced_in_process = std::env::var("PTO_IN_PROCESS")
        .map(|v| matches!(v.trim().to_ascii_lowercase().as_str(), "1" | "true" | "yes"))
        .unwrap_or(false);
    !forced_in_process && worker_command().is_some()
}
