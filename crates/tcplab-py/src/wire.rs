//! `tcplab._core.wire`: the frame codec of `tcplab_core::trace::wire` for TBIT's raw-socket
//! transport. Thin, no logic: arguments are converted, the core builds or reads the frame, and a
//! malformed frame becomes a ValueError naming its byte offset.

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyTuple};
use std::net::Ipv4Addr;
use tcplab_core::trace::wire::{self, Addrs, TcpFields, TcpOpt, TcpOptions};

use crate::shielded;

fn mac(name: &str, s: &str) -> PyResult<[u8; 6]> {
    let mut out = [0u8; 6];
    let parts: Vec<&str> = s.split(':').collect();
    let ok = parts.len() == 6 && parts.iter().zip(out.iter_mut()).all(|(p, b)| p.len() == 2 && u8::from_str_radix(p, 16).map(|v| *b = v).is_ok());
    if ok {
        Ok(out)
    } else {
        Err(PyValueError::new_err(format!("{name}: expected a MAC address like 02:00:00:00:00:01, got {s:?}")))
    }
}

fn ipv4(name: &str, s: &str) -> PyResult<[u8; 4]> {
    s.parse::<Ipv4Addr>().map(|a| a.octets()).map_err(|_| PyValueError::new_err(format!("{name}: expected an IPv4 address like 10.0.0.1, got {s:?}")))
}

fn mac_str(m: &[u8; 6]) -> String {
    m.iter().map(|b| format!("{b:02x}")).collect::<Vec<_>>().join(":")
}

/// One option of `tcp_frame(options=...)`, in the structure `parse_tcp` returns.
fn option(i: usize, o: &Bound<'_, PyAny>, sack_bytes: &mut Vec<u8>) -> PyResult<TcpOpt<'static>> {
    let bad = |why: &str| PyValueError::new_err(format!("options[{i}]: {why}, got {o}"));
    let t = o.downcast::<PyTuple>().map_err(|_| bad("expected a tuple such as (\"mss\", 1460)"))?;
    let name: String = t.get_item(0).and_then(|n| n.extract()).map_err(|_| bad("expected a tuple starting with the option's name"))?;
    let arity = |n: usize| if t.len() == n + 1 { Ok(()) } else { Err(bad(&format!("{name} takes {n} value(s)"))) };
    let val = |k: usize| t.get_item(k).and_then(|v| v.extract::<u32>()).map_err(|_| bad("values must be integers from 0 to 2^32 - 1"));
    Ok(match name.as_str() {
        "eol" => arity(0).map(|_| TcpOpt::Eol)?,
        "nop" => arity(0).map(|_| TcpOpt::Nop)?,
        "sackOK" => arity(0).map(|_| TcpOpt::SackPermitted)?,
        "mss" => {
            arity(1)?;
            TcpOpt::Mss(u16::try_from(val(1)?).map_err(|_| bad("an MSS is 0 to 65535"))?)
        }
        "wscale" => {
            arity(1)?;
            TcpOpt::WindowScale(u8::try_from(val(1)?).map_err(|_| bad("a window scale is 0 to 255"))?)
        }
        "TS" => {
            arity(2)?;
            TcpOpt::Timestamps(val(1)?, val(2)?)
        }
        "sack" => {
            arity(1)?;
            let blocks: Vec<(u32, u32)> = t.get_item(1).and_then(|b| b.extract()).map_err(|_| bad("sack takes ((left, right), ...) of 32-bit edges"))?;
            sack_bytes.clear();
            for (l, r) in blocks {
                sack_bytes.extend_from_slice(&l.to_be_bytes());
                sack_bytes.extend_from_slice(&r.to_be_bytes());
            }
            // The bytes are copied into the option buffer at once (`push_opt`); a marker here.
            TcpOpt::Sack(&[])
        }
        _ => return Err(bad("known options are eol, nop, mss, wscale, sackOK, TS and sack")),
    })
}

/// An Ethernet/IPv4/TCP frame with correct IPv4 and TCP checksums (RFC 1071). Options either by
/// keyword, in this order and each as Linux aligns it: MSS, SACK-permitted, timestamps (TSval,
/// TSecr), SACK blocks (as many as fit, RFC 2018 §3); or `options`, a list in wire order in the
/// structure `parse_tcp` returns (("mss", 1460), ("nop",), ("sack", ((l, r),)), ...), written
/// exactly so and padded with NOPs to a whole word; more than 40 bytes is a ValueError. The IP
/// header has DF set, TTL 64, identification `ip_id` and the ECN field `ecn`.
#[pyfunction]
#[pyo3(signature = (src_mac, dst_mac, src_ip, dst_ip, sport, dport, seq, ack, flags, window, payload=None, *, mss=None, sack_permitted=false, timestamps=None, sack=vec![], options=None, ip_id=0, ecn=0))]
#[allow(clippy::too_many_arguments)]
fn tcp_frame<'py>(
    py: Python<'py>, src_mac: &str, dst_mac: &str, src_ip: &str, dst_ip: &str, sport: u16, dport: u16, seq: u32, ack: u32, flags: u8, window: u16,
    payload: Option<&[u8]>, mss: Option<u16>, sack_permitted: bool, timestamps: Option<(u32, u32)>, sack: Vec<(u32, u32)>, options: Option<Vec<Bound<'py, PyAny>>>,
    ip_id: u16, ecn: u8,
) -> PyResult<Bound<'py, PyBytes>> {
    let payload = payload.unwrap_or_default();
    let out = shielded("the frame codec", || {
        if ecn > 3 {
            return Err(PyValueError::new_err(format!("ecn: expected 0 to 3 (the IP header's 2-bit ECN field), got {ecn}")));
        }
        let a = Addrs { src_mac: mac("src_mac", src_mac)?, dst_mac: mac("dst_mac", dst_mac)?, src_ip: ipv4("src_ip", src_ip)?, dst_ip: ipv4("dst_ip", dst_ip)?, src_port: sport, dst_port: dport };
        let mut o = TcpOptions::default();
        if let Some(list) = &options {
            if mss.is_some() || sack_permitted || timestamps.is_some() || !sack.is_empty() {
                return Err(PyValueError::new_err("options: give either the list of options or mss/sack_permitted/timestamps/sack, not both"));
            }
            let mut sack_bytes = Vec::new();
            for (i, item) in list.iter().enumerate() {
                let opt = match option(i, item, &mut sack_bytes)? {
                    TcpOpt::Sack(_) => TcpOpt::Sack(&sack_bytes),
                    other => other,
                };
                if !o.push_opt(&opt) {
                    return Err(PyValueError::new_err(format!("options[{i}]: {item} does not fit: more than 40 bytes of TCP options")));
                }
            }
            o.align_with_nops(); // 40 is a whole number of words: padding always fits
        }
        if let Some(m) = mss {
            o.mss(m);
        }
        if sack_permitted {
            o.sack_permitted();
        }
        if let Some((v, e)) = timestamps {
            o.timestamps(v, e);
        }
        if !sack.is_empty() {
            o.sack(&sack);
        }
        let t = TcpFields { seq, ack, flags, window, payload: 0, ecn };
        let mut out = Vec::with_capacity(wire::MAX_HEADERS + payload.len());
        wire::encode_tcp_bytes(&mut out, &a, &t, &o, payload, ip_id).map_err(|e| PyValueError::new_err(e.to_string()))?;
        Ok(out)
    })?;
    Ok(PyBytes::new(py, &out))
}

/// Read an Ethernet/IPv4/TCP frame: None for a frame of something else (not IPv4 by its
/// EtherType, or not TCP), a ValueError "byte N: ..." for a malformed one (lengths that do not
/// fit, a malformed option), else a dict of its fields: src_mac, dst_mac, src_ip, dst_ip (text),
/// sport, dport, seq, ack, flags, window, tos, ip_id, ttl, payload (bytes) and options, the
/// options in wire order as tuples: ("eol",), ("nop",), ("mss", n), ("wscale", n), ("sackOK",),
/// ("TS", tsval, tsecr), ("sack", ((left, right), ...)), ("kind", k) for any other.
#[pyfunction]
fn parse_tcp<'py>(py: Python<'py>, frame: &[u8]) -> PyResult<Option<Bound<'py, PyDict>>> {
    shielded("the frame codec", || {
        let Some(p) = wire::parse_tcp_frame(frame).map_err(|e| PyValueError::new_err(e.to_string()))? else {
            return Ok(None);
        };
        let mut opts: Vec<Bound<'py, PyTuple>> = Vec::new();
        for o in p.options() {
            let o = o.map_err(|e| PyValueError::new_err(e.to_string()))?;
            opts.push(match o {
                TcpOpt::Eol => PyTuple::new(py, ["eol"])?,
                TcpOpt::Nop => PyTuple::new(py, ["nop"])?,
                TcpOpt::Mss(m) => ("mss", m).into_pyobject(py)?,
                TcpOpt::WindowScale(s) => ("wscale", s).into_pyobject(py)?,
                TcpOpt::SackPermitted => PyTuple::new(py, ["sackOK"])?,
                TcpOpt::Timestamps(v, e) => ("TS", v, e).into_pyobject(py)?,
                TcpOpt::Sack(v) => ("sack", PyTuple::new(py, wire::sack_blocks(v).collect::<Vec<_>>())?).into_pyobject(py)?,
                TcpOpt::Other(k, _) => ("kind", k).into_pyobject(py)?,
            });
        }
        let d = PyDict::new(py);
        let a = &p.addrs;
        d.set_item("src_mac", mac_str(&a.src_mac))?;
        d.set_item("dst_mac", mac_str(&a.dst_mac))?;
        d.set_item("src_ip", Ipv4Addr::from(a.src_ip).to_string())?;
        d.set_item("dst_ip", Ipv4Addr::from(a.dst_ip).to_string())?;
        d.set_item("sport", a.src_port)?;
        d.set_item("dport", a.dst_port)?;
        d.set_item("seq", p.seq)?;
        d.set_item("ack", p.ack)?;
        d.set_item("flags", p.flags)?;
        d.set_item("window", p.window)?;
        d.set_item("tos", p.tos)?;
        d.set_item("ip_id", p.ip_id)?;
        d.set_item("ttl", p.ttl)?;
        d.set_item("payload", PyBytes::new(py, p.payload))?;
        d.set_item("options", PyTuple::new(py, opts)?)?;
        Ok(Some(d))
    })
}

/// Add the `wire` submodule to `_core`.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let w = PyModule::new(m.py(), "wire")?;
    w.add("__doc__", "The frame codec (Ethernet II, IPv4, TCP with options) of tcplab-core's trace/wire.rs.")?;
    w.add_function(wrap_pyfunction!(tcp_frame, &w)?)?;
    w.add_function(wrap_pyfunction!(parse_tcp, &w)?)?;
    m.add_submodule(&w)
}
