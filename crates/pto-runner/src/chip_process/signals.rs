//! Fatal signals in the chip process: a handler records the signal, its code and address and
//! the receiving thread's slot on the status board, then lets the signal kill the process as
//! it would have (so the host's `waitpid` sees it). Every thread that runs kernels gets an
//! alternate signal stack, so even a stack overflow is recorded.

use std::cell::RefCell;
use std::sync::atomic::{AtomicPtr, Ordering};

use super::board::{self, Board};

/// The signals that mean a kernel or the orchestration crashed.
pub const FATAL_SIGNALS: [i32; 6] = [
    libc::SIGSEGV,
    libc::SIGBUS,
    libc::SIGFPE,
    libc::SIGILL,
    libc::SIGABRT,
    libc::SIGTRAP,
];

/// `si_code` of a SIGSEGV for an access the mapping forbids (Linux's `SEGV_ACCERR`).
const SEGV_ACCERR: i32 = 2;

static BOARD: AtomicPtr<Board> = AtomicPtr::new(std::ptr::null_mut());

/// Size of each thread's alternate signal stack.
const ALT_STACK_BYTES: usize = 64 * 1024;

/// An alternate signal stack, released when its thread exits.
struct AltStack {
    base: *mut libc::c_void,
}

impl Drop for AltStack {
    fn drop(&mut self) {
        // SAFETY: disable this thread's alternate stack before unmapping it.
        unsafe {
            let disable = libc::stack_t {
                ss_sp: std::ptr::null_mut(),
                ss_flags: libc::SS_DISABLE,
                ss_size: 0,
            };
            libc::sigaltstack(&disable, std::ptr::null_mut());
            libc::munmap(self.base, ALT_STACK_BYTES);
        }
    }
}

thread_local! {
    static ALT_STACK: RefCell<Option<AltStack>> = const { RefCell::new(None) };
}

/// Gives the calling thread an alternate signal stack (once).
pub fn install_alt_stack() {
    ALT_STACK.with(|s| {
        if s.borrow().is_some() {
            return;
        }
        // SAFETY: a private anonymous mapping; the result is checked.
        let base = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                ALT_STACK_BYTES,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        };
        if base == libc::MAP_FAILED {
            return;
        }
        let stack = libc::stack_t {
            ss_sp: base,
            ss_flags: 0,
            ss_size: ALT_STACK_BYTES,
        };
        // SAFETY: the stack stays mapped until this thread's AltStack is dropped.
        if unsafe { libc::sigaltstack(&stack, std::ptr::null_mut()) } != 0 {
            // SAFETY: our own mapping, unused.
            unsafe { libc::munmap(base, ALT_STACK_BYTES) };
            return;
        }
        *s.borrow_mut() = Some(AltStack { base });
    });
}

extern "C" fn on_fatal_signal(signal: i32, info: *mut libc::siginfo_t, _ctx: *mut libc::c_void) {
    let board = BOARD.load(Ordering::Acquire);
    if !board.is_null() {
        // SAFETY: the kernel passes a valid siginfo; reading it and recording on the board
        // are async-signal-safe (plain loads, stores and one CAS).
        unsafe {
            let (code, addr) = if info.is_null() {
                (0, 0)
            } else {
                ((*info).si_code, (*info).si_addr() as u64)
            };
            board::record_fault(board, signal, code, addr);
        }
    }
    // Die of the signal as if no handler were installed.
    // SAFETY: async-signal-safe calls.
    unsafe {
        libc::signal(signal, libc::SIG_DFL);
        libc::raise(signal);
    }
}

/// Runs in the thread that called `exit()`: during a run it records that thread's slot
/// (signal 0), so a kernel's or the orchestration's `exit()` is attributed to the thread
/// that made it rather than to whichever kernel happened to be running. `_exit()` runs no
/// handler; its report falls back to the running kernels. The child's own exit, between
/// runs, records nothing (the board may already serve the next chip process).
extern "C" fn on_exit() {
    let board = BOARD.load(Ordering::Acquire);
    // SAFETY: the board stays mapped for the life of the process.
    if !board.is_null() && unsafe { (*board).running.load(Ordering::SeqCst) } == 1 {
        // SAFETY: as above.
        unsafe { board::record_fault(board, 0, 0, 0) };
    }
}

/// Installs the handlers for [`FATAL_SIGNALS`] and an `atexit` hook, recording on `board`.
///
/// # Safety
/// `board` points to a board that stays mapped for the life of the process.
pub unsafe fn install(board: *mut Board) -> std::io::Result<()> {
    BOARD.store(board, Ordering::Release);
    install_alt_stack();
    // SAFETY: registers a plain function; it only stores into the board.
    if unsafe { libc::atexit(on_exit) } != 0 {
        return Err(std::io::Error::other("atexit registration failed"));
    }
    for &sig in &FATAL_SIGNALS {
        // SAFETY: a zeroed sigaction is valid; the handler is async-signal-safe.
        unsafe {
            let mut action: libc::sigaction = std::mem::zeroed();
            action.sa_sigaction = on_fatal_signal as *const () as usize;
            action.sa_flags = libc::SA_SIGINFO | libc::SA_ONSTACK;
            libc::sigemptyset(&mut action.sa_mask);
            if libc::sigaction(sig, &action, std::ptr::null_mut()) != 0 {
                return Err(std::io::Error::last_os_error());
            }
        }
    }
    Ok(())
}

/// Whether a recorded signal's `si_addr` is an address: only for the hardware faults
/// (SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGTRAP) the kernel raised (`si_code > 0`). A signal
/// sent by a process (`abort()`'s SIGABRT is `SI_TKILL`, `kill` is `SI_USER`) carries the
/// sender's pid and uid in those bytes instead.
pub fn has_fault_address(signal: i32, code: i32) -> bool {
    code > 0
        && matches!(
            signal,
            libc::SIGSEGV | libc::SIGBUS | libc::SIGFPE | libc::SIGILL | libc::SIGTRAP
        )
}

/// The name of a signal (`SIGSEGV`) and what it usually means.
pub fn describe(signal: i32, code: i32) -> (&'static str, &'static str) {
    match signal {
        libc::SIGSEGV => (
            "SIGSEGV",
            if code == SEGV_ACCERR {
                "a write to read-only memory or a forbidden access"
            } else {
                "an access to unmapped memory (a null or dangling pointer, an index past a buffer, or a stack overflow)"
            },
        ),
        libc::SIGBUS => ("SIGBUS", "a misaligned or truncated memory access"),
        libc::SIGFPE => ("SIGFPE", "an arithmetic fault (integer division by zero or overflow)"),
        libc::SIGILL => ("SIGILL", "an illegal instruction (e.g. __builtin_trap or a corrupted jump)"),
        libc::SIGABRT => ("SIGABRT", "abort(): a failed assert, std::terminate (an uncaught C++ exception), pthread_exit() or an explicit abort"),
        libc::SIGTRAP => ("SIGTRAP", "a trap instruction"),
        libc::SIGKILL => ("SIGKILL", "killed (out of memory, or from outside)"),
        libc::SIGTERM => ("SIGTERM", "terminated from outside"),
        _ => ("a signal", "an unexpected signal"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_kernel_raised_faults_have_an_address() {
        assert!(has_fault_address(libc::SIGSEGV, 1)); // SEGV_MAPERR
        assert!(has_fault_address(libc::SIGBUS, 2));
        // abort(): SIGABRT via tgkill (SI_TKILL = -6): si_addr holds the sender's pid.
        assert!(!has_fault_address(libc::SIGABRT, -6));
        // kill -SEGV from outside (SI_USER = 0).
        assert!(!has_fault_address(libc::SIGSEGV, 0));
    }
}
