//! Whether a profile was read whole: its self costs against the `totals:`
//! line, or without one against the `summary:` line, which a file cut
//! short or edited no longer adds up to.

use super::{CostValue, ParseError, ProfileFile};

/// The self costs read, `self_total`, against `stated`, the costs a line
/// states (both leave out trailing zeros): at the first event where they
/// differ, the error `why(sum, event, stated)` at line `line`.
fn check_sum<C: CostValue>(
    file: &ProfileFile<C>,
    self_total: &[C],
    stated: &[C],
    line: u64,
    why: impl FnOnce(C, &str, C) -> String,
) -> Result<(), ParseError> {
    let at = |costs: &[C], event: usize| costs.get(event).copied().unwrap_or_default();
    let differs = (0..file.events.len()).find(|&event| at(self_total, event) != at(stated, event));
    match differs {
        None => Ok(()),
        Some(event) => Err(ParseError {
            line,
            what: why(
                at(self_total, event),
                &file.events[event],
                at(stated, event),
            ),
        }),
    }
}

/// A file with a `summary:` but no `totals:` line, which Callgrind and
/// linegrind always write last, may have been cut short: its self costs
/// must then add up to the summary. (Not checked where there is a
/// `totals:` line: Callgrind's summary can differ from its totals by a few
/// events.) `lines` is the number of lines read.
pub(super) fn check_complete<C: CostValue>(
    file: &ProfileFile<C>,
    self_total: &[C],
    summary: &[C],
    lines: u64,
) -> Result<(), ParseError> {
    check_sum(file, self_total, summary, lines, |sum, event, summary| {
        format!(
            "the file ends without a `totals:` line and its costs add up to {sum} {event}, \
             not the {summary} of its `summary:` line: it looks cut short"
        )
    })
}

/// The `totals:` line, on line `line`, states the sum of the file's self
/// costs (Callgrind and linegrind write it so); one that does not was cut
/// short (an event left out, a number cut), or the costs were edited.
pub(super) fn check_totals<C: CostValue>(
    file: &ProfileFile<C>,
    self_total: &[C],
    totals: &[C],
    line: u64,
) -> Result<(), ParseError> {
    check_sum(file, self_total, totals, line, |sum, event, total| {
        format!(
            "`totals:` gives {total} {event}, but the cost lines add up to {sum}: \
             the file was cut short or edited"
        )
    })
}

#[cfg(test)]
mod tests {
    use super::super::ProfileFile;
    use super::super::parser::tests::{EXAMPLE, signed_error};

    #[test]
    fn totals_that_are_not_the_sum_of_the_costs_are_refused() {
        // Cut inside the `totals:` line: a digit or an event left out.
        for (cut, gives) in [
            ("totals: 39 1", "1 Dr, but the cost lines add up to 10"),
            ("totals: 39", "0 Dr, but the cost lines add up to 10"),
            ("totals:", "0 Ir, but the cost lines add up to 39"),
        ] {
            assert_eq!(
                signed_error(&EXAMPLE.replace("totals: 39 10", cut)),
                format!("line 31: `totals:` gives {gives}: the file was cut short or edited")
            );
        }
        // A cost line taken out.
        let err = signed_error(&EXAMPLE.replace("+4 * 2\n", ""));
        assert_eq!(
            err,
            "line 30: `totals:` gives 39 Ir, but the cost lines add up to 37: \
             the file was cut short or edited"
        );
        assert_eq!(
            signed_error(""),
            "the file is empty: not a callgrind-format profile"
        );
    }

    #[test]
    fn a_file_cut_before_its_totals_is_an_error_when_its_summary_disagrees() {
        let whole = "events: Ir Dr\nsummary: 12 3\nfn=main\n1 5 1\nfn=work\n2 7 2\n";
        let file = ProfileFile::<i64>::parse(whole.as_bytes()).unwrap();
        assert_eq!(file.totals, [12, 3]);
        let cut = "events: Ir Dr\nsummary: 12 3\nfn=main\n1 5 1\nfn=work\n";
        assert_eq!(
            signed_error(cut),
            "line 5: the file ends without a `totals:` line and its costs add up to 5 Ir, \
             not the 12 of its `summary:` line: it looks cut short"
        );
    }
}
