//! A response bound to a conversation (`conversation` on `response.create`, both transports):
//! the conversation's items are its context; it holds the conversation while it runs — a second
//! response on the same conversation meanwhile is refused with 400 `conversation_locked`, as the
//! reference answers — and when it completes (or ends incomplete) its input and output are
//! appended, before its terminal event is sent, so whoever saw the event finds them.
//!
//! Items added to a conversation — by `POST /v1/conversations[/{id}/items]` or by a response —
//! get the listing shape first ([`shape`]): every item an id, a message its content as parts and
//! a status.

use std::sync::Arc;

use tether_protocol::{Item, ItemStatus};

use super::checks;
use super::record::with_listing_shape;
use super::references;
use crate::AppState;
use crate::error::ApiFailure;
use crate::ids::unix_now;
use crate::store::conversations::LOCK_LEASE;
use crate::store::{ItemPage, Listing, Lock, ResponseStore, interleave};
use crate::tenancy::Project;

/// The answer for a conversation id the project does not have.
pub fn not_found(id: &str) -> ApiFailure {
    ApiFailure::not_found(
        None,
        format!("Conversation with id '{id}' not found."),
        None,
    )
}

/// `items` as a conversation keeps them: each with an id, messages with their content as parts
/// and a status, tool outputs with a status.
pub fn shape(items: Vec<Item>) -> Vec<Item> {
    with_listing_shape(items)
        .into_iter()
        .map(|item| match item {
            Item::Message(mut message) => {
                message.status.get_or_insert(ItemStatus::Completed);
                Item::Message(message)
            }
            Item::FunctionCallOutput(mut output) => {
                output.status.get_or_insert(ItemStatus::Completed);
                Item::FunctionCallOutput(output)
            }
            other => other,
        })
        .collect()
}

/// Items a client adds to a conversation (`param` names the list, `items`): of input item types,
/// compaction items sealed here for `project`, `item_reference`s replaced by what they name;
/// then [`shape`]d.
pub async fn accept_items(
    state: &AppState,
    project: &Project,
    items: Vec<Item>,
    param: &str,
) -> Result<Vec<Item>, ApiFailure> {
    checks::item_types(&items, param)?;
    if let Some(index) = state.compaction.first_unsealed(project.as_str(), &items) {
        return Err(checks::unsealed(&format!(
            "{param}[{index}].encrypted_content"
        )));
    }
    let referenced = references::elsewhere(state, project, &items, &[], Vec::new()).await?;
    let items = references::resolve(items, &[], &referenced)?;
    Ok(shape(items))
}

/// A response's hold on its conversation, from its preparation to its end. Its lease is renewed
/// while it lives; dropping it gives the conversation back.
pub struct Bound {
    pub id: String,
    holder: String,
    /// What the response added to the conversation so far, before its output: its input, with
    /// markers where output came before more input (`store::outputs_marker`).
    pub input: Vec<Item>,
    store: Arc<dyn ResponseStore>,
    released: bool,
    renewing: tokio::task::JoinHandle<()>,
}

/// Takes conversation `id` for response `holder` and loads its items, oldest first: 404 for a
/// conversation the project does not have, 400 `conversation_locked` while another response
/// holds it.
pub async fn bind(
    state: &AppState,
    project: &Project,
    id: &str,
    holder: &str,
) -> Result<(Bound, Vec<Item>), ApiFailure> {
    let lease = || unix_now() + LOCK_LEASE.as_secs();
    match state
        .store
        .lock(project.as_str(), id, holder, lease())
        .await?
    {
        Lock::Acquired => {}
        Lock::Missing => return Err(not_found(id)),
        Lock::Held => {
            return Err(ApiFailure::bad_request(
                Some("conversation_locked"),
                "Another process is currently operating on this conversation. Please retry in \
                 a few seconds.",
                Some("conversation"),
            ));
        }
    }
    let store = state.store.clone();
    let (renew_store, renew_project, renew_id, renew_holder) = (
        store.clone(),
        project.as_str().to_string(),
        id.to_string(),
        holder.to_string(),
    );
    let renewing = tokio::spawn(async move {
        let mut every = tokio::time::interval(LOCK_LEASE / 3);
        every.tick().await;
        loop {
            every.tick().await;
            let until = unix_now() + LOCK_LEASE.as_secs();
            if let Err(error) = renew_store
                .lock(&renew_project, &renew_id, &renew_holder, until)
                .await
            {
                tracing::warn!("renewing the lock of {renew_id}: {error}");
            }
        }
    });
    let bound = Bound {
        id: id.to_string(),
        holder: holder.to_string(),
        input: Vec::new(),
        store,
        released: false,
        renewing,
    };
    let all = ItemPage::default();
    let items = match state
        .store
        .conversation_items(project.as_str(), id, &all)
        .await?
    {
        Listing::Page(items, _) => items,
        // Deleted between the lock and the read.
        Listing::NoConversation | Listing::NoItem => return Err(not_found(id)),
    };
    Ok((bound, items))
}

impl std::fmt::Debug for Bound {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Bound")
            .field("id", &self.id)
            .field("holder", &self.holder)
            .field("input", &self.input.len())
            .finish()
    }
}

impl Bound {
    /// Ends the hold: appends what the response added — its input and `output` (when it
    /// completed or ended incomplete), interleaved where it took more input — shaped, then gives
    /// the conversation back, both before the caller sends its terminal event.
    pub async fn finish(mut self, project: &Project, output: Option<&[Item]>) {
        if let Some(output) = output {
            let added = shape(interleave(std::mem::take(&mut self.input), output.to_vec()));
            match self
                .store
                .add_conversation_items(project.as_str(), &self.id, &added)
                .await
            {
                Ok(true) => {}
                Ok(false) => tracing::warn!(
                    "conversation {} was deleted while {} ran on it",
                    self.id,
                    self.holder
                ),
                Err(error) => tracing::error!(
                    "{} could not be added to conversation {}: {error}",
                    self.holder,
                    self.id
                ),
            }
        }
        self.renewing.abort();
        if let Err(error) = self.store.unlock(&self.id, &self.holder).await {
            tracing::warn!("unlocking {}: {error} (its lease ends it)", self.id);
        }
        self.released = true;
    }
}

impl Drop for Bound {
    /// A response abandoned before its end (its client went away) gives the conversation back
    /// too, a moment later.
    fn drop(&mut self) {
        self.renewing.abort();
        if self.released {
            return;
        }
        let (store, id, holder) = (self.store.clone(), self.id.clone(), self.holder.clone());
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            runtime.spawn(async move {
                if let Err(error) = store.unlock(&id, &holder).await {
                    tracing::warn!("unlocking {id}: {error} (its lease ends it)");
                }
            });
        }
    }
}
