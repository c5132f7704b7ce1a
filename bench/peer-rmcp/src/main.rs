//! An rmcp + tantivy MCP server with groundkit's search tool shape, for bench/mcp_compare.sh.
//!
//!     peer-rmcp CORPUS.jsonl PORT
//!
//! Indexes a BEIR corpus (title and text of each document, tantivy's `en_stem` analyser, BM25)
//! in memory, then serves `search` (top-k documents with their text, as structured content) and
//! `greet` (the trivial tool of groundkit's hello example, same arguments and answer) over
//! Streamable HTTP at `/mcp`, in rmcp's default stateful mode.

use std::sync::Arc;

use axum::serve::ListenerExt;
use rmcp::handler::server::{
    router::tool::ToolRouter,
    wrapper::{Json, Parameters},
};
use rmcp::model::{ServerCapabilities, ServerConfig};
use rmcp::transport::streamable_http_server::{
    StreamableHttpServerConfig, StreamableHttpService, session::local::LocalSessionManager,
};
use rmcp::{ServerHandler, schemars, tool, tool_handler, tool_router};
use tantivy::collector::TopDocs;
use tantivy::query::QueryParser;
use tantivy::schema::{Field, STORED, STRING, Schema, TEXT, Value};
use tantivy::{Index, IndexReader, TantivyDocument, doc};

#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
struct SearchRequest {
    /// Query text.
    query: String,
    /// Number of documents to return (default 10).
    top_k: Option<usize>,
}

#[derive(Debug, serde::Serialize, schemars::JsonSchema)]
struct Hit {
    doc_id: String,
    score: f32,
    content: String,
}

#[derive(Debug, serde::Serialize, schemars::JsonSchema)]
struct SearchResponse {
    results: Vec<Hit>,
}

#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
struct GreetRequest {
    /// ISO 639-1 code of the language to greet in.
    language: String,
    /// Who to greet.
    name: String,
}

#[derive(Debug, serde::Serialize, schemars::JsonSchema)]
struct Language {
    code: String,
    name: String,
    greeting_word: String,
}

#[derive(Debug, serde::Serialize, schemars::JsonSchema)]
struct Greeting {
    message: String,
    language: Language,
}

struct Engine {
    reader: IndexReader,
    parser: QueryParser,
    id: Field,
    content: Field,
}

#[derive(Clone)]
struct Peer {
    engine: Arc<Engine>,
    tool_router: ToolRouter<Self>,
}

#[tool_router]
impl Peer {
    #[tool(description = "Search the corpus (BM25) and return the top documents with their text")]
    fn search(
        &self,
        Parameters(request): Parameters<SearchRequest>,
    ) -> Result<Json<SearchResponse>, String> {
        let e = &self.engine;
        let (query, _errors) = e.parser.parse_query_lenient(&request.query);
        let searcher = e.reader.searcher();
        let top = searcher
            .search(
                &query,
                &TopDocs::with_limit(request.top_k.unwrap_or(10)).order_by_score(),
            )
            .map_err(|err| err.to_string())?;
        let mut results = Vec::with_capacity(top.len());
        for (score, address) in top {
            let stored: TantivyDocument = searcher.doc(address).map_err(|err| err.to_string())?;
            let text = |field| {
                stored
                    .get_first(field)
                    .and_then(|v| v.as_str())
                    .unwrap_or_default()
                    .to_owned()
            };
            results.push(Hit {
                doc_id: text(e.id),
                score,
                content: text(e.content),
            });
        }
        Ok(Json(SearchResponse { results }))
    }

    #[tool(description = "Greet someone by name (English only)")]
    fn greet(
        &self,
        Parameters(GreetRequest { language, name }): Parameters<GreetRequest>,
    ) -> Result<Json<Greeting>, String> {
        if language != "en" {
            return Err(format!("no language {language}"));
        }
        Ok(Json(Greeting {
            message: format!("Hello, {name}!"),
            language: Language {
                code: language,
                name: "English".to_owned(),
                greeting_word: "Hello".to_owned(),
            },
        }))
    }
}

#[tool_handler(router = self.tool_router)]
impl ServerHandler for Peer {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
    }
}

fn build(corpus: &str) -> Result<Engine, Box<dyn std::error::Error>> {
    let mut schema = Schema::builder();
    let id = schema.add_text_field("id", STRING | STORED);
    let content = schema.add_text_field(
        "content",
        TEXT.set_stored().set_indexing_options(
            tantivy::schema::TextFieldIndexing::default()
                .set_tokenizer("en_stem")
                .set_index_option(tantivy::schema::IndexRecordOption::WithFreqsAndPositions),
        ),
    );
    let index = Index::create_in_ram(schema.build());
    let mut writer = index.writer(200_000_000)?;
    for line in std::fs::read_to_string(corpus)?.lines() {
        let record: serde_json::Value = serde_json::from_str(line)?;
        let field = |name: &str| record[name].as_str().unwrap_or_default().to_owned();
        let text = format!("{} {}", field("title"), field("text"));
        writer.add_document(doc!(id => field("_id"), content => text))?;
    }
    writer.commit()?;
    let reader = index.reader()?;
    let parser = QueryParser::for_index(&index, vec![content]);
    Ok(Engine {
        reader,
        parser,
        id,
        content,
    })
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let (Some(corpus), Some(port)) = (args.next(), args.next()) else {
        return Err("usage: peer-rmcp CORPUS.jsonl PORT".into());
    };
    let engine = Arc::new(build(&corpus)?);
    let service: StreamableHttpService<Peer, LocalSessionManager> = StreamableHttpService::new(
        move || {
            Ok(Peer {
                engine: Arc::clone(&engine),
                tool_router: Peer::tool_router(),
            })
        },
        Default::default(),
        StreamableHttpServerConfig::default(),
    );
    let router = axum::Router::new().nest_service("/mcp", service);
    // TCP_NODELAY as axum's documentation sets it (`ListenerExt::tap_io`): without it the last,
    // small chunk of each streamed reply waits for the client's delayed ACK, 40 ms a call.
    let listener = tokio::net::TcpListener::bind(("127.0.0.1", port.parse::<u16>()?))
        .await?
        .tap_io(|tcp| {
            let _ = tcp.set_nodelay(true);
        });
    println!("listening on http://127.0.0.1:{port}");
    axum::serve(listener, router).await?;
    Ok(())
}
