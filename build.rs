//! Builds the recorder's Valgrind tool (src/record/valgrind) against the
//! installed Valgrind's static tool libraries and headers, when they are
//! there. Without them linegrind still builds; only `record` is missing,
//! and says why. Links GNU libiberty's demangler, Valgrind's, when its
//! static library is installed; without it C++ names are demangled by a
//! Rust crate, a little differently.

use std::env;
use std::path::{Path, PathBuf};
use std::process::Command;

const SOURCE: &str = "src/record/valgrind/linegrind.c";
const HEADER: &str = "src/record/valgrind/linegrind.h";

fn main() {
    println!("cargo:rerun-if-changed={SOURCE}");
    println!("cargo:rerun-if-changed={HEADER}");
    println!("cargo:rerun-if-env-changed=LINEGRIND_VALGRIND_INCLUDE");
    println!("cargo:rerun-if-env-changed=LINEGRIND_VALGRIND_LIBDIR");
    println!("cargo::rustc-check-cfg=cfg(linegrind_tool)");
    println!("cargo:rerun-if-env-changed=LINEGRIND_LIBIBERTY_DIR");
    println!("cargo::rustc-check-cfg=cfg(libiberty)");
    link_libiberty();
    let out = PathBuf::from(env::var("OUT_DIR").expect("cargo sets OUT_DIR"));
    match build_tool(&out) {
        Ok(tool) => {
            println!("cargo:rustc-cfg=linegrind_tool");
            println!("cargo:rustc-env=LINEGRIND_TOOL={}", tool.display());
        }
        Err(why) => {
            println!(
                "cargo:warning=linegrind record is not available: {why}. Install Valgrind \
                 (Debian: apt-get install valgrind) and rebuild to get it."
            );
        }
    }
}

/// Compiles and links the tool the way Valgrind's own tools are
/// (Makefile.tool.am): freestanding, static, at Valgrind's load address.
fn build_tool(out: &Path) -> Result<PathBuf, String> {
    let target = env::var("TARGET").unwrap_or_default();
    if !target.starts_with("x86_64-") || !target.contains("linux") {
        return Err(format!(
            "the recorder is built for x86-64 Linux only, not {target}"
        ));
    }
    let include = locate(
        "LINEGRIND_VALGRIND_INCLUDE",
        &["/usr/include/valgrind", "/usr/local/include/valgrind"],
        "pub_tool_basics.h",
    )
    .ok_or("Valgrind's tool headers (pub_tool_basics.h) are not installed")?;
    let libdir = locate(
        "LINEGRIND_VALGRIND_LIBDIR",
        &[
            "/usr/lib/x86_64-linux-gnu/valgrind",
            "/usr/lib/valgrind",
            "/usr/local/lib/valgrind",
            "/usr/lib64/valgrind",
        ],
        "libcoregrind-amd64-linux.a",
    )
    .ok_or("Valgrind's static tool libraries (libcoregrind-amd64-linux.a) are not installed")?;
    let object = out.join("linegrind.o");
    let tool = out.join("linegrind-amd64-linux");
    let cc = env::var("CC").unwrap_or_else(|_| "cc".to_string());
    run(Command::new(&cc)
        .args(["-m64", "-O2", "-g", "-Wall", "-Wno-unused-parameter"])
        .args([
            "-fno-strict-aliasing",
            "-fno-builtin",
            "-fomit-frame-pointer",
        ])
        .args(["-fno-stack-protector", "-fno-pie"])
        .args(["-DVGA_amd64=1", "-DVGO_linux=1", "-DVGP_amd64_linux=1"])
        .arg("-DVGPV_amd64_linux_vanilla=1")
        .arg("-I")
        .arg(&include)
        .arg("-Isrc/record/valgrind")
        .args(["-c", SOURCE, "-o"])
        .arg(&object))?;
    run(Command::new(&cc)
        .args([
            "-m64",
            "-static",
            "-nodefaultlibs",
            "-nostartfiles",
            "-no-pie",
        ])
        .args([
            "-u",
            "_start",
            "-Wl,--build-id=none",
            "-Wl,-Ttext-segment=0x58000000",
        ])
        .arg("-o")
        .arg(&tool)
        .arg(&object)
        .arg(libdir.join("libcoregrind-amd64-linux.a"))
        .arg(libdir.join("libvex-amd64-linux.a"))
        .arg(libdir.join("libgcc-sup-amd64-linux.a"))
        .arg("-lgcc"))?;
    Ok(tool)
}

/// Links the static libiberty (Debian: libiberty-dev), for C++ names as
/// Valgrind demangles them.
fn link_libiberty() {
    let found = locate(
        "LINEGRIND_LIBIBERTY_DIR",
        &["/usr/lib/x86_64-linux-gnu", "/usr/lib64", "/usr/lib"],
        "libiberty.a",
    );
    match found {
        Some(dir) => {
            println!("cargo:rustc-link-search=native={}", dir.display());
            println!("cargo:rustc-link-lib=static=iberty");
            println!("cargo:rustc-cfg=libiberty");
        }
        None => println!(
            "cargo:warning=libiberty.a is not installed: C++ names will differ from \
             Callgrind's in some symbols. Install it (Debian: apt-get install libiberty-dev) \
             and rebuild for Valgrind's demangler."
        ),
    }
}

/// The first of the folder named by `variable` and `candidates` that holds
/// `marker`. Cargo runs this script again when that file changes or, when
/// none holds it, when the first place looked at (or its parent, if it is
/// missing) changes, as installing the package changes it: a build after
/// the install then finds it, without `cargo clean`.
fn locate(variable: &str, candidates: &[&str], marker: &str) -> Option<PathBuf> {
    let given = env::var_os(variable).map(PathBuf::from);
    let dirs: Vec<PathBuf> = given
        .into_iter()
        .chain(candidates.iter().map(PathBuf::from))
        .collect();
    let found = dirs.iter().find(|dir| dir.join(marker).exists()).cloned();
    let watched = match &found {
        Some(dir) => Some(dir.join(marker)),
        None => dirs
            .first()
            .and_then(|first| {
                [Some(first.as_path()), first.parent()]
                    .into_iter()
                    .flatten()
                    .find(|dir| dir.is_dir())
            })
            .map(Path::to_path_buf),
    };
    if let Some(path) = watched {
        println!("cargo:rerun-if-changed={}", path.display());
    }
    found
}

fn run(command: &mut Command) -> Result<(), String> {
    let output = command
        .output()
        .map_err(|err| format!("cannot run the C compiler: {err}"))?;
    if output.status.success() {
        Ok(())
    } else {
        Err(format!(
            "compiling the Valgrind tool failed: {}",
            String::from_utf8_lossy(&output.stderr)
                .lines()
                .find(|line| line.contains("error"))
                .unwrap_or("(no message)")
        ))
    }
}
