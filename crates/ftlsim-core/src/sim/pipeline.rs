//! The request pipeline: a request's pages through the write buffer, the partial-page
//! policy and the FTL, and the recorded flash operations onto the scheduler.
//!
//! With `host.write_buffer_bytes` set, host page writes go to the DRAM write buffer
//! ([`crate::write_buffer`], PCFTL Sec. 3.1) instead of the FTL: a victim it evicts is
//! written through the FTL inside the request that caused the eviction, so that request
//! waits for the program (PCFTL Fig. 9 puts it on the write's critical path). Partial pages
//! enter the buffer as whole pages (the paper zero-pads, Sec. 3.5), bypassing
//! `host.partial_write`. Preconditioning writes go straight to the FTL. Under BPLRU a whole
//! block leaves at once; with enough of its pages buffered its other pages are read first and
//! the block is written in order (block padding), the request waiting for both.
//!
//! With `host.write_buffer_policy = "write_behind"` ([`crate::write_behind`]) a write goes
//! through the FTL as without a buffer, but from when the buffer has room for its pages, and
//! is acknowledged then; its pages hold their slots until its flash work ends. Reads are
//! not served from it (a read of a page still programming waits behind the program on its
//! plane).

use super::FlashTime;
use super::Simulator;
use crate::config::{PartialWrite, UnmappedRead};
use crate::error::SimError;
use crate::ftl::Admission;
use crate::geometry::Lpn;
use crate::host::{pages, IoOp, PageSpan, Request};
use crate::scheduler::{BatchEnd, Direction, SimTime};
use crate::write_buffer::Insert;

/// What dispatching a request did.
pub(super) struct Dispatched {
    /// Its completion as far as placed.
    pub done: SimTime,
    /// Its operations deferred: it completes when the last of them is placed.
    pub deferred: u32,
    /// The drive refused it ([`Admission::Refused`]): it completes at once, not as a request.
    pub refused: bool,
}

impl Simulator {
    /// Drop `lpn` from the write buffer (a write that bypasses it makes the copy stale).
    pub(super) fn unbuffer(&mut self, lpn: Lpn) {
        if let Some(w) = self.wbuf.as_mut() {
            w.remove(lpn);
        }
    }

    /// Put each page of a host write in the write buffer (partial pages as whole pages);
    /// a victim evicted by an insert is written through the FTL now, recorded for this
    /// request's batch so the request waits for it.
    fn write_buffered(&mut self, offset: u64, sectors: u32, ready: SimTime) -> Result<SimTime, SimError> {
        let mut done = ready;
        let spp = self.cfg.geometry.sectors_per_page();
        for span in pages(offset, sectors, spp) {
            self.host.pages_written += 1;
            if !span.is_full(spp) {
                self.host.partial_page_writes += 1;
                self.host.zero_padded_sectors += u64::from(spp - span.sectors);
                self.wb.partial_pages += 1;
            }
            if let Some(m) = self.merge.as_mut() {
                m.remove(span.lpn);
            }
            let v = self.version();
            if let Some(o) = self.oracle.as_mut() {
                o[span.lpn as usize] = v;
            }
            let w = self.wbuf.as_mut().expect("write_buffered needs a write buffer");
            match w.insert(span.lpn, v) {
                Insert::Hit => self.wb.write_hits += 1,
                Insert::Added => self.wb.write_inserts += 1,
                Insert::Evicted(lpn, ev) => {
                    assert_ne!(lpn, span.lpn, "the page just written cannot be the victim");
                    self.wb.write_inserts += 1;
                    self.wb.evictions += 1;
                    // The victim's buffered version is its newest: the oracle already has it.
                    self.ftl_write(lpn, ev, FlashTime::Timed)?;
                }
                Insert::EvictedBlock => {
                    self.wb.write_inserts += 1;
                    let pages = w.take_evicted();
                    let r = self.write_evicted_block(&pages, ready);
                    self.wbuf.as_mut().expect("buffer exists").restore_evicted(pages);
                    done = done.max(r?);
                }
            }
        }
        Ok(done)
    }

    /// Write a block BPLRU evicted (its buffered pages, LPN order). With at least
    /// `host.bplru_padding_pages` of them, its other pages are read from flash first and
    /// written with them: the whole block goes to the FTL in order (a switch merge for a
    /// hybrid FTL). Returns when padding's own batches end (`ready` without padding).
    fn write_evicted_block(&mut self, pages: &[(Lpn, u32)], ready: SimTime) -> Result<SimTime, SimError> {
        self.wb.blocks_evicted += 1;
        self.wb.evictions += pages.len() as u64;
        let bp = self.wbuf.as_ref().expect("buffer exists").block_pages();
        let padded = self.cfg.host.bplru_padding_pages.is_some_and(|t| pages.len() as u32 >= t);
        if !padded || pages.len() as u32 >= bp {
            for &(lpn, v) in pages {
                self.ftl_write(lpn, v, FlashTime::Timed)?;
            }
            return Ok(ready);
        }
        // Earlier work of this request first, then the reads, then the block's programs.
        let before = self.flush(ready);
        let first = pages[0].0 / bp * bp;
        let end = (first + bp).min(self.cfg.derived().logical_pages);
        // The block in LPN order: buffered pages as they are, the others as read (never
        // written ones stay unwritten). `padded_block` is scratch kept across evictions.
        let mut block = std::mem::take(&mut self.padded_block);
        let mut next = 0;
        for lpn in first..end {
            if let Some(&p) = pages.get(next).filter(|p| p.0 == lpn) {
                next += 1;
                block.push(p);
            } else if self.wbuf.as_ref().is_some_and(|w| w.get(lpn).is_some()) {
                // The page whose write evicted its own block is buffered anew: newer than flash.
                continue;
            } else if let Some(v) = self.ftl_read(lpn)? {
                self.wb.padded_pages += 1;
                block.push((lpn, v));
            }
        }
        let read_end = self.flush(ready).host_end;
        let mut r = Ok(());
        for &(lpn, v) in &block {
            r = self.ftl_write(lpn, v, FlashTime::Timed);
            if r.is_err() {
                break;
            }
        }
        block.clear();
        self.padded_block = block;
        r?;
        let written = self.flush(read_end);
        Ok(before.host_end.max(written.host_end))
    }

    /// Schedule the recorded operations, none before `ready`.
    pub(super) fn flush(&mut self, ready: SimTime) -> BatchEnd {
        let end = self.dev.schedule(ready, self.request);
        self.deferred_ops += end.deferred_host_ops;
        end
    }

    /// Write the page spans of a host write: each maximal run of whole pages in one
    /// [`Ftl::write_run`] call (a block-mapped FTL rewrites a block once per request), each
    /// partial page by the partial-page policy. Returns the host completion of the flash work.
    fn write_spans(&mut self, offset: u64, sectors: u32, ready: SimTime) -> Result<SimTime, SimError> {
        if self.wbuf.is_some() {
            return self.write_buffered(offset, sectors, ready);
        }
        let spp = self.cfg.geometry.sectors_per_page();
        debug_assert!(self.run.is_empty());
        let mut first = 0;
        let mut done = ready;
        for span in pages(offset, sectors, spp) {
            self.host.pages_written += 1;
            if !span.is_full(spp) {
                self.ftl_write_run(first)?;
                done = done.max(self.write_partial(span, ready)?);
                continue;
            }
            if self.run.is_empty() {
                first = span.lpn;
            }
            assert_eq!(span.lpn, first + self.run.len() as Lpn, "whole pages of a run are consecutive");
            if let Some(m) = self.merge.as_mut() {
                m.remove(span.lpn);
            }
            let v = self.version();
            self.run.push(v);
        }
        self.ftl_write_run(first)?;
        Ok(done)
    }

    /// Write a partial page span; returns the host completion of its flash work.
    fn write_partial(&mut self, span: PageSpan, ready: SimTime) -> Result<SimTime, SimError> {
        let spp = self.cfg.geometry.sectors_per_page();
        self.host.partial_page_writes += 1;
        match self.cfg.host.partial_write {
            PartialWrite::ZeroPad => {
                self.host.zero_padded_sectors += u64::from(spp - span.sectors);
                let v = self.version();
                self.ftl_write(span.lpn, v, FlashTime::Timed)?;
                Ok(ready)
            }
            PartialWrite::ReadModifyWrite => {
                let v = self.version();
                self.read_modify_write(span.lpn, v, ready)
            }
            PartialWrite::Merge => {
                let full = if spp >= 64 { u64::MAX } else { (1u64 << spp) - 1 };
                let v = self.version();
                if let Some(o) = self.oracle.as_mut() {
                    o[span.lpn as usize] = v;
                }
                let m = self.merge.as_mut().expect("merge buffer exists under the merge policy");
                let mask = m.remove(span.lpn).map_or(0, |e| e.0) | span.sector_mask();
                if mask == full {
                    self.host.merged_pages += 1;
                    self.ftl_write(span.lpn, v, FlashTime::Timed)?;
                    return Ok(ready);
                }
                let evicted = if m.is_full() { m.oldest() } else { None };
                m.insert(span.lpn, mask, v);
                match evicted {
                    Some((lpn, ev)) => self.read_modify_write(lpn, ev, ready),
                    None => Ok(ready),
                }
            }
        }
    }

    /// Read the old page (if any), then program the merged page; the program waits for the read.
    fn read_modify_write(&mut self, lpn: Lpn, version: u32, ready: SimTime) -> Result<SimTime, SimError> {
        let before = self.flush(ready);
        let old = self.ftl_read(lpn)?;
        let mut start = ready;
        if old.is_some() {
            self.host.rmw_reads += 1;
            start = self.flush(ready).host_end;
        }
        self.ftl_write(lpn, version, FlashTime::Timed)?;
        let written = self.flush(start);
        Ok(before.host_end.max(written.host_end))
    }

    fn read_span(&mut self, span: PageSpan) -> Result<(), SimError> {
        self.host.pages_read += 1;
        if let Some(v) = self.wbuf.as_ref().and_then(|w| w.get(span.lpn)) {
            // Served from DRAM: no flash read (PCFTL Fig. 4(3)).
            self.wb.read_hits += 1;
            return self.verify(span.lpn, Some(v));
        }
        let buffered = self.merge.as_ref().and_then(|m| m.get(span.lpn));
        let mut found = self.ftl_read(span.lpn)?;
        if found.is_none() && buffered.is_none() {
            if self.was_trimmed(span.lpn) {
                self.host.trimmed_page_reads += 1;
            } else {
                self.host.unmapped_page_reads += 1;
                if self.cfg.host.unmapped_read == UnmappedRead::Flash {
                    self.materialize(span.lpn)?;
                    found = self.ftl_read(span.lpn)?;
                    assert!(found.is_some(), "lpn {}: unmapped after it was written", span.lpn);
                }
            }
        }
        let found = match buffered {
            Some((_, v)) => {
                self.host.merge_buffer_read_hits += 1;
                Some(v)
            }
            None => found,
        };
        self.verify(span.lpn, found)
    }

    /// Drop logical page `lpn` (a trim, or a zone reset): from the merge and write buffers,
    /// then from the FTL.
    fn drop_page(&mut self, lpn: Lpn) -> Result<(), SimError> {
        if let Some(m) = self.merge.as_mut() {
            m.remove(lpn);
        }
        if self.wbuf.as_mut().and_then(|w| w.remove(lpn)).is_some() {
            self.wb.trimmed_pages += 1;
        }
        self.ftl_trim(lpn, FlashTime::Timed)
    }

    /// Dispatch one request at `t` as replay slot `slot`.
    pub(super) fn dispatch(&mut self, req: &Request, t: SimTime, slot: u32) -> Result<Dispatched, SimError> {
        self.request = Some(slot);
        self.deferred_ops = 0;
        let refused_before = self.host.refused;
        let r = self.dispatch_in_slot(req, t);
        self.request = None;
        Ok(Dispatched { done: r?, deferred: self.deferred_ops, refused: self.host.refused > refused_before })
    }

    pub(super) fn dispatch_in_slot(&mut self, req: &Request, t: SimTime) -> Result<SimTime, SimError> {
        self.dev.sched.set_now(t);
        let (op, offset) = match self.ftl.admit(req.op, req.offset_sector, req.sectors)? {
            Admission::Take => (req.op, req.offset_sector),
            Admission::WriteAt(offset) => (IoOp::Write, offset),
            // Refused as a whole (a zoned namespace's rules): it completes at once with its
            // status, nothing done, counted apart from the requests the drive completed.
            Admission::Refused(r) => {
                self.host.refused += 1;
                *self.host.refused_by_status.entry(r.name).or_insert(0) += 1;
                return Ok(t);
            }
            // A change of zone state: it completes at once, nothing written.
            Admission::Done => return Ok(t),
            Admission::Reset { offset_sector, sectors } => {
                let spp = u64::from(self.cfg.geometry.sectors_per_page());
                for lpn in offset_sector / spp..(offset_sector + sectors) / spp {
                    self.drop_page(lpn as Lpn)?;
                }
                return Ok(self.flush(t).host_end.max(t));
            }
        };
        let spp = self.cfg.geometry.sectors_per_page();
        let bytes = u64::from(req.sectors) * 512;
        let mut ready = t;
        if op == IoOp::Write {
            ready = self.dev.sched.host_transfer(t, bytes, Direction::ToDrive);
        }
        // One controller-memory access per page: the mapping lookup (a write-buffer probe
        // shares it, docs/timing.md).
        let npages = pages(offset, req.sectors, spp).count() as u64;
        ready += npages * self.cfg.timing.dram_access_ns;
        // A write-buffer lookup walks its LRU list: every entry held, per page (reads and
        // writes alike look the page up).
        if let Some(w) = &self.wbuf {
            ready += npages * u64::from(w.len()) * self.cfg.timing.write_buffer_search_ns;
        }
        // A write-behind buffer acknowledges a write once its pages are in (perhaps after
        // waiting for room); their flash work starts then.
        let ack = match (op, self.dev.behind.as_mut()) {
            (IoOp::Write, Some(b)) => Some(b.admit(ready, npages as u32)),
            _ => None,
        };
        let ready = ack.unwrap_or(ready);
        debug_assert!(self.dev.ops.is_empty());
        let mut done = ready;
        match op {
            IoOp::Read => {
                self.host.reads += 1;
                self.host.bytes_read += bytes;
                for span in pages(offset, req.sectors, spp) {
                    self.read_span(span)?;
                }
            }
            IoOp::Write => {
                self.host.writes += 1;
                self.host.bytes_written += bytes;
                done = done.max(self.write_spans(offset, req.sectors, ready)?);
            }
            IoOp::Trim => {
                self.host.trims += 1;
                for span in pages(offset, req.sectors, spp).filter(|s| s.is_full(spp)) {
                    self.host.pages_trimmed += 1;
                    self.drop_page(span.lpn)?;
                }
            }
            _ => {
                return Err(SimError::Ftl(format!(
                    "ftl {} took a {} command as given: a zoned command must be placed, refused or done by \
                     the FTL's admit",
                    self.ftl.name(),
                    op.name()
                )))
            }
        }
        done = done.max(self.flush(ready).host_end);
        if let Some(ack) = ack {
            self.dev.behind.as_mut().expect("admitted above").hold(npages as u32, done);
            done = ack;
        }
        if op == IoOp::Read {
            done = self.dev.sched.host_transfer(done, bytes, Direction::ToHost);
        }
        Ok(done)
    }
}
