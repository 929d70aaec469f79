//! `cargo run --release --example scan FILE [--first-sites]`: times the engine alone on a file (no Python
//! objects); `--first-sites` keeps a row only for each group's first site, as `check` scans. `REPEAT=N`
//! scans it N times (a profile of a piece's scan, as `explain` and `trace` scan a long file); `NAMES=1`
//! reads names, as trace scans.

use std::time::Instant;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let path = std::env::args().nth(1).ok_or("usage: scan FILE")?;
    let repeat: usize = std::env::var("REPEAT").ok().and_then(|c| c.parse().ok()).unwrap_or(1);
    for _ in 1..repeat {
        scan_once(&path)?;
    }
    scan_once(&path)
}

fn scan_once(path: &str) -> Result<(), Box<dyn std::error::Error>> {
    let t = Instant::now();
    let mut f = std::fs::File::open(path)?;
    let every_site = !std::env::args().any(|a| a == "--first-sites");
    let chunk =
        std::env::var("CHUNK").ok().and_then(|c| c.parse().ok()).unwrap_or(shardconv_scan::reader::lines::CHUNK);
    let names = std::env::var("NAMES").is_ok_and(|v| v == "1");
    let opts = shardconv_scan::reader::lines::Options { every_site, chunk, names, ..Default::default() };
    let mut e = shardconv_scan::reader::lines::Engine::new(opts)?;
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
