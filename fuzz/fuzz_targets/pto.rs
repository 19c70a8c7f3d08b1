//! `.pto` (PTO-AS): our ptoas's parser and the whole translation, as `pto replay` runs it
//! when a kernel's `ptoas/<unit>.pto` is edited.
//!
//! Beyond "no crash": every failure is an error located inside the input (line and
//! column in range, a message), and whatever parses prints back to text that parses and
//! prints to the same text (the printer is a fixed point of the parser).
#![no_main]

use libfuzzer_sys::fuzz_target;

fn check_located(text: &str, e: &ptoas::Error) {
    let loc = e
        .location()
        .unwrap_or_else(|| panic!("unlocated error {e} on:\n{text}"));
    assert_eq!(loc.file, "fuzz.pto");
    let lines = text.split('\n').count() as u32;
    assert!(loc.line >= 1 && loc.line <= lines, "{e}: line out of range");
    assert!(loc.col >= 1, "{e}");
    assert!(!e.message().is_empty());
}

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    match ptoas::parse(text, "fuzz.pto", ptoas::Arch::A3) {
        Err(e) => check_located(text, &e),
        Ok(module) => {
            // Spans differ between the input and the printed text, so the property is on
            // the text: printing what the printed text parses to gives the same text.
            let printed = ptoas::printer::print_module(&module);
            match ptoas::parse(&printed, "fuzz.pto", ptoas::Arch::A3) {
                Ok(again) => assert_eq!(
                    ptoas::printer::print_module(&again),
                    printed,
                    "printing is not a fixed point"
                ),
                Err(e) => panic!("the printed module does not parse ({e}):\n{printed}"),
            }
        }
    }
    for level in [ptoas::Level::Level2, ptoas::Level::Level3] {
        let options = ptoas::Options {
            level,
            ..ptoas::Options::new()
        };
        if let Err(e) = ptoas::translate(text, "fuzz.pto", &options) {
            check_located(text, &e);
        }
    }
});
