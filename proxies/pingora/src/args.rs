//! Command line of proxybench-pingora. Pingora's own `Opt` (clap) knows only its
//! server flags, so the listeners, certificate and upstream come from here and
//! pingora's server settings from the YAML file named by `--conf`.

use std::fmt;
use std::net::SocketAddr;

pub const USAGE: &str = "usage: proxybench-pingora --conf FILE --tls ADDR:PORT --h1c ADDR:PORT \
--cert FILE --key FILE --upstream ADDR:PORT \
--tls-version 1.3 --tls-group GROUP --tls-cipher CIPHER --tls-resumption false|true
       proxybench-pingora --version";

/// What the command line asks for.
// Parsed once at start: the size of the Run variant costs nothing worth a Box.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, PartialEq, Eq)]
pub enum Command {
    Run(Config),
    Version,
    Help,
}

/// Everything a running proxy needs beyond pingora's server configuration.
#[derive(Debug, PartialEq, Eq)]
pub struct Config {
    /// pingora's ServerConf YAML (threads, keep-alive pool, shutdown timing, paths)
    pub conf: String,
    /// TLS listener: HTTP/1.1 and HTTP/2 by ALPN
    pub tls: SocketAddr,
    /// cleartext HTTP/1.1 listener
    pub h1c: SocketAddr,
    pub cert: String,
    pub key: String,
    /// the upstream's cleartext HTTP/1.1 address
    pub upstream: SocketAddr,
    /// the TLS profile (targets.json) the TLS listener serves
    pub profile: TlsProfile,
}

/// The TLS profile: one version, one key exchange, one TLS 1.3 cipher, resumption or not.
#[derive(Debug, PartialEq, Eq)]
pub struct TlsProfile {
    /// "1.3", the one version a profile may name
    pub version: String,
    /// OpenSSL's name of the group: X25519, X25519MLKEM768, P-256, …
    pub group: String,
    /// the TLS 1.3 cipher suite: TLS_AES_128_GCM_SHA256, …
    pub cipher: String,
    pub resumption: bool,
}

#[derive(Debug, PartialEq, Eq)]
pub struct ArgError(String);

impl fmt::Display for ArgError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for ArgError {}

fn err(msg: impl Into<String>) -> ArgError {
    ArgError(msg.into())
}

/// Parses the arguments after the program name; `--flag value` and `--flag=value` both work.
pub fn parse<I: IntoIterator<Item = String>>(args: I) -> Result<Command, ArgError> {
    let mut conf = None;
    let mut tls = None;
    let mut h1c = None;
    let mut cert = None;
    let mut key = None;
    let mut upstream = None;
    let mut tls_version = None;
    let mut tls_group = None;
    let mut tls_cipher = None;
    let mut tls_resumption = None;

    let mut it = args.into_iter();
    while let Some(arg) = it.next() {
        let (flag, inline) = match arg.split_once('=') {
            Some((f, v)) if f.starts_with("--") => (f.to_string(), Some(v.to_string())),
            _ => (arg.clone(), None),
        };
        match flag.as_str() {
            "--version" | "-V" => return Ok(Command::Version),
            "--help" | "-h" => return Ok(Command::Help),
            _ => {}
        }
        let slot = match flag.as_str() {
            "--conf" | "-c" => &mut conf,
            "--tls" => &mut tls,
            "--h1c" => &mut h1c,
            "--cert" => &mut cert,
            "--key" => &mut key,
            "--upstream" => &mut upstream,
            "--tls-version" => &mut tls_version,
            "--tls-group" => &mut tls_group,
            "--tls-cipher" => &mut tls_cipher,
            "--tls-resumption" => &mut tls_resumption,
            _ => return Err(err(format!("unknown argument {arg:?}"))),
        };
        let value = match inline {
            Some(v) => v,
            None => it
                .next()
                .ok_or_else(|| err(format!("{flag} needs a value")))?,
        };
        if value.is_empty() {
            return Err(err(format!("{flag} needs a value")));
        }
        if slot.replace(value).is_some() {
            return Err(err(format!("{flag} is given twice")));
        }
    }

    let need = |v: Option<String>, flag: &str| v.ok_or_else(|| err(format!("{flag} is required")));
    let addr = |v: Option<String>, flag: &str| -> Result<SocketAddr, ArgError> {
        let v = need(v, flag)?;
        v.parse()
            .map_err(|_| err(format!("{flag} {v:?} is not an IP:PORT address")))
    };
    let (conf, tls, h1c) = (
        need(conf, "--conf")?,
        addr(tls, "--tls")?,
        addr(h1c, "--h1c")?,
    );
    let (cert, key) = (need(cert, "--cert")?, need(key, "--key")?);
    let upstream = addr(upstream, "--upstream")?;
    let version = need(tls_version, "--tls-version")?;
    if version != "1.3" {
        return Err(err(format!(
            "--tls-version {version:?}: only 1.3 is supported"
        )));
    }
    let group = need(tls_group, "--tls-group")?;
    let cipher = need(tls_cipher, "--tls-cipher")?;
    let resumption = match need(tls_resumption, "--tls-resumption")?.as_str() {
        "true" => true,
        "false" => false,
        v => return Err(err(format!("--tls-resumption {v:?}: want true or false"))),
    };
    Ok(Command::Run(Config {
        conf,
        tls,
        h1c,
        cert,
        key,
        upstream,
        profile: TlsProfile {
            version,
            group,
            cipher,
            resumption,
        },
    }))
}

/// The version of a package in Cargo.lock (the lock file is compiled in), so that
/// `--version` names the pingora actually built rather than a hand-kept constant.
pub fn locked_version<'a>(lock: &'a str, package: &str) -> Option<&'a str> {
    let want = format!("name = \"{package}\"");
    let mut lines = lock.lines();
    while let Some(line) = lines.next() {
        if line.trim() == want {
            let v = lines.next()?.trim();
            return v.strip_prefix("version = \"")?.strip_suffix('"');
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn strings(s: &[&str]) -> Vec<String> {
        s.iter().map(|s| s.to_string()).collect()
    }

    const FULL: &[&str] = &[
        "--conf",
        "/run/p.yaml",
        "--tls",
        "127.0.0.1:8446",
        "--h1c=127.0.0.1:8087",
        "--cert",
        "/c.pem",
        "--key",
        "/k.pem",
        "--tls-version",
        "1.3",
        "--tls-group",
        "X25519",
        "--tls-cipher",
        "TLS_AES_128_GCM_SHA256",
        "--tls-resumption=false",
        "--upstream",
        "127.0.0.1:9000",
    ];

    #[test]
    fn parses_every_flag() {
        let got = parse(strings(FULL)).unwrap();
        assert_eq!(
            got,
            Command::Run(Config {
                conf: "/run/p.yaml".into(),
                tls: "127.0.0.1:8446".parse().unwrap(),
                h1c: "127.0.0.1:8087".parse().unwrap(),
                cert: "/c.pem".into(),
                key: "/k.pem".into(),
                upstream: "127.0.0.1:9000".parse().unwrap(),
                profile: TlsProfile {
                    version: "1.3".into(),
                    group: "X25519".into(),
                    cipher: "TLS_AES_128_GCM_SHA256".into(),
                    resumption: false,
                },
            })
        );
    }

    #[test]
    fn version_and_help_win() {
        assert_eq!(parse(strings(&["--version"])).unwrap(), Command::Version);
        assert_eq!(
            parse(strings(&["--tls", "x", "-h"])).unwrap(),
            Command::Help
        );
    }

    #[test]
    fn errors_name_the_flag() {
        let cases: &[(&[&str], &str)] = &[
            (&["--nope"], "unknown argument \"--nope\""),
            (&["--tls"], "--tls needs a value"),
            (&["--conf", "a", "--conf", "b"], "--conf is given twice"),
            (&["--conf", "a"], "--tls is required"),
        ];
        for (args, want) in cases {
            assert_eq!(
                parse(strings(args)).unwrap_err().to_string(),
                *want,
                "{args:?}"
            );
        }
        let mut bad = strings(FULL);
        *bad.last_mut().unwrap() = "localhost:9000".into(); // the --upstream value
        assert_eq!(
            parse(bad).unwrap_err().to_string(),
            "--upstream \"localhost:9000\" is not an IP:PORT address"
        );
        let replaced = |flag: &str, value: &str| -> Vec<String> {
            let mut args = strings(FULL);
            let i = args.iter().position(|a| a == flag).unwrap();
            args[i + 1] = value.into();
            args
        };
        assert_eq!(
            parse(replaced("--tls-version", "1.2"))
                .unwrap_err()
                .to_string(),
            "--tls-version \"1.2\": only 1.3 is supported"
        );
        let mut no_resumption = strings(FULL);
        no_resumption.retain(|a| !a.starts_with("--tls-resumption"));
        assert_eq!(
            parse(no_resumption).unwrap_err().to_string(),
            "--tls-resumption is required"
        );
        let mut yes = strings(FULL);
        for a in yes.iter_mut().filter(|a| a.starts_with("--tls-resumption")) {
            *a = "--tls-resumption=yes".into();
        }
        assert_eq!(
            parse(yes).unwrap_err().to_string(),
            "--tls-resumption \"yes\": want true or false"
        );
    }

    #[test]
    fn finds_locked_versions() {
        let lock = "[[package]]\nname = \"pingora-core\"\nversion = \"0.1.0\"\n\n\
                    [[package]]\nname = \"pingora\"\nversion = \"0.9.1\"\n";
        assert_eq!(locked_version(lock, "pingora"), Some("0.9.1"));
        assert_eq!(locked_version(lock, "tokio"), None);
        let ours = include_str!("../Cargo.lock");
        assert!(
            locked_version(ours, "pingora").is_some(),
            "Cargo.lock has no pingora"
        );
    }
}
