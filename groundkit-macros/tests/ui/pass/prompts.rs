//! Prompts with and without arguments compile warning-free, register, and answer through their
//! specs: arguments are validated before the function runs, and a completer's candidates are
//! filtered by what was typed.
#![deny(warnings, missing_docs, unused_qualifications, unreachable_pub)]

use garde::Validate;
use groundkit_core::complete;
use groundkit_core::{Completion, Error, Message, Registry, prompt};
use schemars::JsonSchema;
use serde::Deserialize;

/// Context.
pub struct Ctx;

/// Arguments.
#[derive(Deserialize, JsonSchema, Validate)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// A language code.
    #[garde(pattern(r"^[a-z]{2}$"))]
    pub language: String,
    /// An optional topic.
    #[garde(inner(length(max = 16)))]
    pub topic: Option<String>,
}

/// Language codes.
pub async fn codes(_: &Ctx, completion: Completion) -> Result<Vec<String>, Error> {
    assert_eq!(completion.argument, "language");
    Ok(vec!["de".into(), "en".into(), "es".into()])
}

/// Say hello in a language.
#[prompt(read_only, title = "Hello", complete(language = codes))]
pub async fn hello(_: &Ctx, args: Args) -> Result<Vec<Message>, Error> {
    let topic = args.topic.unwrap_or_default();
    Ok(vec![Message::user(format!("{} {topic}", args.language))])
}

/// Say goodbye.
#[prompt(read_only, name = "bye")]
pub async fn goodbye(_: &Ctx) -> Result<Vec<Message>, Error> {
    Ok(vec![Message::assistant("bye")])
}

fn main() {
    let registry = Registry::<Ctx>::collect().expect("registry");
    let names: Vec<&str> = registry.prompts().iter().map(|p| p.name()).collect();
    assert_eq!(names, ["bye", "hello"]);
    let hello = registry.prompt("hello").expect("hello");
    assert_eq!(hello.route().path, "/prompts/hello");
    let arguments: Vec<(String, bool)> = hello
        .arguments()
        .into_iter()
        .map(|a| (a.name, a.required))
        .collect();
    assert_eq!(
        arguments,
        [("language".to_owned(), true), ("topic".to_owned(), false)]
    );
    let answer = futures_executor(hello.get(&Ctx, serde_json::json!({"language": "fr"}), call()));
    assert_eq!(answer.expect("get"), [Message::user("fr ")]);
    let refused = futures_executor(hello.get(&Ctx, serde_json::json!({"language": "fra"}), call()));
    assert!(matches!(refused, Err(Error::Validation { .. })), "{refused:?}");
    let completion = Completion {
        argument: "language".into(),
        value: "e".into(),
        ..Completion::default()
    };
    let values = futures_executor(complete::run(hello.completers(), &Ctx, completion, call()));
    assert_eq!(values.expect("complete").values, ["en", "es"]);
}

/// Run a future that never waits to completion.
fn futures_executor<T>(future: impl Future<Output = T>) -> T {
    let waker = std::task::Waker::noop();
    let mut context = std::task::Context::from_waker(waker);
    let mut future = std::pin::pin!(future);
    match future.as_mut().poll(&mut context) {
        std::task::Poll::Ready(value) => value,
        std::task::Poll::Pending => panic!("the get waited"),
    }
}

/// The context of a call made here.
fn call() -> groundkit_core::RequestContext {
    groundkit_core::RequestContext::new("test", groundkit_core::Transport::InProcess)
}
