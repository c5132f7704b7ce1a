//! A static resource and a template compile warning-free, register, and read through their
//! specs: the template's variables are percent-decoded and validated before the function runs.
#![deny(warnings, missing_docs, unused_qualifications, unreachable_pub)]

use garde::Validate;
use groundkit_core::{Content, Error, Registry, resource};
use schemars::JsonSchema;
use serde::Deserialize;

/// Context.
pub struct Ctx;

/// Parameters.
#[derive(Deserialize, JsonSchema, Validate)]
#[serde(deny_unknown_fields)]
pub struct Params {
    /// Lower-case letters.
    #[garde(pattern(r"^[a-z ]+$"))]
    pub name: String,
}

/// A document by name.
#[resource(read_only, uri = "docs://{name}", mime_type = "text/markdown", title = "A document")]
pub async fn doc(_: &Ctx, params: Params) -> Result<Content, Error> {
    Ok(Content::Text(format!("# {}", params.name)))
}

/// The logo.
#[resource(read_only, uri = "docs://assets/logo", mime_type = "image/png", name = "logo")]
pub async fn logo_png(_: &Ctx) -> Result<Content, Error> {
    Ok(Content::Blob(vec![0x89, b'P', b'N', b'G']))
}

fn main() {
    let registry = Registry::<Ctx>::collect().expect("registry");
    let names: Vec<&str> = registry.resources().iter().map(|r| r.name()).collect();
    assert_eq!(names, ["doc", "logo"]);
    let (doc, arguments) = registry.resource_for("docs://read%20me").expect("a template match");
    assert_eq!(doc.route().path, "/resources/docs/{name}");
    let runtime = futures_executor(doc.read(&Ctx, arguments.into(), call()));
    assert_eq!(runtime.expect("read"), Content::Text("# read me".into()));
    let (_, refused) = registry.resource_for("docs://..%2Fetc").expect("a template match");
    let refused = futures_executor(doc.read(&Ctx, refused.into(), call()));
    assert!(matches!(refused, Err(Error::Validation { .. })), "{refused:?}");
    let (logo, none) = registry.resource_for("docs://assets/logo").expect("the static URI");
    assert_eq!(logo.route().path, "/resources/docs/assets/logo");
    assert!(futures_executor(logo.read(&Ctx, none.into(), call())).is_ok());
}

/// Run a future that never waits to completion.
fn futures_executor<T>(future: impl Future<Output = T>) -> T {
    let waker = std::task::Waker::noop();
    let mut context = std::task::Context::from_waker(waker);
    let mut future = std::pin::pin!(future);
    match future.as_mut().poll(&mut context) {
        std::task::Poll::Ready(value) => value,
        std::task::Poll::Pending => panic!("the read waited"),
    }
}

/// The context of a call made here.
fn call() -> groundkit_core::RequestContext {
    groundkit_core::RequestContext::new("test", groundkit_core::Transport::InProcess)
}
