//! Platforms: the logical core topology and the clock of a simulated chip.
//!
//! A key design decision of this runtime is that logical cores are *scheduling slots*, not
//! OS threads: an `a2a3sim` chip has 24 AIC + 48 AIV logical cores, but tasks run on a worker
//! pool sized to the host, so 72 cores do not oversubscribe a 2-CPU machine. The pool grows
//! (up to a thread per core) only while kernels hold their cores for long, so that the cores
//! still run at the same time ([`crate::chip`], "Elastic pool"). Swimlane rows name the
//! logical core a task ran on.

use std::fmt;
use std::str::FromStr;

use crate::error::RuntimeError;

/// A platform name accepted by the runtime.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Platform {
    /// Simulated Ascend 910B-class chip (default): 24 AIC + 48 AIV, 50 MHz counter.
    A2a3Sim,
    /// Simulated Ascend 950-class chip: 36 AIC + 72 AIV, 1 GHz counter.
    A5Sim,
    /// This host as the chip: one AIC + two AIV logical cores per pinned worker, ns clock.
    Cpu,
    /// Real Ascend 910B hardware (not available on this machine).
    A2a3,
    /// Real Ascend 950 hardware (not available on this machine).
    A5,
}

/// Every platform name, in the order error messages list them.
pub const PLATFORM_NAMES: [&str; 5] = ["a2a3sim", "a2a3", "a5sim", "a5", "cpu"];

impl Platform {
    /// The name used on the command line and in `compiled_meta.json`.
    pub fn name(self) -> &'static str {
        match self {
            Platform::A2a3Sim => "a2a3sim",
            Platform::A5Sim => "a5sim",
            Platform::Cpu => "cpu",
            Platform::A2a3 => "a2a3",
            Platform::A5 => "a5",
        }
    }

    /// Whether this platform can run here (the hardware ones cannot).
    pub fn check_available(self) -> Result<(), RuntimeError> {
        match self {
            Platform::A2a3 | Platform::A5 => Err(RuntimeError::NoDevice {
                platform: self.name(),
            }),
            _ => Ok(()),
        }
    }

    /// The counter frequency of swimlane timestamps (`clock_freq_hz`).
    pub fn clock_freq_hz(self) -> u64 {
        match self {
            Platform::A2a3Sim | Platform::A2a3 => 50_000_000,
            Platform::A5Sim | Platform::A5 | Platform::Cpu => 1_000_000_000,
        }
    }

    /// Whether `pmu.csv`'s counter columns are this host's real counters (`perf_event_open`)
    /// rather than the platform's modelled Ascend events: only on `cpu`. The workers open
    /// and sample host counters only then.
    pub fn pmu_counts_host(self) -> bool {
        self == Platform::Cpu
    }

    /// The architecture the PTO-ISA header simulates: 0 = a2a3 (also `cpu`), 1 = a5.
    pub fn arch_id(self) -> i32 {
        match self {
            Platform::A5Sim | Platform::A5 => 1,
            _ => 0,
        }
    }

    /// The logical core topology for a pool of `n_workers` workers.
    pub fn topology(self, n_workers: usize) -> Topology {
        let n_clusters = match self {
            Platform::A2a3Sim | Platform::A2a3 => 24,
            Platform::A5Sim | Platform::A5 => 36,
            Platform::Cpu => n_workers.max(1),
        };
        Topology { n_clusters }
    }
}

impl fmt::Display for Platform {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Platform {
    type Err = RuntimeError;

    fn from_str(s: &str) -> Result<Platform, RuntimeError> {
        Ok(match s {
            "a2a3sim" => Platform::A2a3Sim,
            "a5sim" => Platform::A5Sim,
            "cpu" => Platform::Cpu,
            "a2a3" => Platform::A2a3,
            "a5" => Platform::A5,
            _ => {
                return Err(RuntimeError::UnknownPlatform {
                    name: s.to_string(),
                })
            }
        })
    }
}

/// The kind of a logical core.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CoreType {
    /// Cube core.
    Aic,
    /// Vector core.
    Aiv,
}

impl CoreType {
    /// `aic` / `aiv`.
    pub fn name(self) -> &'static str {
        match self {
            CoreType::Aic => "aic",
            CoreType::Aiv => "aiv",
        }
    }
}

/// Logical cores: `n_clusters` clusters of 1 AIC + 2 AIV. Core ids `0..n_clusters` are the
/// AIC cores; `n_clusters + 2c` and `n_clusters + 2c + 1` are cluster `c`'s AIV cores.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Topology {
    /// Number of clusters.
    pub n_clusters: usize,
}

impl Topology {
    /// Total logical cores.
    pub fn n_cores(&self) -> usize {
        self.n_clusters * 3
    }

    /// The type of logical core `core_id`.
    pub fn core_type(&self, core_id: usize) -> CoreType {
        if core_id < self.n_clusters {
            CoreType::Aic
        } else {
            CoreType::Aiv
        }
    }

    /// The AIV sub-block (0 or 1) of a core; 0 for AIC cores.
    pub fn sub_block(&self, core_id: usize) -> i32 {
        if core_id < self.n_clusters {
            0
        } else {
            ((core_id - self.n_clusters) % 2) as i32
        }
    }

    /// The cluster of logical core `core_id`.
    pub fn cluster_of(&self, core_id: usize) -> usize {
        if core_id < self.n_clusters {
            core_id
        } else {
            (core_id - self.n_clusters) / 2
        }
    }

    /// The cluster slot (0 = AIC, 1 = AIV0, 2 = AIV1) of logical core `core_id`.
    pub fn core_slot(&self, core_id: usize) -> usize {
        if core_id < self.n_clusters {
            0
        } else {
            1 + (core_id - self.n_clusters) % 2
        }
    }

    /// The logical core id of `slot` (0 = AIC, 1 = AIV0, 2 = AIV1) in `cluster`.
    pub fn core_of(&self, cluster: usize, slot: usize) -> usize {
        match slot {
            0 => cluster,
            _ => self.n_clusters + 2 * cluster + (slot - 1),
        }
    }

    /// `AIC_3`, `AIV_10`: the swimlane name of a core.
    pub fn core_label(&self, core_id: usize) -> String {
        match self.core_type(core_id) {
            CoreType::Aic => format!("AIC_{core_id}"),
            CoreType::Aiv => format!("AIV_{}", core_id - self.n_clusters),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn topology_of_each_platform() {
        let check = |p: Platform, aic: usize, freq: u64| {
            let t = p.topology(2);
            assert_eq!((t.n_clusters, t.n_cores()), (aic, aic * 3), "{p}");
            assert_eq!(p.clock_freq_hz(), freq);
        };
        check(Platform::A2a3Sim, 24, 50_000_000);
        check(Platform::A5Sim, 36, 1_000_000_000);
        check(Platform::Cpu, 2, 1_000_000_000);
    }

    #[test]
    fn hardware_platforms_are_unavailable() {
        for name in ["a2a3", "a5"] {
            let p: Platform = name.parse().unwrap();
            let err = p.check_available().unwrap_err().to_string();
            assert!(err.contains("no Ascend device on this machine"), "{err}");
        }
        assert!("x86".parse::<Platform>().is_err());
    }

    #[test]
    fn core_ids_follow_clusters() {
        let t = Platform::A2a3Sim.topology(2);
        assert_eq!(t.core_of(3, 0), 3);
        assert_eq!(t.core_of(3, 1), 30);
        assert_eq!(t.core_of(3, 2), 31);
        assert_eq!(t.sub_block(31), 1);
        assert_eq!(t.core_type(30), CoreType::Aiv);
        assert_eq!(t.core_label(30), "AIV_6");
        for core in 0..t.n_cores() {
            assert_eq!(t.core_of(t.cluster_of(core), t.core_slot(core)), core);
        }
    }
}
