//! Registries are scoped by context type and refuse what cannot be served together.

use groundkit_core::tool::HttpMethod;
use groundkit_core::{Registry, RegistryError, SideEffect};
use groundkit_examples::hello::HelloContext;

use super::toolsets::{collide, duplicate, faults, get_body, reserved};

#[test]
fn each_tool_set_is_served_alone_from_one_binary() {
    let hello = Registry::<HelloContext>::collect().expect("hello registry");
    let names: Vec<&str> = hello.tools().iter().map(|t| t.name()).collect();
    assert_eq!(names, ["greet", "list_languages", "text_stats"]);

    let faults = Registry::<faults::FaultCtx>::collect().expect("fault registry");
    let names: Vec<&str> = faults.tools().iter().map(|t| t.name()).collect();
    assert_eq!(names, ["ok", "panics", "slow", "storage"]);
}

#[test]
fn specs_carry_what_the_declaration_says() {
    let hello = Registry::<HelloContext>::collect().expect("hello registry");
    let greet = hello.get("greet").expect("greet");
    assert_eq!(greet.title(), Some("Greet someone"));
    assert_eq!(
        greet.summary(),
        "Greet someone by name in one of the server's languages."
    );
    assert!(greet.description().contains("`list_languages` says which"));
    assert_eq!(greet.side_effect(), SideEffect::ReadOnly);
    let route = greet.route();
    assert_eq!(
        (route.method, route.path),
        (HttpMethod::Get, "/greetings/{language}/{name}")
    );
    assert_eq!(route.params, ["language", "name"]);
    assert_eq!(
        hello.get("text_stats").expect("text_stats").route().method,
        HttpMethod::Post
    );
}

#[test]
fn colliding_routes_are_refused() {
    let err = Registry::<collide::CollideCtx>::collect().expect_err("routes collide");
    assert!(matches!(err, RegistryError::RouteCollision { .. }), "{err}");
    assert!(err.to_string().contains("GET /things/{id}"), "{err}");
}

#[test]
fn duplicate_names_are_refused() {
    let err = Registry::<duplicate::DupCtx>::collect().expect_err("names clash");
    assert_eq!(
        err,
        RegistryError::DuplicateName {
            name: "same".into()
        }
    );
}

#[test]
fn get_tools_take_every_argument_from_the_path() {
    let err = Registry::<get_body::GetBodyCtx>::collect().expect_err("text is not in the path");
    assert_eq!(
        err,
        RegistryError::GetFieldNotInPath {
            tool: "search_by_get".into(),
            field: "text".into()
        }
    );
}

#[test]
fn a_route_that_would_shadow_the_server_paths_is_refused() {
    let err = Registry::<reserved::ReservedCtx>::collect().expect_err("shadows /mcp");
    assert!(matches!(err, RegistryError::ReservedPath { .. }), "{err}");
}
