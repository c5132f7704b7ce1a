//! `Expect: 100-continue`: the Host/Origin check before the interim answer.
//!
//! actix-http writes `100 Continue` as soon as the connection's expect service accepts a request
//! that asks for it, before the application (and its [`host_guard`](super::host_guard)) sees
//! the request. A client that waits for that interim answer before sending its body would be
//! invited to send the body of a request that is then refused. [`expect_guard`] is that expect
//! service: it applies the same [`check`] first, so a refused request gets its final 403 (or
//! 400) and no `100 Continue`, and an allowed one gets `100 Continue` and then its answer. The
//! refusal carries a request id and writes its access line, as the application's would.
//!
//! [`serve::http_server`](crate::serve::http_server) installs it. An app mounted in a server
//! of its own (`actix_web::HttpServer` with [`mcp::http::configure`](crate::mcp::http::configure))
//! keeps actix-http's default expect service, which accepts every request: there the guard
//! refuses a foreign Host after the `100 Continue`, still before the body is read.

use actix_http::body::BoxBody;
use actix_http::{Request, Response};
use actix_service::{ServiceFactory, fn_service};

use super::host::{HostPolicy, check};
use crate::edge::access;

/// The expect service of a server answering `policy`'s Hosts and Origins.
pub(crate) fn expect_guard(
    policy: HostPolicy,
) -> impl ServiceFactory<
    Request,
    Config = (),
    Response = Request,
    Error = Response<BoxBody>,
    InitError = (),
> + Clone {
    fn_service(move |req: Request| {
        let verdict = check(&policy, req.uri(), &req.head().headers);
        async move {
            match verdict {
                Ok(()) => Ok(req),
                Err(refusal) => Err(access::refuse_unrouted(req.method().as_str(), refusal).into()),
            }
        }
    })
}
