//! The README's Rust examples are whole programs: rustdoc compiles them (see `ReadmeExamples`
//! in `src/lib.rs`), but it would also hide `# ` lines and wrap code without a `fn main` in one,
//! and a reader who pastes the block gets neither.

#[test]
fn readme_rust_blocks_compile_as_pasted() {
    let readme = include_str!("../../README.md");
    let mut blocks = Vec::new();
    let mut current: Option<Vec<&str>> = None;
    for line in readme.lines() {
        match (&mut current, line) {
            (None, "```rust") => current = Some(Vec::new()),
            (Some(_), "```") => blocks.push(current.take().unwrap()),
            (Some(block), _) => block.push(line),
            (None, _) => {}
        }
    }
    assert!(!blocks.is_empty(), "the README has a quick start");
    for block in &blocks {
        assert!(
            block.iter().any(|l| l.starts_with("fn main()")),
            "a Rust block without fn main: {block:#?}"
        );
        for line in block {
            assert!(
                !(line.starts_with("# ") || *line == "#"),
                "a line rustdoc hides but a reader pastes: {line:?}"
            );
        }
    }
}
