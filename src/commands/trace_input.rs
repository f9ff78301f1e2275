//! Which trace a command reads, and how: the file, its format (told by the
//! content unless forced), the binaries that give a Lackey or Dinero trace
//! its calls, and whether a truncated binary trace may be read.

use std::fs::File;
use std::path::{Path, PathBuf};

use anyhow::anyhow;

use super::failure::{Failure, InputContext};
use super::same_path::same_path;
use crate::trace::{AnyReader, Binary, CodeObjects, Format, ReadOptions};

/// A trace to read.
#[derive(Clone, Debug, Default)]
pub struct TraceInput {
    pub path: PathBuf,
    /// Read a binary trace without its end, as far as it goes.
    pub allow_truncated: bool,
    /// The format, instead of telling it from the content.
    pub format: Option<Format>,
    /// The program's binaries, to infer calls and name functions in a
    /// Lackey or Dinero trace.
    pub binaries: Vec<Binary>,
}

impl TraceInput {
    /// Which of the files read `path` is, if it is one (`"the trace
    /// app.lgt"`): an output must not overwrite it.
    pub fn named(&self, path: &Path) -> Option<String> {
        if same_path(&self.path, path) {
            return Some(format!("the trace {}", self.path.display()));
        }
        self.binaries
            .iter()
            .find(|binary| same_path(&binary.path, path))
            .map(|binary| format!("the binary {} (--binary)", binary.path.display()))
    }

    /// How a trace of `format` read from this input was read, for a
    /// format linegrind imports (`read as a Valgrind Lackey trace, told by
    /// its first lines ...`); `None` for its own.
    pub fn read_as(&self, format: Format) -> Option<String> {
        let told = match self.format {
            Some(_) => "",
            None => ", told by its first lines (--format to choose)",
        };
        format
            .is_imported()
            .then(|| format!("read as a {} trace{told}", format.describe()))
    }

    /// Opens the trace.
    pub fn open(&self) -> Result<AnyReader, Failure> {
        let name = self.path.display();
        let file = File::open(&self.path).input(format!("cannot open {name}"))?;
        let code = match self.binaries.is_empty() {
            true => None,
            false => Some(CodeObjects::open(&self.binaries).input("cannot use a binary")?),
        };
        let options = ReadOptions {
            allow_truncated: self.allow_truncated,
            format: self.format,
            code,
        };
        let reader = AnyReader::open(file, options).input(&name)?;
        if !self.binaries.is_empty() && !reader.format().is_imported() {
            return Err(Failure::Input(anyhow!(
                "--binary is for Lackey and Dinero traces; {name} is a {} trace, which carries \
                 its own calls and objects",
                reader.format().name()
            )));
        }
        if !self.binaries.is_empty() && reader.format() == Format::Din {
            return Err(Failure::Input(anyhow!(
                "--binary needs the addresses of instructions: {name} is a din trace, whose \
                 addresses are 4-byte words (write it as xdin, or give the Lackey log)"
            )));
        }
        Ok(reader)
    }
}
