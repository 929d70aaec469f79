//! Names: which values a dump segment defines, sharded or not (SSA results, HLO instructions, function
//! arguments, HLO parameters), each with what it is (its op or its type); and a segment's digest.

use crate::keywords::name_char;
use crate::strings::is_ws;
use crate::table::FxMap;

/// One segment's definitions, kept apart as the reference updates them: SSA names, then arguments,
/// then parameters (a parameter's `arg[N]` wins over an argument's).
#[derive(Default)]
pub struct Defined {
    pub ssa: FxMap<Vec<u8>, Vec<u8>>,
    pub args: FxMap<Vec<u8>, Vec<u8>>,
    pub params: FxMap<Vec<u8>, Vec<u8>>,
}

impl Defined {
    pub fn merged(self) -> Vec<(Vec<u8>, Vec<u8>)> {
        let mut out = self.ssa;
        out.extend(self.args);
        out.extend(self.params);
        out.into_iter().collect()
    }

    /// `names_in` over complete lines.
    pub fn scan(&mut self, data: &[u8]) {
        let n = data.len();
        // (%[\w$.\-]+)(?::\d+)? = (\S+)
        let mut i = 0;
        while let Some(off) = memchr::memchr(b'%', &data[i..]) {
            let p = i + off;
            let e = name_end(data, p);
            i = p + 1;
            if e == p + 1 {
                continue;
            }
            let mut k = e;
            if data.get(k) == Some(&b':') {
                let d = data[k + 1..].iter().take_while(|b| b.is_ascii_digit()).count();
                if d > 0 && data[k + 1 + d..].starts_with(b" = ") {
                    k = k + 1 + d;
                }
            }
            if !data[k..].starts_with(b" = ") {
                continue;
            }
            let a = k + 3;
            let b = a + data[a..].iter().take_while(|&&c| !is_ws(c)).count();
            if b == a {
                continue;
            }
            self.ssa.insert(data[p..e].to_vec(), what(data, a, b));
            i = b;
        }
        // %arg(\d+): ([^\s,)]+)
        let mut i = 0;
        while let Some(off) = crate::finder!(b"%arg").find(&data[i..]) {
            let p = i + off;
            let a = p + 4;
            let d = data[a..].iter().take_while(|b| b.is_ascii_digit()).count();
            i = p + 1;
            if d == 0 || !data[a + d..].starts_with(b": ") {
                continue;
            }
            let t = a + d + 2;
            let e = t + data[t..].iter().take_while(|&&c| !is_ws(c) && c != b',' && c != b')').count();
            if e == t {
                continue;
            }
            let mut key = b"arg[".to_vec();
            key.extend_from_slice(&data[a..a + d]);
            key.push(b']');
            self.args.insert(key, data[t..e].to_vec());
            i = e;
        }
        // = (\S+) parameter\((\d+)\)
        let mut i = 0;
        while let Some(off) = crate::finder!(b" parameter(").find(&data[i..]) {
            let q = i + off;
            i = q + 1;
            let a = data[..q].iter().rposition(|&c| is_ws(c)).map_or(0, |p| p + 1);
            if a == q || a < 2 || &data[a - 2..a] != b"= " {
                continue;
            }
            let d0 = q + 11;
            let d = data[d0..].iter().take_while(|b| b.is_ascii_digit()).count();
            if d == 0 || data.get(d0 + d) != Some(&b')') {
                continue;
            }
            let mut key = b"arg[".to_vec();
            key.extend_from_slice(&data[d0..d0 + d]);
            key.push(b']');
            self.params.insert(key, data[a..q].to_vec());
            i = d0 + d + 1;
        }
        let _ = n;
    }
}

/// What an SSA definition is: an HLO instruction its type (`data[a..b]` holds a `[`; its name is stable
/// across passes), an MLIR op the op and the operands it names before its attributes, since a pass that
/// renumbers values gives `%23` to another `dot_general` of the same type.
fn what(data: &[u8], a: usize, b: usize) -> Vec<u8> {
    let token = &data[a..b];
    let mut out = token.to_vec();
    if memchr::memchr(b'[', token).is_some() {
        return out;
    }
    let rest = &data[b..];
    let rest = &rest[..memchr::memchr2(b'{', b'\n', rest).unwrap_or(rest.len())];
    let mut i = 0;
    while let Some(off) = memchr::memchr(b'%', &rest[i..]) {
        let p = i + off;
        let e = name_end(rest, p);
        if e > p + 1 {
            out.push(b' ');
            out.extend_from_slice(&rest[p..e]);
        }
        i = e;
    }
    out
}

/// The end of the `%name` whose `%` is at `data[p]` (`p + 1` when no name follows).
fn name_end(data: &[u8], p: usize) -> usize {
    p + 1 + data[p + 1..].iter().take_while(|&&c| name_char(c)).count()
}

/// A streaming 64-bit hash (equal bytes, equal hash, however they are split).
pub struct Digest {
    h: u64,
    len: u64,
    carry: [u8; 8],
    held: usize,
}

const K: u64 = 0x9E37_79B9_7F4A_7C15;

impl Default for Digest {
    fn default() -> Self {
        Digest { h: 0x243F_6A88_85A3_08D3, len: 0, carry: [0; 8], held: 0 }
    }
}

impl Digest {
    fn word(&mut self, w: u64) {
        self.h = (self.h.rotate_left(23) ^ w).wrapping_mul(K);
    }

    pub fn update(&mut self, mut data: &[u8]) {
        self.len += data.len() as u64;
        if self.held > 0 {
            let take = (8 - self.held).min(data.len());
            self.carry[self.held..self.held + take].copy_from_slice(&data[..take]);
            self.held += take;
            data = &data[take..];
            if self.held < 8 {
                return;
            }
            let w = u64::from_le_bytes(self.carry);
            self.word(w);
            self.held = 0;
        }
        let mut chunks = data.chunks_exact(8);
        for c in &mut chunks {
            let mut b = [0u8; 8];
            b.copy_from_slice(c);
            self.word(u64::from_le_bytes(b));
        }
        let rest = chunks.remainder();
        self.carry[..rest.len()].copy_from_slice(rest);
        self.held = rest.len();
    }

    pub fn finish(&self) -> u64 {
        let mut h = self.h;
        let mut tail = [0u8; 8];
        tail[..self.held].copy_from_slice(&self.carry[..self.held]);
        h = (h.rotate_left(23) ^ u64::from_le_bytes(tail)).wrapping_mul(K);
        h ^= self.len;
        h ^= h >> 29;
        h = h.wrapping_mul(0xBF58_476D_1CE4_E5B9);
        h ^ (h >> 32)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use std::collections::HashMap;

    #[test]
    fn defined() {
        let mut d = Defined::default();
        d.scan(b"  %x.1 = f32[8]{0} parameter(0)\n  %0:2 = stablehlo.add %a\n  %1 = stablehlo.dot %b, %c {x = %d}\nfunc(%arg0: tensor<8xf32>, %arg1: i32)");
        let m: HashMap<_, _> = d.merged().into_iter().collect();
        assert_eq!(m[&b"%x.1".to_vec()], b"f32[8]{0}");
        assert_eq!(m[&b"%0".to_vec()], b"stablehlo.add %a");
        assert_eq!(m[&b"%1".to_vec()], b"stablehlo.dot %b %c"); // operands stop at the attributes
        assert_eq!(m[&b"arg[0]".to_vec()], b"f32[8]{0}");
        assert_eq!(m[&b"arg[1]".to_vec()], b"i32");
    }

    #[test]
    fn digest_splits() {
        let data = b"hello world, this is a digest test";
        let mut a = Digest::default();
        a.update(data);
        let mut b = Digest::default();
        b.update(&data[..3]);
        b.update(&data[3..17]);
        b.update(&data[17..]);
        assert_eq!(a.finish(), b.finish());
    }
}
