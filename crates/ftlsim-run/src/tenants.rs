//! Tenants of a run as the user names them (`--tenant`, Python `tenants=`), like fio's jobs:
//! one text per tenant of its own keys and its workload's (docs/tenants.md), and the
//! controller's arbitration among their queues (`--arbitration`).

use crate::Source;
use ftlsim_core::arbiter::{Arbitration, PriorityClass};
use ftlsim_core::error::{SimError, WorkloadError};
use ftlsim_core::sim::{Namespace, PlacementRule, QueueArbitration, Replay, Tenant, MAX_TENANTS};
use ftlsim_core::trace::{Overflow, TraceFormat, TraceOptions};
use ftlsim_core::workload::{parse_bytes, Limit, WorkloadSpec};
use std::path::PathBuf;

/// The keys a tenant text takes besides its workload's.
pub const TENANT_KEYS: &[&str] = &[
    "name",
    "ns",
    "class",
    "seed",
    "plids",
    "plid_select",
    "dp_scheme",
    "plid_sizes",
    "trace",
    "device",
    "format",
    "speed",
    "overflow",
];

/// Where a tenant's namespace lies: shares of the drive's logical space or byte offsets.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum NamespaceSpec {
    /// `[start, end)` as shares of the logical space, rounded down to whole pages.
    Share(f64, f64),
    /// `[start, end)` in bytes, whole pages.
    Bytes(u64, u64),
}

/// One tenant as given.
#[derive(Debug, Clone)]
pub struct TenantSpec {
    /// The text it was parsed from (results.json `run.tenants`).
    pub text: String,
    /// Name, unique in the run.
    pub name: String,
    /// Its requests: a synthetic workload or a trace (with `qd`, replayed closed loop).
    pub source: Source,
    /// Its namespace; the whole drive unless given.
    pub namespace: NamespaceSpec,
    /// Its submission queue's priority class (weighted round robin); medium unless given.
    pub class: PriorityClass,
    /// Its workload's seed; the run's seed plus its position (from 0) unless given.
    pub seed: Option<u64>,
    /// How its writes pick their FDP placement handle (`plids=0:1`, `plid_select=`, ...;
    /// docs/fdp.md); a random rule is seeded when the run is planned.
    pub placement: PlacementRule,
    /// The `dp_scheme` file its placement was read from, if any (an input of the run).
    pub scheme_file: Option<PathBuf>,
}

fn bad(tenant: &str, key: &str, value: &str, rule: &str) -> SimError {
    WorkloadError::new(format!("--tenant {tenant}: {key}"), value, rule).into()
}

impl TenantSpec {
    /// Parse `name=db,ns=0..0.5,class=high,pattern=uniform,read=1,qd=4` (a synthetic
    /// workload's keys beside the tenant's) or `name=vol0,trace=t.csv,device=0,qd=8`.
    pub fn parse(text: &str) -> Result<TenantSpec, SimError> {
        let label = text.split(',').find_map(|kv| kv.trim().strip_prefix("name=")).unwrap_or(text).trim().to_string();
        let mut own: Vec<(String, String)> = Vec::new();
        let mut workload_parts: Vec<String> = Vec::new();
        // `qd` is the trace's replay depth beside `trace=` (wherever that stands), else the
        // workload's.
        let is_trace = text.split([',', ';']).any(|kv| kv.split_once('=').is_some_and(|(k, _)| k.trim() == "trace"));
        for part in text.split(';') {
            let mut rest = Vec::new();
            for item in part.split(',').map(str::trim).filter(|s| !s.is_empty()) {
                match item.split_once('=') {
                    Some((k, v)) if TENANT_KEYS.contains(&k.trim()) || (is_trace && k.trim() == "qd") => {
                        own.push((k.trim().into(), v.trim().into()))
                    }
                    _ => rest.push(item),
                }
            }
            workload_parts.push(rest.join(","));
        }
        let get = |key: &str| own.iter().rev().find(|(k, _)| k == key).map(|(_, v)| v.as_str());
        for (k, _) in &own {
            if own.iter().filter(|(o, _)| o == k).count() > 1 {
                return Err(bad(&label, k, text, "given twice"));
            }
        }
        let name = get("name").ok_or_else(|| bad(&label, "name", "", "every tenant needs a name (name=...)"))?;
        if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || "_-.".contains(c)) {
            return Err(bad(name, "name", name, "letters, digits, '_', '-' and '.' only"));
        }
        let namespace = match get("ns") {
            None => NamespaceSpec::Share(0.0, 1.0),
            Some(v) => parse_namespace(name, v)?,
        };
        let class = match get("class") {
            None => PriorityClass::Medium,
            Some(v) => v.parse::<PriorityClass>().map_err(|rule| bad(name, "class", v, &rule))?,
        };
        let seed = match get("seed") {
            None => None,
            Some(v) => Some(v.parse::<u64>().map_err(|_| bad(name, "seed", v, "expected a whole number >= 0"))?),
        };
        let placement = crate::placement::parse(name, &get)?;
        let workload_text = workload_parts.join(";");
        let source = match get("trace") {
            Some(path) => trace_source(name, path, &get, &workload_text, text)?,
            None => {
                for key in ["device", "format", "speed", "overflow"] {
                    if let Some(v) = get(key) {
                        return Err(bad(name, key, v, "a trace's key: give trace=FILE with it"));
                    }
                }
                WorkloadSpec::parse(&workload_text).map_err(|e| bad(name, &e.key, &e.value, &e.rule))?;
                Source::Synthetic(workload_text)
            }
        };
        Ok(TenantSpec {
            text: text.to_string(),
            name: name.to_string(),
            source,
            namespace,
            class,
            seed,
            placement,
            scheme_file: get("dp_scheme").map(PathBuf::from),
        })
    }

    /// The namespace on a drive of `logical_pages` pages of `spp` sectors.
    pub fn namespace(&self, logical_pages: u64, spp: u32) -> Result<Namespace, SimError> {
        let spp = u64::from(spp);
        let (first, end) = match self.namespace {
            NamespaceSpec::Share(a, b) => {
                ((a * logical_pages as f64).floor() as u64, (b * logical_pages as f64).floor() as u64)
            }
            NamespaceSpec::Bytes(a, b) => {
                let page = spp * 512;
                if a % page != 0 || b % page != 0 {
                    return Err(bad(
                        &self.name,
                        "ns",
                        &format!("{a}..{b}"),
                        &format!("byte offsets must be whole pages of {page} bytes"),
                    ));
                }
                (a / page, b / page)
            }
        };
        if end > logical_pages || first >= end {
            return Err(bad(
                &self.name,
                "ns",
                &self.namespace_text(),
                &format!("lies outside the drive's {logical_pages} logical pages or holds none"),
            ));
        }
        Ok(Namespace { first_sector: first * spp, sectors: (end - first) * spp })
    }

    fn namespace_text(&self) -> String {
        match self.namespace {
            NamespaceSpec::Share(a, b) => format!("{a}..{b}"),
            NamespaceSpec::Bytes(a, b) => format!("{a}..{b} bytes"),
        }
    }

    /// Its seed in a run seeded `run_seed`, at position `i` (from 0): its own, or the run's
    /// plus its position.
    pub fn seed_in(&self, run_seed: u64, i: usize) -> u64 {
        self.seed.unwrap_or(run_seed.wrapping_add(i as u64))
    }

    /// The tenant as the replay loop takes it, with its `workload` (synthetic tenants) and
    /// its `seed`.
    pub fn tenant(&self, namespace: Namespace, workload: Option<&WorkloadSpec>, seed: u64) -> Tenant {
        let (replay, stop_after_ns) = match (&self.source, workload) {
            (Source::Trace { qd: Some(q), .. }, _) => (Replay::Closed { queue_depth: *q }, None),
            // The trace source divides its gaps by `speed` already.
            (Source::Trace { qd: None, .. }, _) => (Replay::Open { time_scale: 1.0 }, None),
            (Source::Synthetic(_), Some(w)) => match (w.arrival.queue_depth(), w.limit) {
                (Some(queue_depth), Limit::DurationNs(d)) => (Replay::Closed { queue_depth }, Some(d)),
                (Some(queue_depth), _) => (Replay::Closed { queue_depth }, None),
                _ => (Replay::Open { time_scale: 1.0 }, None),
            },
            (Source::Synthetic(_), None) => unreachable!("a synthetic tenant's workload is parsed when planned"),
        };
        Tenant {
            name: self.name.clone(),
            replay,
            class: self.class,
            namespace,
            stop_after_ns,
            placement: crate::placement::seeded(&self.placement, seed),
        }
    }
}

/// A trace tenant's source: `trace=FILE` with its `device`, `format`, `speed` and `qd`, and
/// no workload keys.
fn trace_source<'a>(
    name: &str,
    path: &str,
    get: &impl Fn(&str) -> Option<&'a str>,
    workload_text: &str,
    text: &str,
) -> Result<Source, SimError> {
    if !workload_text.replace(';', "").trim().is_empty() {
        return Err(bad(
            name,
            "trace",
            text,
            &format!(
                "a trace tenant takes only {} and qd; `{workload_text}` are a workload's keys",
                TENANT_KEYS.join(", ")
            ),
        ));
    }
    let mut options = TraceOptions::default();
    if let Some(v) = get("device") {
        options.device = Some(v.parse().map_err(|_| bad(name, "device", v, "expected a device number"))?);
    }
    if let Some(v) = get("format") {
        options.format = Some(v.parse::<TraceFormat>().map_err(|rule| bad(name, "format", v, &rule))?);
    }
    if let Some(v) = get("overflow") {
        options.overflow = v.parse::<Overflow>().map_err(|rule| bad(name, "overflow", v, &rule))?;
    }
    if let Some(v) = get("speed") {
        options.speed = v
            .parse()
            .ok()
            .filter(|s: &f64| *s > 0.0 && s.is_finite())
            .ok_or_else(|| bad(name, "speed", v, "must be > 0"))?;
    }
    let qd = match get("qd") {
        None => None,
        Some(v) => Some(
            v.parse::<u32>()
                .ok()
                .filter(|q| (1..=65_536).contains(q))
                .ok_or_else(|| bad(name, "qd", v, "must be in [1, 65536]"))?,
        ),
    };
    Ok(Source::Trace { path: PathBuf::from(path), options, qd })
}

/// `A..B`: shares of the drive (`0..0.25`) or bytes with a unit (`0..4GiB`, `1g..2g`).
fn parse_namespace(name: &str, v: &str) -> Result<NamespaceSpec, SimError> {
    let (a, b) =
        v.split_once("..").ok_or_else(|| bad(name, "ns", v, "expected START..END, e.g. 0..0.25 or 0..4GiB"))?;
    let (a, b) = (a.trim(), b.trim());
    let plain = |s: &str| s.parse::<f64>().ok();
    if let (Some(x), Some(y)) = (plain(a), plain(b)) {
        if !((0.0..=1.0).contains(&x) && (0.0..=1.0).contains(&y) && x < y) {
            return Err(bad(name, "ns", v, "shares need 0 <= START < END <= 1 (give bytes with a unit: 0..4GiB)"));
        }
        return Ok(NamespaceSpec::Share(x, y));
    }
    // A share at one end and a byte count at the other: neither reading holds both.
    if plain(a).is_some_and(|x| x != 0.0) || plain(b).is_some() {
        return Err(bad(
            name,
            "ns",
            v,
            "one end is a share and the other a byte count: give both as shares (0.5..1) or both with a unit \
             (2GiB..4GiB; a start of 0 may stand alone)",
        ));
    }
    let bytes = |s: &str| if s == "0" { Ok(0) } else { parse_bytes("ns", s).map_err(|e| bad(name, "ns", v, &e.rule)) };
    let (x, y) = (bytes(a)?, bytes(b)?);
    if x >= y {
        return Err(bad(name, "ns", v, "END must be after START"));
    }
    Ok(NamespaceSpec::Bytes(x, y))
}

/// Parse `--arbitration`: `rr`, `rr:burst=4`, `wrr:high=8,medium=4,low=1,burst=2` (weights
/// 1 and burst 1 unless given; `burst=unlimited`).
pub fn parse_arbitration(v: &str) -> Result<QueueArbitration, SimError> {
    let bad = |rule: &str| SimError::from(WorkloadError::new("--arbitration", v, rule));
    let (kind, args) = v.trim().split_once(':').unwrap_or((v.trim(), ""));
    let mut weights = [1u32; 3];
    let mut burst = 1u32;
    let weighted = match kind {
        "rr" => false,
        "wrr" => true,
        _ => return Err(bad("expected rr or wrr (rr:burst=4, wrr:high=8,medium=4,low=1,burst=2)")),
    };
    let mut seen: Vec<&str> = Vec::new();
    for item in args.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        let (k, x) = item.split_once('=').ok_or_else(|| bad(&format!("`{item}`: expected KEY=VALUE")))?;
        if seen.contains(&k) {
            return Err(bad(&format!("{k} given twice")));
        }
        seen.push(k);
        let count = || {
            x.parse::<u32>().ok().filter(|&n| n >= 1).ok_or_else(|| bad(&format!("{k}: expected a whole number >= 1")))
        };
        match (k, weighted) {
            ("burst", _) if x == "unlimited" => burst = u32::MAX,
            ("burst", _) => burst = count()?,
            ("high", true) => weights[0] = count()?,
            ("medium", true) => weights[1] = count()?,
            ("low", true) => weights[2] = count()?,
            ("high" | "medium" | "low", false) => return Err(bad("weights are wrr's: rr takes only burst")),
            _ => return Err(bad(&format!("unknown key `{k}` (burst; wrr also high, medium, low)"))),
        }
    }
    let mechanism = if weighted { Arbitration::WeightedRoundRobin { weights } } else { Arbitration::RoundRobin };
    Ok(QueueArbitration { mechanism, burst })
}

/// Check the tenants' placement handles against the drive's `[fdp]` handles (`None`: none).
pub fn check_placements(tenants: &[TenantSpec], handles: Option<u32>) -> Result<(), SimError> {
    for t in tenants.iter().filter(|t| t.placement != PlacementRule::Default) {
        let placements = t.placement.handles();
        let (key, text) = match &t.placement {
            PlacementRule::Scheme(s) => {
                let n = handles.unwrap_or(0);
                let lines = |e: &&ftlsim_core::sim::SchemeEntry| u32::from(e.plid) >= n;
                match s.iter().find(lines) {
                    Some(e) => ("dp_scheme", format!("line {}: plid {}", e.line, e.plid)),
                    None => ("dp_scheme", "its plids".to_string()),
                }
            }
            PlacementRule::Device => ("plid_select", "device".to_string()),
            _ => ("plids", placements.iter().map(u16::to_string).collect::<Vec<_>>().join(":")),
        };
        match handles {
            None => {
                return Err(bad(
                    &t.name,
                    key,
                    &text,
                    "the drive has no placement handles: give it an [fdp] section (--set fdp.handles=N)",
                ))
            }
            Some(n) => {
                if let Some(p) = placements.iter().find(|&&p| u32::from(p) >= n) {
                    return Err(bad(
                        &t.name,
                        key,
                        &text,
                        &format!("handle {p} beyond the drive's {n} (fdp.handles; 0..{})", n - 1),
                    ));
                }
            }
        }
    }
    Ok(())
}

/// Check a run's tenants together: how many, their names.
pub fn check_tenants(tenants: &[TenantSpec]) -> Result<(), SimError> {
    if tenants.len() > MAX_TENANTS {
        return Err(SimError::Input(format!("--tenant: {} tenants, at most {MAX_TENANTS}", tenants.len())));
    }
    for (i, t) in tenants.iter().enumerate() {
        if tenants[..i].iter().any(|o| o.name == t.name) {
            return Err(bad(&t.name, "name", &t.name, "two tenants have this name"));
        }
    }
    Ok(())
}

/// `run.arbitration` of results.json.
pub fn arbitration_json(a: QueueArbitration) -> serde_json::Value {
    let burst: serde_json::Value = if a.burst == u32::MAX { "unlimited".into() } else { a.burst.into() };
    match a.mechanism {
        Arbitration::RoundRobin => serde_json::json!({ "mechanism": "round_robin", "burst": burst }),
        Arbitration::WeightedRoundRobin { weights: [high, medium, low] } => serde_json::json!({
            "mechanism": "weighted_round_robin",
            "weights": { "high": high, "medium": medium, "low": low },
            "burst": burst,
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tenant_text_splits_into_its_keys_and_its_workloads() {
        let t = TenantSpec::parse("name=db,ns=0..0.5,class=high,seed=9,pattern=zipf:0.9,read=0.7,qd=8").unwrap();
        assert_eq!((t.name.as_str(), t.class, t.seed), ("db", PriorityClass::High, Some(9)));
        assert_eq!(t.namespace, NamespaceSpec::Share(0.0, 0.5));
        assert!(matches!(&t.source, Source::Synthetic(w) if w == "pattern=zipf:0.9,read=0.7,qd=8"));
        // A mixture keeps its parts.
        let t = TenantSpec::parse("name=m,read=0; pattern=sequential,weight=2").unwrap();
        assert!(matches!(&t.source, Source::Synthetic(w) if w == "read=0;pattern=sequential,weight=2"));
        // `qd` before `trace=` is the trace's too.
        let t =
            TenantSpec::parse("name=v0,qd=8,trace=t.csv,device=3,format=msr,speed=2,overflow=wrap,ns=0..4GiB").unwrap();
        match &t.source {
            Source::Trace { path, options, qd } => {
                assert_eq!((path.to_str(), options.device, *qd, options.speed), (Some("t.csv"), Some(3), Some(8), 2.0));
                assert_eq!(options.overflow, Overflow::Wrap);
            }
            other => panic!("{other:?}"),
        }
        // Its speed is the trace source's: the replay does not scale its times again.
        let open = TenantSpec::parse("name=v1,trace=t.csv,speed=2").unwrap();
        let ns = Namespace { first_sector: 0, sectors: 8 };
        assert_eq!(open.tenant(ns, None, 0).replay, Replay::Open { time_scale: 1.0 });
        assert_eq!(t.namespace, NamespaceSpec::Bytes(0, 4 << 30));
    }

    #[test]
    fn namespaces_resolve_to_whole_pages_inside_the_drive() {
        let t = TenantSpec::parse("name=a,ns=0.25..0.5").unwrap();
        assert_eq!(t.namespace(1000, 8).unwrap(), Namespace { first_sector: 250 * 8, sectors: 250 * 8 });
        let t = TenantSpec::parse("name=a,ns=8k..16k").unwrap();
        assert_eq!(t.namespace(1000, 8).unwrap(), Namespace { first_sector: 16, sectors: 16 });
        let e = TenantSpec::parse("name=a,ns=0..16m").unwrap().namespace(1000, 8).unwrap_err().to_string();
        assert!(e.contains("--tenant a: ns") && e.contains("outside the drive's 1000 logical pages"), "{e}");
        let e = TenantSpec::parse("name=a,ns=0..5k").unwrap().namespace(1000, 8).unwrap_err().to_string();
        assert!(e.contains("whole pages of 4096 bytes"), "{e}");
    }

    #[test]
    fn mistakes_name_the_tenant_and_the_key() {
        for (text, want) in [
            ("ns=0..1", "name"),
            ("name=a b", "name"),
            ("name=a,ns=0.5..0.25", "ns"),
            ("name=a,ns=1..2", "ns"),
            ("name=a,class=top", "class"),
            ("name=a,seed=-1", "seed"),
            ("name=a,device=2", "device"),
            ("name=a,trace=t.csv,read=1", "trace"),
            ("name=a,trace=t.csv,format=nope", "format"),
            ("name=a,trace=t.csv,qd=0", "qd"),
            ("name=a,trace=t.csv,overflow=drop", "overflow"),
            ("name=a,overflow=wrap", "overflow"),
            ("name=a,pattern=nope", "pattern"),
            ("name=a,name=b", "name"),
        ] {
            let e = TenantSpec::parse(text).unwrap_err().to_string();
            assert!(e.contains(&format!(": {want} = ")), "{text}: {e}");
        }
        let two = [TenantSpec::parse("name=a").unwrap(), TenantSpec::parse("name=a").unwrap()];
        assert!(check_tenants(&two).unwrap_err().to_string().contains("two tenants have this name"));
    }

    #[test]
    fn arbitration_parses_the_specs_mechanisms() {
        assert_eq!(parse_arbitration("rr").unwrap(), QueueArbitration { mechanism: Arbitration::RoundRobin, burst: 1 });
        assert_eq!(parse_arbitration("rr:burst=unlimited").unwrap().burst, u32::MAX);
        assert_eq!(
            parse_arbitration("wrr:high=8,low=2,burst=4").unwrap(),
            QueueArbitration { mechanism: Arbitration::WeightedRoundRobin { weights: [8, 1, 2] }, burst: 4 }
        );
        for bad in ["fifo", "rr:high=2", "wrr:high=0", "wrr:urgent=2", "wrr:high"] {
            let e = parse_arbitration(bad).unwrap_err().to_string();
            assert!(e.contains("--arbitration"), "{bad}: {e}");
        }
    }
}
