use super::mark::{has_mark, identity, set_mark, sidecar_of};
use super::*;

fn opts(size: Option<u64>) -> OpenOptions {
    OpenOptions {
        create_size: size,
        ..Default::default()
    }
}

#[test]
fn creates_marks_and_preallocates() {
    let d = tempfile::tempdir().unwrap();
    let p = d.path().join("t.bin");
    let o = open(p.to_str().unwrap(), &opts(Some(1 << 20))).unwrap();
    assert_eq!(o.kind, Kind::File);
    assert_eq!(o.size, 1 << 20);
    assert!(o.created && o.writable.is_ok());
    drop(o);
    // reopened later: still ours
    let o = open(p.to_str().unwrap(), &opts(None)).unwrap();
    assert!(o.created && o.writable.is_ok());
}

#[test]
fn foreign_file_is_read_only_unless_overwrite() {
    let d = tempfile::tempdir().unwrap();
    let p = d.path().join("foreign.bin");
    fs::write(&p, vec![7u8; 8192]).unwrap();
    let o = open(p.to_str().unwrap(), &opts(Some(1 << 20))).unwrap();
    let msg = o.writable.clone().unwrap_err();
    assert!(
        msg.contains("did not create") && msg.contains("overwrite"),
        "{msg}"
    );
    assert_eq!(o.size, 8192, "a foreign file is never grown");
    drop(o); // (a run still holding it would refuse the next one)
    let o = open(
        p.to_str().unwrap(),
        &OpenOptions {
            overwrite: true,
            ..Default::default()
        },
    )
    .unwrap();
    assert!(o.writable.is_ok() && !o.created);
}

#[test]
fn missing_file_without_size_and_directories_are_target_errors() {
    let d = tempfile::tempdir().unwrap();
    let e = open(d.path().join("nope").to_str().unwrap(), &opts(None))
        .err()
        .unwrap();
    assert!(matches!(e, Error::Target(_)), "{e}");
    let e = open(d.path().to_str().unwrap(), &opts(None)).err().unwrap();
    assert!(e.to_string().contains("directory"), "{e}");
}

/// Issue 23 item 4: the mark was checked on one open and the writes went through another
/// open of the path; a link swapped in between overwrote a foreign file. The swap is made
/// deterministically at each point between resolving and writing: the foreign file is
/// never opened for writing.
#[test]
fn a_link_swapped_in_while_opening_never_reaches_a_foreign_file() {
    use std::io::Write;
    for stage in ["resolved", "checked"] {
        let d = tempfile::tempdir().unwrap();
        let ours = d.path().join("t.bin");
        let foreign = d.path().join("foreign.bin");
        fs::write(&foreign, b"foreign data").unwrap();
        drop(open(ours.to_str().unwrap(), &opts(Some(1 << 16))).unwrap());
        let (o2, f2) = (ours.clone(), foreign.clone());
        hooks::AT.with(|h| {
            *h.borrow_mut() = Some(Box::new(move |at, _| {
                if at == stage {
                    fs::rename(&o2, o2.with_extension("moved")).unwrap();
                    std::os::unix::fs::symlink(&f2, &o2).unwrap();
                }
            }))
        });
        let r = open(ours.to_str().unwrap(), &opts(None));
        hooks::AT.with(|h| *h.borrow_mut() = None);
        match (stage, r) {
            // swapped before the open: the link is not followed
            ("resolved", Err(e)) => {
                assert!(matches!(e, Error::Refused(_)), "{e}");
                assert!(e.to_string().contains("changed while"), "{e}");
            }
            // swapped after the mark was checked: the writes reach the marked file only
            ("checked", Ok(mut o)) => {
                assert!(o.writable.is_ok());
                o.file.write_all(b"XXXX").unwrap();
                let moved = fs::read(ours.with_extension("moved")).unwrap();
                assert_eq!(&moved[..4], b"XXXX");
            }
            (s, r) => panic!("stage {s}: {:?}", r.err()),
        }
        assert_eq!(
            fs::read(&foreign).unwrap(),
            b"foreign data",
            "stage {stage}"
        );
    }
}

#[test]
fn a_second_run_on_the_same_file_is_refused_while_the_first_holds_it() {
    let d = tempfile::tempdir().unwrap();
    let p = d.path().join("t.bin");
    let first = open(p.to_str().unwrap(), &opts(Some(1 << 16))).unwrap();
    let e = open(p.to_str().unwrap(), &opts(None)).err().unwrap();
    assert!(matches!(e, Error::Refused(_)), "{e}");
    assert!(e.to_string().contains("another run"), "{e}");
    drop(first);
    assert!(open(p.to_str().unwrap(), &opts(None)).is_ok());
    // a foreign file is opened read-only: readers share it
    let f = d.path().join("f.bin");
    fs::write(&f, vec![1u8; 8192]).unwrap();
    let a = open(f.to_str().unwrap(), &opts(None)).unwrap();
    let b = open(f.to_str().unwrap(), &opts(None)).unwrap();
    assert!(a.writable.is_err() && b.writable.is_err());
}

#[test]
fn the_sidecar_mark_is_never_written_through_a_planted_link() {
    let d = tempfile::tempdir().unwrap();
    let p = d.path().join("s.bin");
    let victim = d.path().join("victim");
    fs::write(&victim, b"keep").unwrap();
    std::os::unix::fs::symlink(&victim, sidecar_of(&p)).unwrap();
    fs::write(&p, b"x").unwrap();
    let f = File::open(&p).unwrap();
    // whether or not the filesystem takes the xattr, the victim is untouched
    let _ = set_mark(&f, &p);
    assert_eq!(fs::read(&victim).unwrap(), b"keep");
}

#[test]
fn sidecar_mark_is_tied_to_the_inode() {
    let d = tempfile::tempdir().unwrap();
    let p = d.path().join("s.bin");
    fs::write(&p, b"x").unwrap();
    let f = File::open(&p).unwrap();
    let md = f.metadata().unwrap();
    fs::write(sidecar_of(&p), identity(&md)).unwrap();
    assert!(has_mark(&f, &p));
    fs::write(sidecar_of(&p), "1:2").unwrap();
    // xattr absent and the sidecar names another inode: not ours
    assert!(!has_mark(&f, &p));
}
