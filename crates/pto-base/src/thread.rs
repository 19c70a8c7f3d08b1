//! Two pieces of work at once: the one way the project's writers and viewers put an
//! independent part of their work on a second CPU ([`beside`]), and the count of the
//! diagnostics writers' threads at work that tells whether a CPU is left for another
//! ([`AtWork`], [`spare_cpu`]).

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::OnceLock;

/// Threads of the diagnostics writers at work now, in the whole process ([`AtWork`]).
static AT_WORK: AtomicUsize = AtomicUsize::new(0);

/// A thread of the diagnostics writers at work while this lives: the runner's threads
/// that write a run's files, the helpers of [`beside`] and the threads that write a large
/// file behind its renderer, so that such a thread starts only on a CPU none of the
/// others uses ([`spare_cpu`]).
#[derive(Debug)]
pub struct AtWork(());

impl AtWork {
    /// Counts this thread as at work until the value is dropped.
    pub fn begin() -> AtWork {
        AT_WORK.fetch_add(1, Ordering::AcqRel);
        AtWork(())
    }
}

impl Drop for AtWork {
    fn drop(&mut self) {
        AT_WORK.fetch_sub(1, Ordering::AcqRel);
    }
}

/// Whether fewer threads are [at work](AtWork) than the machine has CPUs.
pub fn spare_cpu() -> bool {
    static CPUS: OnceLock<usize> = OnceLock::new();
    let cpus = *CPUS.get_or_init(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
    AT_WORK.load(Ordering::Acquire) < cpus
}

/// Runs `here` on this thread while `there` runs on a helper thread named `name`, and
/// returns both results. When no thread can be had, `there` runs here afterwards (the
/// results are the same, only later). A panic on the helper is resumed here. The helper
/// is [at work](AtWork) while it runs.
pub fn beside<A, B: Send>(
    name: &str,
    here: impl FnOnce() -> A,
    there: impl Fn() -> B + Sync,
) -> (A, B) {
    std::thread::scope(|scope| {
        let helper = std::thread::Builder::new()
            .name(name.to_string())
            .spawn_scoped(scope, || {
                let _at_work = AtWork::begin();
                there()
            });
        let a = here();
        let b = match helper {
            Ok(h) => h.join().unwrap_or_else(|p| std::panic::resume_unwind(p)),
            Err(_) => there(),
        };
        (a, b)
    })
}

#[cfg(test)]
mod tests {
    use super::{beside, spare_cpu, AtWork};

    #[test]
    fn threads_at_work_take_the_spare_cpus() {
        let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
        let all: Vec<AtWork> = (0..cpus).map(|_| AtWork::begin()).collect();
        assert!(!spare_cpu(), "{cpus} at work on {cpus} CPUs");
        drop(all);
    }

    #[test]
    fn both_results_come_back_and_the_helper_is_another_named_thread() {
        let here = std::thread::current().id();
        let (a, (b, id, name)) = beside(
            "pto-test-helper",
            || 6 * 7,
            || {
                let me = std::thread::current();
                (
                    String::from("there"),
                    me.id(),
                    me.name().map(str::to_string),
                )
            },
        );
        assert_eq!(a, 42);
        assert_eq!(b, "there");
        assert_ne!(id, here);
        assert_eq!(name.as_deref(), Some("pto-test-helper"));
    }

    #[test]
    fn a_panic_on_the_helper_is_resumed_here() {
        let caught = std::panic::catch_unwind(|| {
            beside("pto-test-helper", || 1, || -> i32 { panic!("helper") })
        });
        assert!(caught.is_err());
    }
}
