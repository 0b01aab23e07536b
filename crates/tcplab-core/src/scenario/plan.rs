//! What a scenario resolves to, below its schema: the network of nodes and links, and the flows
//! bound to it with their TCP configuration complete. The instruments (`series`, `trace`,
//! `result`) and the applications read these, never the schema.

use super::link::LinkSpec;
use serde::{Deserialize, Serialize};
use crate::net::FilterKind;
use crate::tcp::TcpConfig;
use crate::units::Time;
use std::sync::Arc;

/// A resolved node-and-link network (what every topology expands to).
#[derive(Clone, Debug, PartialEq)]
pub struct Network {
    pub nodes: Vec<String>,
    pub links: Vec<LinkSpec>,
    /// Each link's ends `(a, b)` as positions in `nodes` (so that building the world looks no
    /// name up).
    pub ends: Vec<(u32, u32)>,
}

/// A hasher for the set-up's maps keyed by names (node and flow names): FNV-1a over the bytes,
/// its bits mixed by SplitMix64's finaliser so that the table's bucket and tag bits both vary.
/// Names are short and the scenario is the user's own, so SipHash's defence against chosen keys
/// bought nothing there but time (a tenth of a 10^5-flow set-up).
#[derive(Clone, Copy)]
pub struct NameHasher(u64);

impl Default for NameHasher {
    fn default() -> NameHasher {
        NameHasher(0xcbf2_9ce4_8422_2325)
    }
}

impl std::hash::Hasher for NameHasher {
    fn write(&mut self, bytes: &[u8]) {
        for b in bytes {
            self.0 = (self.0 ^ *b as u64).wrapping_mul(0x0000_0100_0000_01B3);
        }
    }

    fn finish(&self) -> u64 {
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
}

pub type NameHash = std::hash::BuildHasherDefault<NameHasher>;

/// Node (or any) names to their positions in `names`.
pub fn name_index(names: &[String]) -> std::collections::HashMap<&str, usize, NameHash> {
    let mut m = std::collections::HashMap::with_capacity_and_hasher(names.len(), NameHash::default());
    m.extend(names.iter().enumerate().map(|(i, n)| (n.as_str(), i)));
    m
}


/// A resolved flow: names bound to nodes, TCP configuration complete.
#[derive(Clone, Debug)]
pub struct ResolvedFlow {
    pub name: String,
    pub from: usize,
    pub to: usize,
    pub start: Time,
    pub bytes: Option<u64>,
    /// None = unlimited.
    pub repeat: Option<u32>,
    pub think: Time,
    /// Shared by the flows of one `[[flows]]` entry.
    pub tcp: Arc<TcpConfig>,
    pub drops: Vec<(FilterKind, Vec<u32>, Option<u32>, DropKind)>,
    /// Delay filters: as `drops`, with the time each chosen packet is held.
    pub delays: Vec<(FilterKind, Vec<u32>, Option<u32>, DropKind, Time)>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum DropKind {
    Syn,
    Synack,
    Data,
    Ack,
    Fin,
}

/// What a scenario expands to for a run with a seed: the network, the flows after `count`
/// expansion and the applications bound to the network.
#[derive(Debug)]
pub struct Expanded {
    pub seed: u64,
    pub net: Arc<Network>,
    pub flows: Arc<Vec<ResolvedFlow>>,
    pub apps: Vec<crate::app::resolved::ResolvedApp>,
}

