//! How a command failed: on bad input (exit code 2) or otherwise (1).

use std::fmt;
use std::path::Path;

use crate::output::check_writable;

/// A command's failure, sorted by whose fault it is.
#[derive(Debug)]
pub enum Failure {
    /// Bad input: a trace or option that cannot be used. Exit code 2.
    Input(anyhow::Error),
    /// Anything else, such as an output file that cannot be written. Exit
    /// code 1.
    Other(anyhow::Error),
}

impl Failure {
    /// The process exit code for this failure.
    pub fn exit_code(&self) -> u8 {
        match self {
            Failure::Input(_) => 2,
            Failure::Other(_) => 1,
        }
    }

    /// The underlying error.
    pub fn error(&self) -> &anyhow::Error {
        match self {
            Failure::Input(err) | Failure::Other(err) => err,
        }
    }
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:#}", self.error())
    }
}

/// Adds context to an error and files it as an input or other failure.
pub trait InputContext<T> {
    /// A failure caused by bad input.
    fn input(self, context: impl fmt::Display) -> Result<T, Failure>;
    /// A failure not caused by the input.
    fn other(self, context: impl fmt::Display) -> Result<T, Failure>;
}

impl<T, E> InputContext<T> for Result<T, E>
where
    E: std::error::Error + Send + Sync + 'static,
{
    fn input(self, context: impl fmt::Display) -> Result<T, Failure> {
        self.map_err(|err| Failure::Input(anyhow::Error::new(err).context(context.to_string())))
    }

    fn other(self, context: impl fmt::Display) -> Result<T, Failure> {
        self.map_err(|err| Failure::Other(anyhow::Error::new(err).context(context.to_string())))
    }
}

/// Checks, before a long run, that the output `path` can be written. A
/// name of a folder is a usage error; a folder that takes no new file is
/// not the input's fault.
pub fn writable(path: &Path) -> Result<(), Failure> {
    let context = format!("cannot write {}", path.display());
    match check_writable(path) {
        Err(err) if err.kind() == std::io::ErrorKind::IsADirectory => Err(err).input(context),
        result => result.other(context),
    }
}
