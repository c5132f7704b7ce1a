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

mod hand_built {
    use groundkit_core::Error;
    use groundkit_core::schema::{Definitions, output_schema};
    use groundkit_core::tool::{
        BoxFuture, ErasedContext, ReadOnly, RestRoute, ToolParts, ToolSpec,
    };
    use serde_json::{Value, json};

    pub struct HandCtx;

    fn input(_: Definitions) -> Value {
        json!({"type": "object", "properties": {"id": {"type": "string"}}, "required": ["id"]})
    }

    fn output(_: Definitions) -> Value {
        json!({"type": "object"})
    }

    fn handler<'a>(
        _: &'a ErasedContext,
        _: Value,
        _: groundkit_core::RequestContext,
    ) -> BoxFuture<'a, Result<Value, Error>> {
        Box::pin(async { Ok(json!({})) })
    }

    /// A spec written by hand whose path names a parameter its request schema lacks.
    pub static MISMATCHED: ToolSpec = ToolSpec::new::<ReadOnly>(ToolParts {
        name: "hand_built",
        title: None,
        icon: None,
        summary: "Built by hand.",
        description: "Built by hand.",
        route: RestRoute {
            method: groundkit_core::HttpMethod::Get,
            path: "/items/{item}",
            params: &["item"],
        },
        context: std::any::TypeId::of::<HandCtx>,
        context_name: std::any::type_name::<HandCtx>,
        input_schema: input,
        output_schema: output,
        handler,
    });

    fn nothing(_: Definitions) -> Value {
        json!({"type": "object"})
    }

    /// A response whose absent note serializes as `null`.
    #[derive(serde::Serialize, schemars::JsonSchema)]
    pub struct Nullable {
        /// A note.
        pub note: Option<String>,
    }

    /// A response whose absent note is omitted.
    #[derive(serde::Serialize, schemars::JsonSchema)]
    pub struct Omitted {
        /// A note.
        #[serde(skip_serializing_if = "Option::is_none")]
        pub note: Option<String>,
    }

    const fn notes(name: &'static str, output: fn(Definitions) -> Value) -> ToolSpec {
        ToolSpec::new::<ReadOnly>(ToolParts {
            name,
            title: None,
            icon: None,
            summary: "Built by hand.",
            description: "Built by hand.",
            route: RestRoute {
                method: groundkit_core::HttpMethod::Get,
                path: "/notes",
                params: &[],
            },
            context: std::any::TypeId::of::<HandCtx>,
            context_name: std::any::type_name::<HandCtx>,
            input_schema: nothing,
            output_schema: output,
            handler,
        })
    }

    /// Its output schema says the note may be `null`.
    pub static NULLABLE: ToolSpec = notes("nullable", output_schema::<Nullable>);
    /// Its output schema says the note may be absent.
    pub static OMITTED: ToolSpec = notes("omitted", output_schema::<Omitted>);
}

#[test]
fn an_output_that_may_be_null_is_refused_at_registry_build_and_an_omitted_one_accepted() {
    let err = Registry::<hand_built::HandCtx>::from_specs([&hand_built::NULLABLE])
        .expect_err("`note` may be null");
    assert_eq!(
        err,
        RegistryError::NullableOutput {
            tool: "nullable".into(),
            field: "/properties/note".into()
        }
    );
    assert!(err.to_string().contains("skip_serializing_if"), "{err}");
    let registry = Registry::<hand_built::HandCtx>::from_specs([&hand_built::OMITTED])
        .expect("an omitted note is fine");
    let output = registry.tools()[0].output_schema();
    assert_eq!(output["properties"]["note"]["type"], "string");
    assert!(
        output
            .get("required")
            .is_none_or(|r| !r.to_string().contains("note"))
    );
}

#[test]
fn a_path_parameter_missing_from_the_request_schema_is_refused_at_registry_build() {
    let err = Registry::<hand_built::HandCtx>::from_specs([&hand_built::MISMATCHED])
        .expect_err("`item` is not a request field");
    assert_eq!(
        err,
        RegistryError::PathParamNotInRequest {
            tool: "hand_built".into(),
            param: "item".into()
        }
    );
    // A spec outside the link-time slice is never collected.
    assert!(
        Registry::<hand_built::HandCtx>::collect()
            .expect("empty registry")
            .is_empty()
    );
}
