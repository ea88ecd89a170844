//! The C ABI from C: compiles `tests/c/test.c` with the system's C compiler (`$CC`, else `cc`)
//! against `include/linebloom.h` and the built library, once linked to `liblinebloom.so` and
//! once to `liblinebloom.a`, and runs it. Under AddressSanitizer (with its leak check) and
//! UndefinedBehaviorSanitizer when the compiler can build and run a program with them; the
//! test says so on stderr when it falls back to a plain build.
//!
//! Cargo builds no `cdylib` or `staticlib` for a crate's integration tests, so the test asks
//! cargo for them (`cargo build -p linebloom-capi --lib`, the test's own profile and target
//! folder, so only this crate compiles) and takes their paths from cargo's JSON messages.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;

const SANITIZERS: &[&str] = &[
    "-fsanitize=address,undefined",
    "-fno-sanitize-recover=all",
    "-fno-omit-frame-pointer",
];

struct Libraries {
    shared: PathBuf,
    staticlib: PathBuf,
}

fn crate_dir() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// The profile this test was built with, from its folder (`target/<profile dir>/deps/`).
fn profile_args() -> Vec<String> {
    let exe = std::env::current_exe().expect("the test's own path");
    let dir = exe
        .parent()
        .and_then(Path::parent)
        .and_then(Path::file_name)
        .and_then(|d| d.to_str())
        .unwrap_or("debug");
    match dir {
        // `cargo test` builds with the `test` profile, whose folder is `debug`.
        "debug" => vec!["--profile".into(), "test".into()],
        "release" => vec!["--release".into()],
        custom => vec!["--profile".into(), custom.into()],
    }
}

fn libraries() -> &'static Libraries {
    static BUILT: OnceLock<Libraries> = OnceLock::new();
    BUILT.get_or_init(|| {
        let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
        let output = Command::new(cargo)
            .args(["build", "-p", "linebloom-capi", "--lib", "--offline"])
            .args(["--message-format", "json-render-diagnostics"])
            .args(profile_args())
            .current_dir(crate_dir())
            .output()
            .expect("running cargo");
        assert!(
            output.status.success(),
            "cargo build -p linebloom-capi failed:\n{}",
            String::from_utf8_lossy(&output.stderr)
        );
        let mut shared = None;
        let mut staticlib = None;
        for line in String::from_utf8_lossy(&output.stdout).lines() {
            let Ok(message) = serde_json::from_str::<serde_json::Value>(line) else {
                continue;
            };
            if message["reason"] != "compiler-artifact" || message["target"]["name"] != "linebloom"
            {
                continue;
            }
            let files = message["filenames"].as_array().into_iter().flatten();
            for file in files.filter_map(|f| f.as_str()).map(PathBuf::from) {
                match file.extension().and_then(|e| e.to_str()) {
                    Some("so" | "dylib") => shared = Some(file),
                    Some("a") => staticlib = Some(file),
                    _ => {}
                }
            }
        }
        Libraries {
            shared: shared.expect("cargo reported no liblinebloom.so"),
            staticlib: staticlib.expect("cargo reported no liblinebloom.a"),
        }
    })
}

fn compiler() -> String {
    std::env::var("CC").unwrap_or_else(|_| "cc".into())
}

fn out_dir() -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("c_abi");
    std::fs::create_dir_all(&dir).expect("creating the test's build folder");
    dir
}

fn run(command: &mut Command) -> Output {
    command
        .output()
        .unwrap_or_else(|e| panic!("running {command:?}: {e} (is a C compiler installed?)"))
}

/// Whether the compiler builds and runs a program under the sanitizers (it needs libasan and
/// libubsan, which come with gcc, and a system that lets the leak check trace the process).
fn sanitizers_work() -> bool {
    static WORK: OnceLock<bool> = OnceLock::new();
    *WORK.get_or_init(|| {
        let dir = out_dir();
        let source = dir.join("probe.c");
        let exe = dir.join("probe");
        std::fs::write(
            &source,
            "#include <stdlib.h>\nint main(void) { free(malloc(1)); }\n",
        )
        .expect("writing probe.c");
        let built = run(Command::new(compiler())
            .args(SANITIZERS)
            .arg(&source)
            .arg("-o")
            .arg(&exe))
        .status
        .success();
        let works = built && run(&mut Command::new(&exe)).status.success();
        if !works {
            eprintln!("c_abi: the compiler cannot build with {SANITIZERS:?}; testing without them");
        }
        works
    })
}

/// Compiles `tests/c/test.c` with `link` (the library and what it needs) and runs it.
fn compile_and_run(name: &str, link: &[&std::ffi::OsStr]) {
    let dir = out_dir();
    let exe = dir.join(name);
    let mut cc = Command::new(compiler());
    cc.args(["-std=c11", "-Wall", "-Wextra", "-Werror", "-g", "-O1"])
        .arg("-I")
        .arg(crate_dir().join("include"))
        .arg(crate_dir().join("tests/c/test.c"))
        .arg("-o")
        .arg(&exe)
        .args(link)
        .args(["-lpthread", "-ldl", "-lm"]);
    if sanitizers_work() {
        cc.args(SANITIZERS);
    }
    let built = run(&mut cc);
    assert!(
        built.status.success(),
        "compiling test.c ({name}) failed:\n{}",
        String::from_utf8_lossy(&built.stderr)
    );
    let ran = run(Command::new(&exe)
        // The out-of-memory checks ask for more than any machine has: the sanitizer's
        // allocator must answer null (as malloc does) instead of stopping the process.
        .env(
            "ASAN_OPTIONS",
            "detect_leaks=1:allocator_may_return_null=1:abort_on_error=0",
        )
        .env("UBSAN_OPTIONS", "print_stacktrace=1:halt_on_error=1"));
    let stdout = String::from_utf8_lossy(&ran.stdout);
    let stderr = String::from_utf8_lossy(&ran.stderr);
    assert!(
        ran.status.success(),
        "test.c ({name}) failed ({}):\n{stdout}\n{stderr}",
        ran.status
    );
    eprintln!("c_abi {name}: {}", stdout.trim());
}

#[test]
fn the_c_program_passes_against_the_shared_library() {
    let lib = &libraries().shared;
    let dir = lib.parent().expect("the library's folder");
    let rpath = format!("-Wl,-rpath,{}", dir.display());
    compile_and_run("test_shared", &[lib.as_os_str(), rpath.as_ref()]);
}

#[test]
fn the_c_program_passes_against_the_static_library() {
    let lib = &libraries().staticlib;
    // What Rust's standard library needs from the system beside pthread, dl and m.
    compile_and_run(
        "test_static",
        &[
            lib.as_os_str(),
            "-lgcc_s".as_ref(),
            "-lutil".as_ref(),
            "-lrt".as_ref(),
        ],
    );
}

#[test]
fn the_header_compiles_as_c_and_cpp() {
    let dir = out_dir();
    let source = dir.join("header_only.c");
    std::fs::write(
        &source,
        "#include \"linebloom.h\"\nint main(void) { return 0; }\n",
    )
    .expect("writing header_only.c");
    let include = crate_dir().join("include");
    for (compiler, std) in [(compiler(), "-std=c99"), ("c++".to_string(), "-std=c++11")] {
        let mut command = Command::new(&compiler);
        command
            .args([
                std,
                "-Wall",
                "-Wextra",
                "-Werror",
                "-pedantic",
                "-fsyntax-only",
            ])
            .arg("-I")
            .arg(&include);
        if compiler == "c++" {
            command.args(["-x", "c++"]);
        }
        let checked = run(command.arg(&source));
        assert!(
            checked.status.success(),
            "{compiler} {std} rejects linebloom.h:\n{}",
            String::from_utf8_lossy(&checked.stderr)
        );
    }
}
