//! GC started from outside at a chosen plane, suspended between page copies while host
//! writes go on, and resumed: data stays correct and the victim is reclaimed.

use crate::util;

use ftlsim_core::flash::FlashArray;
use ftlsim_core::ftl::{FlashCounts, FlashCtx, FlashTime, Ftl, ManagedGc};
use ftlsim_core::scheduler::{OpKind, Tag};
use ftlsim_ftl::page::PageFtl;
use util::small_config;

#[test]
fn gc_can_be_started_suspended_and_resumed_at_page_boundaries() {
    let cfg = small_config(64, 8, 0.4, "");
    let logical = util::resolved(&cfg).derived().logical_pages;
    let mut flash = FlashArray::new(&cfg.geometry, false);
    let mut ftl = PageFtl::new(&util::resolved(&cfg)).unwrap();
    let mut ops = Vec::new();
    let mut counts = FlashCounts::default();
    let mut newest = vec![0u32; logical as usize];
    let mut version = 0;
    // Fill, then overwrite every third page so blocks hold invalid pages.
    for lpn in (0..logical).chain((0..logical).step_by(3)) {
        version += 1;
        newest[lpn as usize] = version;
        ftl.write(&mut FlashCtx::new(&mut flash, &mut ops, &mut counts, FlashTime::Functional), lpn, version).unwrap();
    }
    let plane = 1;
    let free_before = ftl.free_blocks();
    let gc_before = ftl.gc_counts();
    // One step at a time, with a host write between steps (the suspension).
    let mut steps = 0;
    loop {
        ops.clear();
        let did = ManagedGc::gc_step(
            &mut ftl,
            &mut FlashCtx::new(&mut flash, &mut ops, &mut counts, FlashTime::Timed),
            plane,
        )
        .unwrap();
        if !did {
            break;
        }
        steps += 1;
        assert!(!ops.is_empty() && ops.iter().all(|o| o.tag == Tag::Gc), "gc steps issue gc-tagged ops");
        for o in &ops {
            assert_eq!(cfg.geometry.plane_of(o.addr), plane, "gc of plane {plane} stays on it: {o:?}");
        }
        let erased = ops.iter().any(|o| o.kind == OpKind::Erase);
        version += 1;
        let lpn = (version * 7) % logical;
        newest[lpn as usize] = version;
        ftl.write(&mut FlashCtx::new(&mut flash, &mut ops, &mut counts, FlashTime::Functional), lpn, version).unwrap();
        if erased {
            break;
        }
        assert!(steps < 100, "one victim takes at most a block of steps");
    }
    assert!(steps >= 2, "a victim with valid pages takes several steps");
    let gc = ftl.gc_counts();
    assert_eq!(gc.foreground_collections, gc_before.foreground_collections, "host writes needed no GC");
    assert_eq!(gc.background_collections, gc_before.background_collections + 1);
    assert_eq!(gc.pages_moved - gc_before.pages_moved, steps - 1);
    assert!(ftl.free_blocks() + 1 >= free_before, "the erase returned the victim");
    ftl.check_invariants(&flash);
    flash.check_invariants();
    for lpn in 0..logical {
        let got = ftl.read(&mut FlashCtx::new(&mut flash, &mut ops, &mut counts, FlashTime::Functional), lpn).unwrap();
        assert_eq!(got, Some(newest[lpn as usize]), "lpn {lpn}");
    }
}
