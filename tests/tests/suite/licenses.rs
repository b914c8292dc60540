//! Every package carries both license texts its manifest names (`MIT OR Apache-2.0`):
//! the root's `LICENSE-MIT` and `LICENSE-APACHE`, linked into each crate directory so
//! that `cargo package` puts them in the `.crate`.

use std::path::Path;

#[test]
fn every_crate_ships_both_license_texts() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
    let mit = std::fs::read_to_string(root.join("LICENSE-MIT")).unwrap();
    let apache = std::fs::read_to_string(root.join("LICENSE-APACHE")).unwrap();
    assert!(mit.contains("Permission is hereby granted, free of charge"));
    assert!(apache.contains("Apache License") && apache.contains("Version 2.0"));
    let mut crates = 0;
    for entry in std::fs::read_dir(root.join("crates")).unwrap() {
        let dir = entry.unwrap().path();
        let manifest = std::fs::read_to_string(dir.join("Cargo.toml")).unwrap();
        assert!(
            manifest.contains("license.workspace = true"),
            "{}",
            dir.display()
        );
        for (name, text) in [("LICENSE-MIT", &mit), ("LICENSE-APACHE", &apache)] {
            let copy = std::fs::read_to_string(dir.join(name))
                .unwrap_or_else(|e| panic!("{}/{name}: {e}", dir.display()));
            assert_eq!(
                &copy,
                text,
                "{}/{name} differs from the root's",
                dir.display()
            );
        }
        crates += 1;
    }
    assert!(crates >= 6, "found {crates} crates");
}
