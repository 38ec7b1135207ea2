//! Authentication of a startup, as PostgreSQL's `md5`/`scram-sha-256` hba
//! methods behave: who must give a password (`--auth`: everyone, no one, or
//! hosts other than this one), then the exchange the role's stored password
//! calls for — SCRAM-SHA-256 over SASL (AuthenticationSASL,
//! SASLInitialResponse, SASLContinue, SASLResponse, SASLFinal) or MD5 with a
//! 4-byte salt. Every failure (wrong password, unknown role, role without a
//! password) is the same FATAL 28P01, answered after a delay that grows with
//! the address's failures (`auth::FailedLogins`, an async sleep); a role
//! without LOGIN gets 28000 once its password was right; a malformed SASL
//! message is 08P01 at once (it tried no password).
//! Must not: do the cryptography (`auth/`), or count connections.

use std::net::SocketAddr;

use bytes::{Buf, Bytes};
use pgwire::messages::startup::{Authentication, PasswordMessageFamily};
use pgwire::messages::{PgWireBackendMessage as B, PgWireFrontendMessage as F};

use super::Connection;
use crate::auth::scram::{ScramError, ScramExchange, MECHANISM};
use crate::auth::{md5_response_matches, random_bytes, ScramVerifier};
use crate::catalog::RoleDef;
use crate::config::AuthMode;
use crate::error::{sqlstate, DbError, DbResult};
use crate::server::Server;

/// How the startup ended.
pub enum Outcome {
    /// Authenticated (or trusted).
    Ok,
    /// The client went away during the exchange (psql does, to ask for a password).
    Gone,
}

fn is_loopback(peer: Option<SocketAddr>) -> bool {
    peer.is_some_and(|p| match p.ip() {
        std::net::IpAddr::V4(a) => a.is_loopback(),
        std::net::IpAddr::V6(a) => {
            a.is_loopback() || a.to_ipv4_mapped().is_some_and(|v4| v4.is_loopback())
        }
    })
}

/// What a startup from `peer` must do.
#[derive(Debug, PartialEq, Eq)]
enum Policy {
    /// `--tls require` and a clear connection from another host.
    Refuse,
    Trust,
    Password,
}

fn policy(access: &crate::server::Access, peer: Option<SocketAddr>, tls: bool) -> Policy {
    let local = is_loopback(peer);
    if access.tls_required && !tls && !local {
        return Policy::Refuse;
    }
    let password = match access.auth {
        AuthMode::Trust => false,
        AuthMode::Password => true,
        AuthMode::LocalTrust => !local,
    };
    if password {
        Policy::Password
    } else {
        Policy::Trust
    }
}

fn failed(user: &str) -> DbError {
    DbError::new(
        sqlstate::INVALID_PASSWORD,
        format!("password authentication failed for user \"{user}\""),
    )
    .fatal()
}

/// Checks the transport and the password of `user` (the role as the catalog
/// has it, None when no role has that name) for a startup from `conn`.
pub(super) async fn authenticate(
    conn: &mut Connection,
    server: &Server,
    user: &str,
    database: &str,
    role: Option<&RoleDef>,
) -> DbResult<Outcome> {
    let needs_password = match policy(&server.access, conn.peer, conn.stream.is_tls()) {
        Policy::Refuse => {
            let host = conn.peer.map(|p| p.ip().to_string()).unwrap_or_default();
            return Err(DbError::new(
                "28000",
                format!("no pg_hba.conf entry for host \"{host}\", user \"{user}\", database \"{database}\", no encryption"),
            )
            .fatal());
        }
        Policy::Trust => false,
        Policy::Password => true,
    };
    if needs_password {
        let stored = role.and_then(|r| r.password.as_deref());
        let result = match stored {
            Some(s) if crate::auth::is_md5_hash(s) => md5_exchange(conn, s).await,
            s => scram_exchange(conn, s.and_then(ScramVerifier::parse)).await,
        };
        match result {
            Ok(true) => {}
            Ok(false) => return Ok(Outcome::Gone),
            // A malformed message tried no password: answered at once.
            Err(e) if e.code == sqlstate::PROTOCOL_VIOLATION => return Err(e),
            Err(_) => {
                let delay = server
                    .failed_logins
                    .record_failure(conn.peer.map(|p| p.ip()));
                tokio::time::sleep(delay).await;
                return Err(failed(user));
            }
        }
    }
    if let Some(r) = role {
        if !r.login {
            return Err(DbError::new(
                "28000",
                format!("role \"{user}\" is not permitted to log in"),
            )
            .fatal());
        }
    }
    Ok(Outcome::Ok)
}

/// Reads the next password-family message's body; None when the client left.
async fn password_message(conn: &mut Connection) -> DbResult<Option<Bytes>> {
    match conn.read_message().await? {
        None => Ok(None),
        Some(F::PasswordMessageFamily(PasswordMessageFamily::Raw(body))) => Ok(Some(body.freeze())),
        Some(F::Terminate(_)) => Ok(None),
        Some(_) => Err(DbError::protocol("expected password response").fatal()),
    }
}

fn protocol(message: String) -> DbError {
    DbError::protocol(message).fatal()
}

/// SCRAM-SHA-256; `Ok(false)` when the client went away, Err 28P01 when the proof is wrong.
async fn scram_exchange(conn: &mut Connection, verifier: Option<ScramVerifier>) -> DbResult<bool> {
    conn.send(B::Authentication(Authentication::SASL(vec![
        MECHANISM.to_string()
    ])));
    conn.flush().await?;
    let Some(mut body) = password_message(conn).await? else {
        return Ok(false);
    };
    // SASLInitialResponse: mechanism (C string), Int32 length (-1 = none), data.
    let nul = body
        .iter()
        .position(|&b| b == 0)
        .ok_or_else(|| protocol("malformed SASLInitialResponse message".into()))?;
    let mechanism = String::from_utf8_lossy(&body[..nul]).into_owned();
    body.advance(nul + 1);
    if mechanism != MECHANISM {
        return Err(protocol(
            "client selected an invalid SASL authentication mechanism".into(),
        ));
    }
    if body.len() < 4 {
        return Err(protocol("malformed SASLInitialResponse message".into()));
    }
    let len = body.get_i32();
    if len < 0 || len as usize != body.len() {
        return Err(protocol("malformed SASLInitialResponse message".into()));
    }
    let scram_error = |e: ScramError| match e {
        ScramError::Malformed(m) => protocol(m),
        ScramError::Failed => {
            DbError::new(sqlstate::INVALID_PASSWORD, "password authentication failed")
        }
    };
    let (exchange, server_first) = ScramExchange::start(verifier, &body).map_err(scram_error)?;
    conn.send(B::Authentication(Authentication::SASLContinue(
        Bytes::from(server_first),
    )));
    conn.flush().await?;
    let Some(body) = password_message(conn).await? else {
        return Ok(false);
    };
    let server_final = exchange.finish(&body).map_err(scram_error)?;
    conn.send(B::Authentication(Authentication::SASLFinal(Bytes::from(
        server_final,
    ))));
    Ok(true)
}

/// MD5 with a random 4-byte salt.
async fn md5_exchange(conn: &mut Connection, stored: &str) -> DbResult<bool> {
    let mut salt = [0u8; 4];
    random_bytes(&mut salt);
    conn.send(B::Authentication(Authentication::MD5Password(
        salt.to_vec(),
    )));
    conn.flush().await?;
    let Some(body) = password_message(conn).await? else {
        return Ok(false);
    };
    let end = body.iter().position(|&b| b == 0).unwrap_or(body.len());
    let response = String::from_utf8_lossy(&body[..end]);
    if md5_response_matches(stored, &salt, &response) {
        Ok(true)
    } else {
        Err(DbError::new(
            sqlstate::INVALID_PASSWORD,
            "password authentication failed",
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::{is_loopback, policy, Policy};
    use crate::config::AuthMode;
    use crate::server::Access;

    #[test]
    fn who_must_give_a_password() {
        let local = Some("127.0.0.1:5000".parse().unwrap());
        let remote = Some("192.0.2.7:5000".parse().unwrap());
        let access = |auth, tls_required| Access {
            auth,
            tls_required,
            ..Access::default()
        };
        // The default: loopback trusted, any other host asked.
        let default = Access::default();
        assert_eq!(policy(&default, local, false), Policy::Trust);
        assert_eq!(policy(&default, remote, false), Policy::Password);
        assert_eq!(policy(&default, None, false), Policy::Password);
        assert_eq!(
            policy(&access(AuthMode::Password, false), local, false),
            Policy::Password
        );
        assert_eq!(
            policy(&access(AuthMode::Trust, false), remote, false),
            Policy::Trust
        );
        // --tls require: clear connections only from this host.
        let require = access(AuthMode::LocalTrust, true);
        assert_eq!(policy(&require, remote, false), Policy::Refuse);
        assert_eq!(policy(&require, remote, true), Policy::Password);
        assert_eq!(policy(&require, local, false), Policy::Trust);
    }

    #[test]
    fn loopback_addresses() {
        assert!(is_loopback(Some("127.0.0.1:5".parse().unwrap())));
        assert!(is_loopback(Some("127.8.0.1:5".parse().unwrap())));
        assert!(is_loopback(Some("[::1]:5".parse().unwrap())));
        assert!(is_loopback(Some("[::ffff:127.0.0.1]:5".parse().unwrap())));
        assert!(!is_loopback(Some("10.0.0.1:5".parse().unwrap())));
        assert!(!is_loopback(None));
    }
}
