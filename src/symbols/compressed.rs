//! Compressed sections checked before an object's DWARF is read.
//!
//! The `object` crate decompresses a section into a buffer of the size its
//! header claims, filled before the data is read, and reads a zstd section
//! to its end whatever it claims: a file of kilobytes could claim or hold
//! gigabytes. An object whose sections fail these checks has its DWARF
//! left unread (its symbol table still names its functions).

use std::io::{self, Read};

use object::{CompressionFormat, Object, ObjectSection};

/// The most bytes one compressed byte can stand for in zlib's deflate
/// (about 1032), taken as the limit for zstd as well: real debug sections
/// compress by a factor of 3 to 10.
const MAX_RATIO: u64 = 1032;

/// Bytes any compressed section may claim, however small it is.
const SLACK: u64 = 4096;

/// Checks that every compressed section of `elf` claims no more than its
/// compressed bytes can give, and that a zstd section gives no more than
/// it claims.
pub fn check_compressed_sections(elf: &object::File) -> Result<(), String> {
    for section in elf.sections() {
        let Ok(compressed) = section.compressed_data() else {
            continue;
        };
        if !matches!(
            compressed.format,
            CompressionFormat::Zlib | CompressionFormat::Zstandard
        ) {
            continue;
        }
        let name = String::from_utf8_lossy(section.name_bytes().unwrap_or_default());
        let packed = compressed.data.len() as u64;
        let claimed = compressed.uncompressed_size;
        if claimed > packed.saturating_mul(MAX_RATIO).saturating_add(SLACK) {
            return Err(format!(
                "its section {name} claims {claimed} bytes from {packed} compressed: more than \
                 compression gives"
            ));
        }
        if compressed.format == CompressionFormat::Zstandard
            && zstd_length(compressed.data, claimed.saturating_add(1)) > claimed
        {
            return Err(format!(
                "its section {name} decompresses to more than the {claimed} bytes it claims"
            ));
        }
    }
    Ok(())
}

/// How many bytes the zstd frames of `data` decompress to, counted up to
/// `limit`; as far as they go when they are damaged.
fn zstd_length(data: &[u8], limit: u64) -> u64 {
    let Ok(decoder) = zstd::stream::read::Decoder::with_buffer(data) else {
        return 0;
    };
    let mut counted = Counter(0);
    let _ = io::copy(&mut decoder.take(limit), &mut counted);
    counted.0
}

/// A sink that counts what it is given.
struct Counter(u64);

impl io::Write for Counter {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.0 += buf.len() as u64;
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zstd_frames_are_counted_up_to_the_limit() {
        let one = zstd::encode_all(&[7u8; 10_000][..], 3).unwrap();
        let two = [one.clone(), one.clone()].concat();
        assert_eq!(zstd_length(&one, 1 << 20), 10_000);
        assert_eq!(zstd_length(&two, 1 << 20), 20_000);
        assert_eq!(zstd_length(&two, 15_001), 15_001);
        assert_eq!(zstd_length(b"not zstd", 100), 0);
    }
}
