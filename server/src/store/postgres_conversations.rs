//! [`ConversationStore`] on PostgreSQL: the tables of `super::migrations`, shared by every
//! replica. A write that touches several rows is one statement or one transaction; the lock is
//! one conditional `UPDATE`, so two replicas never both take it.

use tether_protocol::Item;
use tether_protocol::items::Metadata;

use super::conversations::{
    Conversation, ConversationStore, ItemPage, Listing, Lock, item_json, page,
};
use super::postgres::{db_error, i64_of, u64_of};
use super::{PostgresStore, StoreError};
use crate::ids::unix_now;

/// Appends `items` in order inside `tx`: one row each, so each takes the next `seq`.
async fn append(
    tx: &deadpool_postgres::Transaction<'_>,
    project: &str,
    id: &str,
    items: &[Item],
) -> Result<(), StoreError> {
    let insert = tx
        .prepare_cached(
            "INSERT INTO conversation_items (conversation_id, project, item_id, item_json)
             VALUES ($1, $2, $3, $4)",
        )
        .await
        .map_err(db_error)?;
    for item in items {
        let (item_id, json) = item_json(item)?;
        tx.execute(&insert, &[&id, &project, &item_id, &json])
            .await
            .map_err(db_error)?;
    }
    Ok(())
}

#[async_trait::async_trait]
impl ConversationStore for PostgresStore {
    async fn create_conversation(
        &self,
        conversation: &Conversation,
        items: &[Item],
    ) -> Result<(), StoreError> {
        let metadata = serde_json::to_string(&conversation.metadata)?;
        let mut client = self.client().await?;
        let tx = client.transaction().await.map_err(db_error)?;
        tx.execute(
            "INSERT INTO conversations (id, project, created_at, metadata_json)
             VALUES ($1, $2, $3, $4)",
            &[
                &conversation.id,
                &conversation.project,
                &i64_of(conversation.created_at),
                &metadata,
            ],
        )
        .await
        .map_err(db_error)?;
        append(&tx, &conversation.project, &conversation.id, items).await?;
        tx.commit().await.map_err(db_error)
    }

    async fn conversation(
        &self,
        project: &str,
        id: &str,
    ) -> Result<Option<Conversation>, StoreError> {
        let client = self.client().await?;
        let row = client
            .query_opt(
                "SELECT created_at, metadata_json FROM conversations
                 WHERE id = $1 AND project = $2",
                &[&id, &project],
            )
            .await
            .map_err(db_error)?;
        row.map(|row| {
            Ok(Conversation {
                id: id.to_string(),
                project: project.to_string(),
                created_at: u64_of(row.get(0)),
                metadata: serde_json::from_str(row.get(1))?,
            })
        })
        .transpose()
    }

    async fn update_conversation(
        &self,
        project: &str,
        id: &str,
        metadata: &Metadata,
    ) -> Result<Option<Conversation>, StoreError> {
        let json = serde_json::to_string(metadata)?;
        let client = self.client().await?;
        let row = client
            .query_opt(
                "UPDATE conversations SET metadata_json = $1 WHERE id = $2 AND project = $3
                 RETURNING created_at",
                &[&json, &id, &project],
            )
            .await
            .map_err(db_error)?;
        Ok(row.map(|row| Conversation {
            id: id.to_string(),
            project: project.to_string(),
            created_at: u64_of(row.get(0)),
            metadata: metadata.clone(),
        }))
    }

    async fn delete_conversation(&self, project: &str, id: &str) -> Result<bool, StoreError> {
        let client = self.client().await?;
        let deleted: i64 = client
            .query_one(
                "WITH gone AS (
                    DELETE FROM conversations WHERE id = $1 AND project = $2 RETURNING id
                 ), emptied AS (
                    DELETE FROM conversation_items WHERE conversation_id IN (SELECT id FROM gone)
                 )
                 SELECT count(*) FROM gone",
                &[&id, &project],
            )
            .await
            .map_err(db_error)?
            .get(0);
        Ok(deleted > 0)
    }

    async fn add_conversation_items(
        &self,
        project: &str,
        id: &str,
        items: &[Item],
    ) -> Result<bool, StoreError> {
        let mut client = self.client().await?;
        let tx = client.transaction().await.map_err(db_error)?;
        // The row lock keeps a delete from slipping in between the check and the insert.
        let exists = tx
            .query_opt(
                "SELECT 1 FROM conversations WHERE id = $1 AND project = $2 FOR SHARE",
                &[&id, &project],
            )
            .await
            .map_err(db_error)?
            .is_some();
        if !exists {
            return Ok(false);
        }
        append(&tx, project, id, items).await?;
        tx.commit().await.map_err(db_error)?;
        Ok(true)
    }

    async fn conversation_items(
        &self,
        project: &str,
        id: &str,
        wanted: &ItemPage,
    ) -> Result<Listing, StoreError> {
        let client = self.client().await?;
        let exists = client
            .query_opt(
                "SELECT 1 FROM conversations WHERE id = $1 AND project = $2",
                &[&id, &project],
            )
            .await
            .map_err(db_error)?
            .is_some();
        if !exists {
            return Ok(Listing::NoConversation);
        }
        let from: Option<i64> = match &wanted.after {
            None => None,
            Some(after) => {
                let seq: Option<i64> = client
                    .query_one(
                        "SELECT MIN(seq) FROM conversation_items
                         WHERE conversation_id = $1 AND item_id = $2",
                        &[&id, after],
                    )
                    .await
                    .map_err(db_error)?
                    .get(0);
                match seq {
                    Some(seq) => Some(seq),
                    None => return Ok(Listing::NoItem),
                }
            }
        };
        let (order, compare) = if wanted.descending {
            ("DESC", "<")
        } else {
            ("ASC", ">")
        };
        let limit: Option<i64> = wanted.limit.map(|limit| limit as i64 + 1);
        let rows = client
            .query(
                &format!(
                    "SELECT item_json FROM conversation_items
                     WHERE conversation_id = $1 AND ($2::bigint IS NULL OR seq {compare} $2)
                     ORDER BY seq {order} LIMIT $3"
                ),
                &[&id, &from, &limit],
            )
            .await
            .map_err(db_error)?;
        let mut items = Vec::with_capacity(rows.len());
        for row in rows {
            items.push(serde_json::from_str(row.get(0))?);
        }
        Ok(page(items, wanted.limit))
    }

    async fn conversation_item(
        &self,
        project: &str,
        id: &str,
        item_id: &str,
    ) -> Result<Option<Item>, StoreError> {
        let client = self.client().await?;
        let row = client
            .query_opt(
                "SELECT item_json FROM conversation_items
                 WHERE conversation_id = $1 AND project = $2 AND item_id = $3
                 ORDER BY seq LIMIT 1",
                &[&id, &project, &item_id],
            )
            .await
            .map_err(db_error)?;
        Ok(row
            .map(|row| serde_json::from_str(row.get(0)))
            .transpose()?)
    }

    async fn delete_conversation_item(
        &self,
        project: &str,
        id: &str,
        item_id: &str,
    ) -> Result<bool, StoreError> {
        let client = self.client().await?;
        let deleted = client
            .execute(
                "DELETE FROM conversation_items
                 WHERE conversation_id = $1 AND project = $2 AND item_id = $3",
                &[&id, &project, &item_id],
            )
            .await
            .map_err(db_error)?;
        Ok(deleted > 0)
    }

    async fn lock(
        &self,
        project: &str,
        id: &str,
        holder: &str,
        until: u64,
    ) -> Result<Lock, StoreError> {
        let client = self.client().await?;
        let taken = client
            .execute(
                "UPDATE conversations SET locked_by = $1, locked_until = $2
                 WHERE id = $3 AND project = $4
                   AND (locked_by IS NULL OR locked_by = $1 OR locked_until < $5)",
                &[&holder, &i64_of(until), &id, &project, &i64_of(unix_now())],
            )
            .await
            .map_err(db_error)?
            > 0;
        if taken {
            return Ok(Lock::Acquired);
        }
        let exists = client
            .query_opt(
                "SELECT 1 FROM conversations WHERE id = $1 AND project = $2",
                &[&id, &project],
            )
            .await
            .map_err(db_error)?
            .is_some();
        Ok(if exists { Lock::Held } else { Lock::Missing })
    }

    async fn unlock(&self, id: &str, holder: &str) -> Result<(), StoreError> {
        let client = self.client().await?;
        client
            .execute(
                "UPDATE conversations SET locked_by = NULL, locked_until = NULL
                 WHERE id = $1 AND locked_by = $2",
                &[&id, &holder],
            )
            .await
            .map_err(db_error)?;
        Ok(())
    }
}
