//! The module-layering check on small source trees held in memory.

use super::*;

/// A crate's `src/` from (path, text) pairs.
fn tree(files: &[(&str, &str)]) -> Sources {
    Sources {
        files: files
            .iter()
            .map(|(path, text)| (PathBuf::from(path), (*text).to_owned()))
            .collect(),
    }
}

/// The components of more than one file, each sorted.
fn circles(files: &[(&str, &str)]) -> Vec<Vec<String>> {
    let report = analyse(&tree(files)).unwrap_or_else(|e| panic!("analyse: {e}"));
    report
        .components
        .into_iter()
        .filter(|c| c.len() > 1)
        .collect()
}

fn edges(files: &[(&str, &str)]) -> Vec<(String, String)> {
    let report = analyse(&tree(files)).unwrap_or_else(|e| panic!("analyse: {e}"));
    report.edges.into_keys().collect()
}

fn pair(a: &str, b: &str) -> (String, String) {
    (a.to_owned(), b.to_owned())
}

#[test]
fn a_three_file_circle_is_one_component_and_described_as_a_walk() {
    let files = [
        ("lib.rs", "mod a; mod b; mod c;"),
        ("a.rs", "use crate::b::B; pub struct A;"),
        ("b.rs", "pub struct B; fn f(_: crate::c::C) {}"),
        ("c.rs", "pub struct C(super::a::A);"),
    ];
    assert_eq!(circles(&files), vec![vec!["a.rs", "b.rs", "c.rs"]]);
    let report = analyse(&tree(&files)).unwrap();
    assert_eq!(report.over_limit().len(), 1, "three files fail the check");
    let text = report.describe(&report.components[0]);
    assert!(
        text.contains("a.rs → b.rs → c.rs → a.rs"),
        "the walk names every file and closes: {text}"
    );
    assert!(text.contains("c.rs → a.rs: super::a::A"), "{text}");
}

#[test]
fn a_two_file_circle_passes_the_limit() {
    let files = [
        ("lib.rs", "mod a; mod b;"),
        ("a.rs", "use crate::b::B; pub struct A;"),
        ("b.rs", "use crate::a::A; pub struct B;"),
    ];
    assert_eq!(circles(&files), vec![vec!["a.rs", "b.rs"]]);
    assert!(analyse(&tree(&files)).unwrap().over_limit().is_empty());
}

#[test]
fn a_chain_is_no_circle() {
    let files = [
        ("lib.rs", "mod a; mod b; mod c;"),
        ("a.rs", "use crate::b::B;"),
        ("b.rs", "pub struct B(crate::c::C);"),
        ("c.rs", "pub struct C;"),
    ];
    assert!(circles(&files).is_empty());
    assert_eq!(
        edges(&files),
        vec![pair("a.rs", "b.rs"), pair("b.rs", "c.rs")]
    );
}

#[test]
fn a_re_export_leads_to_the_defining_file() {
    // `crate::B` is written in lib.rs but defined in b.rs: the edge goes to b.rs, and
    // lib.rs, which only declares modules and re-exports, joins no circle.
    let files = [
        ("lib.rs", "mod a; mod b; pub use b::B; pub use a::A;"),
        ("a.rs", "use crate::B; pub struct A;"),
        ("b.rs", "pub struct B; fn f(_: crate::A) {}"),
    ];
    assert!(edges(&files).contains(&pair("a.rs", "b.rs")));
    assert!(edges(&files).contains(&pair("b.rs", "a.rs")));
    assert!(!edges(&files).iter().any(|(_, b)| b == "lib.rs"));
    assert_eq!(circles(&files), vec![vec!["a.rs", "b.rs"]]);
}

#[test]
fn mod_rs_and_foo_rs_layouts_both_resolve() {
    let files = [
        ("lib.rs", "mod outer; mod flat;"),
        ("outer/mod.rs", "mod inner; pub use inner::I;"),
        ("outer/inner.rs", "pub struct I(crate::flat::deep::D);"),
        ("flat.rs", "pub mod deep;"),
        ("flat/deep.rs", "pub struct D(crate::outer::I);"),
        ("x/y.rs", "this file is not part of the crate {"),
    ];
    assert_eq!(
        edges(&files),
        vec![
            pair("flat/deep.rs", "outer/inner.rs"),
            pair("outer/inner.rs", "flat/deep.rs"),
            // A re-export depends on what it re-exports.
            pair("outer/mod.rs", "outer/inner.rs"),
        ]
    );
    assert_eq!(analyse(&tree(&files)).unwrap().files, 5);
}

#[test]
fn super_super_climbs_two_levels() {
    let files = [
        ("lib.rs", "mod a; mod top; pub struct Root;"),
        ("a/mod.rs", "mod b;"),
        ("a/b.rs", "fn f() { let _ = super::super::top::T; }"),
        ("top.rs", "pub struct T;"),
    ];
    assert_eq!(edges(&files), vec![pair("a/b.rs", "top.rs")]);
}

#[test]
fn path_attributes_name_the_file_and_count_like_any_module() {
    let files = [
        (
            "lib.rs",
            "#[path = \"platform/unix.rs\"] mod imp; mod x; \
             #[cfg(test)] #[path = \"x_tests.rs\"] mod x_tests;",
        ),
        ("platform/unix.rs", "mod helper; fn f() { super::x::g(); }"),
        // A file named by `#[path]` owns its directory, like mod.rs.
        ("platform/helper.rs", "pub fn h() { crate::x_tests::t(); }"),
        ("x.rs", "pub fn g() { crate::imp::helper::h(); }"),
        ("x_tests.rs", "pub fn t() { crate::x::g(); }"),
    ];
    assert_eq!(
        circles(&files),
        vec![vec!["platform/helper.rs", "x.rs", "x_tests.rs"]],
        "a test-only module counts"
    );
    assert!(edges(&files).contains(&pair("platform/unix.rs", "x.rs")));
}

#[test]
fn a_cfg_attr_path_adds_a_file_per_target() {
    let files = [
        (
            "lib.rs",
            "mod user; #[cfg_attr(windows, path = \"pipe_windows.rs\")] mod pipe;",
        ),
        ("user.rs", "fn f() { crate::pipe::open(); }"),
        ("pipe.rs", "pub fn open() {}"),
        ("pipe_windows.rs", "pub fn open() {}"),
    ];
    assert_eq!(
        edges(&files),
        vec![
            pair("user.rs", "pipe.rs"),
            pair("user.rs", "pipe_windows.rs")
        ]
    );
}

#[test]
fn an_inline_module_belongs_to_its_file_and_owns_a_directory() {
    let files = [
        (
            "lib.rs",
            "mod a; mod outer { pub mod nested; pub fn g() { crate::a::f(); } }",
        ),
        ("outer/nested.rs", "pub fn n() { super::g(); }"),
        ("a.rs", "pub fn f() { crate::outer::nested::n(); }"),
    ];
    assert_eq!(
        circles(&files),
        vec![vec!["a.rs", "lib.rs", "outer/nested.rs"]]
    );
}

#[test]
fn module_aliases_child_paths_and_macros_are_followed() {
    let files = [
        ("lib.rs", "mod sys; mod task; mod user;"),
        ("sys/mod.rs", "pub mod log;"),
        ("sys/log.rs", "pub const FLAG: u8 = 1;"),
        ("task.rs", "pub fn run() {}"),
        (
            "user.rs",
            "use crate::sys; \
             fn f() -> u8 { sys::log::FLAG } \
             fn g() { println!(\"{:?}\", crate::task::run()); }",
        ),
    ];
    // `use crate::sys` alone names a module: the edge is where its items are used.
    assert_eq!(
        edges(&files),
        vec![pair("user.rs", "sys/log.rs"), pair("user.rs", "task.rs")]
    );
}

#[test]
fn a_glob_use_depends_on_the_whole_module() {
    let files = [
        ("lib.rs", "mod a; pub struct R;"),
        ("a.rs", "#[cfg(test)] mod tests { use super::*; }"),
    ];
    // The inline tests module lives in a.rs: no edge to itself.
    assert!(edges(&files).is_empty());
    let files = [
        ("lib.rs", "mod a; pub struct R;"),
        ("a.rs", "use crate::*; fn f(_: R) {}"),
    ];
    assert_eq!(edges(&files), vec![pair("a.rs", "lib.rs")]);
}

#[test]
fn foreign_and_local_names_make_no_edge() {
    let files = [
        ("lib.rs", "mod a; mod b;"),
        (
            "a.rs",
            "use std::io; use b_like::Thing; enum E { V } \
             fn f() -> io::Result<()> { let _ = E::V; Ok(()) }",
        ),
        ("b.rs", "pub struct Thing;"),
    ];
    assert!(edges(&files).is_empty());
}

#[test]
fn a_declared_but_missing_file_is_an_error() {
    let Err(message) = analyse(&tree(&[("lib.rs", "mod gone;")])) else {
        panic!("a missing module file must fail the check");
    };
    assert!(message.contains("gone/mod.rs"), "{message}");
}

proptest::proptest! {
    /// Two files share a component exactly when each reaches the other.
    #[test]
    fn components_are_the_mutually_reachable_files(
        edges in proptest::collection::vec((0usize..8, 0usize..8), 0..24)
    ) {
        let name = |i: usize| format!("f{i}.rs");
        let files: BTreeSet<String> = (0..8).map(name).collect();
        let graph: BTreeMap<(String, String), BTreeSet<String>> = edges
            .iter()
            .map(|&(a, b)| ((name(a), name(b)), BTreeSet::new()))
            .collect();
        // Reachability by a plain search over the edge list: slow and obviously right.
        let reaches = |from: usize, to: usize| -> bool {
            let mut seen = [false; 8];
            let mut stack = vec![from];
            while let Some(at) = stack.pop() {
                if at == to {
                    return true;
                }
                if std::mem::replace(&mut seen[at], true) {
                    continue;
                }
                stack.extend(edges.iter().filter(|e| e.0 == at).map(|e| e.1));
            }
            false
        };
        let components = strongly_connected(&files, &graph);
        let mut seen = BTreeSet::new();
        for component in &components {
            for file in component {
                proptest::prop_assert!(seen.insert(file.clone()), "{file} in two components");
            }
        }
        proptest::prop_assert_eq!(seen.len(), 8);
        let component_of = |i: usize| components.iter().position(|c| c.contains(&name(i)));
        for i in 0..8 {
            for j in 0..8 {
                proptest::prop_assert_eq!(
                    component_of(i) == component_of(j),
                    reaches(i, j) && reaches(j, i)
                );
            }
        }
    }
}

/// A workspace on disk: `crates/<name>/src/<file>` for each entry, and an xtask crate.
fn workspace(crates: &[(&str, &[(&str, &str)])]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("temp dir: {e}"));
    let write = |path: PathBuf, text: &str| {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    };
    for (name, files) in crates {
        for (file, text) in *files {
            write(
                dir.path().join("crates").join(name).join("src").join(file),
                text,
            );
        }
    }
    write(dir.path().join("xtask/src/main.rs"), "fn main() {}");
    dir
}

const CIRCLE: &[(&str, &str)] = &[
    ("lib.rs", "mod a; mod b; mod c;"),
    ("a.rs", "pub struct A(crate::b::B);"),
    ("b.rs", "pub struct B(crate::c::C);"),
    ("c.rs", "pub struct C(Box<crate::a::A>);"),
];
const CHAIN: &[(&str, &str)] = &[
    ("lib.rs", "mod a; pub struct R;"),
    ("a.rs", "use crate::R;"),
];

#[test]
fn the_check_fails_naming_the_crate_with_a_circle() {
    let dir = workspace(&[("tangled", CIRCLE), ("tidy", CHAIN)]);
    let Err(message) = check(dir.path()) else {
        panic!("a three-file circle must fail the check");
    };
    assert!(
        message.contains("tangled") && !message.contains("tidy"),
        "{message}"
    );
    assert!(check(workspace(&[("tidy", CHAIN)]).path()).is_ok());
}
