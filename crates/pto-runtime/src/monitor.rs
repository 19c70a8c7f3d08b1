//! Hooks through which an embedder watches what every thread of a run is doing, so that a
//! crash of the whole process can still be explained afterwards.
//!
//! The runtime itself never looks at the monitor's data. A chip running in a child process
//! (`pto-runner`'s `chip_process`) implements [`ExecMonitor`] over a shared-memory board: the
//! parent reads it after the child died (a kernel dereferenced null, called `abort()` or
//! `_exit()`) and names the task, kernel, core and arguments in its error. Every call is a
//! handful of relaxed stores on the calling thread; without a monitor nothing is called.

use std::ffi::CStr;
use std::sync::Arc;

use crate::task::{TaskId, TaskPayload};

/// What a thread of the run is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ThreadRole {
    /// The orchestration thread (slot 0).
    Orchestration,
    /// Worker `n` of the pool (slot `1 + n`).
    Worker(usize),
    /// A gang helper (slots after the workers, in start order).
    Helper,
}

/// Receives the run's progress, on the thread that makes it.
pub trait ExecMonitor: Send + Sync {
    /// A thread starts; `slot` is its index for the calls below (stable for the run).
    fn thread_started(&self, slot: usize, role: ThreadRole);
    /// The thread in `slot` starts running a subtask of `task` on logical `core`.
    fn subtask_started(
        &self,
        slot: usize,
        task: TaskId,
        core: usize,
        func_id: i32,
        payload: &TaskPayload,
    );
    /// The thread in `slot` finished its subtask.
    fn subtask_finished(&self, slot: usize);
    /// The orchestration reached `file:line` (a submit or a scope). `file` is a string
    /// literal of the orchestration library (its address identifies it: it is the same
    /// pointer for every call from one source file).
    fn orchestration_site(&self, file: Option<&CStr>, line: i32);
    /// The orchestration entry returned (or was never called).
    fn orchestration_finished(&self);
}

/// An [`ExecMonitor`] shared with the run (cloneable, printable configuration field).
#[derive(Clone)]
pub struct Monitor(pub Arc<dyn ExecMonitor>);

impl std::fmt::Debug for Monitor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Monitor(..)")
    }
}
