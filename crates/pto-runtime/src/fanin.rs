//! A task's fanin while the orchestrator gathers it: its producers in first-seen order,
//! each once, with the wait / retain flags OR'd over repeats.
//!
//! A short list is scanned; once it passes [`SCAN_LIMIT`] producers (a join over hundreds
//! of tasks) it is indexed by an open-addressing table kept between submits, so gathering
//! n producers costs O(n), not the O(n²) of scanning for each (a join over 998 tasks
//! spent half a million comparisons on it). Nothing is allocated once the list and the
//! table have reached the widest fanin of the run.

use crate::task::TaskId;

/// One producer of the task being submitted.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Fanin {
    /// The producer.
    pub producer: TaskId,
    /// The consumer waits for its completion.
    pub wait: bool,
    /// The consumer keeps it alive until the consumer completes.
    pub retain: bool,
}

/// Producers up to which a repeat is found by scanning.
const SCAN_LIMIT: usize = 16;

/// The fanin of one submit (see the module docs).
pub(crate) struct FaninList {
    items: Vec<Fanin>,
    /// Open addressing over `items`: index + 1, 0 for an empty cell; a power of two long,
    /// at least twice `items`. In use only while `indexed`.
    table: Vec<u32>,
    indexed: bool,
}

impl FaninList {
    /// An empty list with room for `n` producers.
    pub(crate) fn with_capacity(n: usize) -> Self {
        Self {
            items: Vec::with_capacity(n),
            table: Vec::new(),
            indexed: false,
        }
    }

    /// Empties the list for the next submit.
    pub(crate) fn clear(&mut self) {
        if self.indexed {
            self.table.fill(0);
            self.indexed = false;
        }
        self.items.clear();
    }

    /// Adds `producer`, or ORs the flags into its earlier entry.
    pub(crate) fn add(&mut self, producer: TaskId, wait: bool, retain: bool) {
        let found = if self.indexed {
            self.find_indexed(producer)
        } else {
            self.items.iter().position(|f| f.producer == producer)
        };
        if let Some(i) = found {
            let f = &mut self.items[i];
            f.wait |= wait;
            f.retain |= retain;
            return;
        }
        self.items.push(Fanin {
            producer,
            wait,
            retain,
        });
        if self.indexed && self.items.len() * 2 <= self.table.len() {
            self.enter(self.items.len());
        } else if self.items.len() > SCAN_LIMIT {
            self.rebuild();
        }
    }

    /// The producers, in first-seen order.
    pub(crate) fn as_slice(&self) -> &[Fanin] {
        &self.items
    }

    fn mask(&self) -> usize {
        self.table.len() - 1
    }

    fn home(&self, producer: TaskId) -> usize {
        // Fibonacci hashing of the raw id: ring and local index both reach the top bits.
        (producer.0.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 32) as usize & self.mask()
    }

    fn find_indexed(&self, producer: TaskId) -> Option<usize> {
        let mut at = self.home(producer);
        loop {
            match self.table[at] {
                0 => return None,
                i if self.items[i as usize - 1].producer == producer => {
                    return Some(i as usize - 1)
                }
                _ => at = (at + 1) & self.mask(),
            }
        }
    }

    /// Enters item `n` (1-based) into the first free cell from its home (the table has
    /// room: at most half full).
    fn enter(&mut self, n: usize) {
        let mut at = self.home(self.items[n - 1].producer);
        while self.table[at] != 0 {
            at = (at + 1) & self.mask();
        }
        self.table[at] = n as u32;
    }

    /// A table of at least four cells per item, every item entered.
    fn rebuild(&mut self) {
        let cells = (self.items.len() * 4).next_power_of_two();
        if self.table.len() < cells {
            self.table.resize(cells, 0);
        }
        self.table.fill(0);
        self.indexed = true;
        for n in 1..=self.items.len() {
            self.enter(n);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_rng::Rng;

    /// The scan every list used before the index: the reference.
    fn reference(adds: &[(u64, bool, bool)]) -> Vec<Fanin> {
        let mut out: Vec<Fanin> = Vec::new();
        for &(raw, wait, retain) in adds {
            match out.iter_mut().find(|f| f.producer == TaskId(raw)) {
                Some(f) => {
                    f.wait |= wait;
                    f.retain |= retain;
                }
                None => out.push(Fanin {
                    producer: TaskId(raw),
                    wait,
                    retain,
                }),
            }
        }
        out
    }

    #[test]
    fn wide_and_narrow_fanins_match_the_scan_across_reuse() {
        let mut list = FaninList::with_capacity(4);
        // Narrow, wide (past several rebuilds), narrow again after the wide one, wide on
        // two rings with every producer repeated with other flags.
        let mut rng = Rng(0x2545_f491_4f6c_dd1d);
        for n in [3usize, 1000, 5, 40, 700] {
            let mut adds = Vec::new();
            for k in 0..n {
                let ring = (k % 2) as u64;
                adds.push((
                    ring << 32 | (k as u64 * 7),
                    rng.below(2) == 0,
                    rng.below(2) == 0,
                ));
            }
            for k in 0..n / 2 {
                let (raw, _, _) = adds[rng.below(k as u64 + 1) as usize];
                adds.push((raw, rng.below(2) == 0, true));
            }
            list.clear();
            for &(raw, wait, retain) in &adds {
                list.add(TaskId(raw), wait, retain);
            }
            assert_eq!(list.as_slice(), reference(&adds).as_slice(), "n = {n}");
        }
    }
}
