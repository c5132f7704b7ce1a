//! Running a server: the command-line options every groundkit binary shares, the bind guard,
//! and the HTTP and stdio loops. Generic over the context type, so every tool set (the examples,
//! `grk serve`) is served the same way.

use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::process::ExitCode;
use std::sync::Arc;

use actix_http::HttpService;
use actix_server::ServerBuilder;
use actix_service::{IntoServiceFactory, ServiceFactoryExt, fn_service, map_config};
use actix_web::dev::AppConfig;
use actix_web::rt::net::TcpStream;
use groundkit_core::Registry;
use groundkit_core::openapi::ApiInfo;

use crate::app;
use crate::edge::deadline::WriteDeadline;
use crate::guard::{self, AllowedHosts, HostPolicy};
use crate::mcp;
use crate::state::{AppState, Limits};

/// How to serve: shared by `grk serve` and the example binaries, flattened into a command line
/// or parsed as one (`ServeArgs::parse()`).
#[derive(Debug, Clone, clap::Parser)]
pub struct ServeArgs {
    /// Address to bind. Only loopback address literals (127.0.0.0/8, ::1, ::ffff:127.0.0.1)
    /// are allowed without `--allow-remote-access`; not even the name `localhost`.
    #[arg(long, default_value_t = IpAddr::V4(Ipv4Addr::LOCALHOST).to_string())]
    pub host: String,
    /// TCP port to bind (0 picks a free one and logs it).
    #[arg(long, default_value_t = 8080)]
    pub port: u16,
    /// Bind a non-loopback address or a name. There is no authentication: everything this
    /// server serves becomes readable by whoever can reach the address.
    #[arg(long)]
    pub allow_remote_access: bool,
    /// A Host name (or address) clients use to reach this server, answered besides this
    /// machine's loopback names and the bound address; repeatable. Requests naming any other
    /// Host are refused (DNS-rebinding protection). A wildcard bind (`0.0.0.0`, `::`, or a
    /// spelling the resolver reads as one, like `0`) needs at least one, or `--allow-any-host`.
    #[arg(long = "allowed-host", value_name = "NAME")]
    pub allowed_hosts: Vec<String>,
    /// Answer requests whatever their Host header names: DNS-rebinding protection off. For a
    /// server behind a proxy that checks the Host itself.
    #[arg(long, conflicts_with = "allowed_hosts")]
    pub allow_any_host: bool,
    /// Speak MCP on stdin/stdout instead of serving HTTP (for clients that launch the server).
    #[arg(long, conflicts_with_all = ["host", "port", "allow_remote_access", "allowed_hosts", "allow_any_host"])]
    pub stdio: bool,
}

/// Why [`run`] stopped or never started.
#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    /// The command line asks for something the server refuses (a bind the guard does not
    /// allow): the operator's to fix, reported with exit code [`ServeError::USAGE`].
    #[error(transparent)]
    Usage(#[from] guard::BindError),
    /// Binding, accepting or reading failed.
    #[error(transparent)]
    Io(#[from] std::io::Error),
}

impl ServeError {
    /// Exit code of a usage error, as for a command line the parser refuses.
    pub const USAGE: u8 = 2;

    /// The process exit code this error ends a server with: [`Self::USAGE`] for usage errors, 1
    /// for the rest.
    pub fn exit_code(&self) -> ExitCode {
        match self {
            ServeError::Usage(_) => ExitCode::from(Self::USAGE),
            ServeError::Io(_) => ExitCode::FAILURE,
        }
    }
}

/// The whole `main` of a binary serving `state`: its serving flags parsed from the command
/// line, logs to stderr, and [`run`], logging (to stderr) why it could not.
pub fn main<Ctx: Send + Sync + 'static>(state: AppState<Ctx>) -> ExitCode {
    let args = <ServeArgs as clap::Parser>::parse();
    crate::logging::init();
    let title = state.info.title.clone();
    match run(state, &args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            tracing::error!("{title}: {err}");
            err.exit_code()
        }
    }
}

/// The whole `main` of a binary serving one tool set: collect the registry of `Ctx`, build the
/// state and [`run`] it, logging (to stderr) why it could not.
pub fn run_tools<Ctx: Send + Sync + 'static>(
    context: Ctx,
    info: ApiInfo,
    limits: Limits,
    args: &ServeArgs,
) -> ExitCode {
    let registry = match Registry::<Ctx>::collect() {
        Ok(registry) => registry,
        Err(err) => {
            tracing::error!("cannot serve the {} tools: {err}", info.title);
            return ExitCode::FAILURE;
        }
    };
    let title = info.title.clone();
    match run(AppState::new(registry, context, info, limits), args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            tracing::error!("{title}: {err}");
            err.exit_code()
        }
    }
}

/// Serve `state` as `args` say: MCP over stdio until stdin ends, or REST and MCP over HTTP
/// until the process is stopped.
pub fn run<Ctx: Send + Sync + 'static>(
    mut state: AppState<Ctx>,
    args: &ServeArgs,
) -> Result<(), ServeError> {
    if args.stdio {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .max_blocking_threads(state.limits.blocking_threads.max(1))
            .enable_all()
            .build()?;
        let result = runtime.block_on(mcp::stdio::run(Arc::new(state)));
        runtime.shutdown_timeout(std::time::Duration::from_secs(1));
        return Ok(result?);
    }
    let target = guard::check_bind(&args.host, args.allow_remote_access)?;
    let allowed = AllowedHosts {
        names: args.allowed_hosts.clone(),
        any: args.allow_any_host,
    };
    // Decided on the addresses the resolver gives the spelling, which the socket is bound to.
    let addrs = target.addrs(args.port)?;
    guard::check_allowed_hosts(&args.host, &addrs, &allowed)?;
    let listener = std::net::TcpListener::bind(&addrs[..])?;
    state.hosts = HostPolicy::derive(&target, listener.local_addr()?, &allowed);
    Ok(actix_web::rt::System::new().block_on(run_http(Arc::new(state), listener))?)
}

/// Serve `state` over HTTP on an already-bound listener until the process is stopped. The
/// Host policy is the state's own (see [`AppState::hosts`]); [`run`] derives it from the bind.
pub async fn run_http<Ctx: Send + Sync + 'static>(
    state: Arc<AppState<Ctx>>,
    listener: std::net::TcpListener,
) -> std::io::Result<()> {
    http_server(state, listener)?.await
}

/// The configured HTTP server for `state` on `listener`, not yet awaited (its
/// [`handle`](actix_web::dev::Server::handle) stops it). Must be called inside an actix system.
///
/// Header, disconnect and keep-alive timeouts come from [`Limits`]: a client that has not sent
/// its first request's headers within `header_timeout` gets 408 and the connection is closed,
/// and an idle connection is closed after `keep_alive`. A connection the server has written
/// nothing to for [`Limits::write_deadline`] is closed (`WriteDeadline`). `max_connections`
/// is shared among the `workers` (actix counts per worker), rounded up.
///
/// This is what `actix_web::HttpServer::listen` builds, except that every connection is wrapped
/// in its `WriteDeadline`, that a request asking for `100 Continue` has its Host and Origin
/// checked before it is sent one (`guard::expect`), and that the app's `AppConfig` is the default one (its host and
/// address feed only `ConnectionInfo` and `url_for`, which groundkit does not use). Nothing
/// examines a connection's bytes before actix-http's parser.
pub fn http_server<Ctx: Send + Sync + 'static>(
    state: Arc<AppState<Ctx>>,
    listener: std::net::TcpListener,
) -> std::io::Result<actix_web::dev::Server> {
    let addr: SocketAddr = listener.local_addr()?;
    tracing::info!(
        %addr,
        tools = state.registry.len(),
        "serving REST on http://{addr} and MCP on http://{addr}{}",
        mcp::http::PATH
    );
    let limits = state.limits.clone();
    let hosts = state.hosts.clone();
    let workers = limits.workers.max(1);
    let builder = ServerBuilder::default();
    let shutdown = builder.graceful_shutdown_signal();
    Ok(builder
        .workers(workers)
        .worker_max_blocking_threads(limits.blocking_threads.max(1).div_ceil(workers))
        .max_concurrent_connections(limits.max_connections.max(1).div_ceil(workers))
        .listen("groundkit-http", listener, move || {
            let shutdown = shutdown.clone();
            let app = app::build(Arc::clone(&state))
                .into_factory()
                .map_err(|err: actix_web::Error| err.error_response());
            let http = HttpService::build()
                // Idle keep-alive connections close when the server stops, as with HttpServer.
                .graceful_shutdown_signal(move || {
                    let shutdown = shutdown.clone();
                    async move { shutdown.notified().await }
                })
                .client_request_timeout(limits.header_timeout)
                .client_disconnect_timeout(limits.disconnect_timeout)
                .keep_alive(limits.keep_alive)
                .local_addr(addr)
                // Host and Origin are checked before an interim `100 Continue` is sent.
                .expect(guard::expect_guard(hosts.clone()))
                // Calls arriving on a connection are cancelled when it closes.
                .on_connect_ext(|io: &WriteDeadline<TcpStream>, data| {
                    data.insert(io.closed());
                })
                .h1(map_config(app, |_| AppConfig::default()));
            let deadline = limits.write_deadline();
            fn_service(move |io: TcpStream| async move {
                let peer = io.peer_addr().ok();
                Ok((WriteDeadline::new(io, deadline), peer))
            })
            .and_then(http)
        })?
        .run())
}
