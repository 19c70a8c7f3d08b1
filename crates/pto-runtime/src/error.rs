//! Runtime errors: Simpler's error codes with messages that name the task, the ring and the fix.

use std::path::PathBuf;

/// Simpler's runtime status codes (`PTO2_ERROR_*`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ErrorCode {
    /// A scope holds more tasks than its ring can keep live.
    ScopeDeadlock,
    /// The heap ring cannot fit the outputs of the live tasks.
    HeapRingDeadlock,
    /// The task window is full and nothing can retire.
    FlowControlDeadlock,
    /// The dependency-list pool is full and nothing can retire.
    DepPoolOverflow,
    /// A submit had invalid arguments.
    InvalidArgs,
    /// A sync-start SPMD task asked for more blocks than cores.
    RequireSyncStartInvalid,
    /// A blocking tensor access waited too long.
    TensorWaitTimeout,
    /// The orchestration reported a fatal error.
    ExplicitOrchFatal,
    /// A scope's task list overflowed.
    ScopeTasksOverflow,
    /// The TensorMap entry pool is full and nothing can retire.
    TensorMapOverflow,
    /// No task finished within the scheduler timeout.
    SchedulerTimeout,
    /// A kernel faulted: a tile outside its on-chip buffer, a load or store outside the
    /// task's tensors, an uncaught C++ exception (this runtime's code; Simpler has none).
    KernelFault,
}

impl ErrorCode {
    /// The numeric code.
    pub fn code(self) -> i32 {
        match self {
            ErrorCode::ScopeDeadlock => 1,
            ErrorCode::HeapRingDeadlock => 2,
            ErrorCode::FlowControlDeadlock => 3,
            ErrorCode::DepPoolOverflow => 4,
            ErrorCode::InvalidArgs => 5,
            ErrorCode::RequireSyncStartInvalid => 7,
            ErrorCode::TensorWaitTimeout => 8,
            ErrorCode::ExplicitOrchFatal => 9,
            ErrorCode::ScopeTasksOverflow => 10,
            ErrorCode::TensorMapOverflow => 11,
            ErrorCode::SchedulerTimeout => 100,
            ErrorCode::KernelFault => 200,
        }
    }

    /// The code for a number reported by C++ (`rt_report_fatal`); unknown numbers map to
    /// [`ErrorCode::ExplicitOrchFatal`].
    pub fn from_code(code: i32) -> ErrorCode {
        match code {
            1 => ErrorCode::ScopeDeadlock,
            2 => ErrorCode::HeapRingDeadlock,
            3 => ErrorCode::FlowControlDeadlock,
            4 => ErrorCode::DepPoolOverflow,
            5 => ErrorCode::InvalidArgs,
            7 => ErrorCode::RequireSyncStartInvalid,
            8 => ErrorCode::TensorWaitTimeout,
            10 => ErrorCode::ScopeTasksOverflow,
            11 => ErrorCode::TensorMapOverflow,
            100 => ErrorCode::SchedulerTimeout,
            200 => ErrorCode::KernelFault,
            _ => ErrorCode::ExplicitOrchFatal,
        }
    }

    /// `PTO2_ERROR_FLOW_CONTROL_DEADLOCK` and friends.
    pub fn name(self) -> &'static str {
        match self {
            ErrorCode::ScopeDeadlock => "PTO2_ERROR_SCOPE_DEADLOCK",
            ErrorCode::HeapRingDeadlock => "PTO2_ERROR_HEAP_RING_DEADLOCK",
            ErrorCode::FlowControlDeadlock => "PTO2_ERROR_FLOW_CONTROL_DEADLOCK",
            ErrorCode::DepPoolOverflow => "PTO2_ERROR_DEP_POOL_OVERFLOW",
            ErrorCode::InvalidArgs => "PTO2_ERROR_INVALID_ARGS",
            ErrorCode::RequireSyncStartInvalid => "PTO2_ERROR_REQUIRE_SYNC_START_INVALID",
            ErrorCode::TensorWaitTimeout => "PTO2_ERROR_TENSOR_WAIT_TIMEOUT",
            ErrorCode::ExplicitOrchFatal => "PTO2_ERROR_EXPLICIT_ORCH_FATAL",
            ErrorCode::ScopeTasksOverflow => "PTO2_ERROR_SCOPE_TASKS_OVERFLOW",
            ErrorCode::TensorMapOverflow => "PTO2_ERROR_TENSORMAP_OVERFLOW",
            ErrorCode::SchedulerTimeout => "PTO2_ERROR_SCHEDULER_TIMEOUT",
            ErrorCode::KernelFault => "PTO2_ERROR_KERNEL_FAULT",
        }
    }
}

/// Everything that can go wrong loading or running a program.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RuntimeError {
    /// A platform name that is not known.
    #[error("Invalid platform '{name}'. Expected 'a2a3sim', 'a2a3', 'a5sim', 'a5' or 'cpu'.")]
    UnknownPlatform {
        /// The name given.
        name: String,
    },
    /// A hardware platform on a machine without the hardware.
    #[error(
        "platform '{platform}': no Ascend device on this machine; use 'a2a3sim', 'a5sim' or 'cpu'"
    )]
    NoDevice {
        /// The platform asked for.
        platform: &'static str,
    },
    /// A ring or pool override that Simpler would reject.
    #[error("invalid runtime configuration: {message}")]
    InvalidConfig {
        /// What is wrong and how to fix it.
        message: String,
    },
    /// A shared object that cannot be loaded or lacks a symbol.
    #[error("cannot load `{}`: {message}", path.display())]
    Load {
        /// The shared object.
        path: PathBuf,
        /// What is wrong and how to fix it.
        message: String,
    },
    /// The orchestration arguments do not match what it expects.
    #[error("{message}")]
    BadArguments {
        /// What is wrong and how to fix it.
        message: String,
    },
    /// A fatal runtime error latched during the run.
    #[error("{} ({}): {message}", code.name(), code.code())]
    Fatal {
        /// Simpler's code.
        code: ErrorCode,
        /// What happened, where, and the fix.
        message: String,
    },
    /// The caller's [`crate::config::Interrupt`] asked the run to stop.
    #[error("the run was interrupted")]
    Interrupted,
    /// The OS refused a resource (thread spawn, memory).
    #[error("{what}: {source}")]
    Io {
        /// What the runtime was doing.
        what: String,
        /// The OS error.
        #[source]
        source: std::io::Error,
    },
}

impl RuntimeError {
    /// The Simpler code of a fatal error, if this is one.
    pub fn code(&self) -> Option<ErrorCode> {
        match self {
            RuntimeError::Fatal { code, .. } => Some(*code),
            _ => None,
        }
    }
}
