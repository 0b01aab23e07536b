//! Binding of the simulated stack of scripted tests (`tcplab_core::scripted::ScriptedConn`):
//! thin, no logic; the script runner is `tcplab.script`.

use pyo3::prelude::*;

use crate::{secs, shielded, ScenarioError};

fn guard<T>(f: impl FnOnce() -> T) -> PyResult<T> {
    shielded("the simulated stack of a script", || Ok(f()))
}

type PySeg = (f64, u8, u64, u64, u32, u32, bool, Vec<(u64, u64)>, Option<(u32, u32)>);

/// One simulated connection of a TCP stack (`tcp_json`: a flow's `tcp` table as JSON) behind a
/// socket-like face, in virtual time over a zero-delay path. Relative sequence numbers.
#[pyclass(module = "tcplab._core", unsendable)]
pub struct ScriptSim {
    c: tcplab_core::scripted::ScriptedConn,
}

#[pymethods]
impl ScriptSim {
    #[new]
    fn new(tcp_json: &str) -> PyResult<Self> {
        shielded("the simulated stack of a script", || {
            let cfg = tcplab_core::tbit::resolve(tcp_json).map_err(ScenarioError::new_err)?;
            Ok(ScriptSim { c: tcplab_core::scripted::ScriptedConn::new(cfg) })
        })
    }

    /// The resolved configuration, every knob, as JSON.
    fn config(&self) -> PyResult<String> {
        guard(|| self.c.config().to_json_full().to_string())
    }

    /// The route's advertised MSS (Linux `dst_metric_advmss()`).
    fn set_route_advmss(&mut self, mss: u64) -> PyResult<()> {
        guard(|| self.c.set_route_advmss(mss))
    }

    /// `setsockopt(TCP_MAXSEG)`: None, or the errno name ("EINVAL").
    fn set_user_mss(&mut self, val: u64) -> PyResult<Option<&'static str>> {
        guard(|| self.c.set_user_mss(val).err())
    }

    /// The MSS option of this end's SYN or SYN-ACK.
    fn advertised_mss(&self) -> PyResult<u64> {
        guard(|| self.c.advertised_mss())
    }

    /// `getsockopt(TCP_MAXSEG)`.
    fn maxseg(&self) -> PyResult<u64> {
        guard(|| self.c.maxseg())
    }

    /// `setsockopt(TCP_USER_TIMEOUT)`: None, or the errno name.
    fn set_user_timeout(&mut self, ms: i64) -> PyResult<Option<&'static str>> {
        guard(|| self.c.set_user_timeout(ms).err())
    }

    /// The socket's pending error (errno name), taken.
    fn take_error(&mut self) -> PyResult<Option<&'static str>> {
        guard(|| self.c.take_error())
    }

    /// `shutdown(SHUT_WR)`: the FIN after the data; False without a connection.
    fn shutdown_write(&mut self) -> PyResult<bool> {
        guard(|| self.c.shutdown_write())
    }

    /// `shutdown(SHUT_RD)`.
    fn shutdown_read(&mut self) -> PyResult<()> {
        guard(|| self.c.shutdown_read())
    }

    fn listen(&mut self) -> PyResult<()> {
        guard(|| self.c.listen())
    }

    fn connect(&mut self) -> PyResult<()> {
        guard(|| self.c.connect())
    }

    /// The script's segment arrives now; False when nothing takes it. `ts`: its timestamps
    /// option (TSval, TSecr), RFC 7323 §3.
    #[pyo3(signature = (flags, seq, ack, wnd, length=0, sack=vec![], sack_permitted=false, mss=None, ts=None))]
    #[allow(clippy::too_many_arguments)]
    fn inject(&mut self, flags: u8, seq: u64, ack: u64, wnd: u32, length: u32, sack: Vec<(u64, u64)>, sack_permitted: bool, mss: Option<u64>, ts: Option<(u32, u32)>) -> PyResult<bool> {
        guard(|| self.c.inject(tcplab_core::scripted::with_ts(tcplab_core::tbit::segment(flags, seq, ack, length, wnd, &sack, sack_permitted), ts), mss))
    }

    fn write(&mut self, n: u64) -> PyResult<bool> {
        guard(|| self.c.write(n))
    }

    fn read(&mut self, n: u64) -> PyResult<u64> {
        guard(|| self.c.read(n))
    }

    fn close(&mut self) -> PyResult<bool> {
        guard(|| self.c.close())
    }

    /// Run the timers due up to `until_s` and return the segments sent since the last call:
    /// (time_s, flags, seq, ack, len, wnd, sack_permitted, sack blocks, (TSval, TSecr) or None).
    fn advance(&mut self, until_s: f64) -> PyResult<Vec<PySeg>> {
        let t = secs("until_s", until_s)?;
        guard(|| {
            self.c
                .advance(t)
                .into_iter()
                .map(|(t, s)| (t as f64 / 1e9, s.flags, s.seq, s.ack, s.len, s.wnd, s.sack_permitted, s.sack_blocks().iter().map(|b| (b.left, b.right)).collect(), s.ts.then_some((s.tsval, s.tsecr))))
                .collect()
        })
    }

    /// The earliest pending timer, seconds, or None.
    fn next_timer(&self) -> PyResult<Option<f64>> {
        guard(|| self.c.next_timer().map(|t| t as f64 / 1e9))
    }

    fn now(&self) -> PyResult<f64> {
        guard(|| self.c.now() as f64 / 1e9)
    }

    fn established(&self) -> PyResult<bool> {
        guard(|| self.c.established())
    }

    fn readable(&self) -> PyResult<u64> {
        guard(|| self.c.readable())
    }

    fn peer_closed(&self) -> PyResult<bool> {
        guard(|| self.c.peer_closed())
    }

    /// `tcp_info` in Linux's units, as JSON (fields the model does not keep are absent).
    fn info(&self) -> PyResult<String> {
        guard(|| self.c.info().to_string())
    }
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<ScriptSim>()
}
