//! Notes over REST, MCP and OpenAPI: `cargo run -p groundkit-examples --bin notes -- --port 8082`.
use groundkit_core::{intercept::from_fn, openapi::ApiInfo, *};
use groundkit_server::{AppState, serve};

const NOTES: [(&str, &str); 2] = [("groceries", "eggs, flour"), ("todo", "call Ada")];

#[derive(serde::Deserialize, schemars::JsonSchema, garde::Validate)]
struct Name {
    #[garde(ascii, length(min = 1, max = 32))]
    name: String,
}
#[derive(serde::Serialize, schemars::JsonSchema)]
struct Note {
    text: String,
}

/// Read a note.
#[tool(read_only, rest = "GET /notes/{name}")]
async fn read_note(_: &(), n: Name) -> Result<Note, Error> {
    let note = NOTES.iter().find(|(name, _)| *name == n.name);
    let text = note.ok_or(Error::not_found("note", n.name))?.1.into();
    Ok(Note { text })
}
/// A note's text.
#[resource(read_only, uri = "notes://{name}", mime_type = "text/plain", complete(name = names))]
async fn note(ctx: &(), n: Name) -> Result<Content, Error> {
    Ok(Content::Text(read_note(ctx, n).await?.text))
}
/// Ask for a one-line summary of a note.
#[prompt(read_only, complete(name = names))]
async fn summarize(ctx: &(), n: Name) -> Result<Vec<Message>, Error> {
    let text = read_note(ctx, n).await?.text;
    Ok(vec![Message::user(format!("Summarize this note: {text}"))])
}
async fn names(_: &(), _: Completion) -> Result<Vec<String>, Error> {
    Ok(NOTES.iter().map(|(name, _)| name.to_string()).collect())
}

fn main() -> Result<std::process::ExitCode, RegistryError> {
    let state = AppState::collect((), ApiInfo::new("notes", "0.1"))?;
    Ok(serve::main(state.intercept(from_fn(|call, next| {
        tracing::info!(kind = call.kind.as_str(), name = call.name, "call");
        next.run(call)
    }))))
}
