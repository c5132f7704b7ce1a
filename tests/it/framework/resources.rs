//! Resources in the registry, on REST and in the OpenAPI document: what a `#[resource]`
//! declares, what the registry refuses, and the `GET` route each resource gets.

use std::sync::atomic::Ordering;

use groundkit_core::resource::Segment;
use groundkit_core::tool::HttpMethod;
use groundkit_core::{Registry, RegistryError, SideEffect};
use groundkit_examples::hello::HelloContext;
use groundkit_tests::TestServer;

use super::toolsets::resource_faults::{ExtraFieldCtx, OverlapCtx, RouteCtx, SameNameCtx};
use crate::mcp::support::{hello_state, test_state};
use groundkit_server::Limits;

#[test]
fn a_resource_spec_carries_its_uri_template_route_and_mime_type() {
    let hello = Registry::<HelloContext>::collect().expect("hello registry");
    let names: Vec<&str> = hello.resources().iter().map(|r| r.name()).collect();
    assert_eq!(names, ["greeting", "languages"]);
    let (greeting, arguments) = hello
        .resource_for("hello://greetings/de/Grete")
        .expect("a template instance");
    assert_eq!(greeting.name(), "greeting");
    assert_eq!(greeting.title(), Some("A greeting"));
    assert_eq!(greeting.mime_type(), "text/plain");
    assert_eq!(greeting.side_effect(), SideEffect::ReadOnly);
    assert_eq!(arguments["language"], "de");
    assert_eq!(arguments["name"], "Grete");
    let uri = greeting.uri();
    assert_eq!(uri.scheme, "hello");
    assert_eq!(
        uri.segments,
        [
            Segment::Literal("greetings"),
            Segment::Var("language"),
            Segment::Var("name")
        ]
    );
    assert!(!uri.is_static());
    let route = greeting.route();
    assert_eq!(
        (route.method, route.path, route.params),
        (
            HttpMethod::Get,
            "/resources/hello/greetings/{language}/{name}",
            &["language", "name"][..]
        )
    );
    let (languages, none) = hello.resource_for("hello://languages").expect("static");
    assert!(languages.uri().is_static() && none.is_empty());
    assert!(hello.resource_for("hello://greetings/de").is_none());
}

#[test]
fn templates_one_uri_could_match_twice_are_refused() {
    let err = Registry::<OverlapCtx>::collect().expect_err("templates overlap");
    assert!(matches!(err, RegistryError::UriOverlap { .. }), "{err}");
    assert!(err.to_string().contains("things://{name}/data"), "{err}");
}

#[test]
fn a_resource_named_like_a_tool_is_refused() {
    let err = Registry::<SameNameCtx>::collect().expect_err("one name twice");
    assert_eq!(
        err,
        RegistryError::DuplicateResourceName {
            name: "thing".into()
        }
    );
}

#[test]
fn a_resource_route_colliding_with_a_tool_route_is_refused() {
    let err = Registry::<RouteCtx>::collect().expect_err("routes collide");
    assert!(matches!(err, RegistryError::RouteCollision { .. }), "{err}");
    assert!(
        err.to_string().contains("GET /resources/things/{id}"),
        "{err}"
    );
}

#[test]
fn template_parameters_no_uri_variable_fills_are_refused() {
    let err = Registry::<ExtraFieldCtx>::collect().expect_err("a field without a variable");
    assert_eq!(
        err,
        RegistryError::ParamNotInUri {
            resource: "with_extra".into(),
            field: "other".into()
        }
    );
}

#[test]
fn a_resource_is_served_as_a_get_route_answering_its_content_under_its_mime_type() {
    let server = TestServer::start(hello_state(Limits::default()));
    let greeting = server.get("/resources/hello/greetings/es/Ana%20Mar%C3%ADa");
    assert_eq!(greeting.status, 200, "{}", greeting.body);
    assert_eq!(greeting.header("content-type"), Some("text/plain"));
    assert_eq!(greeting.body, "Hola, Ana María!");
    let languages = server.get("/resources/hello/languages");
    assert_eq!(languages.status, 200);
    assert!(languages.body.starts_with("de\tGerman\tHallo\n"));
    let unknown = server.get("/resources/hello/greetings/xx/Ana");
    assert_eq!(unknown.status, 404);
    assert_eq!(unknown.json()["kind"], "not_found");
    let posted = server.post_json("/resources/hello/languages", "{}");
    assert_eq!(posted.status, 405);
    assert_eq!(posted.header("allow"), Some("GET"));
}

#[test]
fn a_traversal_in_a_rest_path_parameter_is_refused_before_the_function_runs() {
    let (state, ctx) = test_state(Limits::default());
    let server = TestServer::start(state);
    for path in [
        "/resources/test/files/..%2F..%2Fetc%2Fpasswd",
        "/resources/test/files/%2E%2E",
        "/resources/test/files/a%2F..",
    ] {
        let refused = server.get(path);
        assert_eq!(refused.status, 422, "{path}: {}", refused.body);
        assert_eq!(refused.json()["kind"], "validation_error", "{path}");
    }
    assert_eq!(ctx.reads.load(Ordering::SeqCst), 0);
    assert_eq!(server.get("/resources/test/files/a.txt").status, 200);
    assert_eq!(ctx.reads.load(Ordering::SeqCst), 1);
}

#[test]
fn the_openapi_document_has_an_operation_for_each_resource() {
    let state = hello_state(Limits::default());
    let paths = &state.openapi["paths"];
    let template = &paths["/resources/hello/greetings/{language}/{name}"]["get"];
    assert_eq!(template["operationId"], "greeting");
    assert_eq!(
        template["x-groundkit-resource-uri"],
        "hello://greetings/{language}/{name}"
    );
    assert_eq!(template["parameters"][0]["name"], "language");
    assert_eq!(template["parameters"][0]["schema"]["pattern"], "^[a-z]+$");
    assert!(template["responses"]["200"]["content"]["text/plain"].is_object());
    assert!(template["responses"]["422"].is_object());
    assert!(
        template["responses"]["413"].is_null(),
        "a GET takes no body"
    );
    let languages = &paths["/resources/hello/languages"]["get"];
    assert_eq!(languages["operationId"], "languages");
    assert!(languages["parameters"].is_null());
}
