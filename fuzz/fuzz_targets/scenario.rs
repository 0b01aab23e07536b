//! Any text given to the scenario reader, as TOML and as JSON, with the bytes split into
//! overrides too: a scenario or a ScenarioError, never a panic, an abort or a hang. A scenario
//! the reader accepts also passes its own echo (what `validate` prints reads back the same).
#![no_main]

use libfuzzer_sys::fuzz_target;
use tcplab_core::Scenario;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    // The first line, when it holds `=`, is an override: the `--set` path of the boundary.
    let (sets, body) = match text.split_once('\n') {
        Some((first, rest)) if first.contains('=') => (vec![first.to_string()], rest),
        _ => (vec![], text),
    };
    for parsed in [Scenario::from_toml(body, &sets), Scenario::from_json(body, &sets)] {
        if let Ok(s) = parsed {
            let echo = Scenario::from_value(s.to_json(), &[]).expect("a scenario's echo reads back");
            assert_eq!(echo.to_json(), s.to_json());
        }
    }
});
