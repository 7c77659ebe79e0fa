//! With the `tiktoken` feature, writes the `o200k_base` token table into `OUT_DIR` in the form
//! the counter reads without decoding anything (`src/o200k.rs`): for each rank in order, one
//! length byte and the token's bytes (length 0 for a rank that is not an ordinary token).
//! tiktoken-rs embeds the table as base64 text and builds several maps from it, a few hundred
//! milliseconds of CPU at run time; done here, the program only builds one map of slices.

fn main() -> Result<(), Box<dyn std::error::Error>> {
    println!("cargo:rerun-if-changed=build.rs");
    #[cfg(feature = "tiktoken")]
    write_table()?;
    Ok(())
}

#[cfg(feature = "tiktoken")]
fn write_table() -> Result<(), Box<dyn std::error::Error>> {
    let bpe = tiktoken_rs::o200k_base()?;
    let special: std::collections::HashSet<&str> = bpe.special_tokens();
    let mut table = Vec::with_capacity(2 << 20);
    let mut end = 0;
    for rank in 0..=u32::MAX {
        let Ok(bytes) = bpe.decode_bytes(&[rank]) else {
            // The ordinary ranks are contiguous; the first gap of this size ends them.
            if rank > end + 1_000 {
                break;
            }
            table.push(0);
            continue;
        };
        if std::str::from_utf8(&bytes).is_ok_and(|s| special.contains(s)) {
            table.push(0);
            continue;
        }
        // One length byte: o200k_base's tokens are 1 to 128 bytes long.
        let len = u8::try_from(bytes.len())?;
        if len == 0 {
            return Err(format!("rank {rank} of o200k_base is empty").into());
        }
        table.push(len);
        table.extend_from_slice(&bytes);
        end = rank;
    }
    // Trailing empty ranks carry nothing.
    while table.last() == Some(&0) {
        table.pop();
    }
    let out = std::path::PathBuf::from(std::env::var_os("OUT_DIR").ok_or("OUT_DIR is not set")?);
    std::fs::write(out.join("o200k_base.bin"), table)?;
    Ok(())
}
