//! The grounding service (`search`, `fetch_chunk`, `list_collections`, `index_status`) against a
//! real collection ingested in the test.

mod bounds;
mod client_errors;
mod descriptions;
mod exit_codes;
mod rest;
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
    AppState::new(registry, context, info, Limits::default())
}

/// A REST server over `fx`.
pub(crate) fn server(fx: &Fixture) -> TestServer {
    TestServer::start(state(fx, None))
}
