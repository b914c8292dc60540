//! What a host hands the agent to close when it is destroyed: the [`Resource`] trait and
//! [`FnResource`], one made of an async closure.

use std::fmt;
use std::future::Future;
use std::pin::Pin;

use async_trait::async_trait;

/// Something a host wants closed when the agent is destroyed (a connection, a server).
#[async_trait]
pub trait Resource: Send + Sync {
    /// Closes it. Bounded by the destroy timeout: a close that takes longer is
    /// abandoned.
    async fn close(&self);
}

type CloseFn = Box<dyn Fn() -> Pin<Box<dyn Future<Output = ()> + Send>> + Send + Sync>;

/// A [`Resource`] made of an async closure.
///
/// ```
/// use std::sync::Arc;
/// use zidane_agent::{FnResource, Resource};
/// let resource: Arc<dyn Resource> = Arc::new(FnResource::new(|| async { /* close */ }));
/// # let _ = resource;
/// ```
pub struct FnResource {
    close: CloseFn,
}

impl FnResource {
    /// A resource closed by calling `close`.
    pub fn new<F, Fut>(close: F) -> Self
    where
        F: Fn() -> Fut + Send + Sync + 'static,
        Fut: Future<Output = ()> + Send + 'static,
    {
        Self {
            close: Box::new(move || Box::pin(close())),
        }
    }
}

impl fmt::Debug for FnResource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("FnResource")
    }
}

#[async_trait]
impl Resource for FnResource {
    async fn close(&self) {
        (self.close)().await;
    }
}
