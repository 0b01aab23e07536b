//! Any bytes given to the capture reader and analyser: an error or a report, never a panic.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = tcplab_core::trace::analyze(data);
    // The lenient reading (a cut or corrupted record stops it) with the per-packet table.
    let mut a = tcplab_core::trace::Analyzer::with_packets();
    if a.read_lenient(data).is_ok() {
        let _ = a.report_with_packets();
    }
});
