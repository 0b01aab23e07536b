//! Capture files: classic pcap with nanosecond timestamps (magic 0xa1b23c4d, version 2.4) and
//! pcapng (a section header, one interface with `if_tsresol` = 9, enhanced packet blocks). Both
//! little-endian whatever the host, so a run writes the same bytes on every machine.

use std::io::{self, Write};

/// LINKTYPE_ETHERNET.
pub const LINKTYPE_ETHERNET: u32 = 1;
pub const PCAP_MAGIC_NS: u32 = 0xa1b2_3c4d;
pub const PCAP_MAGIC_US: u32 = 0xa1b2_c3d4;
pub const PCAPNG_SHB: u32 = 0x0A0D_0D0A;
pub const PCAPNG_BOM: u32 = 0x1A2B_3C4D;
pub const PCAPNG_IDB: u32 = 1;
pub const PCAPNG_EPB: u32 = 6;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Format {
    #[default]
    Pcap,
    Pcapng,
}

/// A capture file being written.
pub struct CaptureWriter<W: Write> {
    w: W,
    format: Format,
    pub packets: u64,
}

impl<W: Write> CaptureWriter<W> {
    /// Start a capture: writes the file header. `snaplen` is the most bytes kept of a packet.
    pub fn new(mut w: W, format: Format, snaplen: u32, linktype: u32) -> io::Result<Self> {
        match format {
            Format::Pcap => {
                let mut h = [0u8; 24];
                h[0..4].copy_from_slice(&PCAP_MAGIC_NS.to_le_bytes());
                h[4..6].copy_from_slice(&2u16.to_le_bytes());
                h[6..8].copy_from_slice(&4u16.to_le_bytes());
                // thiszone and sigfigs are 0.
                h[16..20].copy_from_slice(&snaplen.to_le_bytes());
                h[20..24].copy_from_slice(&linktype.to_le_bytes());
                w.write_all(&h)?;
            }
            Format::Pcapng => {
                // Section header block: no options, section length unknown (-1).
                let mut b = Vec::with_capacity(28);
                b.extend_from_slice(&PCAPNG_SHB.to_le_bytes());
                b.extend_from_slice(&28u32.to_le_bytes());
                b.extend_from_slice(&PCAPNG_BOM.to_le_bytes());
                b.extend_from_slice(&1u16.to_le_bytes());
                b.extend_from_slice(&0u16.to_le_bytes());
                b.extend_from_slice(&u64::MAX.to_le_bytes());
                b.extend_from_slice(&28u32.to_le_bytes());
                w.write_all(&b)?;
                // Interface description block with if_tsresol = 9 (nanoseconds) and opt_endofopt.
                let mut b = Vec::with_capacity(32);
                b.extend_from_slice(&PCAPNG_IDB.to_le_bytes());
                b.extend_from_slice(&32u32.to_le_bytes());
                b.extend_from_slice(&(linktype as u16).to_le_bytes());
                b.extend_from_slice(&0u16.to_le_bytes());
                b.extend_from_slice(&snaplen.to_le_bytes());
                b.extend_from_slice(&9u16.to_le_bytes()); // if_tsresol
                b.extend_from_slice(&1u16.to_le_bytes());
                b.extend_from_slice(&[9, 0, 0, 0]);
                b.extend_from_slice(&[0, 0, 0, 0]); // opt_endofopt
                b.extend_from_slice(&32u32.to_le_bytes());
                w.write_all(&b)?;
            }
        }
        Ok(CaptureWriter { w, format, packets: 0 })
    }

    /// Write one packet: `data` are the captured bytes, `orig_len` its length on the wire,
    /// `ts_ns` nanoseconds since the epoch (simulated time 0 is the epoch).
    pub fn write(&mut self, ts_ns: u64, data: &[u8], orig_len: u32) -> io::Result<()> {
        self.packets += 1;
        match self.format {
            Format::Pcap => {
                let mut h = [0u8; 16];
                // Seconds are 32 bits in classic pcap: simulated time beyond 2106 wraps.
                h[0..4].copy_from_slice(&((ts_ns / 1_000_000_000) as u32).to_le_bytes());
                h[4..8].copy_from_slice(&((ts_ns % 1_000_000_000) as u32).to_le_bytes());
                h[8..12].copy_from_slice(&(data.len() as u32).to_le_bytes());
                h[12..16].copy_from_slice(&orig_len.to_le_bytes());
                self.w.write_all(&h)?;
                self.w.write_all(data)
            }
            Format::Pcapng => {
                let pad = (4 - data.len() % 4) % 4;
                let total = (32 + data.len() + pad) as u32;
                let mut h = [0u8; 28];
                h[0..4].copy_from_slice(&PCAPNG_EPB.to_le_bytes());
                h[4..8].copy_from_slice(&total.to_le_bytes());
                // interface 0
                h[12..16].copy_from_slice(&((ts_ns >> 32) as u32).to_le_bytes());
                h[16..20].copy_from_slice(&(ts_ns as u32).to_le_bytes());
                h[20..24].copy_from_slice(&(data.len() as u32).to_le_bytes());
                h[24..28].copy_from_slice(&orig_len.to_le_bytes());
                self.w.write_all(&h)?;
                self.w.write_all(data)?;
                self.w.write_all(&[0u8; 3][..pad])?;
                self.w.write_all(&total.to_le_bytes())
            }
        }
    }

    pub fn flush(&mut self) -> io::Result<()> {
        self.w.flush()
    }

    pub fn into_inner(self) -> W {
        self.w
    }
}
