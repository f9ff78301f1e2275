//! Optional: KCachegrind itself opens a file we wrote (under Xvfb) and
//! shows the back-dated SpLoss1 of `main`; a screenshot is kept. Runs only
//! with `LINEGRIND_GUI=1` (it needs kcachegrind, xvfb, imagemagick, xdotool
//! and dbus; see tests/gui/kcachegrind_screenshot.sh).

use std::process::Command;

use crate::support::root;

#[test]
fn kcachegrind_opens_our_file_and_shows_its_costs() {
    if std::env::var_os("LINEGRIND_GUI").is_none() {
        eprintln!("skipped: set LINEGRIND_GUI=1 to run KCachegrind under Xvfb");
        return;
    }
    let shot = root().join("target/kcachegrind.png");
    let status = Command::new(root().join("tests/gui/kcachegrind_screenshot.sh"))
        .arg(&shot)
        .status()
        .expect("the screenshot script runs");
    assert!(status.success(), "the screenshot script failed");
    // A blank screen compresses to a few hundred bytes; KCachegrind's
    // window with its tables to tens of kilobytes.
    let size = std::fs::metadata(&shot).unwrap().len();
    assert!(size > 20_000, "{} is only {size} bytes", shot.display());
    eprintln!("screenshot: {}", shot.display());
}
