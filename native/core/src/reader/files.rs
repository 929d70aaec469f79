//! Files: a dump file read whole into an engine, in chunks (memory stays bounded), with the one check
//! that it kept its size while it was read; and whether two files hold the same bytes: the step files of
//! an XLA dump folder repeat the module a pass left alone, and a trace reads each such file as a repeat
//! of the one before, never scanning it (one call with the interpreter's lock released, rather than a
//! dozen in Python, each of which waits to get the lock back while another thread follows a dump).

use crate::reader::lines::Engine;
use std::fmt;
use std::fs::File;
use std::io::{ErrorKind, Read, Result};
use std::path::{Path, PathBuf};

/// A file longer than this is read by a thread of its own (starting one costs more than a short read).
const READ_AHEAD_BYTES: u64 = 8 << 20;

/// Why a dump file could not be read whole.
#[derive(Debug)]
pub enum ReadError {
    /// The system's error on the file at the path.
    Io(std::io::Error, PathBuf),
    /// The path names a directory.
    IsDir(PathBuf),
    /// A regular file's size changed while it was read: `expected` bytes when opened, `now` after, `read`
    /// of them read (a skipped file's is its size).
    ChangedSize { path: PathBuf, expected: u64, now: u64, read: u64 },
}

impl fmt::Display for ReadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ReadError::Io(e, path) => write!(f, "{}: {e}", path.display()),
            ReadError::IsDir(path) => write!(f, "{}: Is a directory", path.display()),
            ReadError::ChangedSize { path, expected, now, read } => write!(
                f,
                "{}: the file changed size while it was read ({expected} bytes, then {now}; {read} read)",
                path.display()
            ),
        }
    }
}

/// Scans the dump file at `path` into `eng`, read in chunks (a long one by a thread of its own while this
/// one scans); an error if it cannot be read or changes size while it is read.
pub fn read_file(path: &Path, mut eng: Engine) -> std::result::Result<Engine, ReadError> {
    let io = |e| ReadError::Io(e, path.to_path_buf());
    let mut f = File::open(path).map_err(io)?;
    let meta = f.metadata().map_err(io)?;
    if meta.is_dir() {
        return Err(ReadError::IsDir(path.to_path_buf()));
    }
    let regular = meta.is_file();
    let expected = meta.len();
    if regular {
        eng.size_hint(expected);
    }
    let limit = if regular { expected } else { u64::MAX };
    let read =
        if expected > READ_AHEAD_BYTES { eng.read_all_ahead(&mut f, limit) } else { eng.read_all(&mut f, limit) };
    read.map_err(io)?;
    if regular {
        let now = f.metadata().map_err(io)?.len();
        let read = if eng.skipping() { expected } else { eng.size };
        kept_size(path, expected, now, read)?;
    }
    eng.finish();
    Ok(eng)
}

/// The one check that a regular file kept its size while it was read (`expected` bytes when opened,
/// `now` after, `read` of them read; a skipped file's is its size).
pub fn kept_size(path: &Path, expected: u64, now: u64, read: u64) -> std::result::Result<(), ReadError> {
    if now == expected && read == expected {
        return Ok(());
    }
    Err(ReadError::ChangedSize { path: path.to_path_buf(), expected, now, read })
}

/// How much of each file is compared at a time: memory stays small whatever the files' size.
const BLOCK: usize = 64 << 10;

/// Whether the regular files at `a` and `b` hold the same bytes; false when either is not a regular
/// file or cannot be read.
pub fn same_bytes(a: &Path, b: &Path) -> bool {
    equal(a, b).unwrap_or(false)
}

fn equal(a: &Path, b: &Path) -> Result<bool> {
    let (mut fa, mut fb) = (File::open(a)?, File::open(b)?);
    let (ma, mb) = (fa.metadata()?, fb.metadata()?);
    if !ma.is_file() || !mb.is_file() || ma.len() != mb.len() {
        return Ok(false);
    }
    let (mut x, mut y) = (vec![0u8; BLOCK], vec![0u8; BLOCK]);
    loop {
        let (n, m) = (fill(&mut fa, &mut x)?, fill(&mut fb, &mut y)?);
        if x[..n] != y[..m] {
            return Ok(false);
        }
        if n == 0 {
            return Ok(true);
        }
    }
}

/// Reads until `buf` is full or the file ends; how many bytes were read.
fn fill(f: &mut File, buf: &mut [u8]) -> Result<usize> {
    let mut got = 0;
    while got < buf.len() {
        match f.read(&mut buf[got..]) {
            Ok(0) => break,
            Ok(n) => got += n,
            Err(e) if e.kind() == ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        }
    }
    Ok(got)
}

#[cfg(test)]
mod tests {
    use super::same_bytes;

    #[test]
    fn equal_differing_and_missing_files() {
        let dir = std::env::temp_dir().join(format!("shardconv-same-bytes-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let long: Vec<u8> = (0..200_000u32).map(|i| (i % 251) as u8).collect();
        let mut other = long.clone();
        other[150_000] ^= 1; // past the first block
        let path = |name: &str| dir.join(name);
        for (name, bytes) in [("a", &long), ("b", &long), ("c", &other), ("d", &long[..10].to_vec())] {
            std::fs::write(path(name), bytes).unwrap();
        }
        assert!(same_bytes(&path("a"), &path("b")));
        assert!(!same_bytes(&path("a"), &path("c")));
        assert!(!same_bytes(&path("a"), &path("d")));
        assert!(!same_bytes(&path("a"), &path("missing")));
        assert!(!same_bytes(&path("a"), &dir));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
