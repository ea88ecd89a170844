//! The machine a report ran on, as far as Linux and the build tell: CPU model, cores, caches,
//! memory, transparent huge pages, kernel, compiler and the target features the binary was
//! built with. A figure without its machine cannot be compared with anything.
//!
//! Everything here is read, never required: a file that is missing (another OS, a container)
//! becomes "unknown", not an error.

use serde::Serialize;

use super::byte_size::format_byte_size;

/// What the report records about the machine and the build.
#[derive(Clone, Debug, Serialize)]
pub struct Machine {
    /// `model name` from /proc/cpuinfo.
    pub cpu_model: String,
    /// Logical CPUs this process may use.
    pub logical_cpus: usize,
    /// Caches of CPU 0 from /sys/devices/system/cpu/cpu0/cache, e.g. "L1 Data 32K".
    pub caches: Vec<Cache>,
    /// MemTotal from /proc/meminfo, in bytes.
    pub memory_bytes: Option<u64>,
    /// /sys/kernel/mm/transparent_hugepage/enabled, e.g. `always [madvise] never`.
    pub transparent_hugepages: String,
    /// /proc/sys/kernel/osrelease.
    pub kernel: String,
    /// `rustc --version` of the compiler that built this binary.
    pub rustc: String,
    /// Cargo profile and optimisation level of this build.
    pub build_profile: String,
    /// RUSTFLAGS of this build (`-C target-cpu=native` in this repository).
    pub rustflags: String,
    /// SIMD and bit-manipulation target features compiled in (they decide the instructions of
    /// the portable path and of the peer crates that choose at compile time).
    pub target_features: Vec<String>,
    /// The SIMD path linebloom's filters run here (`linebloom::simd_path`): chosen at run
    /// time from the CPU, whatever the build's target features.
    pub simd_path: String,
    /// Whether debug assertions were on (figures from such a build are not worth reading).
    pub debug_assertions: bool,
}

/// One cache level.
#[derive(Clone, Debug, Serialize)]
pub struct Cache {
    /// 1, 2, 3...
    pub level: u32,
    /// Data, Instruction or Unified.
    pub kind: String,
    /// Size in bytes.
    pub bytes: usize,
    /// How many logical CPUs share it.
    pub shared_by: Option<usize>,
}

/// Which build this binary is: `target-cpu` where its RUSTFLAGS name a target CPU (this
/// repository's `-C target-cpu=native`), else `default`, what a crate depending on linebloom
/// gets. The SIMD path is chosen at run time either way; the rest of the code is not.
pub fn build_kind() -> &'static str {
    if env!("LINEBLOOM_RUSTFLAGS").contains("target-cpu") {
        "target-cpu"
    } else {
        "default"
    }
}

impl Machine {
    /// Reads everything there is to read.
    pub fn detect() -> Machine {
        Machine {
            cpu_model: cpu_model().unwrap_or_else(|| "unknown".into()),
            logical_cpus: std::thread::available_parallelism().map_or(1, |n| n.get()),
            caches: caches(),
            memory_bytes: memory_bytes(),
            transparent_hugepages: read_trimmed("/sys/kernel/mm/transparent_hugepage/enabled")
                .unwrap_or_else(|| "unknown".into()),
            kernel: read_trimmed("/proc/sys/kernel/osrelease").unwrap_or_else(|| "unknown".into()),
            rustc: env!("LINEBLOOM_RUSTC_VERSION").to_string(),
            build_profile: env!("LINEBLOOM_BUILD_PROFILE").to_string(),
            rustflags: env!("LINEBLOOM_RUSTFLAGS").to_string(),
            target_features: target_features(),
            simd_path: linebloom::simd_path().name().to_string(),
            debug_assertions: cfg!(debug_assertions),
        }
    }

    /// The largest cache's size (the last-level cache), if known.
    pub fn last_level_cache_bytes(&self) -> Option<usize> {
        self.caches.iter().map(|c| c.bytes).max()
    }

    /// The caches on one line: "L1d 32 KiB, L1i 32 KiB, L2 512 KiB, L3 32 MiB (shared by 2)".
    pub fn caches_line(&self) -> String {
        if self.caches.is_empty() {
            return "unknown".into();
        }
        self.caches
            .iter()
            .map(|c| {
                let suffix = match c.kind.as_str() {
                    "Data" => "d",
                    "Instruction" => "i",
                    _ => "",
                };
                let shared = match c.shared_by {
                    Some(n) if n > 1 => format!(" (shared by {n} CPUs)"),
                    _ => String::new(),
                };
                format!("L{}{suffix} {}{shared}", c.level, format_byte_size(c.bytes))
            })
            .collect::<Vec<_>>()
            .join(", ")
    }
}

fn read_trimmed(path: &str) -> Option<String> {
    std::fs::read_to_string(path)
        .ok()
        .map(|s| s.trim().to_string())
}

fn cpu_model() -> Option<String> {
    let info = std::fs::read_to_string("/proc/cpuinfo").ok()?;
    info.lines()
        .find(|l| l.starts_with("model name"))
        .and_then(|l| l.split_once(':'))
        .map(|(_, v)| v.trim().to_string())
}

fn memory_bytes() -> Option<u64> {
    let info = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = info.lines().find(|l| l.starts_with("MemTotal:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

fn caches() -> Vec<Cache> {
    let mut out = Vec::new();
    for index in 0.. {
        let dir = format!("/sys/devices/system/cpu/cpu0/cache/index{index}");
        let (Some(level), Some(kind), Some(size)) = (
            read_trimmed(&format!("{dir}/level")),
            read_trimmed(&format!("{dir}/type")),
            read_trimmed(&format!("{dir}/size")),
        ) else {
            break;
        };
        let Some(bytes) = parse_cache_size(&size) else {
            continue;
        };
        out.push(Cache {
            level: level.parse().unwrap_or(0),
            kind,
            bytes,
            shared_by: read_trimmed(&format!("{dir}/shared_cpu_list")).map(|l| count_cpu_list(&l)),
        });
    }
    out
}

/// "32K", "32768K", "1M" as sysfs writes cache sizes.
fn parse_cache_size(s: &str) -> Option<usize> {
    let s = s.trim();
    let (number, scale) = match s.chars().last()? {
        'K' => (&s[..s.len() - 1], 1 << 10),
        'M' => (&s[..s.len() - 1], 1 << 20),
        'G' => (&s[..s.len() - 1], 1 << 30),
        _ => (s, 1),
    };
    number.parse::<usize>().ok().map(|n| n * scale)
}

/// Counts the CPUs of a list like "0-3,8,10-11".
fn count_cpu_list(list: &str) -> usize {
    list.split(',')
        .filter(|p| !p.is_empty())
        .map(|part| match part.split_once('-') {
            Some((a, b)) => match (a.parse::<usize>(), b.parse::<usize>()) {
                (Ok(a), Ok(b)) if b >= a => b - a + 1,
                _ => 1,
            },
            None => 1,
        })
        .sum()
}

/// The target features this crate was compiled with, among those that matter to it.
fn target_features() -> Vec<String> {
    let mut on = Vec::new();
    macro_rules! check {
        ($($f:tt),*) => {$(
            if cfg!(target_feature = $f) {
                on.push($f.to_string());
            }
        )*};
    }
    check!(
        "sse2",
        "sse4.1",
        "sse4.2",
        "popcnt",
        "avx",
        "avx2",
        "fma",
        "bmi1",
        "bmi2",
        "lzcnt",
        "avx512f",
        "avx512bw",
        "avx512vl",
        "avx512dq",
        "avx512vpopcntdq",
        "neon",
        "sve"
    );
    on
}

/// Today's date and time in UTC, as "YYYY-MM-DD hh:mm:ss UTC", from the system clock alone.
pub fn utc_now() -> String {
    let (y, m, d, hh, mm, ss) = utc_fields();
    format!("{y:04}-{m:02}-{d:02} {hh:02}:{mm:02}:{ss:02} UTC")
}

/// The same moment as a name for a folder: "YYYYMMDD-hhmmss" (UTC).
pub fn utc_stamp() -> String {
    let (y, m, d, hh, mm, ss) = utc_fields();
    format!("{y:04}{m:02}{d:02}-{hh:02}{mm:02}{ss:02}")
}

/// Year, month, day, hour, minute and second now, in UTC.
fn utc_fields() -> (i64, u32, u32, u64, u64, u64) {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let (days, rest) = ((secs / 86_400) as i64, secs % 86_400);
    let (y, m, d) = civil_from_days(days);
    (y, m, d, rest / 3600, rest / 60 % 60, rest % 60)
}

/// Days since 1970-01-01 to a proleptic Gregorian date: Howard Hinnant's `civil_from_days`
/// ("chrono-Compatible Low-Level Date Algorithms", 2013).
fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let y = yoe + era * 400 + i64::from(m <= 2);
    (y, m, d)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates() {
        assert_eq!(civil_from_days(0), (1970, 1, 1));
        assert_eq!(civil_from_days(19_723), (2024, 1, 1));
        assert_eq!(civil_from_days(19_782), (2024, 2, 29));
        assert_eq!(civil_from_days(-1), (1969, 12, 31));
    }

    #[test]
    fn sysfs_formats() {
        assert_eq!(parse_cache_size("32K"), Some(32 << 10));
        assert_eq!(parse_cache_size("32768K"), Some(32 << 20));
        assert_eq!(parse_cache_size("x"), None);
        assert_eq!(count_cpu_list("0-3,8,10-11"), 7);
        assert_eq!(count_cpu_list("0"), 1);
    }

    #[test]
    fn detect_does_not_fail() {
        let m = Machine::detect();
        assert!(m.logical_cpus >= 1);
        assert!(!m.rustc.is_empty());
    }
}
