use std::fs;
use std::os::unix::fs::symlink;

use super::*;

fn setup() -> (tempfile::TempDir, tempfile::TempDir, Workspace) {
    let ws_dir = tempfile::tempdir().unwrap();
    let outside = tempfile::tempdir().unwrap();
    fs::create_dir_all(ws_dir.path().join("src")).unwrap();
    fs::write(ws_dir.path().join("src/main.rs"), "fn main() {}").unwrap();
    fs::write(outside.path().join("secret.txt"), "secret").unwrap();
    let ws = Workspace::new(ws_dir.path()).unwrap();
    (ws_dir, outside, ws)
}

#[test]
fn relative_paths_inside_resolve() {
    let (_d, _o, ws) = setup();
    let p = ws.resolve_existing("src/main.rs").unwrap();
    assert_eq!(p, ws.root().join("src/main.rs"));
    assert_eq!(ws.resolve_existing("./src/../src/main.rs").unwrap(), p);
    assert_eq!(ws.resolve_existing(".").unwrap(), ws.root());
}

#[test]
fn absolute_paths_inside_are_allowed() {
    let (_d, _o, ws) = setup();
    let abs = ws.root().join("src/main.rs");
    assert_eq!(
        ws.resolve_existing(abs.to_str().unwrap()).unwrap(),
        abs.clone()
    );
}

#[test]
fn dot_dot_escapes_are_refused() {
    let (_d, _o, ws) = setup();
    let err = ws.resolve_existing("../../../etc/passwd").unwrap_err();
    assert!(matches!(err, PathError::Escapes { .. }), "{err:?}");
    let err = ws.resolve_for_write("src/../../evil.txt").unwrap_err();
    assert!(matches!(err, PathError::Escapes { .. }), "{err:?}");
}

#[test]
fn absolute_paths_outside_are_refused() {
    let (_d, outside, ws) = setup();
    let p = outside.path().join("secret.txt");
    let err = ws.resolve_existing(p.to_str().unwrap()).unwrap_err();
    assert!(matches!(err, PathError::Escapes { .. }), "{err:?}");
    assert!(ws.resolve_for_write("/etc/new-file").is_err());
    assert!(ws.resolve_existing("/etc/passwd").is_err());
}

#[test]
fn symlinks_out_of_the_workspace_are_refused_for_read_write_and_list() {
    let (d, outside, ws) = setup();
    symlink(outside.path(), d.path().join("out_dir")).unwrap();
    symlink(outside.path().join("secret.txt"), d.path().join("out_file")).unwrap();
    for p in ["out_file", "out_dir", "out_dir/secret.txt"] {
        let err = ws.resolve_existing(p).unwrap_err();
        assert!(matches!(err, PathError::Escapes { .. }), "{p}: {err:?}");
    }
    for p in ["out_file", "out_dir/new.txt", "out_dir/a/b/new.txt"] {
        let err = ws.resolve_for_write(p).unwrap_err();
        assert!(matches!(err, PathError::Escapes { .. }), "{p}: {err:?}");
    }
}

#[test]
fn dangling_symlinks_are_refused() {
    let (d, outside, ws) = setup();
    symlink(outside.path().join("nope.txt"), d.path().join("dangling")).unwrap();
    let err = ws.resolve_for_write("dangling").unwrap_err();
    assert!(matches!(err, PathError::Invalid(_)), "{err:?}");
    assert!(ws.resolve_existing("dangling").is_err());
}

#[test]
fn symlinks_inside_the_workspace_are_followed() {
    let (d, _o, ws) = setup();
    symlink(d.path().join("src"), d.path().join("alias")).unwrap();
    let p = ws.resolve_existing("alias/main.rs").unwrap();
    assert_eq!(p, ws.root().join("src/main.rs"));
}

#[test]
fn new_paths_resolve_through_their_deepest_existing_ancestor() {
    let (_d, _o, ws) = setup();
    let p = ws.resolve_for_write("src/new/deeper/file.rs").unwrap();
    assert_eq!(p, ws.root().join("src/new/deeper/file.rs"));
    let err = ws.resolve_for_write("src/new/../../../x").unwrap_err();
    assert!(
        matches!(err, PathError::Escapes { .. } | PathError::Invalid(_)),
        "{err:?}"
    );
    let err = ws.resolve_for_write("newdir/../x").unwrap_err();
    assert!(matches!(err, PathError::Invalid(_)), "{err:?}");
}

#[test]
fn missing_files_are_not_found_but_missing_escapes_are_escapes() {
    let (_d, _o, ws) = setup();
    assert_eq!(
        ws.resolve_existing("src/nope.rs").unwrap_err(),
        PathError::NotFound("src/nope.rs".into())
    );
    let err = ws.resolve_existing("../nope-outside").unwrap_err();
    assert!(matches!(err, PathError::Escapes { .. }), "{err:?}");
}

#[test]
fn empty_and_nul_paths_are_invalid() {
    let (_d, _o, ws) = setup();
    assert!(matches!(
        ws.resolve_existing(""),
        Err(PathError::Invalid(_))
    ));
    assert!(matches!(
        ws.resolve_for_write("a\0b"),
        Err(PathError::Invalid(_))
    ));
}

#[test]
fn display_relative_strips_the_root() {
    let (_d, _o, ws) = setup();
    assert_eq!(
        ws.display_relative(&ws.root().join("src/main.rs")),
        "src/main.rs"
    );
    assert_eq!(ws.display_relative(ws.root()), ".");
}

#[test]
fn new_names_with_control_or_invisible_characters_are_refused() {
    let (_d, _o, ws) = setup();
    for name in [
        "src/a\n+++ b/x.rs",
        "src/\u{1b}[2Jclear.rs",
        "new\rdir/x.rs",
        "src/ma\u{200B}in.rs",
        "src/\u{202E}sr.txt",
    ] {
        let e = ws.resolve_for_write(name).unwrap_err().to_string();
        assert!(e.contains("may not hold U+"), "{name:?}: {e}");
        assert!(!e.contains('\n') && !e.contains('\u{1b}'), "{e:?}");
    }
    // Ordinary names, accents and spaces included, are fine.
    for name in ["src/new file.rs", "src/café/ünï.rs", "docs/日本語.md"] {
        assert!(ws.resolve_for_write(name).is_ok(), "{name}");
    }
}
