//! The actix application: REST routes from the registry, with the shared middleware around them.

use std::sync::Arc;

use actix_web::body::BoxBody;
use actix_web::dev::{ServiceFactory, ServiceRequest, ServiceResponse};
use actix_web::{App, middleware::from_fn, web};

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
        .configure(|cfg| rest::configure(&state, cfg))
        .default_service(web::to(rest::route_not_found))
        .wrap(from_fn(request_context))
}
