//! Two pieces of work at once: the one way the project's writers and viewers put an
//! independent part of their work on a second CPU.

/// Runs `here` on this thread while `there` runs on a helper thread named `name`, and
/// returns both results. When no thread can be had, `there` runs here afterwards (the
/// results are the same, only later). A panic on the helper is resumed here.
pub fn beside<A, B: Send>(
    name: &str,
    here: impl FnOnce() -> A,
    there: impl Fn() -> B + Sync,
) -> (A, B) {
    std::thread::scope(|scope| {
        let helper = std::thread::Builder::new()
            .name(name.to_string())
            .spawn_scoped(scope, &there);
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
    use super::beside;

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
