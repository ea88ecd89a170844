//! Where the commands' results go: standard output that fails with an error instead of a panic,
//! and output files that appear whole or not at all.
//!
//! - Standard output is written through one locked, buffered writer and every write's result is
//!   handled: a closed pipe (`| head`) ends the command quietly with success, as `cat` and `grep`
//!   do; any other error (`> /dev/full`) is one line on standard error and exit code 1.
//! - An output file is first written to a temporary file created exclusively (`O_EXCL`, a random
//!   name, in the output's own directory, so no planted link is followed), synced to disk, then
//!   renamed over the output, and the directory is synced so the rename itself is durable. On
//!   SIGINT, SIGTERM or SIGHUP the temporary file is removed and the command exits with 128 plus
//!   the signal's number; the old output, if any, stays whole.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::{Mutex, Once};

use crate::Failure;

/// Appends one line, formatted as `println!` would, to a `String` of output.
macro_rules! outln {
    ($buf:expr) => {
        $buf.push('\n')
    };
    ($buf:expr, $($arg:tt)*) => {{
        use std::fmt::Write as _;
        // Writing to a String cannot fail.
        let _ = writeln!($buf, $($arg)*);
    }};
}
pub(crate) use outln;

/// The width of a name in the `name  value` lines of `stats` and `redis stats`.
pub const FIELD_WIDTH: usize = 17;

/// Appends one `name  value` line, the name padded to [`FIELD_WIDTH`].
pub fn field(text: &mut String, name: &str, value: impl std::fmt::Display) {
    outln!(text, "{name:<FIELD_WIDTH$} {value}");
}

/// Standard output, locked and buffered for the life of the command.
pub fn stdout() -> BufWriter<std::io::StdoutLock<'static>> {
    BufWriter::with_capacity(1 << 16, std::io::stdout().lock())
}

/// Writes `text` to standard output and flushes it.
pub fn print(text: &str) -> Result<(), Failure> {
    let mut out = stdout();
    out.write_all(text.as_bytes())
        .and_then(|()| out.flush())
        .map_err(stdout_failure)
}

/// The failure a standard-output error maps to: a closed pipe ends the command quietly and
/// successfully (the reader stopped early, which is not this command's failure); anything else
/// is exit code 1.
pub fn stdout_failure(e: std::io::Error) -> Failure {
    if e.kind() == std::io::ErrorKind::BrokenPipe {
        return Failure::closed_pipe();
    }
    Failure::other(format!("cannot write standard output: {e}"))
}

/// The temporary file of the output being written, if any: the signal thread removes it.
static PENDING: Mutex<Option<PathBuf>> = Mutex::new(None);

/// An output file being written: a temporary file beside it until [`OutputFile::commit`].
/// Dropped without a commit, the temporary file is removed and the output is untouched.
pub struct OutputFile {
    path: PathBuf,
    /// Taken by `commit`, which renames it into place.
    temp: Option<tempfile::NamedTempFile>,
}

impl OutputFile {
    /// Creates the temporary file for `path` in `path`'s directory. An output that is a
    /// directory, or whose directory is missing or not writable, is a usage error (exit 2):
    /// callers create the output before reading any input, so such a mistake costs nothing.
    pub fn create(path: &Path) -> Result<Self, Failure> {
        let cannot = |why: &dyn std::fmt::Display| {
            Failure::usage(format!("cannot write {}: {why}", path.display()))
        };
        if path.is_dir() {
            return Err(cannot(&"it is a directory"));
        }
        let name = path.file_name().ok_or_else(|| cannot(&"not a file name"))?;
        let dir = match path.parent() {
            Some(dir) if !dir.as_os_str().is_empty() => dir,
            _ => Path::new("."),
        };
        watch_signals();
        let mut prefix = std::ffi::OsString::from(".");
        prefix.push(name);
        prefix.push(".");
        // Held while the file is created and registered, so a signal in between cannot miss it.
        let mut pending = pending();
        let mut builder = tempfile::Builder::new();
        builder.prefix(&prefix).suffix(".tmp");
        // Read and write for all, less the umask, as `File::create` gives (a temporary file
        // alone would be the owner's only).
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            builder.permissions(std::fs::Permissions::from_mode(0o666));
        }
        // The temporary file is this command's business: a failure names the user's path, and
        // a missing directory is said so.
        if !dir.is_dir() {
            let why = if dir.exists() {
                format!("{} is not a directory", dir.display())
            } else {
                format!("the directory {} does not exist", dir.display())
            };
            return Err(cannot(&why));
        }
        let temp = builder
            .tempfile_in(dir)
            .map_err(|e| cannot(&without_temp_path(&e)))?;
        *pending = Some(temp.path().to_path_buf());
        Ok(OutputFile {
            path: path.to_path_buf(),
            temp: Some(temp),
        })
    }

    /// Writes the contents with `write`, syncs them, renames the temporary file over the output
    /// and syncs the directory. On any error the temporary file is removed and the old output
    /// stays as it was.
    pub fn commit(
        mut self,
        write: impl FnOnce(&mut BufWriter<&File>) -> std::io::Result<()>,
    ) -> Result<(), Failure> {
        let failed = |e: std::io::Error| {
            Failure::other(format!("cannot write {}: {e}", self.path.display()))
        };
        let temp = self.temp.take().expect("an output file is committed once");
        let mut out = BufWriter::with_capacity(1 << 20, temp.as_file());
        write(&mut out).map_err(failed)?;
        out.flush().map_err(failed)?;
        drop(out);
        temp.as_file().sync_all().map_err(failed)?;
        let path = self.path.clone();
        let dir = match path.parent() {
            Some(dir) if !dir.as_os_str().is_empty() => dir.to_path_buf(),
            _ => PathBuf::from("."),
        };
        {
            // The rename and the end of the temporary file's life happen together with respect
            // to a signal: the signal thread waits for this lock.
            let mut pending = pending();
            temp.persist(&path).map_err(|e| {
                Failure::other(format!(
                    "cannot write {}: {}",
                    path.display(),
                    without_temp_path(&e.error)
                ))
            })?;
            *pending = None;
        }
        // The rename is durable once the directory is synced; a file system that cannot sync a
        // directory has nothing more to do.
        if let Ok(dir) = File::open(&dir) {
            let _ = dir.sync_all();
        }
        Ok(())
    }
}

impl Drop for OutputFile {
    fn drop(&mut self) {
        // One output is written at a time. Its temporary file is renamed by `commit` or
        // removed by its own drop; either way the signal thread has nothing left to remove.
        *pending() = None;
    }
}

fn pending() -> std::sync::MutexGuard<'static, Option<PathBuf>> {
    PENDING
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// Starts, once, the thread that removes the pending temporary file on SIGINT, SIGTERM or
/// SIGHUP and exits with 128 plus the signal's number.
fn watch_signals() {
    static STARTED: Once = Once::new();
    STARTED.call_once(|| {
        #[cfg(unix)]
        {
            use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
            let Ok(mut signals) = signal_hook::iterator::Signals::new([SIGINT, SIGTERM, SIGHUP])
            else {
                return;
            };
            std::thread::spawn(move || {
                if let Some(signal) = signals.forever().next() {
                    let pending = pending();
                    if let Some(path) = pending.as_ref() {
                        let _ = std::fs::remove_file(path);
                    }
                    std::process::exit(128 + signal);
                }
            });
        }
    });
}

/// An error of `tempfile`, whose message ends with the temporary file's path (" at path
/// \"…/.f.lbf.55Idaz.tmp\""): the user never named that file, so only what went wrong is kept.
fn without_temp_path(e: &dyn std::fmt::Display) -> String {
    let mut text = e.to_string();
    if let Some(at) = text.find(" at path ") {
        text.truncate(at);
    }
    text
}
