//! Key input for `build` and `query`: one key per line, read once, from anything.
//!
//! The input is a file, or standard input (`--input -`, or no `--input`), and may be a pipe, a
//! FIFO or `/dev/stdin`: it is read exactly once, front to back, so nothing is lost when it cannot
//! be read again. A key is a line's bytes without its `\n`, and without a `\r` before it (so files
//! written on Windows give the same keys); the bytes need not be UTF-8. A line with nothing on it
//! is the empty key; a final `\n` does not start another key.
//!
//! A key longer than the limit (`--max-key-bytes`, default [`DEFAULT_MAX_KEY_BYTES`]) is a usage
//! error naming its line: no more than the limit is ever held, so endless input without line
//! breaks (`/dev/zero`) cannot exhaust memory.

use std::fs::File;
use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};

use indicatif::ProgressBar;

use linebloom::hash::hash_bytes;

use super::output;
use crate::Failure;

/// The default limit on one key's length: 1 MiB.
pub const DEFAULT_MAX_KEY_BYTES: usize = 1 << 20;

/// Where keys come from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum KeySource {
    /// Standard input (`--input -` or no `--input`).
    Stdin,
    /// A path: a file, a FIFO, `/dev/stdin` or anything else that can be opened and read.
    Path(PathBuf),
}

impl KeySource {
    /// The source `--input` names: `-` or nothing is standard input.
    pub fn from_arg(input: Option<&Path>) -> Self {
        match input {
            None => KeySource::Stdin,
            Some(p) if p.as_os_str() == "-" => KeySource::Stdin,
            Some(p) => KeySource::Path(p.to_path_buf()),
        }
    }

    /// How error messages name this source.
    pub fn name(&self) -> String {
        match self {
            KeySource::Stdin => "standard input".to_string(),
            KeySource::Path(p) => p.display().to_string(),
        }
    }

    /// Opens the source for one pass. The length is the file's size when it is a regular file
    /// (for a progress bar), else 0.
    pub fn open(&self, max_key_bytes: usize) -> Result<KeyReader, Failure> {
        let (input, len): (Box<dyn Read>, u64) = match self {
            KeySource::Stdin => (Box::new(std::io::stdin().lock()), 0),
            KeySource::Path(p) => {
                let file = File::open(p).map_err(|e| read_failure(&self.name(), e))?;
                let len = file
                    .metadata()
                    .ok()
                    .filter(|m| m.is_file())
                    .map_or(0, |m| m.len());
                (Box::new(file), len)
            }
        };
        Ok(KeyReader::new(input, self.name(), max_key_bytes, len))
    }
}

/// Answers every key of `keys` on `out` as `KEY\tyes` or `KEY\tno`, in input order: the keys
/// are hashed with `seed` and looked up `batch` at a time by `lookup` (a batched, prefetching
/// or pipelined lookup that fills its answers).
pub fn answer_keys(
    seed: u64,
    keys: &mut KeyReader,
    out: &mut impl Write,
    batch: usize,
    lookup: impl FnMut(&[u64], &mut [bool]) -> Result<(), Failure>,
) -> Result<(), Failure> {
    answer_keys_with(|key| hash_bytes(key, seed), keys, out, batch, lookup)
}

/// [`answer_keys`] with the keys hashed by `hash` (the split-block filter hashes as Parquet
/// does, not with a seed).
pub fn answer_keys_with(
    hash: impl Fn(&[u8]) -> u64,
    keys: &mut KeyReader,
    out: &mut impl Write,
    batch: usize,
    mut lookup: impl FnMut(&[u64], &mut [bool]) -> Result<(), Failure>,
) -> Result<(), Failure> {
    // The batch's keys back to back, with their end offsets.
    let mut bytes: Vec<u8> = Vec::new();
    let mut ends: Vec<usize> = Vec::with_capacity(batch);
    let mut hashes: Vec<u64> = Vec::with_capacity(batch);
    let mut found = vec![false; batch];
    let mut flush = |bytes: &mut Vec<u8>, ends: &mut Vec<usize>, hashes: &mut Vec<u64>| {
        let found = &mut found[..hashes.len()];
        lookup(hashes, found)?;
        let mut start = 0;
        for (&end, &yes) in ends.iter().zip(found.iter()) {
            let answer: &[u8] = if yes { b"\tyes\n" } else { b"\tno\n" };
            out.write_all(&bytes[start..end])
                .and_then(|()| out.write_all(answer))
                .map_err(output::stdout_failure)?;
            start = end;
        }
        bytes.clear();
        ends.clear();
        hashes.clear();
        Ok::<(), Failure>(())
    };
    while let Some(key) = keys.next_key()? {
        bytes.extend_from_slice(key);
        ends.push(bytes.len());
        hashes.push(hash(key));
        if hashes.len() == batch {
            flush(&mut bytes, &mut ends, &mut hashes)?;
        }
    }
    flush(&mut bytes, &mut ends, &mut hashes)
}

/// Reads keys one line at a time through one reused buffer.
pub struct KeyReader {
    reader: BufReader<Box<dyn Read>>,
    name: String,
    max_key_bytes: usize,
    len: u64,
    line: Vec<u8>,
    line_number: u64,
    progress: ProgressBar,
}

impl KeyReader {
    /// Keys from `input`, which error messages call `name`; `len` is its size where known.
    pub fn new(input: Box<dyn Read>, name: String, max_key_bytes: usize, len: u64) -> Self {
        KeyReader {
            reader: BufReader::with_capacity(1 << 16, input),
            name,
            max_key_bytes,
            len,
            line: Vec::new(),
            line_number: 0,
            progress: ProgressBar::hidden(),
        }
    }

    /// The input's size when it is a regular file, else 0.
    pub fn len(&self) -> u64 {
        self.len
    }

    /// Shows reading progress on `bar` (advanced by the bytes read).
    pub fn set_progress(&mut self, bar: ProgressBar) {
        self.progress = bar;
    }

    /// Clears the progress bar, if one was shown.
    pub fn finish_progress(&self) {
        self.progress.finish_and_clear();
    }

    /// How error messages name the input.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The line number of the key last returned (1 for the first).
    pub fn line_number(&self) -> u64 {
        self.line_number
    }

    /// The next key, or `None` at the end of the input. A read error is exit code 2, naming
    /// the input; so is a key longer than the limit, naming its line.
    pub fn next_key(&mut self) -> Result<Option<&[u8]>, Failure> {
        self.line.clear();
        // A key of exactly the limit may be followed by `\r\n`; one byte past that is enough to
        // know a line is too long, so no more is ever held.
        let most = self.max_key_bytes.saturating_add(2);
        loop {
            let available = match self.reader.fill_buf() {
                Ok(buf) => buf,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(read_failure(&self.name, e)),
            };
            if available.is_empty() {
                break;
            }
            let (taken, ended) = match available.iter().position(|&b| b == b'\n') {
                Some(i) => (i + 1, true),
                None => (available.len(), false),
            };
            let room = most.saturating_add(1).saturating_sub(self.line.len());
            self.line.extend_from_slice(&available[..taken.min(room)]);
            self.reader.consume(taken);
            self.progress.inc(taken as u64);
            if self.line.len() > most {
                return Err(self.too_long());
            }
            if ended {
                break;
            }
        }
        if self.line.is_empty() {
            return Ok(None);
        }
        if strip_line_end(&self.line).len() > self.max_key_bytes {
            return Err(self.too_long());
        }
        self.line_number += 1;
        Ok(Some(strip_line_end(&self.line)))
    }

    /// The key being read (line `line_number + 1`) is over the limit.
    fn too_long(&self) -> Failure {
        Failure::usage(format!(
            "{}: line {} holds a key longer than {} bytes (--max-key-bytes)",
            self.name,
            self.line_number + 1,
            self.max_key_bytes
        ))
    }
}

/// The key on a line: without its `\n`, and without a `\r` just before it.
pub fn strip_line_end(line: &[u8]) -> &[u8] {
    let line = line.strip_suffix(b"\n").unwrap_or(line);
    line.strip_suffix(b"\r").unwrap_or(line)
}

/// An unreadable input: exit code 2.
pub fn read_failure(name: &str, e: std::io::Error) -> Failure {
    Failure::usage(format!("cannot read {name}: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn keys(text: &'static [u8], max: usize) -> Result<Vec<Vec<u8>>, String> {
        let mut reader = KeyReader::new(Box::new(text), "test".into(), max, 0);
        let mut out = Vec::new();
        loop {
            match reader.next_key() {
                Ok(Some(k)) => out.push(k.to_vec()),
                Ok(None) => return Ok(out),
                Err(f) => return Err(f.message),
            }
        }
    }

    #[test]
    fn keys_lose_their_line_ends_only() {
        assert_eq!(strip_line_end(b"abc\n"), b"abc");
        assert_eq!(strip_line_end(b"abc\r\n"), b"abc");
        assert_eq!(strip_line_end(b"abc"), b"abc");
        assert_eq!(strip_line_end(b"a\rb\n"), b"a\rb");
        assert_eq!(strip_line_end(b"\n"), b"");
    }

    #[test]
    fn lines_are_keys() {
        let k = |v: &[&[u8]]| v.iter().map(|s| s.to_vec()).collect::<Vec<_>>();
        assert_eq!(keys(b"", 8).unwrap(), k(&[]));
        assert_eq!(keys(b"a", 8).unwrap(), k(&[b"a"]));
        assert_eq!(keys(b"a\n", 8).unwrap(), k(&[b"a"]));
        assert_eq!(keys(b"a\nb", 8).unwrap(), k(&[b"a", b"b"]));
        assert_eq!(keys(b"\n\n", 8).unwrap(), k(&[b"", b""]));
        assert_eq!(keys(b"a\r\nb\r\n", 8).unwrap(), k(&[b"a", b"b"]));
    }

    #[test]
    fn keys_up_to_the_limit_pass_and_longer_ones_name_their_line() {
        assert_eq!(keys(b"1234\n12345678\n", 8).unwrap().len(), 2);
        assert_eq!(
            keys(b"12345678\r\n", 8).unwrap(),
            vec![b"12345678".to_vec()]
        );
        assert_eq!(keys(b"12345678", 8).unwrap().len(), 1);
        for text in [
            &b"ok\n123456789\n"[..],
            b"ok\n123456789",
            b"ok\n12345678\r9\n",
        ] {
            let leaked: &'static [u8] = Box::leak(text.to_vec().into_boxed_slice());
            let e = keys(leaked, 8).unwrap_err();
            assert!(e.contains("line 2") && e.contains("8 bytes"), "{e}");
        }
    }

    #[test]
    fn endless_input_stops_at_the_limit() {
        let zeros = std::io::repeat(0);
        let mut reader = KeyReader::new(Box::new(zeros), "zeros".into(), 1 << 16, 0);
        let e = reader.next_key().map(|_| ()).unwrap_err();
        assert!(e.message.contains("line 1"), "{}", e.message);
        assert!(reader.line.capacity() <= (1 << 18));
    }
}
