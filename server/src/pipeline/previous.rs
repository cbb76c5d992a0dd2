//! Where a request's history comes from: the previous response — from the connection cache on a
//! WebSocket hit, else from the store.

use std::sync::Arc;

use tether_protocol::Item;

use crate::AppState;
use crate::cache::{Ancestor, CachedResponse};
use crate::error::ApiFailure;
use crate::metrics::CacheLookup;
use crate::stages::Reusable;
use crate::tenancy::Project;

/// The previous response's context, from wherever it was found.
pub struct Previous {
    /// The conversation so far, owned: on a cache hit it is the cached vector itself (the cache
    /// hands its entry over), so continuing never copies the history.
    pub items: Vec<Item>,
    pub stored: bool,
    pub lookup: CacheLookup,
    /// On a cache hit: the rendered prompt and compiled tools, to reuse (unless the entry gave
    /// up its rendering, not continued for a while: then it is rendered again).
    pub reuse: Option<Reusable>,
    /// On a cache hit: the responses the new one will continue on the connection.
    pub lineage: std::collections::VecDeque<Ancestor>,
}

/// The context of response `id`: `cached` if it is that response, else the store's (of
/// `project`: another project's response is not found).
pub async fn find(
    state: &AppState,
    project: &Project,
    id: &str,
    cached: Option<CachedResponse>,
) -> Result<Previous, ApiFailure> {
    if let Some(cached) = cached.filter(|c| c.response.id == id) {
        let stored = cached.response.store;
        let (lineage, context, reusable) = cached.into_successor();
        return Ok(Previous {
            lineage,
            items: Arc::try_unwrap(context).unwrap_or_else(|shared| (*shared).clone()),
            stored,
            lookup: CacheLookup::Hit,
            reuse: reusable,
        });
    }
    match state.store.load_context(project.as_str(), id).await? {
        Some((_, items)) => Ok(Previous {
            items,
            stored: true,
            lookup: CacheLookup::Store,
            reuse: None,
            lineage: Default::default(),
        }),
        None => Err(ApiFailure::previous_not_found(id)),
    }
}
