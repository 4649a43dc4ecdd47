//! A tenant's FDP placement keys (docs/fdp.md), named as fio names them: `plids`,
//! `plid_select` (`roundrobin`, `random`, `scheme`; and ftlsim's `size` and `device`),
//! `dp_scheme` (fio's file of `start,end,plid` byte ranges) and `plid_sizes` (the size rule's
//! bounds).

use ftlsim_core::error::{SimError, WorkloadError};
use ftlsim_core::sim::{PlacementRule, SchemeEntry};
use ftlsim_core::workload::parse_bytes;
use std::path::Path;

/// The rules `plid_select` names.
const SELECTS: &str = "roundrobin, random, scheme, size or device";

fn bad(tenant: &str, key: &str, value: &str, rule: &str) -> SimError {
    WorkloadError::new(format!("--tenant {tenant}: {key}"), value, rule).into()
}

/// The placement rule of tenant `name` from its keys (`get`); a random rule's seed is set
/// when the run is planned ([`seeded`]).
pub fn parse<'a>(name: &str, get: &impl Fn(&str) -> Option<&'a str>) -> Result<PlacementRule, SimError> {
    let plids = match get("plids") {
        None => None,
        Some(v) => Some(
            v.split(':')
                .map(|x| x.trim().parse::<u16>())
                .collect::<Result<Vec<_>, _>>()
                .map_err(|_| bad(name, "plids", v, "expected placement handles like 0 or 0:1:2"))?,
        ),
    };
    let scheme = get("dp_scheme");
    let select = get("plid_select").unwrap_or(match (scheme, &plids) {
        (Some(_), _) => "scheme",
        (None, Some(_)) => "roundrobin",
        (None, None) => "",
    });
    let needs_plids =
        |what: &str| plids.clone().ok_or_else(|| bad(name, "plid_select", select, &format!("{what} needs plids=")));
    let refuse = |key: &str, v: &str, why: &str| Err(bad(name, key, v, why));
    if let (Some(v), false) = (get("plid_sizes"), select == "size") {
        return refuse("plid_sizes", v, "the bounds of plid_select=size only");
    }
    if let (Some(v), false) = (scheme, select == "scheme") {
        return refuse("dp_scheme", v, "the file of plid_select=scheme only");
    }
    Ok(match select {
        "" => PlacementRule::Default,
        "roundrobin" => PlacementRule::RoundRobin(needs_plids("roundrobin")?),
        "random" => PlacementRule::Random { plids: needs_plids("random")?, seed: 0 },
        "scheme" => {
            if let Some(p) = get("plids") {
                return refuse("plids", p, "plid_select=scheme takes its handles from the dp_scheme file");
            }
            let file = scheme.ok_or_else(|| bad(name, "plid_select", select, "scheme needs dp_scheme=FILE"))?;
            PlacementRule::Scheme(read_scheme(name, Path::new(file))?)
        }
        "size" => {
            let plids = needs_plids("size")?;
            let text = get("plid_sizes")
                .ok_or_else(|| bad(name, "plid_select", select, "size needs plid_sizes= (e.g. plid_sizes=16k)"))?;
            let sizes = text
                .split(':')
                .map(|s| parse_bytes("plid_sizes", s.trim()))
                .collect::<Result<Vec<_>, _>>()
                .map_err(|e| bad(name, "plid_sizes", text, &e.rule))?;
            if sizes.windows(2).any(|w| w[0] >= w[1]) || sizes.first() == Some(&0) {
                return refuse("plid_sizes", text, "increasing sizes above 0, like 16k or 4k:64k");
            }
            if plids.len() != sizes.len() + 1 {
                return refuse(
                    "plids",
                    get("plids").unwrap_or_default(),
                    &format!(
                        "plid_select=size with {} bound(s) in plid_sizes takes {} handles: one per bound and one \
                         for larger writes",
                        sizes.len(),
                        sizes.len() + 1
                    ),
                );
            }
            let beyond = plids[sizes.len()];
            PlacementRule::Size { bounds: sizes.into_iter().zip(plids).collect(), beyond }
        }
        "device" => {
            if get("trace").is_none() {
                return refuse(
                    "plid_select",
                    select,
                    "device needs a trace tenant (trace=FILE): a workload has no devices",
                );
            }
            if let Some(d) = get("device") {
                return refuse(
                    "device",
                    d,
                    "with plid_select=device every write would name this one device: drop device= to let the \
                     trace's devices pick their handles",
                );
            }
            if let Some(p) = get("plids") {
                return refuse(
                    "plids",
                    p,
                    "plid_select=device takes each write's handle from the trace's device column",
                );
            }
            PlacementRule::Device
        }
        other => return refuse("plid_select", other, &format!("expected {SELECTS}")),
    })
}

/// A random rule seeded from the tenant's `seed` (apart from its workload's stream).
pub fn seeded(rule: &PlacementRule, seed: u64) -> PlacementRule {
    match rule {
        PlacementRule::Random { plids, .. } => {
            PlacementRule::Random { plids: plids.clone(), seed: seed ^ 0x5EED_F0D9_0000_0001 }
        }
        r => r.clone(),
    }
}

/// The rule's name and handles for results.json.
pub fn describe(rule: &PlacementRule) -> serde_json::Value {
    let select = match rule {
        PlacementRule::Default => "default",
        PlacementRule::RoundRobin(_) => "roundrobin",
        PlacementRule::Random { .. } => "random",
        PlacementRule::Scheme(_) => "scheme",
        PlacementRule::Size { .. } => "size",
        PlacementRule::Device => "device",
    };
    let mut v = serde_json::json!({ "plid_select": select, "plids": rule.handles() });
    match rule {
        PlacementRule::Scheme(s) => {
            v["dp_scheme"] = s.iter().map(|e| serde_json::json!([e.start, e.end, e.plid])).collect();
        }
        PlacementRule::Size { bounds, .. } => {
            v["plid_sizes"] = bounds.iter().map(|b| b.0).collect();
        }
        _ => {}
    }
    v
}

/// Read fio's `dp_scheme` file: one `start,end,plid` per line (bytes of the namespace,
/// `[start, end)`); blank lines and `#` comments skipped.
fn read_scheme(name: &str, path: &Path) -> Result<Vec<SchemeEntry>, SimError> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| bad(name, "dp_scheme", &path.display().to_string(), &format!("cannot read it: {e}")))?;
    let mut entries = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let at = |field: &str, v: &str, rule: &str| {
            SimError::Input(format!("{}:{}: field {field}: `{v}`: {rule}", path.display(), i + 1))
        };
        let fields: Vec<&str> = line.split(',').map(str::trim).collect();
        let [start, end, plid] = fields[..] else {
            return Err(at("line", line, "expected start,end,plid (bytes, bytes, handle), as fio's dp_scheme"));
        };
        let start = start.parse::<u64>().map_err(|_| at("start", start, "a byte offset"))?;
        let end_v = end.parse::<u64>().map_err(|_| at("end", end, "a byte offset"))?;
        let plid = plid.parse::<u16>().map_err(|_| at("plid", plid, "a placement handle (0..65535)"))?;
        if end_v <= start {
            return Err(at("end", end, &format!("must be above start ({start})")));
        }
        entries.push(SchemeEntry { start, end: end_v, plid, line: i as u32 + 1 });
    }
    if entries.is_empty() {
        return Err(bad(name, "dp_scheme", &path.display().to_string(), "the file has no start,end,plid line"));
    }
    Ok(entries)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rule(keys: &[(&str, &str)]) -> Result<PlacementRule, String> {
        let get = |k: &str| keys.iter().find(|(a, _)| *a == k).map(|(_, v)| *v);
        parse("t", &get).map_err(|e| e.to_string())
    }

    #[test]
    fn the_keys_make_their_rules() {
        assert_eq!(rule(&[]).unwrap(), PlacementRule::Default);
        assert_eq!(rule(&[("plids", "0:2")]).unwrap(), PlacementRule::RoundRobin(vec![0, 2]));
        assert_eq!(
            rule(&[("plids", "1:2"), ("plid_select", "random")]).unwrap(),
            PlacementRule::Random { plids: vec![1, 2], seed: 0 }
        );
        assert_eq!(
            rule(&[("plids", "1:2:3"), ("plid_select", "size"), ("plid_sizes", "4k:64k")]).unwrap(),
            PlacementRule::Size { bounds: vec![(4096, 1), (65536, 2)], beyond: 3 }
        );
        assert_eq!(rule(&[("plid_select", "device"), ("trace", "t.csv")]).unwrap(), PlacementRule::Device);
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("scheme");
        std::fs::write(&f, "# fio dp_scheme\n0,4096,1\n\n4096,1048576,2\n").unwrap();
        let s = rule(&[("dp_scheme", f.to_str().unwrap())]).unwrap();
        assert_eq!(
            s,
            PlacementRule::Scheme(vec![
                SchemeEntry { start: 0, end: 4096, plid: 1, line: 2 },
                SchemeEntry { start: 4096, end: 1 << 20, plid: 2, line: 4 }
            ])
        );
        assert_eq!(s.handles(), [1, 2]);
    }

    #[test]
    fn mistakes_name_the_key_and_the_fix() {
        for (keys, want) in [
            (&[("plid_select", "random")][..], "random needs plids="),
            (&[("plid_select", "rr")][..], "roundrobin, random, scheme, size or device"),
            (&[("plids", "1:2"), ("plid_select", "size")][..], "plid_sizes="),
            (&[("plids", "1:2"), ("plid_select", "size"), ("plid_sizes", "4k:64k")][..], "takes 3 handles"),
            (&[("plids", "1:2:3"), ("plid_select", "size"), ("plid_sizes", "64k:4k")][..], "increasing"),
            (&[("plids", "1"), ("plid_sizes", "4k")][..], "plid_select=size only"),
            (&[("plid_select", "scheme")][..], "dp_scheme=FILE"),
            (&[("plid_select", "device"), ("trace", "t"), ("plids", "1")][..], "device column"),
            (&[("plid_select", "device")][..], "needs a trace tenant"),
            (&[("plid_select", "device"), ("trace", "t"), ("device", "2")][..], "drop device="),
            (&[("dp_scheme", "/no/such/file")][..], "cannot read it"),
        ] {
            let e = rule(keys).unwrap_err();
            assert!(e.contains(want), "{keys:?}: {e}");
        }
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("scheme");
        std::fs::write(&f, "0,4096,1\n4096,100,2\n").unwrap();
        let e = rule(&[("dp_scheme", f.to_str().unwrap())]).unwrap_err();
        assert!(e.contains("scheme:2: field end: `100`: must be above start (4096)"), "{e}");
        std::fs::write(&f, "0,4096\n").unwrap();
        let e = rule(&[("dp_scheme", f.to_str().unwrap())]).unwrap_err();
        assert!(e.contains("scheme:1: field line"), "{e}");
    }
}
