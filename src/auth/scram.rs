//! The server's side of one SCRAM-SHA-256 exchange (RFC 5802, RFC 7677) as
//! PostgreSQL runs it: the user name in the client's first message is
//! ignored (the startup packet's counts), channel binding is not offered
//! (`n` or `y` GS2 flags; `p` is refused), and a role that cannot log in by
//! password runs the exchange against a mock verifier so that the client
//! learns nothing before the final answer.
//! Must not: do I/O; every malformed message is an `Err` (the caller's 08P01).

use base64::Engine;

use super::{constant_time_eq, hmac, random_bytes, sha256, ScramVerifier, SCRAM_ITERATIONS};

pub const MECHANISM: &str = "SCRAM-SHA-256";
const NONCE_BYTES: usize = 18;

/// What went wrong in an exchange.
#[derive(Debug, PartialEq, Eq)]
pub enum ScramError {
    /// The client's message does not follow the protocol (08P01).
    Malformed(String),
    /// The proof did not match, or the role had no usable verifier (28P01).
    Failed,
}

/// An exchange waiting for the client's final message.
pub struct ScramExchange {
    verifier: ScramVerifier,
    /// False for the mock: the exchange runs, then fails.
    real: bool,
    client_first_bare: String,
    server_first: String,
    /// base64 of the client's GS2 header (what `c=` must echo).
    gs2_header_b64: String,
    nonce: String,
}

fn b64() -> base64::engine::GeneralPurpose {
    base64::engine::general_purpose::STANDARD
}

fn malformed(what: &str) -> ScramError {
    ScramError::Malformed(format!("malformed SCRAM message ({what})"))
}

impl ScramExchange {
    /// Takes the client-first-message; answers the server-first-message.
    /// `verifier` is `None` for a role that cannot authenticate (unknown, no
    /// SCRAM password): a mock one stands in and the exchange will fail.
    pub fn start(
        verifier: Option<ScramVerifier>,
        client_first: &[u8],
    ) -> Result<(ScramExchange, String), ScramError> {
        let text = std::str::from_utf8(client_first).map_err(|_| malformed("not UTF-8"))?;
        // gs2-header: cbind-flag "," [authzid] ","
        let (flag, rest) = text
            .split_once(',')
            .ok_or_else(|| malformed("no GS2 header"))?;
        match flag {
            "n" | "y" => {}
            f if f.starts_with("p=") => {
                return Err(ScramError::Malformed(
                    "channel binding is not supported: use SCRAM-SHA-256".into(),
                ))
            }
            _ => return Err(malformed("unexpected channel-binding flag")),
        }
        let (authzid, bare) = rest
            .split_once(',')
            .ok_or_else(|| malformed("no GS2 header"))?;
        if !authzid.is_empty() {
            return Err(malformed("authorization identity is not supported"));
        }
        let gs2_header = &text[..flag.len() + 1 + authzid.len() + 1];
        let mut attrs = bare.split(',');
        let user = attrs.next().unwrap_or("");
        if user.starts_with("m=") {
            return Err(malformed("extensions are not supported"));
        }
        if !user.starts_with("n=") {
            return Err(malformed("expected user name"));
        }
        let client_nonce = attrs
            .next()
            .and_then(|a| a.strip_prefix("r="))
            .filter(|n| !n.is_empty() && n.bytes().all(|c| (0x21..=0x7e).contains(&c) && c != b','))
            .ok_or_else(|| malformed("expected a client nonce"))?;
        let (verifier, real) = match verifier {
            Some(v) => (v, true),
            None => {
                let mut salt = [0u8; 16];
                random_bytes(&mut salt);
                let mut key = [0u8; 32];
                random_bytes(&mut key);
                (
                    ScramVerifier {
                        iterations: SCRAM_ITERATIONS,
                        salt: salt.to_vec(),
                        stored_key: key,
                        server_key: key,
                    },
                    false,
                )
            }
        };
        let mut server_nonce = [0u8; NONCE_BYTES];
        random_bytes(&mut server_nonce);
        let nonce = format!("{client_nonce}{}", b64().encode(server_nonce));
        let server_first = format!(
            "r={nonce},s={},i={}",
            b64().encode(&verifier.salt),
            verifier.iterations
        );
        Ok((
            ScramExchange {
                verifier,
                real,
                client_first_bare: bare.to_string(),
                server_first: server_first.clone(),
                gs2_header_b64: b64().encode(gs2_header),
                nonce,
            },
            server_first,
        ))
    }

    /// Takes the client-final-message; answers the server-final-message
    /// (`v=<ServerSignature>`) when the proof is right.
    pub fn finish(self, client_final: &[u8]) -> Result<String, ScramError> {
        let text = std::str::from_utf8(client_final).map_err(|_| malformed("not UTF-8"))?;
        let (without_proof, proof) = text
            .rsplit_once(",p=")
            .ok_or_else(|| malformed("expected a proof"))?;
        let mut attrs = without_proof.split(',');
        let mut expect = |prefix: &str, wanted: &str, what: &str| match attrs
            .next()
            .and_then(|a| a.strip_prefix(prefix))
        {
            Some(v) if v == wanted => Ok(()),
            _ => Err(malformed(what)),
        };
        expect(
            "c=",
            &self.gs2_header_b64,
            "unexpected channel binding data",
        )?;
        expect("r=", &self.nonce, "nonce does not match")?;
        let proof = b64()
            .decode(proof)
            .map_err(|_| malformed("proof is not base64"))?;
        if proof.len() != 32 {
            return Err(malformed("proof has the wrong length"));
        }
        let auth_message = format!(
            "{},{},{}",
            self.client_first_bare, self.server_first, without_proof
        );
        let signature = hmac(&self.verifier.stored_key, auth_message.as_bytes());
        let client_key: Vec<u8> = proof
            .iter()
            .zip(signature.iter())
            .map(|(p, s)| p ^ s)
            .collect();
        if !self.real || !constant_time_eq(&sha256(&client_key), &self.verifier.stored_key) {
            return Err(ScramError::Failed);
        }
        let server_signature = hmac(&self.verifier.server_key, auth_message.as_bytes());
        Ok(format!("v={}", b64().encode(server_signature)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A client's side, for the tests: the proof for `password`.
    fn client_final(password: &str, client_first_bare: &str, server_first: &str) -> String {
        let mut parts = server_first.split(',');
        let nonce = parts.next().unwrap().strip_prefix("r=").unwrap();
        let salt = b64()
            .decode(parts.next().unwrap().strip_prefix("s=").unwrap())
            .unwrap();
        let iterations: u32 = parts
            .next()
            .unwrap()
            .strip_prefix("i=")
            .unwrap()
            .parse()
            .unwrap();
        let v = ScramVerifier::with_salt(password, &salt, iterations);
        let salted = super::super::hi(password.as_bytes(), &salt, iterations);
        let client_key = hmac(&salted, b"Client Key");
        let without_proof = format!("c=biws,r={nonce}");
        let auth = format!("{client_first_bare},{server_first},{without_proof}");
        let sig = hmac(&v.stored_key, auth.as_bytes());
        let proof: Vec<u8> = client_key
            .iter()
            .zip(sig.iter())
            .map(|(a, b)| a ^ b)
            .collect();
        format!("{without_proof},p={}", b64().encode(proof))
    }

    #[test]
    fn exchange_accepts_the_right_password_only() {
        let v = ScramVerifier::new("pencil");
        let (ex, first) = ScramExchange::start(Some(v.clone()), b"n,,n=,r=abcdef").unwrap();
        assert!(first.starts_with("r=abcdef"));
        let fin = client_final("pencil", "n=,r=abcdef", &first);
        let answer = ex.finish(fin.as_bytes()).unwrap();
        assert!(answer.starts_with("v="));

        let (ex, first) = ScramExchange::start(Some(v), b"n,,n=,r=abcdef").unwrap();
        let fin = client_final("wrong", "n=,r=abcdef", &first);
        assert_eq!(ex.finish(fin.as_bytes()).err(), Some(ScramError::Failed));

        let (ex, first) = ScramExchange::start(None, b"n,,n=,r=abcdef").unwrap();
        let fin = client_final("pencil", "n=,r=abcdef", &first);
        assert_eq!(ex.finish(fin.as_bytes()).err(), Some(ScramError::Failed));
    }

    #[test]
    fn malformed_messages_are_errors_not_panics() {
        for bad in [
            &b""[..],
            b"n",
            b"n,",
            b"x,,n=,r=a",
            b"p=tls-server-end-point,,n=,r=a",
            b"n,,r=a",
            b"n,,n=",
            b"\xff\xfe",
            b"n,a=b,n=,r=x",
        ] {
            assert!(
                matches!(
                    ScramExchange::start(None, bad),
                    Err(ScramError::Malformed(_))
                ),
                "{bad:?}"
            );
        }
        let v = ScramVerifier::new("pencil");
        for bad in [
            &b""[..],
            b"c=biws",
            b"c=biws,r=x,p=AAAA",
            b"c=xx,r=y,p=",
            b",p=\xff",
        ] {
            let (ex, _) = ScramExchange::start(Some(v.clone()), b"n,,n=,r=abc").unwrap();
            assert!(
                matches!(ex.finish(bad), Err(ScramError::Malformed(_))),
                "{bad:?}"
            );
        }
    }
}
