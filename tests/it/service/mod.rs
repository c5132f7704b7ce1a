//! The grounding service (`search`, `fetch_chunk`, `list_collections`, `index_status`) against a
//! real collection ingested in the test.
//!
//! What this module guards:
//!
//! - The service is four read-only tools, and no request carries a path, URL or provider
//!   setting: `rest::the_service_is_exactly_four_read_only_tools`,
//!   `rest::no_request_carries_paths_urls_or_provider_settings`.
//! - One parser and one error mapping: every transport answers the same input with the same JSON
//!   and refuses it with the same `kind`:
//!   `transports::every_tool_answers_the_same_json_on_rest_and_both_mcp_transports`,
//!   `transports::every_error_has_the_same_kind_on_rest_and_both_mcp_transports`,
//!   `transports::a_key_given_twice_is_refused_on_every_transport_not_read_as_its_last_value`.
//! - Every `collection` argument states the one collection-name rule:
//!   `descriptions::every_collection_argument_states_the_one_collection_name_rule`; a traversal
//!   name is refused alike whether or not its target exists:
//!   `rest::a_traversal_name_is_refused_the_same_whether_or_not_its_target_exists`.
//! - Errors leak nothing and query text stays out of logs:
//!   `rest::every_error_path_has_its_kind_and_leaks_nothing`,
//!   `transports::no_transport_logs_the_query_text_at_info`.
//! - The REST contract a generated client relies on: every error a route answers is declared
//!   on it with its kind, the README's status table is the document's, and component names
//!   do not change unnoticed:
//!   `openapi::every_error_the_service_answers_is_declared_on_its_route_with_its_kind`,
//!   `openapi::the_readme_lists_the_status_of_every_kind_as_the_openapi_document_declares_it`,
//!   `openapi::the_names_of_the_openapi_components_match_their_snapshot`.
//! - The output schemas of `search` and `fetch_chunk` declare citation lines from 1, optional
//!   (absent for extracted sources and collections from before lines):
//!   `descriptions::citation_lines_start_at_1_and_may_be_absent_in_search_and_fetch_chunk`.
//! - The README's quick start shows what the bundled sample answers:
//!   `readme::the_quick_start_shows_what_the_bundled_sample_answers`.
//! - Request bounds at the limit and one past: `bounds.rs`; `grk`'s exit codes: `exit_codes.rs`.
//! - A chunk resource reads as `fetch_chunk`'s verified answer and a drifted one as its verdict,
//!   never its stored text; a collection's status as `index_status`'s answer; a traversal-shaped
//!   name is refused:
//!   `resources::a_chunk_reads_as_its_verified_answer_and_once_drifted_as_its_verdict_without_text`,
//!   `resources::a_collection_status_reads_as_index_status_and_bad_names_are_refused`.
//! - The `grounded_answer` prompt embeds only chunks that still match their sources, and every
//!   `collection` argument completes to the served collections:
//!   `prompts::a_grounded_answer_embeds_verified_chunks_and_leaves_a_drifted_one_out`,
//!   `prompts::collection_arguments_complete_to_the_served_collections`.
//! - A client that follows a collection's status hears of each new generation, over HTTP and
//!   stdio, and a stateless request is offered no subscription:
//!   `subscriptions::a_session_that_follows_a_collection_hears_of_each_generation_on_its_stream`,
//!   `subscriptions::a_stdio_client_that_follows_a_collection_hears_of_each_generation`.

mod bounds;
mod budget;
mod client_errors;
mod descriptions;
mod exit_codes;
mod openapi;
mod pages;
mod prompts;
mod readme;
mod resources;
mod rest;
mod several;
mod subscriptions;
pub(crate) mod transports;

use std::sync::Arc;

use groundkit_core::Registry;
use groundkit_core::openapi::ApiInfo;
use groundkit_server::service::{Reranker, ServiceContext};
use groundkit_server::{AppState, Limits};
use groundkit_tests::TestServer;

use crate::retrieval::Fixture;

/// A corpus of three small documents ingested as collection `papers`.
pub(crate) fn corpus() -> Fixture {
    let fx = Fixture::new();
    fx.write(
        "covid.md",
        "# COVID-19 testing\n\nPCR tests detect viral RNA; antigen tests detect viral proteins.\n",
    );
    fx.write(
        "tea.txt",
        "Green tea is steeped at 80 degrees for two minutes.\n",
    );
    fx.write(
        "bikes/chain.md",
        "Clean the bicycle chain, then oil each link sparingly.\n",
    );
    fx.ingest_all("papers");
    fx
}

/// The service state for `fx`, optionally with a reranker.
pub(crate) fn state(fx: &Fixture, reranker: Option<Arc<dyn Reranker>>) -> AppState<ServiceContext> {
    let mut context = ServiceContext::new(fx.cache());
    if let Some(reranker) = reranker {
        context = context.with_reranker(reranker);
    }
    state_with(context)
}

/// The service state for a context the test built.
pub(crate) fn state_with(context: ServiceContext) -> AppState<ServiceContext> {
    let registry = Registry::<ServiceContext>::collect().expect("service registry");
    let info = ApiInfo {
        title: "groundkit".into(),
        version: "test".into(),
    };
    groundkit_server::service::app_state(registry, context, info, Limits::default())
        .expect("the service state")
}

/// A REST server over `fx`.
pub(crate) fn server(fx: &Fixture) -> TestServer {
    TestServer::start(state(fx, None))
}
