//! What the extractor already made of the tensor types and op names a dump repeats line after line.

use super::*;

/// What the extractor has already made of the tensor types and op names it met (a dump repeats a few
/// of each on line after line), so a repeat costs a lookup instead of a parse and an allocation.
#[derive(Default)]
pub struct Memo {
    pub(super) hlo_shapes: crate::intern::FxMap<Box<[u8]>, Shapes>,
    pub(super) mlir_shapes: crate::intern::FxMap<Box<[u8]>, Option<Shapes>>,
    mlir_types: crate::intern::FxMap<Box<[u8]>, Option<Shapes>>,
    pub(super) ops: crate::intern::FxMap<Box<[u8]>, Arc<str>>,
    custom_calls: crate::intern::FxMap<Box<[u8]>, Arc<str>>,
    /// The last argument type read and its shape: a signature's arguments most often share one.
    last_first: Option<(Vec<u8>, Option<Shapes>)>,
}

/// Entries a memo map holds before it starts again (it stays small whatever the dump).
const MEMO_CAP: usize = 4096;

fn memo_get<V: Clone>(map: &mut crate::intern::FxMap<Box<[u8]>, V>, key: &[u8], make: impl FnOnce() -> V) -> V {
    if let Some(v) = map.get(key) {
        return v.clone();
    }
    if map.len() >= MEMO_CAP {
        map.clear();
    }
    let v = make();
    map.insert(key.into(), v.clone());
    v
}

impl Memo {
    /// The shapes of the HLO type `t` (a leaf or a tuple).
    pub(super) fn hlo_shapes(&mut self, t: &[u8]) -> Shapes {
        memo_get(&mut self.hlo_shapes, t, || Arc::new(hlo_shapes(t)))
    }

    /// The first `tensor<...>` type's shape in `t`, keyed on that type's text alone (from `tensor<` to
    /// its first `>`: the dims it is read from end before that).
    pub(super) fn first_mlir_shape(&mut self, t: &[u8]) -> Option<Shapes> {
        // (an argument's type most often starts the text: no search then)
        let p = if t.starts_with(b"tensor<") { 0 } else { crate::finder!(b"tensor<").find(t)? };
        let e = memchr::memchr(b'>', &t[p..]).map_or(t.len(), |q| p + q + 1);
        let key = &t[p..e];
        if let Some((last, shapes)) = &self.last_first {
            if last.as_slice() == key {
                return shapes.clone();
            }
        }
        let shapes = memo_get(&mut self.mlir_shapes, key, || first_shape(mlir_shapes(key)));
        let (last, kept) = self.last_first.get_or_insert_with(Default::default);
        last.clear();
        last.extend_from_slice(key);
        *kept = shapes.clone();
        shapes
    }

    /// The shapes of the MLIR types in `t` (none: no tensor type).
    pub(super) fn mlir_shapes(&mut self, t: &[u8]) -> Option<Shapes> {
        memo_get(&mut self.mlir_types, t, || some_shapes(mlir_shapes(t)))
    }

    /// An op's name, shared.
    pub(super) fn op(&mut self, name: &[u8], make: impl FnOnce() -> String) -> Arc<str> {
        memo_get(&mut self.ops, name, || Arc::from(make()))
    }

    /// `custom-call TARGET`, shared, keyed on the target.
    pub(super) fn custom_call(&mut self, target: &[u8]) -> Arc<str> {
        memo_get(&mut self.custom_calls, target, || Arc::from(format!("custom-call {}", lossy(target))))
    }
}

fn some_shapes(v: Vec<Shape>) -> Option<Shapes> {
    if v.is_empty() {
        None
    } else {
        Some(Arc::new(v))
    }
}

fn first_shape(v: Vec<Shape>) -> Option<Shapes> {
    some_shapes(v.into_iter().take(1).collect())
}
