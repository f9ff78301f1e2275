//! A validated simulation configuration.

use std::fmt;

use crate::cache::{CacheGeometry, MAX_USE_LINE_SIZE};
use crate::symbols::SkipRules;

/// Default I1: 32 KiB, 8-way, 64-byte lines. Fixed, not taken from the host,
/// so results reproduce across machines.
pub const DEFAULT_I1: (u64, u32, u32) = (32768, 8, 64);
/// Default D1: 32 KiB, 8-way, 64-byte lines.
pub const DEFAULT_D1: (u64, u32, u32) = (32768, 8, 64);
/// Default LL: 8 MiB, 16-way, 64-byte lines.
pub const DEFAULT_LL: (u64, u32, u32) = (8388608, 16, 64);

/// Caches and analyses of one simulation.
///
/// Invariant: with cache use on, all line sizes are equal and at most
/// [`MAX_USE_LINE_SIZE`]; back-dating is on only with cache use.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SimConfig {
    i1: CacheGeometry,
    d1: CacheGeometry,
    ll: CacheGeometry,
    cache_use: bool,
    backdate: bool,
    skip: SkipRules,
    inline_functions: bool,
    stack_samples: bool,
}

/// A combination of options that cannot be simulated.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConfigError(String);

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for ConfigError {}

impl ConfigError {
    /// An error explained by `message`.
    pub fn new(message: impl Into<String>) -> ConfigError {
        ConfigError(message.into())
    }
}

impl SimConfig {
    /// Checks that the caches suit the analyses asked for. Back-dating needs
    /// cache use; without it, `backdate` is ignored.
    pub fn new(
        i1: CacheGeometry,
        d1: CacheGeometry,
        ll: CacheGeometry,
        cache_use: bool,
        backdate: bool,
    ) -> Result<SimConfig, ConfigError> {
        if cache_use {
            let sizes = [i1.line_size(), d1.line_size(), ll.line_size()];
            if sizes.iter().any(|&size| size != sizes[0]) {
                return Err(ConfigError(format!(
                    "with --cacheuse=yes the I1, D1 and LL line sizes must be equal \
                     (got {}, {} and {}); use --cacheuse=no to simulate different line sizes",
                    sizes[0], sizes[1], sizes[2]
                )));
            }
            if sizes[0] > MAX_USE_LINE_SIZE {
                return Err(ConfigError(format!(
                    "with --cacheuse=yes lines can be at most {MAX_USE_LINE_SIZE} bytes \
                     (got {}); use --cacheuse=no for longer lines",
                    sizes[0]
                )));
            }
        }
        // LL is looked up for the L1 line that missed: a line LL holds in
        // parts is not modelled.
        let l1_line = i1.line_size().max(d1.line_size());
        if ll.line_size() < l1_line {
            return Err(ConfigError(format!(
                "the LL line size ({}) is below the L1 line size ({l1_line}): linegrind loads \
                 an L1 line from the one LL line that holds it, so LL lines must be at least \
                 as long",
                ll.line_size()
            )));
        }
        Ok(SimConfig {
            i1,
            d1,
            ll,
            cache_use,
            backdate: backdate && cache_use,
            skip: SkipRules::default(),
            inline_functions: false,
            stack_samples: false,
        })
    }

    /// The same configuration, skipping the functions `skip` selects.
    pub fn with_skip(self, skip: SkipRules) -> SimConfig {
        SimConfig { skip, ..self }
    }

    /// The same configuration, showing inlined functions as functions of
    /// their own, called from the code they were inlined into.
    pub fn with_inline_functions(self, inline_functions: bool) -> SimConfig {
        SimConfig {
            inline_functions,
            ..self
        }
    }

    /// The same configuration, also collecting the bytes loaded, used and
    /// wasted per loading call stack ([`crate::stack_samples`]); the stacks
    /// come from the back-dating tree, so back-dating must be on.
    pub fn with_stack_samples(self, stack_samples: bool) -> Result<SimConfig, ConfigError> {
        if stack_samples && !self.backdate {
            let drop = match self.cache_use {
                true => "--backdate=no",
                false => "--cacheuse=no (and any --backdate=no)",
            };
            return Err(ConfigError::new(format!(
                "--profile needs the loading call stacks that back-dating keeps: drop {drop}"
            )));
        }
        Ok(SimConfig {
            stack_samples,
            ..self
        })
    }

    /// Whether bytes per loading stack are collected.
    pub fn stack_samples(&self) -> bool {
        self.stack_samples
    }

    /// Whether inlined functions are shown as functions of their own.
    pub fn inline_functions(&self) -> bool {
        self.inline_functions
    }

    /// The functions whose cost goes to their callers.
    pub fn skip(&self) -> &SkipRules {
        &self.skip
    }

    /// The documented default I1, D1 and LL geometries.
    pub fn default_caches() -> (CacheGeometry, CacheGeometry, CacheGeometry) {
        let build = |(size, assoc, line): (u64, u32, u32)| {
            CacheGeometry::new(size, assoc, line).expect("default geometries are valid")
        };
        (build(DEFAULT_I1), build(DEFAULT_D1), build(DEFAULT_LL))
    }

    pub fn i1(&self) -> CacheGeometry {
        self.i1
    }

    pub fn d1(&self) -> CacheGeometry {
        self.d1
    }

    pub fn ll(&self) -> CacheGeometry {
        self.ll
    }

    /// Whether `other` differs from this configuration in LL only, so
    /// that one walk can simulate both ([`crate::attribution::lanes`]).
    pub fn same_but_ll(&self, other: &SimConfig) -> bool {
        *self
            == SimConfig {
                ll: self.ll,
                ..other.clone()
            }
    }

    /// Whether cache-use metrics are collected.
    pub fn cache_use(&self) -> bool {
        self.cache_use
    }

    /// Whether cache-use metrics are back-dated to call arcs.
    pub fn backdate(&self) -> bool {
        self.backdate
    }
}

impl Default for SimConfig {
    fn default() -> SimConfig {
        let (i1, d1, ll) = SimConfig::default_caches();
        SimConfig::new(i1, d1, ll, true, true).expect("the default caches are valid together")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stack_samples_name_the_option_that_turned_back_dating_off() {
        let g = "32768,8,64".parse::<CacheGeometry>().unwrap();
        let message = |cache_use| {
            let config = SimConfig::new(g, g, g, cache_use, false).unwrap();
            config.with_stack_samples(true).unwrap_err().to_string()
        };
        assert!(message(true).ends_with("drop --backdate=no"));
        assert!(message(false).ends_with("drop --cacheuse=no (and any --backdate=no)"));
    }

    #[test]
    fn cache_use_needs_equal_line_sizes_of_at_most_256() {
        let g = |text: &str| text.parse::<CacheGeometry>().unwrap();
        let l64 = g("32768,8,64");
        let err = SimConfig::new(l64, l64, g("8388608,16,128"), true, true).unwrap_err();
        assert!(err.to_string().contains("got 64, 64 and 128"));
        let config = SimConfig::new(l64, l64, g("8388608,16,128"), false, true).unwrap();
        assert!(!config.backdate(), "back-dating needs cache use");
        let big = g("65536,4,512");
        assert!(
            SimConfig::new(big, big, big, true, true)
                .unwrap_err()
                .to_string()
                .contains("at most 256")
        );
        let default = SimConfig::default();
        assert_eq!(default.ll().to_string(), "8388608,16,64");
        assert!(default.cache_use() && default.backdate());
    }
}
