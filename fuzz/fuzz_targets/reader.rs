//! Any bytes given to the capture reader and analyser: an error or a report, never a panic.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = tcplab_core::trace::analyze(data);
});
