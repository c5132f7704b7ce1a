//! A book catalogue with one tool, served over REST and MCP: `cargo run -p groundkit-examples
//! --bin library -- --port 8081`, or `-- --stdio` for MCP on stdin/stdout.

use std::collections::BTreeMap;
use std::process::ExitCode;

use clap::Parser;
use garde::Validate;
use groundkit_core::openapi::ApiInfo;
use groundkit_core::{Error, tool};
use groundkit_server::Limits;
use groundkit_server::serve::{ServeArgs, run_tools};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Shared state, built once at start and handed to every call.
pub struct Library {
    books: BTreeMap<String, Book>,
}

impl Library {
    fn find(&self, id: &str) -> Option<Book> {
        self.books.get(id).cloned()
    }
}

/// Which book to look up.
#[derive(Deserialize, JsonSchema, Validate)]
#[serde(deny_unknown_fields)]
pub struct LookupRequest {
    /// Catalogue number.
    #[garde(length(min = 1, max = 32))]
    pub id: String,
}

/// A book in the catalogue.
#[derive(Clone, Serialize, JsonSchema)]
pub struct Book {
    /// Catalogue number.
    pub id: String,
    /// Title.
    pub title: String,
}

/// Look a book up by catalogue number.
#[tool(read_only, rest = "GET /books/{id}")]
pub async fn lookup(library: &Library, request: LookupRequest) -> Result<Book, Error> {
    library.find(&request.id).ok_or(Error::NotFound {
        resource: "book",
        id: request.id,
    })
}

/// `--port`, `--stdio` and the other serving flags every groundkit binary takes.
#[derive(Parser)]
struct Cli {
    #[command(flatten)]
    serve: ServeArgs,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    groundkit_server::logging::init();
    let book = Book {
        id: "b1".into(),
        title: "Middlemarch".into(),
    };
    let library = Library {
        books: BTreeMap::from([(book.id.clone(), book)]),
    };
    let info = ApiInfo {
        title: "library".into(),
        version: "0.1.0".into(),
    };
    run_tools(library, info, Limits::default(), &cli.serve)
}
