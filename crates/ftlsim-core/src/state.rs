//! The encoding of component state in drive snapshots (`--save-state`, `sim/snapshot.rs`):
//! serde with postcard, a compact binary format with a published specification. Each
//! component (the flash array, each FTL) encodes itself whole; a snapshot file wraps the
//! parts with a header, a checksum and zstd.

use serde::de::DeserializeOwned;
use serde::Serialize;

/// Encode `value`.
pub fn encode<T: Serialize>(value: &T) -> Vec<u8> {
    // Encoding into a growing Vec fails only for types postcard cannot express (none here).
    postcard::to_stdvec(value).expect("component state encodes")
}

/// Decode a `T` that must span all of `bytes`; the message says what did not fit.
pub fn decode<T: DeserializeOwned>(bytes: &[u8]) -> Result<T, String> {
    let (value, rest) = postcard::take_from_bytes::<T>(bytes).map_err(|e| e.to_string())?;
    if !rest.is_empty() {
        return Err(format!("{} bytes left over after the state", rest.len()));
    }
    Ok(value)
}

#[cfg(test)]
mod tests {
    #[test]
    fn round_trips_and_refuses_leftovers_and_truncation() {
        let v: Vec<u32> = (0..1000).map(|i| i * 7919).collect();
        let b = super::encode(&v);
        assert_eq!(super::decode::<Vec<u32>>(&b).unwrap(), v);
        let mut longer = b.clone();
        longer.push(0);
        assert!(super::decode::<Vec<u32>>(&longer).unwrap_err().contains("left over"));
        assert!(super::decode::<Vec<u32>>(&b[..b.len() - 3]).is_err());
    }
}
