//! Byte sizes as people write them (`64MiB`, `1GB`, `1048576`) and as reports print them.
//!
//! This module owns the one parser the `report --sizes` and `tune --memory` flags share and the
//! formatter every table uses. Binary units (KiB, MiB, GiB, TiB, and the bare K, M, G, T that
//! `ls -h` and `dd` use) are powers of 1024; SI units (KB, MB, GB, TB) are powers of 1000.

use linebloom::error::{Error, Result};

const UNITS: [(&str, f64); 14] = [
    ("kib", 1024.0),
    ("mib", 1024.0 * 1024.0),
    ("gib", 1024.0 * 1024.0 * 1024.0),
    ("tib", 1024.0 * 1024.0 * 1024.0 * 1024.0),
    ("kb", 1e3),
    ("mb", 1e6),
    ("gb", 1e9),
    ("tb", 1e12),
    ("k", 1024.0),
    ("m", 1024.0 * 1024.0),
    ("g", 1024.0 * 1024.0 * 1024.0),
    ("t", 1024.0 * 1024.0 * 1024.0 * 1024.0),
    ("b", 1.0),
    ("", 1.0),
];

/// The allowed-range text of every byte-size error.
const ALLOWED: &str = "a positive size such as 1048576, 64KiB, 16MiB, 1.5GiB or 1GB \
                       (KiB/MiB/GiB/TiB and K/M/G/T are powers of 1024, KB/MB/GB/TB of 1000)";

/// Parses a byte size: a positive number (fractions allowed with a unit) followed by an
/// optional unit, case-insensitive, with optional spaces between. `name` is the parameter the
/// error message names.
///
/// ```
/// use linebloom_cli::report::byte_size::parse_byte_size;
///
/// assert_eq!(parse_byte_size("memory", "64MiB")?, 64 << 20);
/// assert_eq!(parse_byte_size("memory", "1GB")?, 1_000_000_000);
/// assert_eq!(parse_byte_size("memory", "1048576")?, 1 << 20);
/// assert!(parse_byte_size("memory", "lots").is_err());
/// # Ok::<(), linebloom::Error>(())
/// ```
pub fn parse_byte_size(name: &'static str, text: &str) -> Result<usize> {
    let bad = || Error::InvalidParameter {
        name,
        value: format!("{text:?}"),
        allowed: ALLOWED,
    };
    let t = text.trim().to_ascii_lowercase();
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.' || c == '_'))
        .unwrap_or(t.len());
    let (number, unit) = t.split_at(split);
    let number = number.replace('_', "");
    let unit = unit.trim();
    let scale = UNITS
        .iter()
        .find(|(u, _)| *u == unit)
        .map(|&(_, s)| s)
        .ok_or_else(bad)?;
    let bytes = if scale == 1.0 {
        // Plain byte counts must be whole numbers; parse them exactly.
        number.parse::<u64>().map_err(|_| bad())? as f64
    } else {
        number.parse::<f64>().map_err(|_| bad())? * scale
    };
    if !(bytes >= 1.0 && bytes < isize::MAX as f64) {
        return Err(bad());
    }
    Ok(bytes.round() as usize)
}

/// A short human-readable size in binary units: `16 KiB`, `1 MiB`, `1.5 GiB`, `300 B`.
pub fn format_byte_size(bytes: usize) -> String {
    const NAMES: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut value = bytes as f64;
    let mut unit = 0;
    while value >= 1024.0 && unit + 1 < NAMES.len() {
        value /= 1024.0;
        unit += 1;
    }
    if unit == 0 || (value - value.round()).abs() < 0.005 {
        format!("{} {}", value.round(), NAMES[unit])
    } else {
        format!("{value:.2} {}", NAMES[unit])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_units() {
        let p = |s| parse_byte_size("size", s);
        assert_eq!(p("16KiB").unwrap(), 16 << 10);
        assert_eq!(p("16 kib").unwrap(), 16 << 10);
        assert_eq!(p("16K").unwrap(), 16 << 10);
        assert_eq!(p("1.5GiB").unwrap(), 3 << 29);
        assert_eq!(p("2MB").unwrap(), 2_000_000);
        assert_eq!(p("1_000").unwrap(), 1000);
        assert_eq!(p("512b").unwrap(), 512);
        for bad in [
            "",
            "0",
            "-1",
            "1.5",
            "MiB",
            "1 parsec",
            "1e3",
            "nan",
            "0.1B",
            "99999999TiB",
        ] {
            let e = p(bad).unwrap_err().to_string();
            assert!(e.contains("size must be"), "{bad}: {e}");
        }
    }

    #[test]
    fn formats_sizes() {
        assert_eq!(format_byte_size(300), "300 B");
        assert_eq!(format_byte_size(16 << 10), "16 KiB");
        assert_eq!(format_byte_size(256 << 20), "256 MiB");
        assert_eq!(format_byte_size(3 << 29), "1.50 GiB");
    }
}
