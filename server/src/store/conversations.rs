//! Conversations (`/v1/conversations`): a durable, ordered list of items that responses read as
//! their context and append their input and output to. Every store keeps them beside the
//! responses ([`ConversationStore`], a supertrait of [`super::ResponseStore`]): SQLite in
//! `sqlite_conversations.rs`, PostgreSQL in `postgres_conversations.rs`, the same tables
//! (`super::migrations`). Like responses, a conversation belongs to a project, and another
//! project's is answered as missing.
//!
//! A conversation runs one response at a time, across replicas: [`ConversationStore::lock`]
//! takes it for a response until a lease runs out (the response renews it while it runs), so a
//! replica killed mid-response leaves the conversation usable again within [`LOCK_LEASE`].

use std::time::Duration;

use serde_json::json;
use tether_protocol::Item;
use tether_protocol::items::Metadata;

use super::StoreError;

/// How long a conversation's lock lasts unless its response renews it.
pub const LOCK_LEASE: Duration = Duration::from_secs(60);

/// A conversation, as `GET /v1/conversations/{id}` answers it.
#[derive(Debug, Clone, PartialEq)]
pub struct Conversation {
    pub id: String,
    /// The project it belongs to: only that project sees it.
    pub project: String,
    /// Unix seconds.
    pub created_at: u64,
    pub metadata: Metadata,
}

impl Conversation {
    /// The API's JSON: `{id, object: "conversation", created_at, metadata}`.
    pub fn to_json(&self) -> serde_json::Value {
        json!({
            "id": self.id,
            "object": "conversation",
            "created_at": self.created_at,
            "metadata": self.metadata,
        })
    }
}

/// Which items of a conversation to list.
#[derive(Debug, Clone, Default)]
pub struct ItemPage {
    /// Continue after the item with this id (in the listing's order).
    pub after: Option<String>,
    /// At most this many (`None`: all of them).
    pub limit: Option<usize>,
    /// Newest first.
    pub descending: bool,
}

/// The answer to a listing.
#[derive(Debug, Clone, PartialEq)]
pub enum Listing {
    /// No such conversation in the project.
    NoConversation,
    /// The conversation has no item with the `after` id.
    NoItem,
    /// The items, and whether more follow.
    Page(Vec<Item>, bool),
}

/// The answer to [`ConversationStore::lock`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lock {
    /// The caller holds it until the lease it gave ends.
    Acquired,
    /// Another response holds it.
    Held,
    /// No such conversation in the project.
    Missing,
}

/// Persists conversations and their items. Every call names the project it is for.
#[async_trait::async_trait]
pub trait ConversationStore: Send + Sync + 'static {
    /// Stores a new conversation with its first items, in one transaction.
    async fn create_conversation(
        &self,
        conversation: &Conversation,
        items: &[Item],
    ) -> Result<(), StoreError>;

    async fn conversation(
        &self,
        project: &str,
        id: &str,
    ) -> Result<Option<Conversation>, StoreError>;

    /// Replaces its metadata; the conversation as it is now, or `None` if there is none.
    async fn update_conversation(
        &self,
        project: &str,
        id: &str,
        metadata: &Metadata,
    ) -> Result<Option<Conversation>, StoreError>;

    /// Deletes it and its item list; `false` if there was none.
    async fn delete_conversation(&self, project: &str, id: &str) -> Result<bool, StoreError>;

    /// Appends `items`, in order; `false` if there is no such conversation.
    async fn add_conversation_items(
        &self,
        project: &str,
        id: &str,
        items: &[Item],
    ) -> Result<bool, StoreError>;

    async fn conversation_items(
        &self,
        project: &str,
        id: &str,
        page: &ItemPage,
    ) -> Result<Listing, StoreError>;

    /// One item; `None` when the conversation or the item is missing.
    async fn conversation_item(
        &self,
        project: &str,
        id: &str,
        item_id: &str,
    ) -> Result<Option<Item>, StoreError>;

    /// Removes one item; `false` when the conversation or the item is missing.
    async fn delete_conversation_item(
        &self,
        project: &str,
        id: &str,
        item_id: &str,
    ) -> Result<bool, StoreError>;

    /// Takes the conversation for `holder` (a response id) until `until` (Unix seconds), unless
    /// another holder's lease is still running; taking it again as the same holder renews it.
    async fn lock(
        &self,
        project: &str,
        id: &str,
        holder: &str,
        until: u64,
    ) -> Result<Lock, StoreError>;

    /// Gives the conversation back, if `holder` still holds it.
    async fn unlock(&self, id: &str, holder: &str) -> Result<(), StoreError>;
}

/// The item's JSON column.
pub(super) fn item_json(item: &Item) -> Result<(String, String), StoreError> {
    let id = item.id().unwrap_or_default().to_string();
    Ok((id, serde_json::to_string(item)?))
}

/// The page `rows` (fetched in the listing's order, one more than asked) make.
pub(super) fn page(mut rows: Vec<Item>, limit: Option<usize>) -> Listing {
    let more = limit.is_some_and(|limit| rows.len() > limit);
    if let Some(limit) = limit {
        rows.truncate(limit);
    }
    Listing::Page(rows, more)
}

/// Implements [`ConversationStore`] for `$store` by handing every call to the store its field
/// `$inner` holds (a wrapper such as the write-behind store keeps conversations where they are).
macro_rules! delegate_conversation_store {
    ($store:ty, $inner:ident) => {
        #[async_trait::async_trait]
        impl $crate::store::ConversationStore for $store {
            async fn create_conversation(
                &self,
                conversation: &$crate::store::Conversation,
                items: &[tether_protocol::Item],
            ) -> Result<(), $crate::store::StoreError> {
                self.$inner.create_conversation(conversation, items).await
            }
            async fn conversation(
                &self,
                project: &str,
                id: &str,
            ) -> Result<Option<$crate::store::Conversation>, $crate::store::StoreError> {
                self.$inner.conversation(project, id).await
            }
            async fn update_conversation(
                &self,
                project: &str,
                id: &str,
                metadata: &tether_protocol::items::Metadata,
            ) -> Result<Option<$crate::store::Conversation>, $crate::store::StoreError> {
                self.$inner.update_conversation(project, id, metadata).await
            }
            async fn delete_conversation(
                &self,
                project: &str,
                id: &str,
            ) -> Result<bool, $crate::store::StoreError> {
                self.$inner.delete_conversation(project, id).await
            }
            async fn add_conversation_items(
                &self,
                project: &str,
                id: &str,
                items: &[tether_protocol::Item],
            ) -> Result<bool, $crate::store::StoreError> {
                self.$inner.add_conversation_items(project, id, items).await
            }
            async fn conversation_items(
                &self,
                project: &str,
                id: &str,
                page: &$crate::store::ItemPage,
            ) -> Result<$crate::store::Listing, $crate::store::StoreError> {
                self.$inner.conversation_items(project, id, page).await
            }
            async fn conversation_item(
                &self,
                project: &str,
                id: &str,
                item_id: &str,
            ) -> Result<Option<tether_protocol::Item>, $crate::store::StoreError> {
                self.$inner.conversation_item(project, id, item_id).await
            }
            async fn delete_conversation_item(
                &self,
                project: &str,
                id: &str,
                item_id: &str,
            ) -> Result<bool, $crate::store::StoreError> {
                self.$inner
                    .delete_conversation_item(project, id, item_id)
                    .await
            }
            async fn lock(
                &self,
                project: &str,
                id: &str,
                holder: &str,
                until: u64,
            ) -> Result<$crate::store::Lock, $crate::store::StoreError> {
                self.$inner.lock(project, id, holder, until).await
            }
            async fn unlock(
                &self,
                id: &str,
                holder: &str,
            ) -> Result<(), $crate::store::StoreError> {
                self.$inner.unlock(id, holder).await
            }
        }
    };
}

pub(crate) use delegate_conversation_store;
