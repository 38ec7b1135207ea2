//! Passwords and the server's side of password authentication, without I/O:
//! the stored forms PostgreSQL uses (`SCRAM-SHA-256$<iter>:<salt>$<StoredKey>:<ServerKey>`
//! and `md5<hex>`), making them from a password (`hash_password`), the
//! SCRAM-SHA-256 exchange (RFC 5802/7677, no channel binding: `scram.rs`),
//! the MD5 challenge check, and the delay that grows with failed logins per
//! client address (`FailedLogins`).
//! Must not: read or write sockets (`wire/` drives the messages) or look up
//! roles in the catalog (the caller passes the stored password).

pub mod scram;

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use base64::Engine;
use hmac::{KeyInit, Mac};
use md5::{Digest, Md5};
use sha2::Sha256;

type HmacSha256 = hmac::Hmac<Sha256>;

/// PostgreSQL's default scram_iterations.
pub const SCRAM_ITERATIONS: u32 = 4096;
const SALT_BYTES: usize = 16;

/// How a role's password is stored: `password_encryption`'s two values.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Encryption {
    ScramSha256,
    Md5,
}

impl Encryption {
    /// `password_encryption`'s setting; anything but `md5` is SCRAM (as PostgreSQL: on/off are gone).
    pub fn from_setting(s: Option<&str>) -> Encryption {
        match s {
            Some(v) if v.eq_ignore_ascii_case("md5") => Encryption::Md5,
            _ => Encryption::ScramSha256,
        }
    }
}

/// A parsed SCRAM-SHA-256 verifier.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScramVerifier {
    pub iterations: u32,
    pub salt: Vec<u8>,
    pub stored_key: [u8; 32],
    pub server_key: [u8; 32],
}

impl ScramVerifier {
    /// The verifier for `password` with a fresh random salt.
    pub fn new(password: &str) -> ScramVerifier {
        let mut salt = vec![0u8; SALT_BYTES];
        random_bytes(&mut salt);
        Self::with_salt(password, &salt, SCRAM_ITERATIONS)
    }

    pub fn with_salt(password: &str, salt: &[u8], iterations: u32) -> ScramVerifier {
        let salted = hi(password.as_bytes(), salt, iterations);
        let client_key = hmac(&salted, b"Client Key");
        ScramVerifier {
            iterations,
            salt: salt.to_vec(),
            stored_key: sha256(&client_key),
            server_key: hmac(&salted, b"Server Key"),
        }
    }

    /// `SCRAM-SHA-256$<iter>:<salt>$<StoredKey>:<ServerKey>` (base64), as pg_authid holds it.
    pub fn to_stored(&self) -> String {
        let b = base64::engine::general_purpose::STANDARD;
        format!(
            "SCRAM-SHA-256${}:{}${}:{}",
            self.iterations,
            b.encode(&self.salt),
            b.encode(self.stored_key),
            b.encode(self.server_key)
        )
    }

    /// Parses the stored form; `None` when `s` is not one.
    pub fn parse(s: &str) -> Option<ScramVerifier> {
        let b = base64::engine::general_purpose::STANDARD;
        let rest = s.strip_prefix("SCRAM-SHA-256$")?;
        let (params, keys) = rest.split_once('$')?;
        let (iterations, salt) = params.split_once(':')?;
        let (stored, server) = keys.split_once(':')?;
        let iterations: u32 = iterations.parse().ok().filter(|&i| i > 0)?;
        let salt = b.decode(salt).ok().filter(|s| !s.is_empty())?;
        Some(ScramVerifier {
            iterations,
            salt,
            stored_key: b.decode(stored).ok()?.try_into().ok()?,
            server_key: b.decode(server).ok()?.try_into().ok()?,
        })
    }
}

/// `md5` followed by 32 lower-case hex digits: PostgreSQL's MD5 form.
pub fn is_md5_hash(s: &str) -> bool {
    s.len() == 35
        && s.starts_with("md5")
        && s.bytes()
            .skip(3)
            .all(|c| c.is_ascii_digit() || (b'a'..=b'f').contains(&c))
}

/// `md5(password || user)` in PostgreSQL's stored form.
pub fn md5_hash(password: &str, user: &str) -> String {
    let mut h = Md5::new();
    h.update(password.as_bytes());
    h.update(user.as_bytes());
    format!("md5{}", hex(&h.finalize()))
}

/// What `CREATE/ALTER ROLE … PASSWORD 'x'` stores: a literal already in one
/// of the stored forms as given, else the password hashed per `encryption`.
pub fn hash_password(password: &str, user: &str, encryption: Encryption) -> String {
    if is_md5_hash(password) || ScramVerifier::parse(password).is_some() {
        return password.to_string();
    }
    match encryption {
        Encryption::ScramSha256 => ScramVerifier::new(password).to_stored(),
        Encryption::Md5 => md5_hash(password, user),
    }
}

/// The MD5 exchange's check: the client answers a 4-byte salt with
/// `md5` + hex(md5(hex part of the stored hash || salt)).
pub fn md5_response_matches(stored: &str, salt: &[u8; 4], response: &str) -> bool {
    let Some(inner) = stored.strip_prefix("md5") else {
        return false;
    };
    let mut h = Md5::new();
    h.update(inner.as_bytes());
    h.update(salt);
    let expected = format!("md5{}", hex(&h.finalize()));
    constant_time_eq(expected.as_bytes(), response.as_bytes())
}

pub fn random_bytes(buf: &mut [u8]) {
    if getrandom::fill(buf).is_err() {
        // No OS randomness: fall back to a hash of the time and the buffer's
        // address (never reached on Linux, where getrandom(2) exists).
        use std::hash::{BuildHasher, Hasher};
        for chunk in buf.chunks_mut(8) {
            let mut h = std::collections::hash_map::RandomState::new().build_hasher();
            h.write_u128(
                std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .map(|d| d.as_nanos())
                    .unwrap_or(0),
            );
            let v = h.finish().to_le_bytes();
            chunk.copy_from_slice(&v[..chunk.len()]);
        }
    }
}

pub fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

pub(crate) fn hmac(key: &[u8], data: &[u8]) -> [u8; 32] {
    // HMAC takes keys of any length.
    let mut m = <HmacSha256 as KeyInit>::new_from_slice(key).expect("HMAC accepts any key length");
    m.update(data);
    m.finalize().into_bytes().into()
}

pub(crate) fn sha256(data: &[u8]) -> [u8; 32] {
    Sha256::digest(data).into()
}

/// RFC 5802's Hi(): PBKDF2 with HMAC-SHA-256, one block.
fn hi(password: &[u8], salt: &[u8], iterations: u32) -> [u8; 32] {
    let mut m =
        <HmacSha256 as KeyInit>::new_from_slice(password).expect("HMAC accepts any key length");
    m.update(salt);
    m.update(&1u32.to_be_bytes());
    let mut u: [u8; 32] = m.finalize().into_bytes().into();
    let mut out = u;
    for _ in 1..iterations {
        u = hmac(password, &u);
        for (o, x) in out.iter_mut().zip(u.iter()) {
            *o ^= x;
        }
    }
    out
}

/// Failed logins per client address: each failure makes the next failure's
/// answer wait longer (100 ms, doubling, at most 5 s); an address without
/// failures for 10 minutes starts over. The wait is the session task's
/// (`tokio::time::sleep`), so other sessions and the shard go on.
#[derive(Default)]
pub struct FailedLogins {
    by_address: Mutex<HashMap<IpAddr, (u32, Instant)>>,
}

const FAILURE_MEMORY: Duration = Duration::from_secs(600);
const FIRST_DELAY: Duration = Duration::from_millis(100);
const MAX_DELAY: Duration = Duration::from_secs(5);
/// Entries kept before old ones are pruned (bounds memory under a spray of addresses).
const MAX_ADDRESSES: usize = 10_000;

impl FailedLogins {
    /// Records a failure from `addr` and returns how long to wait before answering it.
    pub fn record_failure(&self, addr: Option<IpAddr>) -> Duration {
        let Some(addr) = addr else {
            return FIRST_DELAY;
        };
        let now = Instant::now();
        let mut map = self.by_address.lock().unwrap_or_else(|p| p.into_inner());
        if map.len() >= MAX_ADDRESSES {
            map.retain(|_, (_, last)| now.duration_since(*last) < FAILURE_MEMORY);
        }
        let entry = map.entry(addr).or_insert((0, now));
        if now.duration_since(entry.1) >= FAILURE_MEMORY {
            entry.0 = 0;
        }
        entry.0 = entry.0.saturating_add(1);
        entry.1 = now;
        let doublings = (entry.0 - 1).min(16);
        (FIRST_DELAY * (1u32 << doublings)).min(MAX_DELAY)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn md5_as_postgres() {
        // SELECT 'md5' || md5('secret' || 'alice') in PostgreSQL.
        assert_eq!(
            md5_hash("secret", "alice"),
            format!("md5{}", hex(&Md5::digest(b"secretalice")))
        );
        assert!(is_md5_hash(&md5_hash("secret", "alice")));
        assert!(!is_md5_hash("md5xyz"));
        let stored = md5_hash("secret", "alice");
        let salt = [1, 2, 3, 4];
        let mut h = Md5::new();
        h.update(&stored.as_bytes()[3..]);
        h.update(salt);
        let response = format!("md5{}", hex(&h.finalize()));
        assert!(md5_response_matches(&stored, &salt, &response));
        assert!(!md5_response_matches(&stored, &[0, 0, 0, 0], &response));
    }

    #[test]
    fn scram_verifier_round_trips_and_matches_rfc7677() {
        // RFC 7677's example: password "pencil", salt W22ZaJ0SNY7soEsUEjb6gQ==, 4096 iterations.
        let salt = base64::engine::general_purpose::STANDARD
            .decode("W22ZaJ0SNY7soEsUEjb6gQ==")
            .unwrap();
        let v = ScramVerifier::with_salt("pencil", &salt, 4096);
        let stored = v.to_stored();
        assert_eq!(ScramVerifier::parse(&stored), Some(v.clone()));
        // ServerSignature of the RFC's exchange is 6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4=.
        let auth = "n=user,r=rOprNGfwEbeRWgbNEkqO,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096,c=biws,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0";
        let sig = hmac(&v.server_key, auth.as_bytes());
        assert_eq!(
            base64::engine::general_purpose::STANDARD.encode(sig),
            "6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4="
        );
        assert_eq!(hash_password(&stored, "x", Encryption::Md5), stored);
        assert!(ScramVerifier::parse("SCRAM-SHA-256$0:abc$x:y").is_none());
    }

    #[test]
    fn failures_wait_longer_each_time() {
        let f = FailedLogins::default();
        let a = Some("10.0.0.1".parse().unwrap());
        let d1 = f.record_failure(a);
        let d2 = f.record_failure(a);
        assert!(d2 > d1);
        assert_eq!(f.record_failure(Some("10.0.0.2".parse().unwrap())), d1);
        for _ in 0..40 {
            assert!(f.record_failure(a) <= MAX_DELAY);
        }
    }
}
