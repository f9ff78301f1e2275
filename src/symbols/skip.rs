//! Which functions to skip: their cost goes to their caller, as Callgrind's
//! `--fn-skip` and `--skip-plt` do.

use crate::pattern::glob;

/// Functions whose frames are not shown. The default skips PLT stubs only,
/// as Callgrind does.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SkipRules {
    /// Glob patterns (`*` any run of characters, `?` one character)
    /// matched against whole demangled names.
    pub patterns: Vec<String>,
    /// Skip PLT stubs.
    pub plt: bool,
}

impl Default for SkipRules {
    fn default() -> SkipRules {
        SkipRules {
            patterns: Vec::new(),
            plt: true,
        }
    }
}

impl SkipRules {
    /// Whether a function named `name` (a PLT stub when `plt`) is skipped.
    pub fn skips(&self, name: &str, plt: bool) -> bool {
        (plt && self.plt) || self.patterns.iter().any(|pattern| glob(pattern, name))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rules_skip_plt_stubs_and_matching_names() {
        let rules = SkipRules {
            patterns: vec!["GOMP_*".into()],
            plt: true,
        };
        assert!(rules.skips("0x401030", true));
        assert!(rules.skips("GOMP_parallel", false));
        assert!(!rules.skips("main", false));
        assert!(SkipRules::default().skips("0x401030", true));
        assert!(!SkipRules::default().skips("main", false));
    }
}
