//! Keeps `include/linebloom.h` honest: cbindgen regenerates it from the sources with
//! `cbindgen.toml`, and the test fails when the committed header differs. Run it with
//! `LINEBLOOM_BLESS=1` to write the new header instead.

use std::path::Path;

#[test]
fn the_committed_header_is_what_the_sources_generate() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    let config = cbindgen::Config::from_file(dir.join("cbindgen.toml"))
        .expect("capi/cbindgen.toml must parse");
    let bindings = cbindgen::Builder::new()
        .with_crate(dir)
        .with_config(config)
        .generate()
        .expect("cbindgen must read the crate");
    let mut generated = Vec::new();
    bindings.write(&mut generated);
    let generated = String::from_utf8(generated).expect("the header is UTF-8");

    let path = dir.join("include/linebloom.h");
    if std::env::var_os("LINEBLOOM_BLESS").is_some() {
        std::fs::write(&path, &generated).expect("writing include/linebloom.h");
        return;
    }
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    if committed != generated {
        let first = committed
            .lines()
            .zip(generated.lines())
            .position(|(a, b)| a != b)
            .unwrap_or(committed.lines().count().min(generated.lines().count()));
        panic!(
            "include/linebloom.h differs from what the sources generate (first at line {}); \
             regenerate it with `LINEBLOOM_BLESS=1 cargo test -p linebloom-capi --test header` \
             and commit it",
            first + 1
        );
    }
}
