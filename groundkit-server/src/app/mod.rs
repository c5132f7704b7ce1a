//! The actix application: REST routes from the registry (`rest`, private to this module, so
//! nothing else can reach into it) and MCP at `/mcp`, with the shared middleware around them
//! (outermost first: request id and access log, then the Host/Origin guard, so a refused request
//! still carries its id and never reaches routing or a body read).

mod rest;

use std::sync::Arc;

use actix_web::body::BoxBody;
use actix_web::dev::{ServiceFactory, ServiceRequest, ServiceResponse};
use actix_web::{App, HttpRequest, HttpResponse, middleware::from_fn, web};

use crate::edge::access::request_context;
use crate::edge::id::RequestId;
use crate::edge::problem::{self, Refusal};
use crate::guard::host_guard;
use crate::mcp;
use crate::state::AppState;

/// The application serving `state` (one instance per actix worker).
pub fn build<Ctx: Send + Sync + 'static>(
    state: Arc<AppState<Ctx>>,
) -> App<
    impl ServiceFactory<
        ServiceRequest,
        Config = (),
        Response = ServiceResponse<BoxBody>,
        Error = actix_web::Error,
        InitError = (),
    >,
> {
    App::new()
        .app_data(web::Data::new(state.hosts.clone()))
        // `/mcp` first: no tool may claim its path, so the order changes no match, and an MCP
        // request is then routed without trying every REST route's pattern.
        .configure(|cfg| mcp::http::configure_behind_guard(&state, cfg))
        .configure(|cfg| rest::configure(&state, cfg))
        .default_service(web::to(route_not_found))
        .wrap(from_fn(host_guard))
        .wrap(from_fn(request_context))
}

/// Fallback for a path no route matches.
async fn route_not_found(req: HttpRequest) -> HttpResponse {
    problem::response(Refusal::RouteNotFound, &RequestId::of(&req))
}
