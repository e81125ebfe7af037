//! The cache decoder on any bytes: never a panic, an allocation out of
//! proportion to the input, or a file accepted whose tokens do not fit its
//! text. Half the inputs get a valid frame (magic, version, key, and the
//! checksums their header calls for) so that the entries themselves are
//! explored.
#![no_main]

use dupcheck::project::cache::{decode, seal, FORMAT_VERSION, MAGIC};
use libfuzzer_sys::fuzz_target;

const KEY: u64 = 0x5eed;

fuzz_target!(|data: &[u8]| {
    let [framing, rest @ ..] = data else {
        return;
    };
    let bytes = if framing % 2 == 0 {
        rest.to_vec()
    } else {
        let mut framed = MAGIC.to_vec();
        framed.extend_from_slice(&FORMAT_VERSION.to_le_bytes());
        framed.extend_from_slice(&KEY.to_le_bytes());
        framed.extend_from_slice(rest);
        seal(framed)
    };
    if let Ok(cached) = decode(&bytes, KEY) {
        let text = String::from_utf8_lossy(rest);
        for file in cached.files.values() {
            // A decoded entry is only used when it fits the file's text.
            let _ = file.fits(&text);
        }
    }
});
