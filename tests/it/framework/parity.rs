//! REST parity: the routes the running actix app answers are exactly the registry's routes (its
//! tools', resources' and prompts') plus `GET /openapi.json`. The served set comes from actix's own
//! route introspection, not from the registry, so a route added by hand anywhere in the app
//! makes the comparison fail. MCP parity for resources: both transports list exactly the
//! registry's resources and templates.

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
    let tools = state.registry.tools().iter().map(|spec| spec.route());
    let resources = state.registry.resources().iter().map(|spec| spec.route());
    let prompts = state.registry.prompts().iter().map(|spec| spec.route());
    let mut routes: BTreeSet<Route> = tools
        .chain(resources)
        .chain(prompts)
        .map(|route| (route.method.to_string(), route.path.to_owned()))
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
    assert!(!state.registry.resources().is_empty());
    assert!(!state.registry.prompts().is_empty());
    assert_eq!(
        served.len(),
        state.registry.len()
            + state.registry.resources().len()
            + state.registry.prompts().len()
            + 1
            + groundkit_server::mcp::http::ROUTES.len()
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
    let tools = state.registry.tools().iter().map(|s| (s.name(), s.route()));
    let resources = state
        .registry
        .resources()
        .iter()
        .map(|s| (s.name(), s.route()));
    for (name, route) in tools.chain(resources) {
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
            "{} {path} did not reach `{name}`: {}",
            route.method,
            response.body
        );
    }
}

/// The URIs (`resources/list`) and URI templates (`resources/templates/list`) an MCP answer
/// lists.
fn listed(answer: &serde_json::Value, key: &str, field: &str) -> BTreeSet<String> {
    answer["result"][key]
        .as_array()
        .unwrap_or_else(|| panic!("a list under {key}: {answer}"))
        .iter()
        .map(|item| item[field].as_str().expect("a string").to_owned())
        .collect()
}

#[tokio::test]
async fn both_mcp_transports_list_exactly_the_registrys_resources_and_templates() {
    use crate::mcp::support::{Server, Stdio, initialize_frame};

    let state = hello_state();
    let uris = |statics: bool| -> BTreeSet<String> {
        state
            .registry
            .resources()
            .iter()
            .filter(|spec| spec.uri().is_static() == statics)
            .map(|spec| spec.uri().template.to_owned())
            .collect()
    };
    let (statics, templates) = (uris(true), uris(false));
    assert!(!statics.is_empty() && !templates.is_empty());

    let mut stdio = Stdio::start_shared(Arc::clone(&state));
    stdio.send(&initialize_frame(0, "2025-11-25")).await;
    stdio.recv().await;
    let server = Server::start_shared(Arc::clone(&state));
    let session = server.initialize();
    for (id, method, key, field, expected) in [
        (1, "resources/list", "resources", "uri", &statics),
        (
            2,
            "resources/templates/list",
            "resourceTemplates",
            "uriTemplate",
            &templates,
        ),
    ] {
        let frame = format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"{method}"}}"#);
        stdio.send(&frame).await;
        assert_eq!(
            &listed(&stdio.recv().await, key, field),
            expected,
            "{method} on stdio"
        );
        let response = server.mcp(
            &frame,
            &[
                ("Mcp-Session-Id", &session),
                ("MCP-Protocol-Version", "2025-11-25"),
            ],
        );
        assert_eq!(
            &listed(&response.json(), key, field),
            expected,
            "{method} on HTTP"
        );
    }
}

/// The test client a library author uses: every hello tool answers alike on REST, MCP over
/// HTTP and MCP over stdio, outputs and errors (kind and field) both.
#[test]
fn the_test_client_finds_every_hello_tool_answering_alike_on_every_transport() {
    use groundkit_server::testing::{Called, TestClient};
    use serde_json::json;

    let state = Arc::try_unwrap(hello_state()).unwrap_or_else(|_| unreachable!("one owner"));
    let mut client = TestClient::start(state);
    let greeting = client.assert_parity("greet", json!({"language": "fr", "name": "Ada L."}));
    assert_eq!(greeting.output()["message"], "Bonjour, Ada L.!");
    let languages = client.assert_parity("list_languages", json!({}));
    assert_eq!(languages.output()["languages"][0]["code"], "de");
    let stats = client.assert_parity("text_stats", json!({"text": "a b a", "top": 1}));
    assert_eq!(
        stats.output()["top_words"],
        json!([{"word": "a", "count": 2}])
    );
    for (arguments, kind, field) in [
        (json!({"language": "zz", "name": "x"}), "not_found", None),
        (
            json!({"language": "FR", "name": "x"}),
            "validation_error",
            Some("language"),
        ),
    ] {
        assert_eq!(
            client.assert_parity("greet", arguments),
            Called::Failed {
                kind: kind.into(),
                field: field.map(str::to_owned)
            }
        );
    }
    let missing = client.assert_parity("text_stats", json!({}));
    assert_eq!(missing.error_kind(), Some("invalid_request"));
}

/// The parity assertion fails when one transport answers otherwise: here an interceptor that
/// refuses calls arriving over REST alone.
#[test]
fn the_test_clients_parity_assertion_fails_when_one_transport_answers_otherwise() {
    use groundkit_core::intercept::{Answer, Interceptor, Invocation, Next};
    use groundkit_core::tool::BoxFuture;
    use groundkit_core::{Error, Transport};
    use groundkit_server::testing::TestClient;

    struct RefuseRest;
    impl Interceptor for RefuseRest {
        fn intercept<'a>(
            &'a self,
            invocation: Invocation,
            next: Next<'a>,
        ) -> BoxFuture<'a, Result<Answer, Error>> {
            Box::pin(async move {
                if invocation.request.transport() == Transport::Rest {
                    return Err(Error::Overloaded);
                }
                next.run(invocation).await
            })
        }
    }

    let state = Arc::try_unwrap(hello_state()).unwrap_or_else(|_| unreachable!("one owner"));
    let mut client = TestClient::start(state.intercept(RefuseRest));
    let arguments = serde_json::json!({});
    assert_eq!(
        client
            .rest("list_languages", arguments.clone())
            .error_kind(),
        Some("overloaded")
    );
    assert!(
        client
            .mcp_stdio("list_languages", arguments.clone())
            .error_kind()
            .is_none()
    );
    let parity = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        client.assert_parity("list_languages", arguments)
    }));
    assert!(
        parity.is_err(),
        "REST answered otherwise, so parity must fail"
    );
}
