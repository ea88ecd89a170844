//! A filter block in a data file, the way an SST (sorted string table) carries one: the data,
//! then a serialized blocked filter, then a footer that says where the filter is. The reader
//! loads only the filter block, into a 64-byte-aligned buffer, and answers point lookups through
//! the zero-copy view, touching the data only when the filter says the key may be there.
//!
//! ```sh
//! cargo run --release --example filter_block
//! ```
//!
//! File layout (little-endian):
//!
//! | part | bytes |
//! |---|---|
//! | data: `key\tvalue\n` records, zero-padded to a multiple of 64 | `filter_offset` |
//! | filter block: `BlockedBloom::to_bytes()` | `filter_len` |
//! | footer: `filter_offset: u64`, `filter_len: u64`, magic `b"LBSSTv01"` | 24 |
//!
//! The padding puts the filter block on a 64-byte boundary of the file, so a reader that
//! memory-maps the file (pages are 4096-byte aligned) can view the block in place too.

use std::fs::File;
use std::io::{BufWriter, Read, Seek, SeekFrom, Write};
use std::path::Path;

use linebloom::blocked::AlignedBytes;
use linebloom::format::read_header;
use linebloom::{BlockedBloom, BlockedBloomRef};

const FOOTER_MAGIC: &[u8; 8] = b"LBSSTv01";
const FOOTER_LEN: u64 = 24;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let path =
        std::env::temp_dir().join(format!("linebloom-filter-block-{}.sst", std::process::id()));
    let records: Vec<(String, String)> = (0..100_000)
        .map(|i| (format!("user:{i:08}"), format!("value-{i}")))
        .collect();
    write_table(&path, &records)?;
    let result = read_and_query(&path, records.len());
    std::fs::remove_file(&path)?;
    result
}

/// Writes the data, the filter block over the keys, and the footer.
fn write_table(
    path: &Path,
    records: &[(String, String)],
) -> Result<(), Box<dyn std::error::Error>> {
    let mut filter = BlockedBloom::with_fpr(records.len(), 0.01)?;
    let mut out = BufWriter::new(File::create(path)?);
    let mut offset = 0u64;
    for (key, value) in records {
        filter.insert(key.as_str());
        let record = format!("{key}\t{value}\n");
        out.write_all(record.as_bytes())?;
        offset += record.len() as u64;
    }
    let padding = offset.next_multiple_of(64) - offset;
    out.write_all(&vec![0u8; padding as usize])?;
    let filter_offset = offset + padding;
    // Streams the header, lines and checksum straight into the file.
    filter.write_to(&mut out)?;
    let filter_len = 64 + filter.size_bytes() as u64 + 8;
    out.write_all(&filter_offset.to_le_bytes())?;
    out.write_all(&filter_len.to_le_bytes())?;
    out.write_all(FOOTER_MAGIC)?;
    out.flush()?;
    println!(
        "wrote {} records, a {filter_len}-byte filter block at offset {filter_offset}",
        records.len()
    );
    Ok(())
}

/// Opens the table as a reader would: footer, then filter block into an aligned buffer, then
/// point lookups that skip the data whenever the filter says no.
fn read_and_query(path: &Path, records: usize) -> Result<(), Box<dyn std::error::Error>> {
    let mut file = File::open(path)?;
    let mut footer = [0u8; FOOTER_LEN as usize];
    file.seek(SeekFrom::End(-(FOOTER_LEN as i64)))?;
    file.read_exact(&mut footer)?;
    if &footer[16..24] != FOOTER_MAGIC {
        return Err("not a table: bad footer magic".into());
    }
    let filter_offset = u64::from_le_bytes(footer[0..8].try_into()?);
    let filter_len = usize::try_from(u64::from_le_bytes(footer[8..16].try_into()?))?;

    // The block goes into a buffer that starts on a 64-byte boundary, so the view can use the
    // lines where they are. (A `Vec<u8>` would be 8- or 16-byte aligned: the view refuses it,
    // and `BlockedBloom::from_bytes` would copy instead.)
    let mut block = AlignedBytes::zeroed(filter_len)?;
    file.seek(SeekFrom::Start(filter_offset))?;
    file.read_exact(&mut block)?;
    // The first 64 bytes alone say what the block holds and how long it must be.
    let header = read_header(&block)?;
    assert_eq!(header.encoded_len(), filter_len);
    let filter = BlockedBloomRef::from_bytes(&block)?;
    println!(
        "filter: {} lines, {} probes per key, {:.2} % of bits set, ~{:.0} keys, FPR now {:.3} %",
        filter.num_lines(),
        filter.k(),
        filter.fill_ratio() * 100.0,
        filter.estimated_items(),
        filter.current_fpr() * 100.0
    );

    // Point lookups: half present, half absent.
    let lookups = 20_000;
    let mut data_reads = 0;
    let mut found = 0;
    for i in 0..lookups {
        let key = if i % 2 == 0 {
            format!("user:{:08}", (i * 7919) % records)
        } else {
            format!("user:{:08}", records + i)
        };
        if filter.contains(key.as_str()) {
            // A real table would now binary-search the data; here it would find even keys.
            data_reads += 1;
            found += usize::from(i % 2 == 0);
        }
    }
    println!(
        "{lookups} lookups: {found} present keys found, {} data reads saved by the filter \
         ({} absent keys passed it)",
        lookups - data_reads,
        data_reads - found
    );
    assert_eq!(found, lookups / 2, "a present key was missed");
    Ok(())
}
