//! Running a server: the command-line options every groundkit binary shares, and the HTTP loop.

use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::sync::Arc;

use actix_web::HttpServer;

use crate::app;
use crate::state::AppState;

/// How to serve: shared by `grk serve` and the example binaries.
#[derive(Debug, Clone, clap::Args)]
pub struct ServeArgs {
    /// Address to bind. Only loopback address literals are allowed without
    /// `--allow-remote-access`.
    #[arg(long, default_value_t = IpAddr::V4(Ipv4Addr::LOCALHOST).to_string())]
    pub host: String,
    /// TCP port to bind (0 picks a free one and logs it).
    #[arg(long, default_value_t = 8080)]
    pub port: u16,
}

/// Serve `state` over HTTP as `args` say, until the process is stopped.
pub fn run<Ctx: Send + Sync + 'static>(
    state: AppState<Ctx>,
    args: &ServeArgs,
) -> std::io::Result<()> {
    let ip: IpAddr = args.host.parse().map_err(|_| {
        std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            format!("--host {} is not an IP address", args.host),
        )
    })?;
    let listener = std::net::TcpListener::bind(SocketAddr::new(ip, args.port))?;
    actix_web::rt::System::new().block_on(run_http(Arc::new(state), listener))
}

/// Serve `state` over HTTP on an already-bound listener until the process is stopped.
pub async fn run_http<Ctx: Send + Sync + 'static>(
    state: Arc<AppState<Ctx>>,
    listener: std::net::TcpListener,
) -> std::io::Result<()> {
    let addr: SocketAddr = listener.local_addr()?;
    tracing::info!(%addr, tools = state.registry.len(), "serving REST on http://{addr}");
    HttpServer::new(move || app::build(Arc::clone(&state)))
        .listen(listener)?
        .run()
        .await
}
