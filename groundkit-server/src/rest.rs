//! The REST surface: one actix route per registered tool, and nothing the registry does not
//! declare besides `GET /openapi.json`.
//!
//! POST tools take a JSON object body; GET tools take only path parameters. Path parameters are
//! merged into the arguments object, which the tool's own handler parses and validates, so REST
//! and MCP share one parser and one error mapping. No route accepts a query string (the
//! [`middleware`](crate::middleware) refuses it before routing).

use std::sync::Arc;

use actix_web::http::{Method, header};
use actix_web::{HttpMessage, HttpRequest, HttpResponse, web};
use futures_util::StreamExt;
use groundkit_core::tool::HttpMethod;
use groundkit_core::{Error, ToolSpec};
use serde_json::{Map, Value};

use crate::edge::problem::{self, Problem, Refusal};
use crate::invoke::invoke;
use crate::middleware::{RequestId, ResultCount, ToolName};
use crate::state::{AppState, Limits};

/// The path of the OpenAPI document.
pub const OPENAPI_PATH: &str = "/openapi.json";

// No tool may claim the OpenAPI path.
#[linkme::distributed_slice(groundkit_core::registry::RESERVED_PATHS)]
static RESERVED_OPENAPI: &str = OPENAPI_PATH;

/// Register one resource per tool, plus `/openapi.json`.
pub fn configure<Ctx: Send + Sync + 'static>(
    state: &Arc<AppState<Ctx>>,
    cfg: &mut web::ServiceConfig,
) {
    for spec in state.registry.tools() {
        let spec: &'static ToolSpec = spec;
        let route = spec.route();
        let (method, allow) = match route.method {
            HttpMethod::Get => (Method::GET, "GET"),
            HttpMethod::Post => (Method::POST, "POST"),
        };
        let state = Arc::clone(state);
        cfg.service(
            web::resource(route.path)
                .name(spec.name())
                .route(web::route().method(method).to(
                    move |req: HttpRequest, body: web::Payload| {
                        call(Arc::clone(&state), spec, req, body)
                    },
                ))
                .default_service(web::to(move |req| method_not_allowed(req, allow))),
        );
    }
    let openapi = Arc::clone(&state.openapi);
    cfg.service(
        web::resource(OPENAPI_PATH)
            .route(web::get().to(move || {
                let openapi = Arc::clone(&openapi);
                async move {
                    HttpResponse::Ok()
                        .content_type("application/json")
                        .body(openapi.to_string())
                }
            }))
            .default_service(web::to(|req| method_not_allowed(req, "GET"))),
    );
}

/// Fallback for a path no route matches.
pub async fn route_not_found(req: HttpRequest) -> HttpResponse {
    problem::response(Refusal::RouteNotFound, &RequestId::of(&req))
}

/// 405, naming the one method the route serves.
async fn method_not_allowed(req: HttpRequest, allow: &'static str) -> HttpResponse {
    problem::response(Refusal::MethodNotAllowed { allow }, &RequestId::of(&req))
}

async fn call<Ctx: Send + Sync + 'static>(
    state: Arc<AppState<Ctx>>,
    spec: &'static ToolSpec,
    req: HttpRequest,
    body: web::Payload,
) -> HttpResponse {
    let request_id = RequestId::of(&req);
    req.extensions_mut().insert(ToolName(spec.name()));
    let result = match arguments(spec, &req, body, &state.limits).await {
        Ok(arguments) => invoke(&state, spec, arguments).await.map_err(Problem::from),
        Err(problem) => Err(problem),
    };
    match result {
        Ok(output) => {
            let count = result_count(&output);
            let mut response = HttpResponse::Ok().json(output);
            if let Some(count) = count {
                response.extensions_mut().insert(ResultCount(count));
            }
            response
        }
        Err(problem) => problem::response(problem, &request_id),
    }
}

/// The arguments object: the JSON body (POST) with the path parameters merged in.
async fn arguments(
    spec: &ToolSpec,
    req: &HttpRequest,
    body: web::Payload,
    limits: &Limits,
) -> Result<Value, Problem> {
    let route = spec.route();
    let mut object = Map::new();
    if route.method == HttpMethod::Post {
        if !is_json(req) {
            return Err(Refusal::UnsupportedMediaType.into());
        }
        let bytes = read_body(req, body, limits).await?;
        object = groundkit_core::request::parse_object(&bytes)?;
    }
    for param in route.params {
        let value = req.match_info().get(param).unwrap_or_default();
        if object
            .insert((*param).to_owned(), Value::String(value.to_owned()))
            .is_some()
        {
            return Err(Error::InvalidRequest {
                field: Some((*param).to_owned()),
                message: format!("`{param}` is given by the path; do not repeat it in the body"),
            }
            .into());
        }
    }
    Ok(Value::Object(object))
}

/// Read a request body of at most [`Limits::max_body_bytes`] within [`Limits::body_timeout`]:
/// refused from its declared `Content-Length` before any byte is read, as soon as the streamed
/// bytes pass the limit, and when the deadline passes, so an oversized or stalled body is never
/// held. Shared by REST and MCP over HTTP.
pub async fn read_body(
    req: &HttpRequest,
    body: web::Payload,
    limits: &Limits,
) -> Result<web::Bytes, Problem> {
    let deadline = limits.body_timeout;
    tokio::time::timeout(deadline, read_capped(req, body, limits.max_body_bytes))
        .await
        .unwrap_or(Err(Problem::Refused(Refusal::BodyTimeout {
            seconds: deadline.as_secs(),
        })))
}

async fn read_capped(
    req: &HttpRequest,
    mut body: web::Payload,
    limit: usize,
) -> Result<web::Bytes, Problem> {
    let declared = req
        .headers()
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<usize>().ok());
    if declared.is_some_and(|len| len > limit) {
        return Err(Refusal::PayloadTooLarge { limit }.into());
    }
    let mut bytes = web::BytesMut::new();
    while let Some(chunk) = body.next().await {
        let chunk = chunk.map_err(|_| Error::InvalidRequest {
            field: None,
            message: "the request body could not be read".into(),
        })?;
        if bytes.len() + chunk.len() > limit {
            return Err(Refusal::PayloadTooLarge { limit }.into());
        }
        bytes.extend_from_slice(&chunk);
    }
    Ok(bytes.freeze())
}

/// Whether the request declares a JSON body (`application/json` or `application/*+json`).
pub fn is_json(req: &HttpRequest) -> bool {
    req.mime_type().ok().flatten().is_some_and(|mime| {
        mime.type_() == "application"
            && (mime.subtype() == "json" || mime.suffix().is_some_and(|s| s == "json"))
    })
}

/// How many results a response carries, for the access log: the length of its `results` array,
/// or of its only top-level array.
pub fn result_count(output: &Value) -> Option<usize> {
    let object = output.as_object()?;
    if let Some(results) = object.get("results").and_then(Value::as_array) {
        return Some(results.len());
    }
    let mut arrays = object.values().filter_map(Value::as_array);
    match (arrays.next(), arrays.next()) {
        (Some(only), None) => Some(only.len()),
        _ => None,
    }
}
