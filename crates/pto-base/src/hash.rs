//! Hex text and SHA-256: the one lower-case hex encoder and the digests the caches, the
//! program identities and the build stamps are keyed by.

use sha2::{Digest, Sha256};

/// `bytes` as lower-case hex, two digits a byte (`[0x00, 0xab]` → `00ab`).
pub fn hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut s = String::with_capacity(bytes.len() * 2);
    for &b in bytes {
        s.push(char::from(DIGITS[usize::from(b >> 4)]));
        s.push(char::from(DIGITS[usize::from(b & 0xf)]));
    }
    s
}

/// The SHA-256 of `data`, as 64 lower-case hex digits.
pub fn sha256_hex(data: &[u8]) -> String {
    hex(&Sha256::digest(data))
}

/// A SHA-256 of fields with unambiguous framing: a domain first, then each field preceded by
/// its length (8 bytes, little-endian), so `("ab", "c")` and `("a", "bc")` never hash the
/// same.
#[derive(Clone, Debug)]
pub struct KeyHasher(Sha256);

impl KeyHasher {
    /// A hasher whose first field is `domain` (what the key is of).
    pub fn new(domain: &str) -> Self {
        let mut h = KeyHasher(Sha256::new());
        h.field(domain.as_bytes());
        h
    }

    /// Adds one field.
    pub fn field(&mut self, data: &[u8]) -> &mut Self {
        self.0.update((data.len() as u64).to_le_bytes());
        self.0.update(data);
        self
    }

    /// The digest, as 64 lower-case hex digits.
    pub fn finish(self) -> String {
        hex(&self.0.finalize())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hex_and_sha256_match_known_values() {
        assert_eq!(hex(&[0x00, 0xab, 0x7f]), "00ab7f");
        assert_eq!(hex(&[]), "");
        assert_eq!(
            sha256_hex(b"abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
    }

    #[test]
    fn fields_are_framed() {
        let mut a = KeyHasher::new("d");
        a.field(b"ab").field(b"c");
        let mut b = KeyHasher::new("d");
        b.field(b"a").field(b"bc");
        assert_ne!(a.clone().finish(), b.finish());
        // The framing is the bytes hashed: the domain, then each field, length first.
        let mut framed = Vec::new();
        for f in [&b"d"[..], b"ab", b"c"] {
            framed.extend_from_slice(&(f.len() as u64).to_le_bytes());
            framed.extend_from_slice(f);
        }
        assert_eq!(a.finish(), sha256_hex(&framed));
    }
}
