//! Shell-style name patterns, as `--fn-skip` and `check --function` take
//! them: `*` matches any run of characters, `?` one character, and the
//! pattern must match the whole name.

/// Matches `text` against `pattern` with `*` and `?` wildcards.
pub fn glob(pattern: &str, text: &str) -> bool {
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
}
