//! How many times something happens: a number from 1 or `"unlimited"` (a flow's `repeat`, an
//! application's `count` and `pages`).

use serde::{Deserialize, Serialize};

/// How many transfers a flow makes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(untagged)]
pub enum Count {
    N(u32),
    Unlimited(crate::tcp::config::Unlimited),
}

impl<'de> Deserialize<'de> for Count {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        crate::tcp::config::number_or_word(
            d,
            "a number of transfers (at least 1) or \"unlimited\"",
            "unlimited",
            Count::Unlimited(crate::tcp::config::Unlimited::Unlimited),
            |n| if n >= 1 && n <= u32::MAX as i64 { Ok(Count::N(n as u32)) } else { Err("out of range".into()) },
            |_| Err(String::new()),
        )
    }
}
