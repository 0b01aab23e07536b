//! Packet traces both ways: captures written from a simulation (`capture`, `writer`, `wire`) and
//! captures of any origin read and analysed the way tcptrace does (`reader`, `analyze`).
//! Sequence numbers are 32-bit and wrap only here (DESIGN.md, "Sequence space").

pub mod analyze;
pub mod capture;
pub mod reader;
pub mod wire;
pub mod writer;

pub use analyze::{analyze, analyze_path, analyze_path_lenient, Analyzer, Packets};
pub use capture::{Capture, CaptureSpec};
pub use reader::{CaptureReader, TraceError};

#[cfg(test)]
mod tests;
