//! What one in-cache lookup and insert cost, part by part: the engine's salted-placement loops
//! written out in inline assembly, beside variants that each drop or change one part, and
//! split-block (Parquet / sbbf-rs style, 256-bit blocks) loops for comparison. The filters are
//! built with `Placement::Salted`, the placement these loops copy.
//!
//! ```sh
//! cargo run --release --features internals --example lookup_kernels
//! ```
//!
//! Needs x86-64 with AVX-512 (this repository builds with `-C target-cpu=native`). Each loop
//! counts how many of 1 Mi never-inserted hashes a filter of 10 bits per key answers "maybe" to,
//! one key at a time; the best of ten passes (and, for the loops in assembly, of four places
//! where the loop may start against a 64-byte boundary) is printed in ns per key. The first
//! row is the crate's own `contains_hash` loop; the copy of it (`ours`) must count the same
//! keys, which checks that the copy is the engine's kernel (same salts, same rotation table,
//! k = 6); the second the same with a k = 8 filter of the same size, which skips the enable
//! pattern (`lookup_mask_for`); the next two the batched lookup (`count_contained_hashes`) of
//! both. The variants:
//! - `no rotation`: one bit in each of the 8 words, no enable pattern (k = 8 fixed; its FPR at
//!   10 bits/key is 1.05 %, above the 1.00 % the blocked filter keeps);
//! - `broadcast from memory`: the multiply takes the hash straight from memory
//!   (`vpmulld zmm, zmm, [hash]{1to16}`) instead of moving it from a general register
//!   (`vpbroadcastd zmm, r32`, one per cycle on current AMD and Intel cores: `vector_rates`);
//! - `carry + adc`: the test leaves its answer in the carry flag (`vptestnmd` + `kortestw`) and
//!   the count takes it with one `adc`, as sbbf-rs's `vptest` lets LLVM do; LLVM turns the
//!   crate's test into `kortest` + `sete` + `add` whatever the source asks for;
//! - `no rotation, adc`: every word used, so each lane holds one probe bit: one `vptestmq` of
//!   the bits against the line in memory, and `kortestb` sets the carry when all eight are
//!   present (the hash still broadcast from a register, as in the split-block loop);
//! - `no rotation, both`: the same with the multiply reading the hash from memory;
//! - `split block`: 256-bit blocks, one bit in each 32-bit word (k = 8, FPR 1.26 %);
//! - `both, 4 per pass` and `split block, 4 per pass`: those two loops with four keys per pass
//!   (one loop overhead per four keys, as LLVM unrolls the crate's loops) and the count taken
//!   as LLVM takes sbbf-rs's (`setc` of one key into a register, one `adc` for it and the
//!   next), which is sbbf-rs's own loop instruction for instruction and runs as fast;
//! - `pdep positions`: the bit positions without a vector multiply: one scalar multiply of the
//!   hash's low half, `pdep` of it into the six (rotated) bytes a key uses with 64 in the two it
//!   leaves out, then `vmovq`, `vpmovzxbq` and one variable shift, whose 64 clears those words
//!   (a different bit layout, so its count differs: timing only);
//! - `rotation as a k-mask`: no enable pattern; `kortestb` of the words whose bit is set with a
//!   mask of the words the key leaves out (`kmovb` from a table);
//! - `ours, branch on answer` and `split block, branch`: the count taken by a branch on the
//!   answer (about 1 % of the keys take it), as a caller that acts on each answer has it,
//!   instead of a flag-to-register count.
//!
//! Then the same keys inserted: one at a time with `crate insert_hash` and in one batch with
//! `crate insert_hashes` (which in cache runs the loop of `src/blocked/batch_asm/`), both on
//! a copy of the filter, and with the loops in assembly on a copy of its lines: `ours` (the
//! mask with its enable pattern,
//! written as two 256-bit read-modify-writes, as `Line::set` does), without the rotation,
//! as one 512-bit read-modify-write, with the hash read from memory, and split block's one
//! 256-bit read-modify-write; then four keys per pass, ours with both the hash from memory and
//! one 512-bit read-modify-write, and split block's.
//!
//! The `no rotation` and `split block` loops read the same filter's lines as if they had been
//! filled their way, so their counts are not false-positive rates: they are there for the time.
//! The loops in assembly handle one key per iteration (three instructions of loop overhead per
//! key), the crate's is unrolled by LLVM, so compare the variants with `ours`.

#[cfg(all(target_arch = "x86_64", target_feature = "avx512f"))]
mod kernels {
    use linebloom::BlockedBloom;
    use linebloom::blocked::Placement;
    use linebloom::internals::SALTS;
    use std::arch::asm;
    use std::time::Instant;

    #[repr(C, align(64))]
    struct Vector([u32; 16]);

    #[repr(C, align(64))]
    #[derive(Clone, Copy)]
    struct Enable([u64; 8]);

    /// One loop over `hashes` with `body` as the per-key kernel; the registers it may use are
    /// fixed: `{i}` points at the hash, `{lines}`, `{n}` (line or block count), `{en}` (enable
    /// table, see `run`), `{acc}` the count, zmm0 the salts, zmm1 ones; scratch rcx, rdx,
    /// r8-r10, zmm2-zmm4, k1, k2.
    /// A lookup kernel only reads memory (`readonly`); an insert kernel (`writes`) also writes
    /// the lines it inserts into.
    macro_rules! kernel {
        ($name:ident, $body:expr) => {
            kernel!($name, "vmovdqa64 zmm0, [{salts}]", "vpbroadcastq zmm1, {one}", $body, [readonly]);
        };
        ($name:ident, writes, $body:expr) => {
            kernel!($name, "vmovdqa64 zmm0, [{salts}]", "vpbroadcastq zmm1, {one}", $body, []);
        };
        ($name:ident, $salt_load:literal, $ones:literal, $body:expr) => {
            kernel!($name, $salt_load, $ones, $body, [readonly]);
        };
        ($name:ident, $salt_load:literal, $ones:literal, $body:expr, writes) => {
            kernel!($name, $salt_load, $ones, $body, []);
        };
        ($name:ident, $salt_load:literal, $ones:literal, $body:expr, [$($option:ident)?]) => {
            /// `pad`: 0 to 3, the loop's start 0, 16, 32 or 48 bytes past a 64-byte boundary.
            fn $name(
                pad: usize,
                hashes: &[u64],
                lines: *mut u8,
                n: u64,
                en: *const u8,
                salts: &Vector,
            ) -> u64 {
                let mut acc = 0u64;
                // The unrolled loops take four hashes per pass and stop when the pointer meets
                // the end exactly, so every loop gets a multiple of four.
                assert!(hashes.len() % 4 == 0, "a multiple of 4 hashes");
                if hashes.is_empty() {
                    return 0;
                }
                macro_rules! run {
                    ($skip:literal) => {
                        // SAFETY: the loop reads `hashes` from its first to its last element
                        // (not empty, and a multiple of the four an unrolled pass takes,
                        // checked above), the salts vector, and for each hash one line or
                        // block inside `lines` (its index is `(hash * n) >> 64 < n`, or the
                        // same on the high 32 bits, and `lines` holds `n` of them) and, with
                        // `r = (hash >> 32) & 7`, one place in the table `en` of 11 rows of 64
                        // bytes (`run` builds it): row `r`, byte `512 + r` or the 16 bytes at
                        // `576 + 16 r`. A lookup writes only the registers it
                        // declares; an insert also writes that line or block, which the
                        // caller owns (`lines` comes from a `&mut` for inserts).
                        unsafe {
                            asm!(
                                $salt_load,
                                "mov {one:e}, 1",
                                $ones,
                                ".p2align 6",
                                concat!(".skip ", $skip, ", 0x90"),
                                "2:",
                                $body,
                                "add {i}, 8",
                                "cmp {i}, {end}",
                                "jne 2b",
                                "# {en} {n} {lines} {acc}",
                                i = inout(reg) hashes.as_ptr() => _,
                                end = in(reg) hashes.as_ptr().add(hashes.len()),
                                lines = in(reg) lines,
                                n = in(reg) n,
                                en = in(reg) en,
                                salts = in(reg) salts.0.as_ptr(),
                                acc = inout(reg) acc,
                                one = out(reg) _,
                                out("rdx") _, out("r8") _, out("r9") _, out("r10") _,
                                out("zmm0") _, out("zmm1") _, out("zmm2") _, out("zmm3") _,
                                out("zmm4") _, out("k1") _, out("rcx") _, out("k2") _,
                                options(nostack $(, $option)?),
                            )
                        }
                    };
                }
                match pad {
                    0 => run!(0),
                    1 => run!(16),
                    2 => run!(32),
                    _ => run!(48),
                }
                acc
            }
        };
    }

    // The pieces the kernels are made of, each a few instructions of one key's lookup.
    /// Load the hash; the line index is the high half of `hash * n`.
    macro_rules! locate {
        () => {
            "mov rdx, [{i}]\nmulx r8, r9, {n}\n"
        };
    }
    /// The 16 products `x * salt`, the hash moved from a general register.
    macro_rules! products_from_register {
        () => {
            "vpbroadcastd zmm2, edx\nvpmulld zmm2, zmm2, zmm0\n"
        };
    }
    /// The same, the multiply reading the hash from memory.
    macro_rules! products_from_memory {
        () => {
            "vpmulld zmm2, zmm0, dword ptr [{i}]{{1to16}}\n"
        };
    }
    /// `locate` and `products_from_memory` for the hash `$at` bytes past `{i}` (the loops that
    /// take four keys per pass).
    macro_rules! locate_and_products_at {
        ($at:literal) => {
            concat!(
                "mov rdx, [{i} + ",
                $at,
                "]\nmulx r8, r9, {n}\nvpmulld zmm2, zmm0, dword ptr [{i} + ",
                $at,
                "]{{1to16}}\n",
            )
        };
    }
    /// The rotation's offset into the enable table, `(hash >> 29) & 0x38`.
    macro_rules! rotation {
        () => {
            "shr rdx, 29\nand edx, 0x38\n"
        };
    }
    /// The key's line, and one bit per 64-bit word from the top 6 bits of each product.
    macro_rules! line_and_bits {
        () => {
            "shl r8, 6\nvmovdqa64 zmm3, [{lines} + r8]\nvpsrlq zmm2, zmm2, 58\nvpsllvq zmm2, zmm1, zmm2\n"
        };
    }
    /// zmm3 = the words of the line the key uses, inverted: `!line & enable`.
    macro_rules! missing_enabled {
        () => {
            "vpandnd zmm3, zmm3, [{en} + rdx*8]\n"
        };
    }
    /// zmm3 = `!line` (every word used).
    macro_rules! missing_all {
        () => {
            "vpternlogd zmm3, zmm3, zmm3, 0x55\n"
        };
    }
    /// Count the key when no bit of zmm2 is in zmm3: LLVM's form (`sete`, `add`).
    macro_rules! count_with_sete {
        () => {
            "xor r10d, r10d\nvptestmd k1, zmm3, zmm2\nkortestw k1, k1\nsete r10b\nadd {acc}, r10\n"
        };
    }
    /// The same with the answer in the carry flag and one `adc`.
    macro_rules! count_with_adc {
        () => {
            "vptestnmd k1, zmm3, zmm2\nkortestw k1, k1\nadc {acc}, 0\n"
        };
    }
    /// Branch on the answer, as a caller that acts on it does (about 1 % of the keys take it).
    macro_rules! count_with_branch {
        () => {
            "vptestmd k1, zmm3, zmm2\nkortestw k1, k1\njnz 3f\ninc {acc}\n3:\n"
        };
    }

    kernel!(
        ours,
        concat!(
            locate!(),
            products_from_register!(),
            rotation!(),
            line_and_bits!(),
            missing_enabled!(),
            count_with_sete!()
        )
    );
    kernel!(
        no_rotation,
        concat!(
            locate!(),
            products_from_register!(),
            line_and_bits!(),
            missing_all!(),
            count_with_sete!()
        )
    );
    kernel!(
        broadcast_from_memory,
        concat!(
            locate!(),
            products_from_memory!(),
            rotation!(),
            line_and_bits!(),
            missing_enabled!(),
            count_with_sete!()
        )
    );
    kernel!(
        carry_adc,
        concat!(
            locate!(),
            products_from_register!(),
            rotation!(),
            line_and_bits!(),
            missing_enabled!(),
            count_with_adc!()
        )
    );
    kernel!(
        broadcast_from_memory_and_adc,
        concat!(
            locate!(),
            products_from_memory!(),
            rotation!(),
            line_and_bits!(),
            missing_enabled!(),
            count_with_adc!()
        )
    );
    /// One bit per word and every word used: "is each word's bit set" is one `vptestmq` of the
    /// bits against the line in memory, all eight set is `kortestb`'s carry.
    macro_rules! count_every_word_with_adc {
        () => {
            "shl r8, 6\nvpsrlq zmm2, zmm2, 58\nvpsllvq zmm2, zmm1, zmm2\n\
             vptestmq k1, zmm2, [{lines} + r8]\nkortestb k1, k1\nadc {acc}, 0\n"
        };
    }
    kernel!(
        no_rotation_adc,
        concat!(
            locate!(),
            products_from_register!(),
            count_every_word_with_adc!()
        )
    );
    kernel!(
        no_rotation_broadcast_from_memory_and_adc,
        concat!(
            locate!(),
            products_from_memory!(),
            count_every_word_with_adc!()
        )
    );
    // Split block's test of one key (its hash in rdx): the block, the bits, `vptest`.
    macro_rules! split_block_rest {
        () => {
            concat!(
                "vpbroadcastd ymm2, edx\nshr rdx, 32\nimul rdx, {n}\n",
                "vpmulld ymm2, ymm2, ymm0\nshr rdx, 32\nvpsrld ymm2, ymm2, 27\nshl rdx, 5\n",
                "vpsllvd ymm2, ymm1, ymm2\nvmovdqa ymm3, [{lines} + rdx]\nvptest ymm3, ymm2\n",
            )
        };
    }
    // Parquet's split block: 32-byte blocks, the block from the hash's high 32 bits, one bit
    // in each 32-bit word from the top 5 bits of `x * salt`, `vptest` into the carry.
    kernel!(
        split_block,
        "vmovdqa ymm0, [{salts}]",
        "vpbroadcastd ymm1, {one:e}",
        concat!("mov rdx, [{i}]\n", split_block_rest!(), "adc {acc}, 0\n")
    );

    /// The rotation as a mask of the words a key leaves out (a byte from the table's row 8,
    /// `kmovb` from memory) and `kortestb` of it with the words whose bit is set: no enable
    /// pattern, no AND.
    macro_rules! count_rotated_kmask {
        () => {
            "rorx rcx, rdx, 32\nand ecx, 7\nkmovb k2, byte ptr [{en} + rcx + 512]\n\
             shl r8, 6\nvpsrlq zmm2, zmm2, 58\nvpsllvq zmm2, zmm1, zmm2\n\
             vptestmq k1, zmm2, [{lines} + r8]\nkortestb k1, k2\nadc {acc}, 0\n"
        };
    }
    kernel!(
        kmask,
        concat!(locate!(), products_from_memory!(), count_rotated_kmask!())
    );
    /// Bit positions without a vector multiply: one scalar multiply of the hash's low half,
    /// `pdep` of it into the six (rotated) bytes the key uses, 64 in the two it leaves out (a
    /// shift by 64 gives 0), then `vmovq`, `vpmovzxbq` and one variable shift; the table's
    /// rows 9 and 10 hold each rotation's `pdep` mask and its bytes of 64.
    macro_rules! pdep_bits {
        () => {
            "mov r9d, edx\nimul r9, r9, 0x5bd1e995\nrorx r10, rdx, 28\nand r10d, 0x70\n\
             pdep r9, r9, [{en} + r10 + 576]\nor r9, [{en} + r10 + 584]\n\
             vmovq xmm2, r9\nvpmovzxbq zmm2, xmm2\nvpsllvq zmm2, zmm1, zmm2\nshl r8, 6\n"
        };
    }
    kernel!(
        pdep,
        concat!(
            locate!(),
            pdep_bits!(),
            "vpandq zmm3, zmm2, [{lines} + r8]\nvpcmpeqq k1, zmm3, zmm2\n",
            "kortestb k1, k1\nadc {acc}, 0\n"
        )
    );
    // Four keys per pass (the hash `$at` bytes past `{i}`; the last adds 24 to `{i}`, the
    // loop the other 8), as LLVM unrolls the crate's loops, and counted as LLVM counts
    // sbbf-rs's answers: the first key of each pair `setc` into a register, the second's `adc`
    // adding both, so that every other key's count waits on no earlier one.
    macro_rules! first_of_pair {
        () => {
            "mov ecx, 0\nsetc cl\n"
        };
    }
    macro_rules! second_of_pair {
        () => {
            "adc {acc}, rcx\n"
        };
    }
    macro_rules! both_at {
        ($at:literal, $count:expr) => {
            concat!(
                locate_and_products_at!($at),
                rotation!(),
                line_and_bits!(),
                "vpandnd zmm3, zmm3, [{en} + rdx*8]\nvptestnmd k1, zmm3, zmm2\nkortestw k1, k1\n",
                $count
            )
        };
    }
    kernel!(
        both_x4,
        concat!(
            both_at!(0, first_of_pair!()),
            both_at!(8, second_of_pair!()),
            both_at!(16, first_of_pair!()),
            both_at!(24, second_of_pair!()),
            "add {i}, 24\n"
        )
    );
    macro_rules! split_block_at {
        ($at:literal, $count:expr) => {
            concat!("mov rdx, [{i} + ", $at, "]\n", split_block_rest!(), $count)
        };
    }
    kernel!(
        split_block_x4,
        "vmovdqa ymm0, [{salts}]",
        "vpbroadcastd ymm1, {one:e}",
        concat!(
            split_block_at!(0, first_of_pair!()),
            split_block_at!(8, second_of_pair!()),
            split_block_at!(16, first_of_pair!()),
            split_block_at!(24, second_of_pair!()),
            "add {i}, 24\n"
        )
    );

    kernel!(
        ours_branch,
        concat!(
            locate!(),
            products_from_register!(),
            rotation!(),
            line_and_bits!(),
            missing_enabled!(),
            count_with_branch!()
        )
    );
    kernel!(
        split_block_branch,
        "vmovdqa ymm0, [{salts}]",
        "vpbroadcastd ymm1, {one:e}",
        concat!(
            "mov rdx, [{i}]\n",
            split_block_rest!(),
            "jnc 3f\ninc {acc}\n3:\n"
        )
    );

    /// The key's bits with the enable pattern applied (zmm2), for inserts.
    macro_rules! enabled_bits {
        () => {
            "vpsrlq zmm2, zmm2, 58\nvpsllvq zmm2, zmm1, zmm2\nvpandq zmm2, zmm2, [{en} + rdx*8]\nshl r8, 6\n"
        };
    }
    /// `line |= zmm2` as two 256-bit read-modify-writes (the crate's `Line::set`).
    macro_rules! set_halves {
        () => {
            "vextracti64x4 ymm3, zmm2, 1\nvpor ymm2, ymm2, [{lines} + r8]\nvmovdqa [{lines} + r8], ymm2\n\
             vpor ymm3, ymm3, [{lines} + r8 + 32]\nvmovdqa [{lines} + r8 + 32], ymm3\n"
        };
    }

    kernel!(
        insert_ours,
        writes,
        concat!(
            locate!(),
            products_from_register!(),
            rotation!(),
            enabled_bits!(),
            set_halves!()
        )
    );
    kernel!(
        insert_no_rotation,
        writes,
        concat!(
            locate!(),
            products_from_register!(),
            "vpsrlq zmm2, zmm2, 58\nvpsllvq zmm2, zmm1, zmm2\nshl r8, 6\n",
            set_halves!()
        )
    );
    kernel!(
        insert_one_rmw,
        writes,
        concat!(
            locate!(),
            products_from_register!(),
            rotation!(),
            enabled_bits!(),
            "vpord zmm2, zmm2, [{lines} + r8]\nvmovdqa64 [{lines} + r8], zmm2\n"
        )
    );
    kernel!(
        insert_broadcast_from_memory,
        writes,
        concat!(
            locate!(),
            products_from_memory!(),
            rotation!(),
            enabled_bits!(),
            set_halves!()
        )
    );
    // Inserts four keys per pass: ours with the hash read from memory and one 512-bit
    // read-modify-write (on cores that split 512-bit work in two, the fastest of the variants
    // above), and split block's.
    macro_rules! insert_both_at {
        ($at:literal) => {
            concat!(
                locate_and_products_at!($at),
                rotation!(),
                enabled_bits!(),
                "vpord zmm2, zmm2, [{lines} + r8]\nvmovdqa64 [{lines} + r8], zmm2\n"
            )
        };
    }
    kernel!(
        insert_both_x4,
        writes,
        concat!(
            insert_both_at!(0),
            insert_both_at!(8),
            insert_both_at!(16),
            insert_both_at!(24),
            "add {i}, 24\n"
        )
    );
    macro_rules! insert_split_at {
        ($at:literal) => {
            concat!(
                "mov rdx, [{i} + ", $at, "]\nvpbroadcastd ymm2, edx\nshr rdx, 32\nimul rdx, {n}\n",
                "vpmulld ymm2, ymm2, ymm0\nshr rdx, 32\nvpsrld ymm2, ymm2, 27\nshl rdx, 5\n",
                "vpsllvd ymm2, ymm1, ymm2\nvpor ymm2, ymm2, [{lines} + rdx]\nvmovdqa [{lines} + rdx], ymm2\n"
            )
        };
    }
    kernel!(
        insert_split_block_x4,
        "vmovdqa ymm0, [{salts}]",
        "vpbroadcastd ymm1, {one:e}",
        concat!(
            insert_split_at!(0),
            insert_split_at!(8),
            insert_split_at!(16),
            insert_split_at!(24),
            "add {i}, 24\n"
        ),
        writes
    );
    kernel!(
        insert_split_block,
        "vmovdqa ymm0, [{salts}]",
        "vpbroadcastd ymm1, {one:e}",
        concat!(
            "mov rdx, [{i}]\nvpbroadcastd ymm2, edx\nshr rdx, 32\nimul rdx, {n}\n",
            "vpmulld ymm2, ymm2, ymm0\nshr rdx, 32\nvpsrld ymm2, ymm2, 27\nshl rdx, 5\n",
            "vpsllvd ymm2, ymm1, ymm2\nvpor ymm2, ymm2, [{lines} + rdx]\nvmovdqa [{lines} + rdx], ymm2\n"
        ),
        writes
    );

    /// One loop: its placement (see `kernel!`), the hashes, the lines, their count (lines or
    /// blocks), the enable table and the salts; a lookup returns how many hashes it answered
    /// "maybe" to.
    type Kernel = fn(usize, &[u64], *mut u8, u64, *const u8, &Vector) -> u64;

    /// Best of ten passes of `kernel` at each of its four placements: where a loop starts
    /// against the core's 64-byte fetch blocks moved single loops by up to 1.6x from build to
    /// build, so each is timed at its best.
    fn best_placed(hashes: &[u64], kernel: impl Fn(usize) -> u64) -> (f64, u64) {
        (0..4)
            .map(|pad| best(hashes, || kernel(pad)))
            .fold((f64::MAX, 0), |a, b| if b.0 < a.0 { b } else { a })
    }

    /// Best of ten passes, in ns per key, and the last pass's count.
    fn best(hashes: &[u64], mut pass: impl FnMut() -> u64) -> (f64, u64) {
        let mut fastest = f64::MAX;
        let mut count = 0;
        for _ in 0..10 {
            let start = Instant::now();
            count = std::hint::black_box(pass());
            fastest = fastest.min(start.elapsed().as_secs_f64() * 1e9 / hashes.len() as f64);
        }
        (fastest, count)
    }

    pub fn run() {
        let salts = Vector(std::array::from_fn(|i| {
            if i % 2 == 1 {
                SALTS[i / 2]
            } else {
                SALTS[i / 2 + 8]
            }
        }));
        let split_salts = Vector(std::array::from_fn(|i| SALTS[i % 8]));
        // The engine's enable table for k = 6: rotation r uses the words w with
        // (w - r) mod 8 < 6.
        let mut enable: Vec<Enable> = (0..8)
            .map(|r| {
                Enable(std::array::from_fn(|w| {
                    if (w + 8 - r) % 8 < 6 { u64::MAX } else { 0 }
                }))
            })
            .collect();
        // Row 8: for each rotation r (byte r), the words a key leaves out (`kmask`): those
        // of rotation 0, words 6 and 7, rotated by r.
        let left_out: [u8; 8] = std::array::from_fn(|r| 0xc0u8.rotate_left(r as u32));
        enable.push(Enable([u64::from_le_bytes(left_out), 0, 0, 0, 0, 0, 0, 0]));
        // Rows 9 and 10: for each rotation r, the `pdep` mask of the six bytes a key uses (6
        // bits each) and the 64 in the two it leaves out, both rotated by r bytes (`pdep`).
        let deposit: Vec<u64> = (0..8u32)
            .flat_map(|r| {
                [
                    0x0000_3f3f_3f3f_3f3fu64.rotate_left(8 * r),
                    0x4040_0000_0000_0000u64.rotate_left(8 * r),
                ]
            })
            .collect();
        enable.extend(
            deposit
                .chunks(8)
                .map(|row| Enable(row.try_into().expect("8 words"))),
        );
        let probes: Vec<u64> = (0..1u64 << 20)
            .map(|i| linebloom::hash::mix64(i | 1 << 40))
            .collect();
        println!("ns per key, one at a time (best of 10 passes of 1 Mi never-inserted keys)");
        println!(
            "{:>10} {:>24} {:>8} {:>9}",
            "filter", "loop", "ns/key", "answered"
        );
        for items in [10_000usize, 250_000, 1_000_000] {
            // The salted placement: the hand-written loops below place bits as it does.
            let mut filter = BlockedBloom::builder(items as u64)
                .bits_per_key(10.0)
                .k(6)
                .seed(0)
                .placement(Placement::Salted)
                .build()
                .expect("a valid filter size");
            let keys: Vec<u64> = (0..items as u64).map(linebloom::hash::mix64).collect();
            filter.insert_hashes(&keys);
            let lines = filter.lines().as_ptr().cast::<u8>();
            let n = filter.num_lines() as u64;
            let size = format!("{} KiB", filter.size_bytes() >> 10);
            let (ns, count) = best(&probes, || {
                probes.iter().filter(|&&h| filter.contains_hash(h)).count() as u64
            });
            println!(
                "{size:>10} {:>24} {ns:>8.3} {count:>9}",
                "crate contains_hash"
            );
            // The same filter size with k = 8, whose lookups skip the enable pattern.
            let mut eight = BlockedBloom::builder(items as u64)
                .bits_per_key(10.0)
                .k(8)
                .seed(0)
                .placement(Placement::Salted)
                .build()
                .expect("a valid filter size");
            eight.insert_hashes(&keys);
            let (ns, count) = best(&probes, || {
                probes.iter().filter(|&&h| eight.contains_hash(h)).count() as u64
            });
            println!("{size:>10} {:>24} {ns:>8.3} {count:>9}", "crate, k = 8");
            // The batched lookup of both (in AVX-512 builds, `src/blocked/batch_asm/`).
            for (name, f) in [("crate batched", &filter), ("crate batched, k = 8", &eight)] {
                let (ns, count) = best(&probes, || f.count_contained_hashes(&probes) as u64);
                println!("{size:>10} {name:>24} {ns:>8.3} {count:>9}");
            }
            let en = enable.as_ptr().cast::<u8>();
            // Name, loop, its salts, and how many blocks a 64-byte line holds.
            let rows: [(&str, Kernel, &Vector, u64); 14] = [
                ("both, 4 per pass", both_x4, &salts, 1),
                ("split block, 4 per pass", split_block_x4, &split_salts, 2),
                ("pdep positions", pdep, &salts, 1),
                ("rotation as a k-mask", kmask, &salts, 1),
                ("ours (asm copy)", ours, &salts, 1),
                ("no rotation (k = 8)", no_rotation, &salts, 1),
                ("broadcast from memory", broadcast_from_memory, &salts, 1),
                ("carry + adc", carry_adc, &salts, 1),
                (
                    "both of the above",
                    broadcast_from_memory_and_adc,
                    &salts,
                    1,
                ),
                ("no rotation, adc", no_rotation_adc, &salts, 1),
                (
                    "no rotation, both",
                    no_rotation_broadcast_from_memory_and_adc,
                    &salts,
                    1,
                ),
                ("split block (256-bit)", split_block, &split_salts, 2),
                ("ours, branch on answer", ours_branch, &salts, 1),
                ("split block, branch", split_block_branch, &split_salts, 2),
            ];
            for (name, kernel, salts, blocks) in rows {
                let (ns, count) = best_placed(&probes, |pad| {
                    kernel(pad, &probes, lines.cast_mut(), blocks * n, en, salts)
                });
                println!("{size:>10} {name:>24} {ns:>8.3} {count:>9}");
            }
            // Inserts of the same keys, one at a time, into a copy of the filter's lines.
            let mut copy = filter.clone();
            let (ns, _) = best(&probes, || {
                probes.iter().for_each(|&h| copy.insert_hash(h));
                0
            });
            println!("{size:>10} {:>24} {ns:>8.3}", "crate insert_hash");
            // The same keys in one batch (in AVX-512 builds, `src/blocked/batch_asm/`).
            let mut copy = filter.clone();
            let (ns, _) = best(&probes, || {
                copy.insert_hashes(&probes);
                0
            });
            println!("{size:>10} {:>24} {ns:>8.3}", "crate insert_hashes");
            let mut lines = filter.lines().to_vec();
            let lines = lines.as_mut_ptr().cast::<u8>();
            let rows: [(&str, Kernel, &Vector, u64); 7] = [
                ("insert: 4 per pass", insert_both_x4, &salts, 1),
                (
                    "split insert, 4 per pass",
                    insert_split_block_x4,
                    &split_salts,
                    2,
                ),
                ("insert: ours (asm copy)", insert_ours, &salts, 1),
                ("insert: no rotation", insert_no_rotation, &salts, 1),
                ("insert: one 512-bit RMW", insert_one_rmw, &salts, 1),
                (
                    "insert: hash from memory",
                    insert_broadcast_from_memory,
                    &salts,
                    1,
                ),
                ("insert: split block", insert_split_block, &split_salts, 2),
            ];
            for (name, kernel, salts, blocks) in rows {
                let (ns, _) = best_placed(&probes, |pad| {
                    kernel(pad, &probes, lines, blocks * n, en, salts)
                });
                println!("{size:>10} {name:>24} {ns:>8.3}");
            }
        }
    }
}

#[cfg(all(target_arch = "x86_64", target_feature = "avx512f"))]
fn main() {
    kernels::run();
}

#[cfg(not(all(target_arch = "x86_64", target_feature = "avx512f")))]
fn main() {
    println!(
        "lookup_kernels needs an x86-64 build with AVX-512 (-C target-cpu=native on such a CPU)"
    );
}
