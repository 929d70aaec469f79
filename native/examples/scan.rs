//! `cargo run --release --example scan FILE`: times the engine alone on a file (no Python objects).

use std::time::Instant;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let path = std::env::args().nth(1).ok_or("usage: scan FILE")?;
    let t = Instant::now();
    let mut f = std::fs::File::open(&path)?;
    let mut e = _native::lines::Engine::new(_native::lines::Options::default())?;
    e.size_hint(f.metadata()?.len());
    e.read_all(&mut f, u64::MAX)?;
    e.finish();
    println!(
        "{} bytes, {} sites, {} groups in {:.3}s",
        e.size,
        e.table.count(),
        e.table.groups.len(),
        t.elapsed().as_secs_f64()
    );
    Ok(())
}
