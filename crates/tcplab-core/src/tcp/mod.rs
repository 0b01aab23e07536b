//! TCP: the sender and receiver state machines of a connection, split the way ns-3 and Linux split
//! them — the connection (segments, ACK processing, timers) calls a congestion controller (`cc/`:
//! the only writer of cwnd and ssthresh) and a recovery strategy (what to retransmit when); the
//! ns-2 agents whose window arithmetic is their own are kept whole in `legacy/`.

pub mod cc;
pub mod chrono;
pub mod config;
pub mod conn;
pub mod gate;
pub mod info;
pub mod jiffies;
pub mod legacy;
pub mod linux_ack;
pub mod loss;
pub mod pacing;
pub mod persist;
pub mod rcvbuf;
pub mod receiver;
pub mod recovery;
pub mod rtt;
pub mod sack;
pub mod sender;
pub mod state;
pub mod stats;
pub mod tso;
pub mod tsopt;
pub mod txq;
pub mod user_timeout;

pub use conn::{ConnEvent, TcpConn, TimerKind};
pub use info::{CaState, TcpInfo, TcpState};
pub use config::{InitialWindow, TcpConfig, TcpSpec, Variant};
pub use receiver::{RxTimer, TcpReceiver};
pub use sender::TcpSender;
pub use state::{OutSeg, SenderCore, SenderPhase};
pub use stats::ConnStats;
