//! Whether two files hold the same bytes: the step files of an XLA dump folder repeat the module a pass
//! left alone, and a trace reads each such file as a repeat of the one before, never scanning it. One
//! call, made with the interpreter's lock released, rather than a dozen in Python (each of which waits to
//! get the lock back while another thread follows a dump).

use std::fs::File;
use std::io::{ErrorKind, Read, Result};
use std::path::Path;

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
