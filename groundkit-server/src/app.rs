//! The actix application: REST routes from the registry and MCP at `/mcp`, with the shared
//! middleware around them (outermost first: request id and access log, then the Host/Origin
//! guard, so a refused request still carries its id and never reaches routing or a body read).

use std::sync::Arc;

use actix_web::body::BoxBody;
use actix_web::dev::{ServiceFactory, ServiceRequest, ServiceResponse};
use actix_web::{App, middleware::from_fn, web};

use crate::guard::host_guard;
use crate::mcp;
use crate::middleware::request_context;
use crate::rest;
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
        .configure(|cfg| rest::configure(&state, cfg))
        .configure(|cfg| mcp::http::configure(&state, cfg))
        .default_service(web::to(rest::route_not_found))
        .wrap(from_fn(host_guard))
        .wrap(from_fn(request_context))
}
