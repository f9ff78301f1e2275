//! Compressed sections checked before an object's DWARF is read.
//!
//! The `object` crate decompresses a zlib section into a buffer of the
//! size its header claims, filled before the data is read, and reads the
//! frames of a zstd section to their end whatever it claims: a file of
//! kilobytes could claim or hold gigabytes. An object whose sections fail
//! these checks has its DWARF left unread (its symbol table still names
//! its functions).

use std::io::{self, Read};

use object::{CompressionFormat, Object, ObjectSection};
use ruzstd::decoding::StreamingDecoder;
use ruzstd::decoding::errors::{FrameDecoderError, ReadFrameHeaderError};

/// The most bytes one byte of zlib's deflate can stand for (about 1032).
/// zstd has no such bound: a block of one repeated byte takes 4 bytes for
/// 128 KiB, so a zstd section is measured instead.
const ZLIB_MAX_RATIO: u64 = 1032;

/// Bytes any zlib section may claim, however small it is.
const SLACK: u64 = 4096;

/// Checks that every zlib section of `elf` claims no more than its
/// compressed bytes can give, and that every zstd section gives no more
/// than it claims, decoded as `object` decodes it.
pub fn check_compressed_sections(elf: &object::File) -> Result<(), String> {
    for section in elf.sections() {
        let Ok(compressed) = section.compressed_data() else {
            continue;
        };
        let name =
            || String::from_utf8_lossy(section.name_bytes().unwrap_or_default()).into_owned();
        let packed = compressed.data.len() as u64;
        let claimed = compressed.uncompressed_size;
        match compressed.format {
            CompressionFormat::Zlib
                if claimed > packed.saturating_mul(ZLIB_MAX_RATIO).saturating_add(SLACK) =>
            {
                return Err(format!(
                    "its section {} claims {claimed} bytes from {packed} compressed with zlib: \
                     more than zlib gives",
                    name()
                ));
            }
            CompressionFormat::Zstandard
                if zstd_length(compressed.data, claimed.saturating_add(1)) > claimed =>
            {
                return Err(format!(
                    "its section {} decompresses to more than the {claimed} bytes it claims",
                    name()
                ));
            }
            _ => {}
        }
    }
    Ok(())
}

/// How many bytes the zstd frames of `data` decompress to, counted up to
/// `limit`, frame after frame as `object` reads them (skippable frames
/// skipped, checksums not checked); as far as they go when they are
/// damaged, where `object` gives up too.
fn zstd_length(mut data: &[u8], limit: u64) -> u64 {
    let mut counted = Counter(0);
    while !data.is_empty() && counted.0 < limit {
        let decoder = match StreamingDecoder::new(&mut data) {
            Ok(decoder) => decoder,
            Err(FrameDecoderError::ReadFrameHeaderError(ReadFrameHeaderError::SkipFrame {
                length,
                ..
            })) => match data.get(length as usize..) {
                Some(rest) => {
                    data = rest;
                    continue;
                }
                None => break,
            },
            Err(_) => break,
        };
        if io::copy(&mut decoder.take(limit - counted.0), &mut counted).is_err() {
            break;
        }
    }
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

    /// A relocatable x86-64 ELF object with one section, `.debug_info`,
    /// compressed: `format` 1 (zlib) or 2 (zstd), claiming `claimed`
    /// bytes, holding `data`.
    fn object_with(format: u32, claimed: u64, data: &[u8]) -> Vec<u8> {
        let mut section = Vec::new();
        section.extend(format.to_le_bytes());
        section.extend(0u32.to_le_bytes());
        section.extend(claimed.to_le_bytes());
        section.extend(1u64.to_le_bytes());
        section.extend(data);
        let names = b"\0.debug_info\0.shstrtab\0";
        let (section_at, names_at) = (64, 64 + section.len());
        let headers_at = (names_at + names.len()).next_multiple_of(8);
        let mut elf = vec![0x7f, b'E', b'L', b'F', 2, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0];
        elf.extend(1u16.to_le_bytes()); // relocatable
        elf.extend(62u16.to_le_bytes()); // x86-64
        elf.extend(1u32.to_le_bytes());
        elf.extend([0u64.to_le_bytes(), 0u64.to_le_bytes()].concat());
        elf.extend((headers_at as u64).to_le_bytes());
        elf.extend(0u32.to_le_bytes());
        for half in [64u16, 0, 0, 64, 3, 2] {
            elf.extend(half.to_le_bytes());
        }
        elf.extend(&section);
        elf.extend(names);
        elf.resize(headers_at, 0);
        let header = |name: u32, kind: u32, flags: u64, at: usize, size: usize| {
            let mut header = Vec::new();
            header.extend(name.to_le_bytes());
            header.extend(kind.to_le_bytes());
            header.extend(flags.to_le_bytes());
            header.extend(0u64.to_le_bytes());
            header.extend((at as u64).to_le_bytes());
            header.extend((size as u64).to_le_bytes());
            header.extend([0u8; 8]);
            header.extend(1u64.to_le_bytes());
            header.extend(0u64.to_le_bytes());
            header
        };
        elf.extend([0u8; 64]);
        elf.extend(header(1, 1, 0x800, section_at, section.len()));
        elf.extend(header(12, 3, 0, names_at, names.len()));
        elf
    }

    fn check(format: u32, claimed: u64, data: &[u8]) -> Result<(), String> {
        let bytes = object_with(format, claimed, data);
        check_compressed_sections(&object::File::parse(&*bytes).unwrap())
    }

    fn zlib(data: &[u8]) -> Vec<u8> {
        use std::io::Write;
        let mut encoder = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::best());
        encoder.write_all(data).unwrap();
        encoder.finish().unwrap()
    }

    #[test]
    fn a_zlib_section_may_claim_what_zlib_can_give() {
        let zeros = vec![0u8; 4 << 20];
        let packed = zlib(&zeros);
        assert_eq!(check(1, zeros.len() as u64, &packed), Ok(()));
        let err = check(1, 1 << 40, &packed).unwrap_err();
        assert!(
            err.starts_with("its section .debug_info claims 1099511627776 bytes"),
            "{err}"
        );
    }

    /// A zstd section is measured, not bounded by a ratio: 4 MiB of zeros
    /// take a few hundred bytes, as `objcopy` writes them. One that gives
    /// more than it claims is refused, however its frames hide it: a
    /// first frame whose checksum is wrong (which libzstd would stop at,
    /// but `object`'s decoder reads past), a skippable frame.
    #[test]
    fn a_zstd_section_gives_no_more_than_it_claims() {
        let zeros = vec![0u8; 4 << 20];
        let packed = zstd::encode_all(&zeros[..], 19).unwrap();
        assert!(packed.len() < 1024, "{}", packed.len());
        assert_eq!(check(2, zeros.len() as u64, &packed), Ok(()));
        assert!(check(2, zeros.len() as u64 - 1, &packed).is_err());

        let mut first = {
            let mut encoder = zstd::Encoder::new(Vec::new(), 3).unwrap();
            encoder.include_checksum(true).unwrap();
            io::Write::write_all(&mut encoder, &[1u8; 16]).unwrap();
            encoder.finish().unwrap()
        };
        let end = first.len();
        first[end - 1] ^= 0xff;
        let skippable = [0x50, 0x2a, 0x4d, 0x18, 3, 0, 0, 0, 9, 9, 9];
        let hidden = [&first[..], &skippable, &packed].concat();
        let err = check(2, 16, &hidden).unwrap_err();
        assert_eq!(
            err,
            "its section .debug_info decompresses to more than the 16 bytes it claims"
        );
        assert_eq!(zstd_length(&hidden, u64::MAX), 16 + zeros.len() as u64);
        assert_eq!(zstd_length(&hidden, 1000), 1000);
        assert_eq!(zstd_length(b"not zstd", 100), 0);
    }
}
