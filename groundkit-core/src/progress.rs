//! Progress reports from inside a tool, whatever called it.
//!
//! A tool calls [`report`] as it goes. A caller that can deliver progress (a transport whose
//! client asked for it) runs the call inside [`scope`] with a [`ProgressSink`], and each report
//! that keeps the rules below reaches that sink. Anywhere else a report is a no-op, so a tool
//! never needs to know how it was called.
//!
//! The rules are kept here rather than trusted to every tool or sink: `progress` is finite and
//! strictly increases (a report that does not is dropped), and nothing is delivered once the
//! call's future has finished (the sink is reachable only while that future is being polled,
//! like a task-local).

use std::cell::RefCell;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};

/// Where one call's progress goes; implemented by a transport.
pub trait ProgressSink: Send + Sync {
    /// Deliver one report that kept the rules; returns whether it was delivered.
    fn deliver(&self, progress: f64, total: Option<f64>, message: Option<&str>) -> bool;
}

/// One call's sink and the last progress it delivered.
struct Scope {
    sink: Arc<dyn ProgressSink>,
    last: Mutex<Option<f64>>,
}

thread_local! {
    /// The scope of the call being polled on this thread, if any.
    static CURRENT: RefCell<Option<Arc<Scope>>> = const { RefCell::new(None) };
}

/// Report progress of the current call: `progress` so far, out of `total` when known.
///
/// Returns whether the report was delivered: `false` outside a [`scope`] with a sink, and for a
/// report that is not finite or does not increase.
pub fn report(progress: f64, total: Option<f64>, message: Option<&str>) -> bool {
    let Some(scope) = CURRENT.with(|current| current.borrow().clone()) else {
        return false;
    };
    {
        let Ok(mut last) = scope.last.lock() else {
            return false;
        };
        if !progress.is_finite() || last.is_some_and(|last| progress <= last) {
            return false;
        }
        *last = Some(progress);
    }
    scope.sink.deliver(progress, total, message)
}

/// Run `future` with `sink` (when there is one) receiving the progress it reports.
pub async fn scope<F: Future>(sink: Option<Arc<dyn ProgressSink>>, future: F) -> F::Output {
    match sink {
        None => future.await,
        Some(sink) => {
            Scoped {
                scope: Arc::new(Scope {
                    sink,
                    last: Mutex::new(None),
                }),
                future: Box::pin(future),
            }
            .await
        }
    }
}

/// A future polled with its scope current.
struct Scoped<F> {
    scope: Arc<Scope>,
    future: Pin<Box<F>>,
}

impl<F: Future> Future for Scoped<F> {
    type Output = F::Output;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<F::Output> {
        let this = self.get_mut();
        let _current = Enter::new(Arc::clone(&this.scope));
        this.future.as_mut().poll(cx)
    }
}

/// Makes a scope current until dropped (also when the poll unwinds), then restores the one
/// before it.
struct Enter(Option<Arc<Scope>>);

impl Enter {
    fn new(scope: Arc<Scope>) -> Self {
        Enter(CURRENT.with(|current| current.replace(Some(scope))))
    }
}

impl Drop for Enter {
    fn drop(&mut self) {
        let previous = self.0.take();
        CURRENT.with(|current| *current.borrow_mut() = previous);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Default)]
    struct Recorder(Mutex<Vec<f64>>);

    impl ProgressSink for Recorder {
        fn deliver(&self, progress: f64, _total: Option<f64>, _message: Option<&str>) -> bool {
            self.0.lock().map(|mut seen| seen.push(progress)).is_ok()
        }
    }

    fn block_on<F: Future>(future: F) -> F::Output {
        let mut future = std::pin::pin!(future);
        let mut cx = Context::from_waker(std::task::Waker::noop());
        loop {
            if let Poll::Ready(output) = future.as_mut().poll(&mut cx) {
                return output;
            }
        }
    }

    #[test]
    fn reports_reach_the_sink_only_inside_the_scope_and_only_when_increasing() {
        let recorder = Arc::new(Recorder::default());
        let sink: Arc<dyn ProgressSink> = recorder.clone();
        assert!(!report(1.0, None, None), "no scope, no delivery");
        let delivered = block_on(scope(Some(sink), async {
            [1.0, 1.0, 0.5, f64::NAN, 2.0].map(|step| report(step, Some(2.0), None))
        }));
        assert_eq!(delivered, [true, false, false, false, true]);
        assert!(!report(3.0, None, None), "the scope ended with the call");
        let seen = recorder
            .0
            .lock()
            .map(|seen| seen.clone())
            .unwrap_or_default();
        assert_eq!(seen, [1.0, 2.0]);
        assert!(!block_on(scope(None, async { report(1.0, None, None) })));
    }
}
