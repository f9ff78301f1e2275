//! Which functions to skip: their cost goes to their caller, as Callgrind's
//! `--fn-skip` and `--skip-plt` do.

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

/// Matches `text` against `pattern` with `*` and `?` wildcards.
fn glob(pattern: &str, text: &str) -> bool {
    let (pattern, text): (Vec<char>, Vec<char>) =
        (pattern.chars().collect(), text.chars().collect());
    // Greedy matching with backtracking to the last `*`.
    let (mut p, mut t) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while t < text.len() {
        if p < pattern.len() && (pattern[p] == '?' || pattern[p] == text[t]) {
            p += 1;
            t += 1;
        } else if p < pattern.len() && pattern[p] == '*' {
            star = Some((p, t));
            p += 1;
        } else if let Some((star_p, star_t)) = star {
            p = star_p + 1;
            t = star_t + 1;
            star = Some((star_p, star_t + 1));
        } else {
            return false;
        }
    }
    pattern[p..].iter().all(|&c| c == '*')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn globs_match_whole_names() {
        assert!(glob("GOMP_parallel", "GOMP_parallel"));
        assert!(!glob("GOMP_parallel", "GOMP_parallel_start"));
        assert!(glob("GOMP_*", "GOMP_parallel_start"));
        assert!(glob(
            "*::push_back*",
            "std::vector<int>::push_back(int const&)"
        ));
        assert!(glob("m?lloc", "malloc"));
        assert!(!glob("m?lloc", "mlloc"));
        assert!(glob("*", ""));
        assert!(glob("a*b*c", "aXbYbZc"));
        assert!(!glob("a*b*c", "aXbYbZ"));
    }

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
