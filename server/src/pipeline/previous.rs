//! Where a request's history comes from: the previous response — from the connection cache on a
//! WebSocket hit, else from the store — and the items its `item_reference`s name.

use std::sync::Arc;

use tether_protocol::Item;

use crate::AppState;
use crate::cache::{Ancestor, CachedResponse, Reusable};
use crate::error::ApiFailure;
use crate::metrics::CacheLookup;
use crate::tenancy::Project;

/// The previous response's context, from wherever it was found.
pub struct Previous {
    /// The conversation so far, owned: on a cache hit it is the cached vector itself (the cache
    /// hands its entry over), so continuing never copies the history.
    pub items: Vec<Item>,
    pub stored: bool,
    pub lookup: CacheLookup,
    /// On a cache hit: the rendered prompt and compiled tools, to reuse.
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
            reuse: Some(reusable),
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

/// The ids of the `item_reference`s in `items`.
pub fn reference_ids(items: &[Item]) -> Vec<String> {
    items
        .iter()
        .filter_map(|item| match item {
            Item::ItemReference { id } => Some(id.clone()),
            _ => None,
        })
        .collect()
}

/// The items that `item_reference`s in `new_items` name and the previous context does not
/// hold: from `cached` (the connection cache's, WebSocket mode), then from the store.
pub async fn referenced_elsewhere(
    state: &AppState,
    project: &Project,
    new_items: &[Item],
    prior: &[Item],
    mut cached: Vec<Item>,
) -> Result<Vec<Item>, ApiFailure> {
    let known =
        |id: &str, extra: &[Item]| prior.iter().chain(extra).any(|item| item.id() == Some(id));
    let missing: Vec<String> = reference_ids(new_items)
        .into_iter()
        .filter(|id| !known(id, &cached))
        .collect();
    if missing.is_empty() {
        return Ok(cached);
    }
    let found = state.store.find_items(project.as_str(), &missing).await?;
    cached.extend(found);
    Ok(cached)
}

/// Replaces each `item_reference` with the item it names: from the previous context, else from
/// `elsewhere` (the connection cache's or the store's items). Only new input holds references:
/// what is cached or stored was resolved here first.
pub fn resolve_references(
    items: Vec<Item>,
    prior: &[Item],
    elsewhere: &[Item],
) -> Result<Vec<Item>, ApiFailure> {
    items
        .into_iter()
        .map(|item| match item {
            Item::ItemReference { id } => prior
                .iter()
                .chain(elsewhere)
                .find(|candidate| candidate.id() == Some(id.as_str()))
                .cloned()
                .ok_or_else(|| {
                    ApiFailure::bad_request(
                        None,
                        format!("Item with id '{id}' not found."),
                        Some("input"),
                    )
                }),
            other => Ok(other),
        })
        .collect()
}
