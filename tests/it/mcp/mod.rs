//! MCP over stdio and Streamable HTTP, and the serving-safety guards, against real servers.
//!
//! What this module guards:
//!
//! - MCP serves exactly the registry, and a tool added to the MCP layer alone fails the check:
//!   `tools::live_mcp_tools_list_serves_exactly_the_registry`,
//!   `tools::a_tool_added_to_the_mcp_layer_alone_fails_the_parity_check`.
//! - One call path: one permit count covers stdio, REST and MCP over HTTP:
//!   `limits::concurrent_calls_are_capped_across_both_transports`. The bounds `docs/limits.md`
//!   lists, at the limit and one past it: `limits.rs` (session expiry: `http.rs`).
//! - Every route refuses a disallowed Host or a foreign Origin before reading a body, and `/mcp`
//!   mounted alone guards itself: `guard::host_and_origin_matrix_on_rest_and_mcp`,
//!   `guard::a_forbidden_host_is_refused_before_the_body_is_read`, and before an interim
//!   `100 Continue` invites it:
//!   `guard::a_request_expecting_100_continue_gets_it_only_when_its_host_and_origin_are_allowed`,
//!   `guard::mcp_mounted_alone_in_an_app_without_a_guard_checks_host_and_origin_itself`; the
//!   binary binds beyond loopback only when told:
//!   `guard::the_binary_refuses_non_loopback_binds_without_allow_remote_access`, and a wildcard
//!   bind, however it is spelled, only with the Hosts it serves named:
//!   `guard::every_spelling_of_the_wildcard_must_name_its_hosts_and_then_answers_only_those`.
//! - One request, one access line:
//!   `access::one_rest_request_and_one_mcp_http_request_write_one_access_line_each`,
//!   `access::a_streamed_mcp_answer_writes_one_line_once_the_call_is_done`.
//! - Progress reaches the client before the response:
//!   `http::a_call_asking_for_progress_streams_progress_events_then_the_response`.
//! - JSON-RPC framing (ids echoed exactly, eras, batches): `framing.rs`; stdout carries only
//!   frames: `stdio.rs`.
//! - Resources are listed and read alike on both transports, a traversal in a template
//!   parameter is refused before the function runs, an unknown URI is -32002 (-32602 in the
//!   stateless era), and a panicking read is an internal error that shows nothing:
//!   `resources::both_transports_list_and_read_the_registrys_resources_and_templates`,
//!   `resources::a_traversal_in_a_template_parameter_is_refused_before_the_function_runs`,
//!   `resources::an_unknown_resource_is_32002_with_its_uri_and_invalid_params_in_the_stateless_era`,
//!   `resources::a_panicking_read_is_an_internal_error_that_shows_nothing_and_the_server_keeps_serving`;
//!   the rest of `resources.rs` (binary contents, a registry without resources).
//! - A function's request context carries its request id (the one the response and the access
//!   line carry), transport, revision and deadline on every transport, and its cancellation
//!   reaches blocking work when the client cancels, the connection closes or the deadline
//!   passes: `context.rs`.
//! - Prompts are listed and got alike on stdio, HTTP and REST, bad arguments fail with the same
//!   `kind` on MCP and REST, and completions offer what the declared completer gives that
//!   begins with the typed text: `prompts.rs`.

mod access;
mod context;
mod framing;
mod guard;
mod http;
mod limits;
mod parser;
mod prompts;
mod resources;
mod stdio;
pub(crate) mod support;
mod tools;
