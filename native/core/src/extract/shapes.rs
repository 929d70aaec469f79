//! Tensor types: `tensor<8x?xf32>` in MLIR, `f32[8,16]{1,0}` and tuples of them in HLO. A dim too long
//! for int64 (more than 19 digits) or dynamic is unknown (None).

use crate::strings::{is_word, is_ws};

pub type Dim = Option<u64>;
pub type Shape = Vec<Dim>;

fn dim(d: &[u8]) -> Dim {
    if d.len() > 19 {
        return None;
    }
    let mut v: u64 = 0;
    for &c in d {
        v = v.wrapping_mul(10).wrapping_add(u64::from(c - b'0'));
    }
    Some(v)
}

/// Shapes of the `tensor<...>` types in `text`, in order.
pub fn mlir_shapes(text: &[u8]) -> Vec<Shape> {
    let mut out = Vec::new();
    let finder = crate::finder!(b"tensor<");
    let mut pos = 0;
    while let Some(off) = finder.find(&text[pos..]) {
        let mut i = pos + off + 7;
        let mut shape = Vec::new();
        loop {
            let s = i;
            let mut j = i;
            if text.get(j) == Some(&b'?') {
                j += 1;
            } else {
                while j < text.len() && text[j].is_ascii_digit() {
                    j += 1;
                }
                if j == s {
                    break;
                }
            }
            if text.get(j) != Some(&b'x') {
                break;
            }
            shape.push(if text[s] == b'?' { None } else { dim(&text[s..j]) });
            i = j + 1;
        }
        out.push(shape);
        pos = i;
    }
    out
}

/// Shapes of the leaf array types in an HLO type (tuples flattened, as tuple shardings are).
pub fn hlo_shapes(text: &[u8]) -> Vec<Shape> {
    let mut out = Vec::new();
    let n = text.len();
    let mut i = 0;
    while i < n {
        let c = text[i];
        if !c.is_ascii_lowercase() || (i > 0 && is_word(text[i - 1])) {
            i += 1;
            continue;
        }
        let mut j = i + 1;
        while j < n && (text[j].is_ascii_lowercase() || text[j].is_ascii_digit()) {
            j += 1;
        }
        if j < n && text[j] == b'[' {
            if let Some(off) = memchr::memchr(b']', &text[j + 1..]) {
                let close = j + 1 + off;
                out.push(hlo_dims(&text[j + 1..close]));
                i = close + 1;
                continue;
            }
        }
        i += 1;
    }
    out
}

fn strip(d: &[u8]) -> &[u8] {
    let a = d.iter().position(|&b| !is_ws(b)).unwrap_or(d.len());
    let e = d.iter().rposition(|&b| !is_ws(b)).map_or(a, |e| e + 1);
    &d[a..e.max(a)]
}

fn hlo_dims(dims: &[u8]) -> Shape {
    if strip(dims).is_empty() {
        return Vec::new();
    }
    dims.split(|&b| b == b',')
        .map(|d| {
            let d = strip(d);
            if !d.is_empty() && d.iter().all(u8::is_ascii_digit) {
                dim(d)
            } else {
                None
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mlir() {
        assert_eq!(mlir_shapes(b"tensor<8x?xf32>, tensor<f32>"), vec![vec![Some(8), None], vec![]]);
        assert_eq!(mlir_shapes(b"tensor<8x16>"), vec![vec![Some(8)]]);
        assert_eq!(mlir_shapes(b"tensor<99999999999999999999x1xf32>"), vec![vec![None, Some(1)]]);
    }

    #[test]
    fn hlo() {
        assert_eq!(hlo_shapes(b"(f32[8,16]{1,0}, s32[])"), vec![vec![Some(8), Some(16)], vec![]]);
        assert_eq!(hlo_shapes(b"f32[<=8,?]"), vec![vec![None, None]]);
        assert_eq!(hlo_shapes(b"xF32[8]"), Vec::<Shape>::new());
    }
}
