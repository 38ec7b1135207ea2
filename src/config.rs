//! Server configuration from the command line and environment
//! (`--listen`/BREWRIC_LISTEN, `--data-dir`/BREWRIC_DATA_DIR, `--shards`/BREWRIC_SHARDS,
//! `--auth`/BREWRIC_AUTH, `--tls-cert`/BREWRIC_TLS_CERT, …).
//! Must not: start anything.

use std::path::PathBuf;

#[derive(Debug, Clone)]
pub struct Config {
    pub listen: String,
    pub data_dir: PathBuf,
    pub shards: usize,
    /// Most memory one statement's sorts, joins, DISTINCT and aggregates may hold.
    pub query_memory_mb: usize,
    /// A shard's memtables above this many MiB trigger a checkpoint (flush to segments).
    pub flush_mb: usize,
    /// All shards' memtables above this many MiB make writes wait for the
    /// flush; `None`: a quarter of the machine's memory, at least 4 × the
    /// flush threshold per shard (`Config::memtable_limit_bytes`).
    pub memtable_limit_mb: Option<usize>,
    /// Rows older than this many seconds in a memtable trigger a checkpoint.
    pub flush_age_s: usize,
    /// Block cache bound per shard, MiB.
    pub cache_mb: usize,
    /// The InfluxDB-compatible HTTP API's address; `None` = off.
    pub http: Option<String>,
    /// Largest HTTP request body in bytes (before and after gzip).
    pub http_max_body: usize,
    /// The token HTTP writes must present; `None` = no authentication.
    pub http_token: Option<String>,
    /// ILP over TCP's address; `None` = off.
    pub ilp: Option<String>,
    /// The schema ILP/TCP writes go to.
    pub ilp_schema: String,
    /// The database HTTP and ILP writes go to (their db/bucket names a schema in it).
    pub ingest_database: String,
    /// Who must give a password.
    pub auth: AuthMode,
    /// The bootstrap superusers' password, set at every start when given
    /// (`--password-file` or BREWRIC_PASSWORD).
    pub password: Option<String>,
    pub max_connections: usize,
    /// PEM certificate chain and private key; both or neither.
    pub tls_cert: Option<PathBuf>,
    pub tls_key: Option<PathBuf>,
    /// `--tls require`: clear connections from other hosts are refused.
    pub tls_required: bool,
}

/// `--auth`: trust everyone, ask everyone for a password, or (the default)
/// trust connections from this host (loopback) and ask the others.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AuthMode {
    Trust,
    Password,
    LocalTrust,
}

pub const DEFAULT_MAX_CONNECTIONS: usize = 100;

fn parse_auth(s: &str) -> Result<AuthMode, String> {
    match s.to_ascii_lowercase().as_str() {
        "trust" => Ok(AuthMode::Trust),
        "password" | "scram-sha-256" | "md5" => Ok(AuthMode::Password),
        "local-trust" | "default" => Ok(AuthMode::LocalTrust),
        _ => Err(format!(
            "--auth must be trust, password or local-trust, got {s:?}"
        )),
    }
}

/// `--tls`: `require` refuses clear connections from other hosts; `on` (the
/// default with a certificate) offers TLS; `off` ignores the certificate.
fn parse_tls_mode(s: &str) -> Result<(bool, bool), String> {
    match s.to_ascii_lowercase().as_str() {
        "on" | "prefer" => Ok((true, false)),
        "require" => Ok((true, true)),
        "off" => Ok((false, false)),
        _ => Err(format!("--tls must be on, require or off, got {s:?}")),
    }
}

fn read_password_file(path: &str) -> Result<String, String> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("cannot read --password-file {path}: {e}"))?;
    let password = text.lines().next().unwrap_or("").to_string();
    if password.is_empty() {
        return Err(format!(
            "--password-file {path} holds no password on its first line"
        ));
    }
    Ok(password)
}

pub const USAGE: &str = "usage: brewricd [--listen HOST:PORT] [--data-dir DIR] [--shards N]\n\
  --listen HOST:PORT  address to serve the PostgreSQL protocol on (env BREWRIC_LISTEN, default 127.0.0.1:5432)\n\
  --data-dir DIR      where data lives (env BREWRIC_DATA_DIR, default ./brewric-data)\n\
  --shards N          shard threads, one per core (env BREWRIC_SHARDS, default: number of cores)\n\
  --query-memory-mb N memory one statement may hold in sorts, joins, DISTINCT and aggregates
                      (env BREWRIC_QUERY_MEMORY_MB, default 4096); beyond it the statement fails with 53200
  --flush-mb N        a shard's memtables above N MiB are flushed to segment files (env BREWRIC_FLUSH_MB, default 256)
  --memtable-limit-mb N  writes wait for the flush while all memtables hold more than N MiB
                      (env BREWRIC_MEMTABLE_LIMIT_MB, default a quarter of RAM, at least 4 x flush-mb per shard)
  --flush-age-s N     rows older than N seconds in memory are flushed (env BREWRIC_FLUSH_AGE_S, default 300)
  --cache-mb N        block cache per shard, MiB (env BREWRIC_CACHE_MB, default 256)
  --http HOST:PORT    InfluxDB-compatible HTTP write API, or `off` (env BREWRIC_HTTP, default 127.0.0.1:8086)
  --http-max-body N   largest HTTP body in bytes, before and after gzip; 25MB style suffixes KB/MB/GB
                      (env BREWRIC_HTTP_MAX_BODY, default 25MB)
  --http-token T      HTTP requests must present T (Authorization: Token T / Bearer T / Basic
                      with password T, or ?p=T); else 401 (env BREWRIC_HTTP_TOKEN, default: none)
  --ilp HOST:PORT     line protocol over TCP (QuestDB's ILP), or `off` (env BREWRIC_ILP, default 127.0.0.1:9009)
  --ilp-schema S      the schema ILP/TCP writes into (env BREWRIC_ILP_SCHEMA, default public)
  --ingest-database D the database HTTP and ILP writes go to (env BREWRIC_INGEST_DATABASE, default brewric)
  --auth MODE         trust | password | local-trust: who must authenticate with a password (SCRAM-SHA-256
                      or MD5, as the role's password is stored); local-trust trusts loopback connections and
                      asks any other host (env BREWRIC_AUTH, default local-trust)
  --password-file F   the bootstrap superusers' (brewric, postgres) password, first line of F, set at start
                      (env BREWRIC_PASSWORD holds the password itself)
  --max-connections N most sessions at once; more get 53300 (env BREWRIC_MAX_CONNECTIONS, default 100)
  --tls-cert PATH     PEM certificate chain: SSLRequest is answered 'S' (env BREWRIC_TLS_CERT)
  --tls-key PATH      PEM private key of the certificate (env BREWRIC_TLS_KEY)
  --tls MODE          on | require | off; require refuses clear connections from other hosts than this
                      one (env BREWRIC_TLS, default on when a certificate is given)";

impl Config {
    /// The memtable limit in bytes: the flag's, else a quarter of physical
    /// memory but at least 4 × the flush threshold on every shard (so the
    /// flush always has room to run before writes wait).
    pub fn memtable_limit_bytes(&self) -> usize {
        let floor = (4 * self.flush_mb.saturating_mul(self.shards)) << 20;
        match self.memtable_limit_mb {
            Some(mb) => mb << 20,
            None => (physical_memory_bytes() / 4).max(floor),
        }
    }

    /// Flags win over environment variables, which win over defaults.
    pub fn from_args(
        args: &[String],
        env: impl Fn(&str) -> Option<String>,
    ) -> Result<Config, String> {
        let mut cfg = Config {
            listen: env("BREWRIC_LISTEN").unwrap_or_else(|| "127.0.0.1:5432".into()),
            data_dir: PathBuf::from(
                env("BREWRIC_DATA_DIR").unwrap_or_else(|| "./brewric-data".into()),
            ),
            shards: match env("BREWRIC_SHARDS") {
                Some(s) => parse_shards(&s)?,
                None => crate::runtime::shard::core_count(),
            },
            query_memory_mb: match env("BREWRIC_QUERY_MEMORY_MB") {
                Some(s) => parse_megabytes(&s)?,
                None => 4096,
            },
            flush_mb: env("BREWRIC_FLUSH_MB")
                .map(|s| parse_count("--flush-mb", &s))
                .transpose()?
                .unwrap_or(256),
            memtable_limit_mb: env("BREWRIC_MEMTABLE_LIMIT_MB")
                .map(|s| parse_count("--memtable-limit-mb", &s))
                .transpose()?,
            flush_age_s: env("BREWRIC_FLUSH_AGE_S")
                .map(|s| parse_count("--flush-age-s", &s))
                .transpose()?
                .unwrap_or(300),
            cache_mb: env("BREWRIC_CACHE_MB")
                .map(|s| parse_count("--cache-mb", &s))
                .transpose()?
                .unwrap_or(256),
            http: off_or(env("BREWRIC_HTTP").unwrap_or_else(|| "127.0.0.1:8086".into())),
            http_max_body: env("BREWRIC_HTTP_MAX_BODY")
                .map(|s| parse_bytes("--http-max-body", &s))
                .transpose()?
                .unwrap_or(25_000_000),
            http_token: env("BREWRIC_HTTP_TOKEN").filter(|t| !t.is_empty()),
            ilp: off_or(env("BREWRIC_ILP").unwrap_or_else(|| "127.0.0.1:9009".into())),
            ilp_schema: env("BREWRIC_ILP_SCHEMA").unwrap_or_else(|| "public".into()),
            ingest_database: env("BREWRIC_INGEST_DATABASE").unwrap_or_else(|| "brewric".into()),
            auth: env("BREWRIC_AUTH")
                .map(|s| parse_auth(&s))
                .transpose()?
                .unwrap_or(AuthMode::LocalTrust),
            password: env("BREWRIC_PASSWORD").filter(|p| !p.is_empty()),
            max_connections: env("BREWRIC_MAX_CONNECTIONS")
                .map(|s| parse_count("--max-connections", &s))
                .transpose()?
                .unwrap_or(DEFAULT_MAX_CONNECTIONS),
            tls_cert: env("BREWRIC_TLS_CERT")
                .filter(|p| !p.is_empty())
                .map(PathBuf::from),
            tls_key: env("BREWRIC_TLS_KEY")
                .filter(|p| !p.is_empty())
                .map(PathBuf::from),
            tls_required: false,
        };
        let mut tls_on = true;
        if let Some(mode) = env("BREWRIC_TLS") {
            (tls_on, cfg.tls_required) = parse_tls_mode(&mode)?;
        }
        let mut it = args.iter();
        while let Some(a) = it.next() {
            let (flag, inline) = match a.split_once('=') {
                Some((f, v)) => (f, Some(v.to_string())),
                None => (a.as_str(), None),
            };
            let mut value = || {
                inline
                    .clone()
                    .or_else(|| it.next().cloned())
                    .ok_or(format!("{flag} needs a value\n{USAGE}"))
            };
            match flag {
                "--listen" => cfg.listen = value()?,
                "--data-dir" => cfg.data_dir = PathBuf::from(value()?),
                "--shards" => cfg.shards = parse_shards(&value()?)?,
                "--query-memory-mb" => cfg.query_memory_mb = parse_megabytes(&value()?)?,
                "--flush-mb" => cfg.flush_mb = parse_count(flag, &value()?)?,
                "--memtable-limit-mb" => cfg.memtable_limit_mb = Some(parse_count(flag, &value()?)?),
                "--flush-age-s" => cfg.flush_age_s = parse_count(flag, &value()?)?,
                "--cache-mb" => cfg.cache_mb = parse_count(flag, &value()?)?,
                "--http" => cfg.http = off_or(value()?),
                "--http-max-body" => cfg.http_max_body = parse_bytes(flag, &value()?)?,
                "--http-token" => cfg.http_token = Some(value()?).filter(|t| !t.is_empty()),
                "--ilp" => cfg.ilp = off_or(value()?),
                "--ilp-schema" => cfg.ilp_schema = value()?,
                "--ingest-database" => cfg.ingest_database = value()?,
                "--auth" => cfg.auth = parse_auth(&value()?)?,
                "--password-file" => cfg.password = Some(read_password_file(&value()?)?),
                "--max-connections" => cfg.max_connections = parse_count(flag, &value()?)?,
                "--tls-cert" => cfg.tls_cert = Some(PathBuf::from(value()?)),
                "--tls-key" => cfg.tls_key = Some(PathBuf::from(value()?)),
                "--tls" => (tls_on, cfg.tls_required) = parse_tls_mode(&value()?)?,
                "-h" | "--help" => return Err(USAGE.to_string()),
                other => return Err(format!("unknown argument {other}\n{USAGE}")),
            }
        }
        if !tls_on {
            cfg.tls_cert = None;
            cfg.tls_key = None;
            cfg.tls_required = false;
        }
        if cfg.tls_cert.is_some() != cfg.tls_key.is_some() {
            return Err("--tls-cert and --tls-key go together".into());
        }
        if cfg.tls_required && cfg.tls_cert.is_none() {
            return Err("--tls require needs --tls-cert and --tls-key".into());
        }
        Ok(cfg)
    }
}

fn parse_megabytes(s: &str) -> Result<usize, String> {
    match s.parse::<usize>() {
        Ok(n) if (1..=1 << 24).contains(&n) => Ok(n),
        _ => Err(format!(
            "--query-memory-mb must be a number of megabytes (1 or more), got {s:?}"
        )),
    }
}

fn parse_count(flag: &str, s: &str) -> Result<usize, String> {
    match s.parse::<usize>() {
        Ok(n) if (1..=1 << 24).contains(&n) => Ok(n),
        _ => Err(format!("{flag} must be a number (1 or more), got {s:?}")),
    }
}

/// An address, or `None` for `off`.
fn off_or(address: String) -> Option<String> {
    (!address.eq_ignore_ascii_case("off")).then_some(address)
}

/// `25000000`, `25MB`, `64KB`, `1GB` (decimal units, as InfluxDB's 25,000,000 default).
fn parse_bytes(flag: &str, s: &str) -> Result<usize, String> {
    let t = s.trim().to_ascii_uppercase();
    let (digits, unit) = match t.find(|c: char| !c.is_ascii_digit()) {
        Some(i) => t.split_at(i),
        None => (t.as_str(), ""),
    };
    let scale: usize = match unit.trim() {
        "" | "B" => 1,
        "KB" => 1_000,
        "MB" => 1_000_000,
        "GB" => 1_000_000_000,
        _ => return Err(format!("{flag} must be a size like 25MB, got {s:?}")),
    };
    match digits.parse::<usize>().ok().and_then(|n| n.checked_mul(scale)) {
        Some(n) if n > 0 => Ok(n),
        _ => Err(format!("{flag} must be a size like 25MB, got {s:?}")),
    }
}

fn parse_shards(s: &str) -> Result<usize, String> {
    match s.parse::<usize>() {
        Ok(n) if (1..=1024).contains(&n) => Ok(n),
        _ => Err(format!("--shards must be between 1 and 1024, got {s:?}")),
    }
}

/// Physical memory in bytes (0 when the system does not say).
fn physical_memory_bytes() -> usize {
    // SAFETY: sysconf takes an integer name and returns an integer.
    let (pages, page) = unsafe { (libc::sysconf(libc::_SC_PHYS_PAGES), libc::sysconf(libc::_SC_PAGESIZE)) };
    if pages <= 0 || page <= 0 {
        return 0;
    }
    (pages as usize).saturating_mul(page as usize)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_memtable_limit_is_the_flag_else_a_quarter_of_memory_above_the_flush_thresholds() {
        let cfg = Config::from_args(&["--memtable-limit-mb=64".into()], |_| None).unwrap();
        assert_eq!(cfg.memtable_limit_bytes(), 64 << 20);
        let cfg = Config::from_args(&["--shards=4".into(), "--flush-mb=1000000".into()], |_| None).unwrap();
        assert_eq!(cfg.memtable_limit_bytes(), (4 * 4 * 1_000_000) << 20, "at least 4 x flush-mb per shard");
        let cfg = Config::from_args(&["--shards=1".into(), "--flush-mb=1".into()], |_| None).unwrap();
        assert_eq!(cfg.memtable_limit_bytes(), (physical_memory_bytes() / 4).max(4 << 20));
        let env = |k: &str| (k == "BREWRIC_MEMTABLE_LIMIT_MB").then(|| "8".to_string());
        assert_eq!(Config::from_args(&[], env).unwrap().memtable_limit_bytes(), 8 << 20);
    }

    #[test]
    fn flags_override_environment() {
        let env = |k: &str| match k {
            "BREWRIC_LISTEN" => Some("0.0.0.0:6000".to_string()),
            "BREWRIC_SHARDS" => Some("3".to_string()),
            _ => None,
        };
        let cfg = Config::from_args(&["--shards".into(), "2".into()], env).unwrap();
        assert_eq!(cfg.listen, "0.0.0.0:6000");
        assert_eq!(cfg.shards, 2);
        assert!(Config::from_args(&["--shards=0".into()], |_| None).is_err());
        assert!(Config::from_args(&["--bogus".into()], |_| None).is_err());
        let cfg = Config::from_args(&["--http=off".into(), "--http-max-body".into(), "1MB".into()], |_| None).unwrap();
        assert_eq!(cfg.http, None);
        assert_eq!(cfg.http_max_body, 1_000_000);
        assert_eq!(cfg.ilp.as_deref(), Some("127.0.0.1:9009"));
        assert!(Config::from_args(&["--http-max-body=lots".into()], |_| None).is_err());
        assert_eq!(cfg.auth, AuthMode::LocalTrust);
        assert_eq!(cfg.max_connections, 100);
        let cfg = Config::from_args(
            &["--auth=password".into(), "--max-connections=5".into()],
            |k| (k == "BREWRIC_PASSWORD").then(|| "pw".to_string()),
        )
        .unwrap();
        assert_eq!(
            (cfg.auth, cfg.max_connections, cfg.password.as_deref()),
            (AuthMode::Password, 5, Some("pw"))
        );
        assert!(Config::from_args(&["--auth=maybe".into()], |_| None).is_err());
        assert!(Config::from_args(&["--tls-cert=/x".into()], |_| None).is_err());
        assert!(Config::from_args(&["--tls=require".into()], |_| None).is_err());
    }
}

