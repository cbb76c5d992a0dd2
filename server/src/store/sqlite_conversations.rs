//! [`ConversationStore`] on SQLite: the `conversations` and `conversation_items` tables of
//! `super::migrations`, each call one transaction on the store's connection.

use rusqlite::{Connection, OptionalExtension, params};
use tether_protocol::Item;
use tether_protocol::items::Metadata;

use super::conversations::{
    Conversation, ConversationStore, ItemPage, Listing, Lock, item_json, page,
};
use super::{SqliteStore, StoreError};
use crate::ids::unix_now;

fn find(
    connection: &Connection,
    project: &str,
    id: &str,
) -> Result<Option<Conversation>, StoreError> {
    let row = connection
        .query_row(
            "SELECT created_at, metadata_json FROM conversations WHERE id = ?1 AND project = ?2",
            params![id, project],
            |row| Ok((row.get::<_, i64>(0)?, row.get::<_, String>(1)?)),
        )
        .optional()?;
    let Some((created_at, metadata)) = row else {
        return Ok(None);
    };
    Ok(Some(Conversation {
        id: id.to_string(),
        project: project.to_string(),
        created_at: created_at as u64,
        metadata: serde_json::from_str(&metadata)?,
    }))
}

fn append(
    connection: &Connection,
    project: &str,
    id: &str,
    items: &[Item],
) -> Result<(), StoreError> {
    let mut insert = connection.prepare(
        "INSERT INTO conversation_items (conversation_id, project, item_id, item_json)
         VALUES (?1, ?2, ?3, ?4)",
    )?;
    for item in items {
        let (item_id, json) = item_json(item)?;
        insert.execute(params![id, project, item_id, json])?;
    }
    Ok(())
}

#[async_trait::async_trait]
impl ConversationStore for SqliteStore {
    async fn create_conversation(
        &self,
        conversation: &Conversation,
        items: &[Item],
    ) -> Result<(), StoreError> {
        let conversation = conversation.clone();
        let metadata = serde_json::to_string(&conversation.metadata)?;
        let items = items.to_vec();
        self.run(move |connection| {
            let tx = connection.transaction()?;
            tx.execute(
                "INSERT INTO conversations (id, project, created_at, metadata_json)
                 VALUES (?1, ?2, ?3, ?4)",
                params![
                    conversation.id,
                    conversation.project,
                    conversation.created_at as i64,
                    metadata
                ],
            )?;
            append(&tx, &conversation.project, &conversation.id, &items)?;
            tx.commit()?;
            Ok(())
        })
        .await
    }

    async fn conversation(
        &self,
        project: &str,
        id: &str,
    ) -> Result<Option<Conversation>, StoreError> {
        let (project, id) = (project.to_string(), id.to_string());
        self.run(move |connection| find(connection, &project, &id))
            .await
    }

    async fn update_conversation(
        &self,
        project: &str,
        id: &str,
        metadata: &Metadata,
    ) -> Result<Option<Conversation>, StoreError> {
        let (project, id) = (project.to_string(), id.to_string());
        let json = serde_json::to_string(metadata)?;
        self.run(move |connection| {
            connection.execute(
                "UPDATE conversations SET metadata_json = ?1 WHERE id = ?2 AND project = ?3",
                params![json, id, project],
            )?;
            find(connection, &project, &id)
        })
        .await
    }

    async fn delete_conversation(&self, project: &str, id: &str) -> Result<bool, StoreError> {
        let (project, id) = (project.to_string(), id.to_string());
        self.run(move |connection| {
            let tx = connection.transaction()?;
            let deleted = tx.execute(
                "DELETE FROM conversations WHERE id = ?1 AND project = ?2",
                params![id, project],
            )? > 0;
            if deleted {
                tx.execute(
                    "DELETE FROM conversation_items WHERE conversation_id = ?1",
                    params![id],
                )?;
            }
            tx.commit()?;
            Ok(deleted)
        })
        .await
    }

    async fn add_conversation_items(
        &self,
        project: &str,
        id: &str,
        items: &[Item],
    ) -> Result<bool, StoreError> {
        let (project, id) = (project.to_string(), id.to_string());
        let items = items.to_vec();
        self.run(move |connection| {
            let tx = connection.transaction()?;
            if find(&tx, &project, &id)?.is_none() {
                return Ok(false);
            }
            append(&tx, &project, &id, &items)?;
            tx.commit()?;
            Ok(true)
        })
        .await
    }

    async fn conversation_items(
        &self,
        project: &str,
        id: &str,
        wanted: &ItemPage,
    ) -> Result<Listing, StoreError> {
        let (project, id, wanted) = (project.to_string(), id.to_string(), wanted.clone());
        self.run(move |connection| {
            if find(connection, &project, &id)?.is_none() {
                return Ok(Listing::NoConversation);
            }
            let from = match &wanted.after {
                None => None,
                Some(after) => match connection
                    .query_row(
                        "SELECT MIN(seq) FROM conversation_items
                         WHERE conversation_id = ?1 AND item_id = ?2",
                        params![id, after],
                        |row| row.get::<_, Option<i64>>(0),
                    )
                    .optional()?
                    .flatten()
                {
                    Some(seq) => Some(seq),
                    None => return Ok(Listing::NoItem),
                },
            };
            let (order, compare) = if wanted.descending {
                ("DESC", "<")
            } else {
                ("ASC", ">")
            };
            let limit = wanted.limit.map_or(-1, |limit| limit as i64 + 1);
            let mut statement = connection.prepare(&format!(
                "SELECT item_json FROM conversation_items
                 WHERE conversation_id = ?1 AND (?2 IS NULL OR seq {compare} ?2)
                 ORDER BY seq {order} LIMIT ?3"
            ))?;
            let rows =
                statement.query_map(params![id, from, limit], |row| row.get::<_, String>(0))?;
            let mut items = Vec::new();
            for json in rows {
                items.push(serde_json::from_str(&json?)?);
            }
            Ok(page(items, wanted.limit))
        })
        .await
    }

    async fn conversation_item(
        &self,
        project: &str,
        id: &str,
        item_id: &str,
    ) -> Result<Option<Item>, StoreError> {
        let (project, id, item_id) = (project.to_string(), id.to_string(), item_id.to_string());
        self.run(move |connection| {
            let json: Option<String> = connection
                .query_row(
                    "SELECT item_json FROM conversation_items
                     WHERE conversation_id = ?1 AND project = ?2 AND item_id = ?3
                     ORDER BY seq LIMIT 1",
                    params![id, project, item_id],
                    |row| row.get(0),
                )
                .optional()?;
            Ok(json.map(|json| serde_json::from_str(&json)).transpose()?)
        })
        .await
    }

    async fn delete_conversation_item(
        &self,
        project: &str,
        id: &str,
        item_id: &str,
    ) -> Result<bool, StoreError> {
        let (project, id, item_id) = (project.to_string(), id.to_string(), item_id.to_string());
        self.run(move |connection| {
            Ok(connection.execute(
                "DELETE FROM conversation_items
                 WHERE conversation_id = ?1 AND project = ?2 AND item_id = ?3",
                params![id, project, item_id],
            )? > 0)
        })
        .await
    }

    async fn lock(
        &self,
        project: &str,
        id: &str,
        holder: &str,
        until: u64,
    ) -> Result<Lock, StoreError> {
        let (project, id, holder) = (project.to_string(), id.to_string(), holder.to_string());
        self.run(move |connection| {
            let taken = connection.execute(
                "UPDATE conversations SET locked_by = ?1, locked_until = ?2
                 WHERE id = ?3 AND project = ?4
                   AND (locked_by IS NULL OR locked_by = ?1 OR locked_until < ?5)",
                params![holder, until as i64, id, project, unix_now() as i64],
            )? > 0;
            if taken {
                return Ok(Lock::Acquired);
            }
            Ok(match find(connection, &project, &id)? {
                Some(_) => Lock::Held,
                None => Lock::Missing,
            })
        })
        .await
    }

    async fn unlock(&self, id: &str, holder: &str) -> Result<(), StoreError> {
        let (id, holder) = (id.to_string(), holder.to_string());
        self.run(move |connection| {
            connection.execute(
                "UPDATE conversations SET locked_by = NULL, locked_until = NULL
                 WHERE id = ?1 AND locked_by = ?2",
                params![id, holder],
            )?;
            Ok(())
        })
        .await
    }
}
