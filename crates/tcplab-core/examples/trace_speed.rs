//! Time the capture reader, the decoder and the analyser on a file (a profiling aid):
//! `cargo run --release -p tcplab-core --example trace_speed -- CAPTURE`
use std::time::Instant;
use tcplab_core::trace::reader::{decode, decode_into, CaptureReader, TcpSeg};
use tcplab_core::trace::Analyzer;

fn main() {
    let p = std::env::args().nth(1).expect("a capture file");
    let data = std::fs::read(&p).expect("readable");
    for _ in 0..3 {
        let t = Instant::now();
        let mut r = CaptureReader::new(&data[..]).unwrap();
        let mut n = 0u64;
        while let Some(_f) = r.next_frame().unwrap() {
            n += 1;
        }
        let read = t.elapsed().as_secs_f64();
        let t = Instant::now();
        let mut r = CaptureReader::new(&data[..]).unwrap();
        let mut x = 0u64;
        // As the analyser does: decoded in place into batches.
        let mut batch = vec![TcpSeg::default(); 1024];
        let mut k = 0;
        while let Some(f) = r.next_frame().unwrap() {
            if decode_into(&f, &mut batch[k]).is_ok() {
                k += 1;
                if k == batch.len() {
                    x = x.wrapping_add(std::hint::black_box(&batch)[k / 2].seq as u64);
                    k = 0;
                }
            }
        }
        let dec = t.elapsed().as_secs_f64();
        let mut r = CaptureReader::new(&data[..]).unwrap();
        let mut segs = Vec::with_capacity(n as usize);
        while let Some(f) = r.next_frame().unwrap() {
            if let Ok(s) = decode(&f) {
                segs.push(s);
            }
        }
        let t = Instant::now();
        let mut a = Analyzer::new();
        a.segments(&segs);
        let bookkeeping = t.elapsed().as_secs_f64();
        drop(segs);
        drop(a);
        let t = Instant::now();
        let v = tcplab_core::trace::analyze_path(&p).unwrap();
        let all = t.elapsed().as_secs_f64();
        let m = |s: f64| n as f64 / s / 1e6;
        println!(
            "{n} packets: read {:.1} M/s, read+decode {:.1} M/s, bookkeeping of decoded segments {:.1} M/s, analyse file {:.1} M/s ({} connections, {x:x})",
            m(read),
            m(dec),
            m(bookkeeping),
            m(all),
            v["reader"]["connections"]
        );
    }
}
