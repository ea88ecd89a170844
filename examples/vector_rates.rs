//! How many of each instruction the blocked filter's lookups use this core runs per cycle: the
//! 512-bit ones beside their 256-bit forms, and pairs that show which share an execution port.
//!
//! ```sh
//! cargo run --release --example vector_rates
//! ```
//!
//! Needs x86-64 with AVX-512 (this repository builds with `-C target-cpu=native`). Each line
//! runs one instruction (or an alternating pair) with no dependency between the copies, 20 M
//! times in a loop of eight, and prints the best of five runs in cycles per instruction. The
//! clock is measured first with a chain of dependent adds (one per cycle on every x86-64 core),
//! so the figures do not assume a frequency. On a core that splits 512-bit work over two cycles
//! a 512-bit shift, multiply, test or load takes a whole cycle where its 256-bit form
//! takes half, and moving a value from a general register into a vector register is one per
//! cycle: the costs behind the in-cache bound in `docs/performance.md`.

#[cfg(all(target_arch = "x86_64", target_feature = "avx512f"))]
mod rates {
    use std::arch::asm;
    use std::time::Instant;

    const PASSES: u64 = 2_500_000;

    /// 64-byte aligned memory for the loads to read.
    #[repr(C, align(64))]
    struct Block([u64; 8]);

    /// Runs `$body` (eight instructions) `PASSES` times; the best of five runs in seconds.
    macro_rules! timed {
        ($body:expr) => {{
            let block = Block([1; 8]);
            let mut best = f64::MAX;
            for _ in 0..5 {
                let started = Instant::now();
                // SAFETY: the loop reads only `block` (64 bytes, aligned to 64 as every
                // 512-bit load here needs) and writes only the registers it declares.
                unsafe {
                    asm!(
                        "vpxord zmm0, zmm0, zmm0",
                        "vpternlogd zmm1, zmm1, zmm1, 0xff",
                        "mov eax, 5",
                        "mov ecx, 7",
                        "# {p}",
                        ".p2align 6",
                        "2:",
                        $body,
                        "dec {n}",
                        "jnz 2b",
                        n = inout(reg) PASSES => _,
                        p = in(reg) block.0.as_ptr(),
                        out("rax") _, out("rcx") _, out("r8") _,
                        out("zmm0") _, out("zmm1") _, out("zmm2") _, out("zmm3") _,
                        out("zmm4") _, out("zmm5") _, out("k1") _, out("k2") _, out("k3") _,
                        out("k4") _,
                        options(nostack, readonly),
                    );
                }
                best = best.min(started.elapsed().as_secs_f64());
            }
            best
        }};
    }

    /// Eight copies of an instruction or of a pair `a`, `b` (none may read its destination, or
    /// the copies would form a chain).
    macro_rules! eight {
        ($a:literal) => {
            concat!(
                $a, "\n", $a, "\n", $a, "\n", $a, "\n", $a, "\n", $a, "\n", $a, "\n", $a, "\n"
            )
        };
        ($a:literal, $b:literal) => {
            concat!(
                $a, "\n", $b, "\n", $a, "\n", $b, "\n", $a, "\n", $b, "\n", $a, "\n", $b, "\n"
            )
        };
    }

    pub fn run() {
        // Eight dependent adds per pass: eight cycles.
        let cycle = timed!(eight!("add r8, 1")) / (8 * PASSES) as f64;
        println!("clock: {:.2} GHz", 1e-9 / cycle);
        println!("{:<44} {:>8}", "instruction (copies independent)", "cycles");
        let rows: [(&str, f64); 20] = [
            (
                "vpbroadcastd zmm, r32",
                timed!(eight!("vpbroadcastd zmm2, eax")),
            ),
            ("vmovq xmm, r64", timed!(eight!("vmovq xmm2, rax"))),
            (
                "vpbroadcastd zmm, m32",
                timed!(eight!("vpbroadcastd zmm2, [{p}]")),
            ),
            (
                "vmovdqa64 zmm, m512",
                timed!(eight!("vmovdqa64 zmm2, [{p}]")),
            ),
            ("vmovdqa ymm, m256", timed!(eight!("vmovdqa ymm2, [{p}]"))),
            ("vpmulld zmm", timed!(eight!("vpmulld zmm2, zmm0, zmm1"))),
            ("vpmulld ymm", timed!(eight!("vpmulld ymm2, ymm0, ymm1"))),
            ("vpsrlq zmm, imm", timed!(eight!("vpsrlq zmm2, zmm0, 58"))),
            ("vpsrld ymm, imm", timed!(eight!("vpsrld ymm2, ymm0, 27"))),
            ("vpsllvq zmm", timed!(eight!("vpsllvq zmm2, zmm0, zmm1"))),
            ("vpsllvd ymm", timed!(eight!("vpsllvd ymm2, ymm0, ymm1"))),
            ("vpandnd zmm", timed!(eight!("vpandnd zmm2, zmm0, zmm1"))),
            (
                "vptestmd k, zmm, zmm",
                timed!(eight!("vptestmd k1, zmm0, zmm1")),
            ),
            ("vptest ymm, ymm", timed!(eight!("vptest ymm0, ymm1"))),
            ("kortestw", timed!(eight!("kortestw k1, k2"))),
            (
                "vpsrlq zmm + vpsllvq zmm",
                timed!(eight!("vpsrlq zmm2, zmm0, 58", "vpsllvq zmm3, zmm0, zmm1")),
            ),
            (
                "vpmulld zmm + vpsllvq zmm",
                timed!(eight!(
                    "vpmulld zmm2, zmm0, zmm1",
                    "vpsllvq zmm3, zmm0, zmm1"
                )),
            ),
            (
                "vpmulld zmm + vptestmd",
                timed!(eight!(
                    "vpmulld zmm2, zmm0, zmm1",
                    "vptestmd k1, zmm0, zmm1"
                )),
            ),
            (
                "vpsrlq zmm + vptestmd",
                timed!(eight!("vpsrlq zmm2, zmm0, 58", "vptestmd k1, zmm0, zmm1")),
            ),
            (
                "vpbroadcastd zmm, r32 + vpsrlq zmm",
                timed!(eight!("vpbroadcastd zmm2, eax", "vpsrlq zmm3, zmm0, 58")),
            ),
        ];
        for (name, seconds) in rows {
            println!("{name:<44} {:>8.2}", seconds / cycle / (8 * PASSES) as f64);
        }
    }
}

#[cfg(all(target_arch = "x86_64", target_feature = "avx512f"))]
fn main() {
    rates::run();
}

#[cfg(not(all(target_arch = "x86_64", target_feature = "avx512f")))]
fn main() {
    println!(
        "vector_rates needs an x86-64 build with AVX-512 (-C target-cpu=native on such a CPU)"
    );
}
