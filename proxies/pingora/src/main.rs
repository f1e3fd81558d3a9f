//! proxybench-pingora: the proxybench target built on Cloudflare's Pingora.
//!
//! One proxy service with two listeners, as CONTRIBUTING.md asks of every target:
//! TLS with HTTP/1.1 and HTTP/2 by ALPN, and cleartext HTTP/1.1. Both forward to the
//! upstream's cleartext port over HTTP/1.1 keep-alive and keep Host as the client sent it
//! (pingora writes an HTTP/2 request's :authority into Host).
//!
//! What pingora does without being asked, and is relied on here:
//! - request bodies stream to the upstream as they arrive (/upload), and responses stream
//!   to the client chunk by chunk (/stream, /sse): pingora has no response buffering;
//! - a WebSocket upgrade (101) turns the connection into a tunnel both ways;
//! - no access log (that would be the `logging` hook, not implemented here);
//! - no compression (pingora adds its response compression module disabled).
//!
//! No HTTP/3: pingora 0.9 has no QUIC listener.
//!
//! Usage (proxies/pingora/target.json):
//!   proxybench-pingora --conf pingora.yaml --tls ADDR:PORT --h1c ADDR:PORT \
//!       --cert leaf.pem --key leaf-key.pem --upstream ADDR:PORT
//! The YAML is pingora's own server configuration: threads, the upstream keep-alive
//! pool, shutdown timing, pid and upgrade-socket paths.

mod args;

use std::ffi::CStr;
use std::process;
use std::time::Duration;

use async_trait::async_trait;
use log::{Level, LevelFilter, Log, Metadata, Record};
use pingora::listeners::tls::TlsSettings;
use pingora::prelude::*;
use pingora::protocols::http::v2::server::H2Options;
use pingora::proxy::{http_proxy_service, ProxyHttp, Session};
use pingora::server::configuration::ServerConf;
use pingora::tls::ssl::{SslOptions, SslSessionCacheMode, SslVersion};

use args::{Command, Config, TlsProfile};

/// Concurrent streams per HTTP/2 connection: Go's HTTP/2 server default, which nginx,
/// HAProxy and Envoy are set to as well (pingora's own default is 100).
const H2_MAX_CONCURRENT_STREAMS: u32 = 250;

/// The proxy: every request goes to the one upstream.
struct Bench {
    peer: HttpPeer,
}

#[async_trait]
impl ProxyHttp for Bench {
    type CTX = ();

    fn new_ctx(&self) -> Self::CTX {}

    async fn upstream_peer(&self, _session: &mut Session, _ctx: &mut ()) -> Result<Box<HttpPeer>> {
        // a clone of a prepared peer: no address parsing per request; equal peers share
        // one keep-alive pool
        Ok(Box::new(self.peer.clone()))
    }
}

fn upstream_peer(cfg: &Config) -> HttpPeer {
    // cleartext HTTP/1.1: no TLS, so no SNI
    let mut peer = HttpPeer::new(cfg.upstream, false, String::new());
    peer.options.connection_timeout = Some(Duration::from_secs(5));
    // an idle pooled connection is closed after 60 s, as nginx's keepalive_timeout and
    // HAProxy's pool-purge-delay; reads and writes have no timeout (an /sse response may
    // pause for as long as it likes)
    peer.options.idle_timeout = Some(Duration::from_secs(60));
    peer
}

fn run(cfg: Config) -> ! {
    let conf = ServerConf::load_from_yaml(&cfg.conf)
        .unwrap_or_else(|e| fail(format!("read {}: {e}", cfg.conf)));
    let mut server = Server::new_with_opt_and_conf(None::<Opt>, conf);
    server.bootstrap();

    let mut proxy = http_proxy_service(
        &server.configuration,
        Bench {
            peer: upstream_peer(&cfg),
        },
    );
    if let Some(app) = proxy.app_logic_mut() {
        let mut h2 = H2Options::new();
        h2.max_concurrent_streams(H2_MAX_CONCURRENT_STREAMS);
        h2.max_header_list_size(64 * 1024);
        app.h2_options = Some(h2);
    }

    // Mozilla "intermediate": TLS 1.2 and 1.3; ALPN h2 preferred, http/1.1 allowed
    let mut tls = TlsSettings::intermediate(&cfg.cert, &cfg.key).unwrap_or_else(|e| {
        fail(format!(
            "load certificate {} and key {}: {e}",
            cfg.cert, cfg.key
        ))
    });
    apply_tls_profile(&mut tls, &cfg.profile).unwrap_or_else(|e| fail(e));
    tls.enable_h2();
    proxy.add_tls_with_settings(&cfg.tls.to_string(), None, tls);
    proxy.add_tcp(&cfg.h1c.to_string());

    server.add_service(proxy);
    server.run_forever()
}

/// The TLS profile (targets.json) as the stack passes it, over Mozilla "intermediate"'s
/// settings: TLS 1.3 only, one key exchange, one TLS 1.3 cipher and, without resumption,
/// neither tickets (stateless, nor TLS 1.3's stateful ones) nor a session cache, so that every
/// fresh connection is a full handshake. OpenSSL (3.6 here, built by openssl-src) names the
/// groups as the profile does.
fn apply_tls_profile(tls: &mut TlsSettings, p: &TlsProfile) -> Result<(), String> {
    // args::parse accepts "1.3" only
    tls.set_min_proto_version(Some(SslVersion::TLS1_3))
        .and_then(|()| tls.set_max_proto_version(Some(SslVersion::TLS1_3)))
        .map_err(|e| format!("--tls-version {}: {e}", p.version))?;
    tls.set_groups_list(&p.group)
        .map_err(|e| format!("--tls-group {:?}: OpenSSL refuses it: {e}", p.group))?;
    tls.set_ciphersuites(&p.cipher)
        .map_err(|e| format!("--tls-cipher {:?}: OpenSSL refuses it: {e}", p.cipher))?;
    if !p.resumption {
        tls.set_options(SslOptions::NO_TICKET);
        tls.set_session_cache_mode(SslSessionCacheMode::OFF);
        tls.set_num_tickets(0)
            .map_err(|e| format!("--tls-resumption false: {e}"))?;
    }
    Ok(())
}

fn version() -> String {
    let lock = include_str!("../Cargo.lock");
    // SAFETY: OpenSSL_version returns a pointer to a static NUL-terminated string
    let ssl = unsafe {
        CStr::from_ptr(pingora::tls::ssl_sys::OpenSSL_version(
            pingora::tls::ssl_sys::OPENSSL_VERSION,
        ))
    };
    format!(
        "pingora {} (proxybench-pingora {}, {})",
        args::locked_version(lock, "pingora").unwrap_or("unknown"),
        env!("CARGO_PKG_VERSION"),
        ssl.to_string_lossy(),
    )
}

fn fail(msg: String) -> ! {
    eprintln!("proxybench-pingora: {msg}");
    process::exit(1)
}

/// Warnings and errors to stderr (the stack keeps them in the target's log); pingora logs
/// through the `log` crate and prints nothing without a logger.
struct StderrLog;

impl Log for StderrLog {
    fn enabled(&self, metadata: &Metadata) -> bool {
        metadata.level() <= Level::Warn
    }

    fn log(&self, record: &Record) {
        if self.enabled(record.metadata()) {
            eprintln!("{} {}: {}", record.level(), record.target(), record.args());
        }
    }

    fn flush(&self) {}
}

static LOGGER: StderrLog = StderrLog;

fn main() {
    match args::parse(std::env::args().skip(1)) {
        Ok(Command::Version) => println!("{}", version()),
        Ok(Command::Help) => println!("{}", args::USAGE),
        Ok(Command::Run(cfg)) => {
            if log::set_logger(&LOGGER).is_ok() {
                log::set_max_level(LevelFilter::Warn);
            }
            run(cfg)
        }
        Err(e) => {
            eprintln!("proxybench-pingora: {e}\n{}", args::USAGE);
            process::exit(2)
        }
    }
}
