//! Large per-page and per-LPN arrays backed by transparent huge pages where the OS offers
//! them.
//!
//! Why: the simulator's hot paths touch its largest arrays (the page map, per-page OOB and
//! validity) at random, one entry per host write or GC page move. With 4 KiB pages every
//! such access also misses the TLB, and under a hypervisor the page walk is two-dimensional:
//! on the 32 GiB `default` drive it cost about a third of preconditioning time
//! (docs/performance.md). Asking for 2 MiB pages (`madvise(MADV_HUGEPAGE)`) before the
//! array is first touched removes most of those misses. Where the call is not available or
//! refused, the array is an ordinary `Vec`; results never depend on it.

/// Arrays smaller than this stay on ordinary pages (a huge page would be mostly empty).
const HUGE_PAGE_THRESHOLD_BYTES: usize = 4 << 20;

/// A `Vec` of `n` copies of `value`, on huge pages when large enough and possible.
pub fn filled<T: Clone>(n: usize, value: T) -> Vec<T> {
    let mut v = with_capacity(n);
    v.resize(n, value);
    v
}

/// An empty `Vec` with room for `n`, that room on huge pages when large enough and possible.
fn with_capacity<T>(n: usize) -> Vec<T> {
    let mut v: Vec<T> = Vec::with_capacity(n);
    advise_huge_pages(v.as_mut_ptr().cast(), n * std::mem::size_of::<T>());
    v
}

/// Room reserved up front for a deserialized array at most: a longer one grows as a `Vec`
/// does (on ordinary pages past this), and a corrupt length cannot reserve more.
const MAX_RESERVED_BYTES: usize = 1 << 30;

/// `#[serde(deserialize_with = "big_array::deserialize")]` for an array built by [`filled`]:
/// deserialized on huge pages too. serde's own `Vec` grows on ordinary pages, and a drive
/// loaded from a snapshot then ran its replay with the TLB misses a freshly built drive
/// does not have (docs/performance.md).
pub fn deserialize<'de, D, T>(d: D) -> Result<Vec<T>, D::Error>
where
    D: serde::Deserializer<'de>,
    T: serde::Deserialize<'de>,
{
    struct Elements<T>(std::marker::PhantomData<T>);
    impl<'de, T: serde::Deserialize<'de>> serde::de::Visitor<'de> for Elements<T> {
        type Value = Vec<T>;
        fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
            f.write_str("a sequence")
        }
        fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<Vec<T>, A::Error> {
            let most = MAX_RESERVED_BYTES / std::mem::size_of::<T>().max(1);
            let mut v = with_capacity(seq.size_hint().unwrap_or(0).min(most));
            while let Some(x) = seq.next_element()? {
                v.push(x);
            }
            Ok(v)
        }
    }
    d.deserialize_seq(Elements(std::marker::PhantomData))
}

/// Ask the CPU to bring `s[i]` into cache: a hint, with no effect on other targets or for
/// an index out of bounds. Hot paths that know an address a few steps ahead (GC's next
/// relocations, preconditioning's next random writes) issue it so the miss overlaps work.
#[inline]
pub fn prefetch<T>(s: &[T], i: usize) {
    #[cfg(target_arch = "x86_64")]
    if let Some(e) = s.get(i) {
        // SAFETY: a prefetch is only a hint; the pointer comes from a live reference.
        unsafe { std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>((e as *const T).cast()) };
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = (s, i);
}

/// [`prefetch`] of every cache line of `s[start..start + len]` (as much of it as exists).
pub fn prefetch_range<T>(s: &[T], start: usize, len: usize) {
    const LINE_BYTES: usize = 64;
    let step = (LINE_BYTES / std::mem::size_of::<T>().max(1)).max(1);
    let end = start.saturating_add(len).min(s.len());
    let mut i = start;
    while i < end {
        prefetch(s, i);
        i += step;
    }
    // The last line, when `start` was not at a line's start.
    if end > start {
        prefetch(s, end - 1);
    }
}

#[cfg(target_os = "linux")]
fn advise_huge_pages(ptr: *mut u8, bytes: usize) {
    if bytes < HUGE_PAGE_THRESHOLD_BYTES {
        return;
    }
    const PAGE: usize = 4096;
    let start = (ptr as usize).next_multiple_of(PAGE);
    let end = (ptr as usize + bytes) & !(PAGE - 1);
    if end <= start {
        return;
    }
    // SAFETY: the range lies inside an allocation this function's caller owns and has not
    // touched yet; MADV_HUGEPAGE only changes how the kernel backs it, never its contents.
    // A refusal (old kernel, THP disabled) leaves ordinary pages, which is fine.
    unsafe {
        libc::madvise(start as *mut libc::c_void, end - start, libc::MADV_HUGEPAGE);
    }
}

#[cfg(not(target_os = "linux"))]
fn advise_huge_pages(_ptr: *mut u8, _bytes: usize) {}

#[cfg(test)]
mod tests {
    #[test]
    fn filled_holds_n_copies() {
        let v = super::filled(3 << 20, 7u32);
        assert_eq!(v.len(), 3 << 20);
        assert!(v.iter().all(|&x| x == 7));
        assert_eq!(super::filled(0, 1u8), Vec::<u8>::new());
    }

    #[test]
    fn a_prefetch_past_the_end_of_an_array_is_ignored() {
        let v = vec![1u8; 100];
        for (start, len) in [(0, 0), (90, 20), (100, 5), (500, 5), (1, usize::MAX)] {
            super::prefetch_range(&v, start, len);
        }
        super::prefetch_range::<u64>(&[], 0, 8);
    }

    #[test]
    fn deserialized_arrays_equal_the_serialized_ones() {
        #[derive(serde::Serialize, serde::Deserialize, PartialEq, Debug)]
        struct Arrays {
            #[serde(deserialize_with = "super::deserialize")]
            big: Vec<u32>,
            #[serde(deserialize_with = "super::deserialize")]
            empty: Vec<u8>,
        }
        let a = Arrays { big: (0..(3u32 << 20)).collect(), empty: Vec::new() };
        let back: Arrays = postcard::from_bytes(&postcard::to_allocvec(&a).unwrap()).unwrap();
        assert_eq!(back, a);
    }
}
