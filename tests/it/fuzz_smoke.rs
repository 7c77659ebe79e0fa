//! The fuzz targets on stable Rust: every seed of `fuzz/corpus/<target>/` and every crash
//! found so far (`fuzz/regressions/<target>/`) is replayed, then a bounded number of inputs
//! mutated from the seeds (bit flips, byte edits, splices, chunk repeats) is run through each
//! target. `cargo fuzz` (libFuzzer, coverage-guided) runs the same targets for longer in
//! `cargo xtask soak`.
//!
//! Each target gets `FUZZ_SMOKE_INPUTS` mutated inputs (2000 by default) or
//! `FUZZ_SMOKE_SECONDS` seconds (3 by default), whichever ends first; `FUZZ_SMOKE_SEED` replays
//! a run. The test prints one `FUZZ-SMOKE {json}` summary line.

#[allow(unreachable_pub, dead_code)]
#[path = "../../fuzz/src/targets.rs"]
mod targets;

use std::path::{Path, PathBuf};
use std::time::{Instant, SystemTime, UNIX_EPOCH};

use serde_json::json;

type Target = fn(&[u8]);

const TARGETS: [(&str, Target); 4] = [
    ("goal_command", targets::goal_command),
    ("events_log", targets::events_log),
    ("sse_stream", targets::sse_stream),
    ("context_builder", targets::context_builder),
];

fn fuzz_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .join("fuzz")
}

/// The files of a folder, sorted; none when it does not exist.
fn files(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|entries| {
            entries
                .filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| p.is_file())
                .collect()
        })
        .unwrap_or_default();
    files.sort();
    files
}

/// A small xorshift generator.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn below(&mut self, bound: usize) -> usize {
        (self.next() % bound.max(1) as u64) as usize
    }
}

/// One mutation of `input`, sometimes spliced with `other`.
fn mutate(rng: &mut Rng, input: &[u8], other: &[u8]) -> Vec<u8> {
    let mut out = input.to_vec();
    for _ in 0..=rng.below(4) {
        let at = rng.below(out.len() + 1);
        match rng.below(7) {
            0 if !out.is_empty() => {
                let i = at.min(out.len() - 1);
                out[i] ^= 1 << rng.below(8);
            }
            1 if !out.is_empty() => {
                let i = at.min(out.len() - 1);
                out[i] = rng.next() as u8;
            }
            2 => out.insert(at, rng.next() as u8),
            3 if !out.is_empty() => {
                let end = (at + rng.below(16)).min(out.len());
                out.drain(at.min(end)..end);
            }
            4 => {
                // Splice: the head of this input, the tail of another.
                let cut = rng.below(other.len() + 1);
                out.truncate(at);
                out.extend_from_slice(&other[cut..]);
            }
            5 if !out.is_empty() => {
                // Repeat a chunk.
                let start = at.min(out.len() - 1);
                let end = (start + 1 + rng.below(32)).min(out.len());
                let chunk = out[start..end].to_vec();
                for _ in 0..=rng.below(8) {
                    out.splice(start..start, chunk.iter().copied());
                }
            }
            _ => out.insert(
                at,
                [b'\n', b'{', b'}', b'"', b',', 0xFF, b':'][rng.below(7)],
            ),
        }
    }
    out.truncate(1 << 16);
    out
}

fn inputs_per_target() -> usize {
    std::env::var("FUZZ_SMOKE_INPUTS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(2000)
}

fn seconds_per_target() -> f64 {
    std::env::var("FUZZ_SMOKE_SECONDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(3.0)
}

#[test]
fn seeds_and_found_crashes_replay_cleanly() {
    for (name, target) in TARGETS {
        let seeds = files(&fuzz_dir().join("corpus").join(name));
        assert!(!seeds.is_empty(), "{name} has no seeds");
        for file in seeds
            .iter()
            .chain(&files(&fuzz_dir().join("regressions").join(name)))
        {
            target(&std::fs::read(file).unwrap());
        }
    }
}

#[test]
fn mutated_inputs_never_break_an_invariant() {
    let seed = std::env::var("FUZZ_SMOKE_SEED")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| {
            SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .unwrap()
                .as_nanos() as u64
        })
        | 1;
    eprintln!("fuzz smoke: seed {seed} (FUZZ_SMOKE_SEED={seed} replays it)");
    let mut rng = Rng(seed);
    let count = inputs_per_target();
    let budget = std::time::Duration::from_secs_f64(seconds_per_target());
    let mut tried = serde_json::Map::new();
    for (name, target) in TARGETS {
        let seeds: Vec<Vec<u8>> = files(&fuzz_dir().join("corpus").join(name))
            .iter()
            .map(|f| std::fs::read(f).unwrap())
            .collect();
        let started = Instant::now();
        let mut pool = seeds.clone();
        let mut inputs = 0;
        for i in 0..count {
            if started.elapsed() > budget {
                break;
            }
            inputs += 1;
            let base = &pool[rng.below(pool.len())];
            let other = &seeds[rng.below(seeds.len())];
            let input = mutate(&mut rng, base, other);
            let outcome = std::panic::catch_unwind(|| target(&input));
            if outcome.is_err() {
                let dir = std::env::temp_dir().join("fuzz-smoke-crashes").join(name);
                std::fs::create_dir_all(&dir).unwrap();
                let file = dir.join(format!("crash-{seed}-{i}"));
                std::fs::write(&file, &input).unwrap();
                panic!(
                    "{name} broke on input {i} (seed {seed}); saved to {}: add it to \
                     fuzz/regressions/{name}/ once fixed",
                    file.display()
                );
            }
            // Keep some mutants as bases: a crude walk away from the seeds.
            if pool.len() < 256 && rng.below(4) == 0 {
                pool.push(input);
            }
        }
        tried.insert(
            name.to_owned(),
            json!({"inputs": inputs, "seconds": started.elapsed().as_secs_f64()}),
        );
    }
    println!("FUZZ-SMOKE {}", json!({"seed": seed, "targets": tried}));
}
