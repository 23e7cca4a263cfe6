//! `--inject-leak-bytes N`: memory kept for every matched order and never freed, a leak of
//! a known size for calibrating the gate's memory-per-order row.
//!
//! The bytes are written as they are kept, so they are resident (an allocation nobody
//! touches costs address space, not memory), and they live in 1 MiB chunks filled end to
//! end: resident memory then grows by N per order to within one page, with no reallocation
//! that would copy or double it.

use parking_lot::Mutex;

/// The size of one chunk of kept bytes: large enough that the allocator maps it on its own
/// (never a piece of the heap that later orders reuse), small enough that a chunk's untouched
/// tail is a small share of what is kept.
const CHUNK: usize = 1 << 20;

/// What the bytes are filled with: not zero, so nothing could leave them unmapped.
const FILL: u8 = 0xA5;

/// The kept bytes of `--inject-leak-bytes`.
pub struct Leak {
    /// Bytes kept per order (0: the knob is off and `keep` does nothing).
    per_order: usize,
    /// Every chunk so far; only the last one has room left.
    chunks: Mutex<Vec<Vec<u8>>>,
}

impl Leak {
    pub fn new(per_order: usize) -> Self {
        Leak {
            per_order,
            chunks: Mutex::new(Vec::new()),
        }
    }

    /// Whether anything is kept per order.
    pub fn on(&self) -> bool {
        self.per_order > 0
    }

    /// Keeps and writes `per_order` bytes, for one order.
    pub fn keep(&self) {
        if !self.on() {
            return;
        }
        let mut chunks = self.chunks.lock();
        let mut left = self.per_order;
        while left > 0 {
            if chunks.last().map_or(true, |c| c.len() == c.capacity()) {
                chunks.push(Vec::with_capacity(CHUNK));
            }
            let chunk = chunks
                .last_mut()
                .expect("a chunk with room was just ensured");
            let n = left.min(chunk.capacity() - chunk.len());
            chunk.resize(chunk.len() + n, FILL);
            left -= n;
        }
    }

    /// Bytes kept so far.
    pub fn kept(&self) -> usize {
        self.chunks.lock().iter().map(Vec::len).sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_n_bytes_per_order_across_chunks() {
        let leak = Leak::new(300_000);
        for _ in 0..7 {
            leak.keep();
        }
        assert_eq!(leak.kept(), 2_100_000);
        assert_eq!(leak.chunks.lock().len(), 3);
        assert!(leak
            .chunks
            .lock()
            .iter()
            .all(|c| c.iter().all(|&b| b == FILL)));
    }

    #[test]
    fn off_keeps_nothing() {
        let leak = Leak::new(0);
        leak.keep();
        assert!(!leak.on());
        assert_eq!(leak.kept(), 0);
    }
}
