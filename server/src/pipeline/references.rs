//! The items a request's `item_reference`s name: from its history, else from the connection
//! cache (WebSocket mode), else from the store; each reference replaced by the item it names.

use tether_protocol::Item;

use crate::AppState;
use crate::error::ApiFailure;
use crate::tenancy::Project;

/// The ids of the `item_reference`s in `items`.
fn reference_ids(items: &[Item]) -> Vec<String> {
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
pub async fn elsewhere(
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
pub fn resolve(
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
