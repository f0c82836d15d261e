//! `user/rootfs/boot/config-<release>`: the Linux configuration that
//! describes Stet's UNIX personality (programs find it by `uname -r`). Its
//! name must follow `uname`'s release, and every line must be one a
//! kconfig reader parses: a comment, a blank line, or `CONFIG_X=value`.

use stet_unix::sys::UNAME;

#[test]
fn the_config_is_named_by_the_release_and_parses() {
    let path = format!(
        "{}/../../user/rootfs/boot/config-{}",
        env!("CARGO_MANIFEST_DIR"),
        UNAME[2]
    );
    let text = std::fs::read_to_string(&path).expect("the config file for uname's release");
    let mut set = std::collections::BTreeSet::new();
    for line in text.lines() {
        if line.is_empty() || line == "#" || line.starts_with("# ") {
            continue;
        }
        let (name, value) = line.split_once('=').expect("CONFIG_X=value");
        assert!(name.starts_with("CONFIG_"), "{line}");
        assert!(
            name[7..]
                .bytes()
                .all(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || b == b'_'),
            "{line}"
        );
        assert!(!value.is_empty(), "{line}");
        assert!(set.insert(name.to_string()), "{name} twice");
    }
    // What a caller finds there says what Stet is: one CPU, no modules,
    // AF_UNIX but no IP.
    assert!(set.contains("CONFIG_UNIX") && !set.contains("CONFIG_INET"));
    assert!(!set.contains("CONFIG_SMP") && !set.contains("CONFIG_MODULES"));
    assert!(text.contains("# CONFIG_INET is not set"));
}
