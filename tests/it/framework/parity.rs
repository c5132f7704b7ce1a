//! REST parity: the routes the running actix app answers are exactly the registry's routes plus
//! `GET /openapi.json`. The served set comes from actix's own route introspection, not from the
//! registry, so a route added by hand anywhere in the app makes the comparison fail.

use std::collections::BTreeSet;
use std::sync::Arc;

use actix_web::dev::{ServiceFactory, ServiceRequest, ServiceResponse};
use actix_web::introspection::IntrospectionTree;
use actix_web::test as actix_test;
use actix_web::{App, HttpResponse, web};
use groundkit_core::Registry;
use groundkit_core::openapi::ApiInfo;
use groundkit_examples::hello::HelloContext;
use groundkit_server::{AppState, Limits};
use groundkit_tests::TestServer;

type Route = (String, String);

fn hello_state() -> Arc<AppState<HelloContext>> {
    let registry = Registry::<HelloContext>::collect().expect("hello registry");
    let info = ApiInfo {
        title: "test".into(),
        version: "0".into(),
    };
    Arc::new(AppState::new(
        registry,
        HelloContext::default(),
        info,
        Limits::default(),
    ))
}

/// The (method, path) pairs the registry declares, plus the server's own OpenAPI route and the
/// MCP transport's endpoint.
fn declared<Ctx>(state: &AppState<Ctx>) -> BTreeSet<Route> {
    let mut routes: BTreeSet<Route> = state
        .registry
        .tools()
        .iter()
        .map(|spec| {
            (
                spec.route().method.to_string(),
                spec.route().path.to_owned(),
            )
        })
        .collect();
    routes.insert(("GET".into(), "/openapi.json".into()));
    for (method, path) in groundkit_server::mcp::http::ROUTES {
        routes.insert(((*method).into(), (*path).into()));
    }
    routes
}

/// Ask the initialised app which (method, path) pairs it routes.
fn served<T, B>(app: App<T>) -> BTreeSet<Route>
where
    T: ServiceFactory<
            ServiceRequest,
            Config = (),
            Response = ServiceResponse<B>,
            Error = actix_web::Error,
            InitError = (),
        > + 'static,
    B: actix_web::body::MessageBody + 'static,
{
    actix_web::rt::System::new().block_on(async move {
        let service = actix_test::init_service(app).await;
        let response = actix_test::call_service(
            &service,
            actix_test::TestRequest::get()
                .uri("/openapi.json")
                .to_request(),
        )
        .await;
        let tree = response
            .request()
            .app_data::<web::Data<IntrospectionTree>>()
            .expect("the app was built with route introspection")
            .clone();
        let report: serde_json::Value =
            serde_json::from_str(&tree.report_as_json()).expect("introspection report is JSON");
        let mut routes = BTreeSet::new();
        for item in report.as_array().expect("report is a list") {
            let path = item["full_path"].as_str().expect("full_path").to_owned();
            for method in item["methods"].as_array().expect("methods") {
                routes.insert((method.as_str().expect("method").to_owned(), path.clone()));
            }
        }
        routes
    })
}

#[test]
fn rest_serves_exactly_the_registry() {
    let state = hello_state();
    let served = served(groundkit_server::app::build(Arc::clone(&state)));
    assert_eq!(served, declared(&state));
    assert_eq!(
        served.len(),
        state.registry.len() + 1 + groundkit_server::mcp::http::ROUTES.len()
    );
}

#[test]
fn a_hand_added_route_breaks_parity() {
    let state = hello_state();
    let app = groundkit_server::app::build(Arc::clone(&state))
        .route("/admin/reindex", web::post().to(HttpResponse::Ok));
    let served = served(app);
    let declared = declared(&state);
    let extra: Vec<&Route> = served.difference(&declared).collect();
    assert_eq!(extra, [&("POST".to_owned(), "/admin/reindex".to_owned())]);
}

#[test]
fn every_declared_route_reaches_its_tool_over_http() {
    let state = hello_state();
    let server = TestServer::start(AppState::new(
        Registry::<HelloContext>::collect().expect("hello registry"),
        HelloContext::default(),
        state.info.clone(),
        Limits::default(),
    ));
    for spec in state.registry.tools() {
        let route = spec.route();
        let path = route
            .params
            .iter()
            .fold(route.path.to_owned(), |path, param| {
                path.replace(&format!("{{{param}}}"), "en")
            });
        let response = match route.method {
            groundkit_core::HttpMethod::Get => server.get(&path),
            groundkit_core::HttpMethod::Post => server.post_json(&path, "{}"),
        };
        assert!(
            response.status != 404 && response.status != 405,
            "{} {path} did not reach `{}`: {}",
            route.method,
            spec.name(),
            response.body
        );
    }
}
