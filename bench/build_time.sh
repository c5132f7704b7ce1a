#!/usr/bin/env bash
# Build time from clean of a library author's crate: one tool served over MCP (Streamable HTTP),
# written with groundkit (groundkit-core and groundkit-server, default features: the framework
# alone, which also serves the tool over REST and OpenAPI) and with rmcp (the official Rust MCP
# SDK, features `server`, `macros`, `schemars` and `transport-streamable-http-server`, served
# with axum as rmcp's examples do). Each crate lives outside the workspace in a scratch
# directory, its dependencies fetched before any clock starts; each round builds both from an
# empty target directory (debug profile, all cores), interleaved, and the medians are printed.
#
#   bench/build_time.sh [ROUNDS]    (default 3)
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
rounds="${1:-3}"
scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT

mkdir -p "$scratch/gk/src" "$scratch/rmcp/src"
cat > "$scratch/gk/Cargo.toml" <<TOML
[package]
name = "gk-hello"
version = "0.0.0"
edition = "2024"
publish = false
[workspace]
[dependencies]
groundkit-core = { path = "$repo/groundkit-core" }
groundkit-server = { path = "$repo/groundkit-server" }
garde = { version = "0.23", features = ["derive"] }
schemars = "1"
serde = { version = "1", features = ["derive"] }
TOML
cat > "$scratch/gk/src/main.rs" <<'RS'
use groundkit_core::{Error, Registry, openapi::ApiInfo, tool};
use groundkit_server::{AppState, Limits, serve};

/// Whom to greet.
#[derive(serde::Deserialize, schemars::JsonSchema, garde::Validate)]
pub struct Whom {
    /// A name.
    #[garde(length(chars, min = 1, max = 64))]
    pub name: String,
}

/// A greeting.
#[derive(serde::Serialize, schemars::JsonSchema)]
pub struct Greeting {
    /// The greeting.
    pub message: String,
}

/// Greet someone.
#[tool(read_only, rest = "POST /greet")]
pub async fn greet(_: &(), whom: Whom) -> Result<Greeting, Error> {
    Ok(Greeting { message: format!("Hello, {}!", whom.name) })
}

fn main() -> std::process::ExitCode {
    let registry = Registry::collect().expect("registry");
    serve::main(AppState::new(registry, (), ApiInfo::new("hello", "0"), Limits::default()))
}
RS
cat > "$scratch/rmcp/Cargo.toml" <<'TOML'
[package]
name = "rmcp-hello"
version = "0.0.0"
edition = "2024"
publish = false
[workspace]
[dependencies]
rmcp = { version = "3.11.0", features = ["server", "macros", "schemars", "transport-streamable-http-server"] }
axum = "0.8"
tokio = { version = "1", features = ["rt-multi-thread", "macros", "net"] }
serde = { version = "1", features = ["derive"] }
schemars = "1"
TOML
cat > "$scratch/rmcp/src/main.rs" <<'RS'
use rmcp::handler::server::{router::tool::ToolRouter, wrapper::{Json, Parameters}};
use rmcp::model::{ServerCapabilities, ServerConfig};
use rmcp::transport::streamable_http_server::{
    StreamableHttpServerConfig, StreamableHttpService, session::local::LocalSessionManager,
};
use rmcp::{ServerHandler, schemars, tool, tool_handler, tool_router};

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Whom {
    name: String,
}

#[derive(serde::Serialize, schemars::JsonSchema)]
struct Greeting {
    message: String,
}

#[derive(Clone)]
struct Hello {
    tool_router: ToolRouter<Self>,
}

#[tool_router]
impl Hello {
    #[tool(description = "Greet someone")]
    fn greet(&self, Parameters(whom): Parameters<Whom>) -> Result<Json<Greeting>, String> {
        Ok(Json(Greeting { message: format!("Hello, {}!", whom.name) }))
    }
}

#[tool_handler(router = self.tool_router)]
impl ServerHandler for Hello {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
    }
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let service: StreamableHttpService<Hello, LocalSessionManager> = StreamableHttpService::new(
        || Ok(Hello { tool_router: Hello::tool_router() }),
        Default::default(),
        StreamableHttpServerConfig::default(),
    );
    let router = axum::Router::new().nest_service("/mcp", service);
    let listener = tokio::net::TcpListener::bind(("127.0.0.1", 8090)).await?;
    axum::serve(listener, router).await?;
    Ok(())
}
RS

for crate in gk rmcp; do
  (cd "$scratch/$crate" && cargo fetch -q)
done
declare -A times
for round in $(seq "$rounds"); do
  for crate in gk rmcp; do
    rm -rf "$scratch/$crate/target"
    start=$(date +%s.%N)
    (cd "$scratch/$crate" && cargo build -q --offline)
    end=$(date +%s.%N)
    took=$(echo "$end - $start" | bc)
    times[$crate]+="$took "
    echo "round $round $crate ${took}s (load $(cut -d' ' -f1 /proc/loadavg))"
  done
done
median() { tr ' ' '\n' | grep -v '^$' | sort -n | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
gk=$(echo "${times[gk]}" | median)
rmcp=$(echo "${times[rmcp]}" | median)
echo "median: groundkit ${gk}s, rmcp ${rmcp}s, ratio $(echo "scale=2; $gk / $rmcp" | bc)"
