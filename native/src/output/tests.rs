use super::file::{random_tmp_name, Tmp};
use super::*;
use std::ffi::CString;
use std::io::Write;
use std::os::unix::ffi::OsStrExt;

fn names(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

#[test]
fn writes_and_publishes_without_leftovers() {
    let d = tempfile::tempdir().unwrap();
    let p = d.path().join("x.bin");
    let mut o = OutputFile::create(&p, false).unwrap();
    o.file().write_all(b"hello").unwrap();
    assert_eq!(names(d.path()), Vec::<String>::new());
    o.commit().unwrap();
    assert_eq!(std::fs::read(&p).unwrap(), b"hello");
    assert_eq!(names(d.path()), vec!["x.bin"]);
}

#[test]
fn named_fallback_leaves_nothing_on_abort_or_drop() {
    let d = tempfile::tempdir().unwrap();
    let p = d.path().join("x.bin");
    let dest = resolve(&p, false).unwrap();
    let name = random_tmp_name(&dest.name);
    assert!(name.to_string_lossy().starts_with(".x.bin."));
    let mut o = OutputFile::create(&p, false).unwrap();
    o.cleanup();
    o.tmp = Tmp::Named(name.clone());
    std::fs::write(d.path().join(&name), b"x").unwrap();
    drop(o);
    assert_eq!(names(d.path()), Vec::<String>::new());
}

#[test]
fn refuses_existing_without_overwrite_and_replaces_with_it() {
    let d = tempfile::tempdir().unwrap();
    let p = d.path().join("x.bin");
    std::fs::write(&p, b"old").unwrap();
    let e = OutputFile::create(&p, false).err().unwrap();
    assert!(matches!(e, Error::Refused(_)), "{e}");
    assert!(e.to_string().contains("already exists"));
    let mut o = OutputFile::create(&p, true).unwrap();
    o.file().write_all(b"new").unwrap();
    o.commit().unwrap();
    assert_eq!(std::fs::read(&p).unwrap(), b"new");
    assert_eq!(names(d.path()), vec!["x.bin"]);
}

#[test]
fn refuses_fifo_directory_and_symlink_to_fifo() {
    let d = tempfile::tempdir().unwrap();
    let fifo = d.path().join("fifo");
    let c = CString::new(fifo.as_os_str().as_bytes()).unwrap();
    // SAFETY: c is a NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    let link = d.path().join("link.arrow");
    std::os::unix::fs::symlink(&fifo, &link).unwrap();
    for (p, what) in [
        (&fifo, "FIFO"),
        (&link, "FIFO"),
        (&d.path().to_path_buf(), "directory"),
    ] {
        let e = OutputFile::create(p, true).err().unwrap();
        assert!(matches!(e, Error::Refused(_)), "{e}");
        assert!(e.to_string().contains(what), "{e}");
    }
    let e = OutputFile::create(Path::new("/dev/null"), true)
        .err()
        .unwrap();
    assert!(e.to_string().contains("character device"), "{e}");
}

#[test]
fn second_writer_is_refused_while_the_first_holds_the_output() {
    let d = tempfile::tempdir().unwrap();
    let p = d.path().join("x.arrow");
    let (_f, _) = open_stream(&p, false).unwrap();
    let e = open_stream(&p, true).err().unwrap();
    assert!(e.to_string().contains("another flashback process"), "{e}");
    let e = OutputFile::create(&p, true).err().unwrap();
    assert!(e.to_string().contains("another flashback process"), "{e}");
}

#[test]
fn racing_creator_is_kept() {
    let d = tempfile::tempdir().unwrap();
    let p = d.path().join("x.bin");
    let mut o = OutputFile::create(&p, false).unwrap();
    o.file().write_all(b"mine").unwrap();
    std::fs::write(&p, b"theirs").unwrap();
    let e = o.commit().err().unwrap();
    assert!(e.to_string().contains("kept that file"), "{e}");
    assert_eq!(std::fs::read(&p).unwrap(), b"theirs");
    assert_eq!(names(d.path()), vec!["x.bin"]);
}
