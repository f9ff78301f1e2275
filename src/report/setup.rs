//! How a run was simulated, as far as its file tells: the caches, and
//! whether cache use was back-dated; and which part of its run the file
//! holds. `diff` and `check` name what differs between two runs, whose
//! changes may then come from the simulation and not from the program.

/// The caches a file may describe, in the order of Callgrind's `desc:`
/// lines.
const CACHES: [&str; 3] = ["I1", "D1", "LL"];

/// A cache a file describes with nothing: Callgrind run without
/// `--cache-sim=yes` writes `desc: I1 cache: ` so.
const NOT_SIMULATED: &str = "not simulated";

/// What a run's file says of its simulation; `None` where it says nothing.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Setup {
    /// I1, D1 and LL as Callgrind's `desc:` lines describe them
    /// (`32768 B, 64 B, 8-way associative`).
    pub caches: [Option<String>; 3],
    /// Whether cache use was back-dated to the call stacks.
    pub backdate: Option<bool>,
    /// Which dump of its run the file is (Callgrind's `part:`): past 1, it
    /// holds the costs since the dump before (`--dump-before`,
    /// `--dump-every-bb`, `callgrind_control -d`), not the whole run's.
    pub part: Option<u64>,
}

/// One setting two runs were simulated with differently: its name and
/// each run's value.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Unlike {
    pub setting: String,
    pub values: [String; 2],
}

impl Setup {
    /// Takes a `desc:` line's value when it describes a cache (`LL cache:
    /// 8388608 B, 64 B, 16-way associative`).
    pub fn read_desc(&mut self, desc: &str) {
        for (name, cache) in CACHES.iter().zip(&mut self.caches) {
            if let Some(geometry) = desc
                .strip_prefix(name)
                .and_then(|rest| rest.strip_prefix(" cache:"))
            {
                let geometry = match geometry.trim() {
                    "" => NOT_SIMULATED,
                    geometry => geometry,
                };
                *cache = Some(geometry.to_string());
            }
        }
    }

    /// The part of its run the file holds, when it is not the first (or
    /// only) one.
    pub fn later_part(&self) -> Option<u64> {
        self.part.filter(|&part| part > 1)
    }

    /// Whether the file described any cache as simulated: a simulated
    /// run's file.
    pub fn simulated(&self) -> bool {
        self.caches
            .iter()
            .any(|cache| cache.as_deref().is_some_and(|cache| cache != NOT_SIMULATED))
    }

    /// The settings both files state and state differently, in a fixed
    /// order: I1, D1, LL, back-dating.
    pub fn unlike(&self, other: &Setup) -> Vec<Unlike> {
        let mut unlike = Vec::new();
        for ((name, a), b) in CACHES.iter().zip(&self.caches).zip(&other.caches) {
            if let (Some(a), Some(b)) = (a, b)
                && a != b
            {
                unlike.push(Unlike {
                    setting: format!("{name} cache"),
                    values: [a.clone(), b.clone()],
                });
            }
        }
        if let (Some(a), Some(b)) = (self.backdate, other.backdate)
            && a != b
        {
            let on = |backdate: bool| if backdate { "on" } else { "off" }.to_string();
            unlike.push(Unlike {
                setting: "back-dating".into(),
                values: [on(a), on(b)],
            });
        }
        unlike
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn setup(ll: &str, backdate: Option<bool>) -> Setup {
        let mut setup = Setup::default();
        setup.read_desc("I1 cache: 32768 B, 64 B, 8-way associative");
        setup.read_desc(&format!("LL cache: {ll}"));
        setup.read_desc("Trace: traces/sort.lgt");
        setup.backdate = backdate;
        setup
    }

    #[test]
    fn cache_descriptions_are_read_from_desc_lines_only() {
        let setup = setup("8388608 B, 64 B, 16-way associative", None);
        assert_eq!(
            setup.caches,
            [
                Some("32768 B, 64 B, 8-way associative".to_string()),
                None,
                Some("8388608 B, 64 B, 16-way associative".to_string())
            ]
        );
        assert!(setup.simulated());
        assert!(!Setup::default().simulated());
        // Callgrind without cache simulation describes its caches empty.
        let mut plain = Setup::default();
        for cache in CACHES {
            plain.read_desc(&format!("{cache} cache: "));
        }
        assert_eq!(plain.caches[0].as_deref(), Some(NOT_SIMULATED));
        assert!(!plain.simulated());
        assert_eq!(plain.unlike(&setup)[0].values[0], NOT_SIMULATED);
    }

    #[test]
    fn only_settings_both_state_differently_are_unlike() {
        let a = setup("8388608 B, 64 B, 16-way associative", Some(true));
        let b = setup("16777216 B, 64 B, 16-way associative", Some(false));
        assert_eq!(
            a.unlike(&b),
            [
                Unlike {
                    setting: "LL cache".into(),
                    values: [
                        "8388608 B, 64 B, 16-way associative".into(),
                        "16777216 B, 64 B, 16-way associative".into()
                    ]
                },
                Unlike {
                    setting: "back-dating".into(),
                    values: ["on".into(), "off".into()]
                }
            ]
        );
        assert_eq!(a.unlike(&a), []);
        // A file that says nothing of D1 or back-dating differs in neither.
        let silent = setup("8388608 B, 64 B, 16-way associative", None);
        let mut d1 = a.clone();
        d1.read_desc("D1 cache: 65536 B, 64 B, 8-way associative");
        assert_eq!(silent.unlike(&d1), []);
    }
}
