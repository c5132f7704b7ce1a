//! The service's prompt, and the completer of every `collection` argument.
//!
//! `grounded_answer` asks a model to answer a question from a collection's chunks alone: it
//! searches the collection, verifies each hit against its source (`fetch_chunk`), and embeds
//! the verified ones as the resources they are (`grk://{collection}/chunks/{chunk_id}`, the
//! JSON a read of that URI answers), so the model sees exactly what a client could re-read and
//! cites chunk ids it can check. A hit whose source drifted or cannot be read is left out, and
//! the instruction says how many were.

use garde::Validate;
use groundkit_core::{Block, Completion, Content, Error, Message, prompt};
use groundkit_retrieval::{self as retrieval, Detail, MAX_QUERY_CHARS, Verification};
use schemars::JsonSchema;
use serde::Deserialize;

use super::{
    Collections, FetchChunkRequest, ListCollectionsRequest, SearchRequest, ServiceContext,
    fetch_chunk, list_collections, search,
};

/// How many hits a grounded answer is given.
pub const GROUNDING_CHUNKS: u32 = 5;

/// The collections this server can search (completes every `collection` argument).
pub async fn collection_names(
    ctx: &ServiceContext,
    _completion: Completion,
) -> Result<Vec<String>, Error> {
    Ok(list_collections(ctx, ListCollectionsRequest {})
        .await?
        .collections)
}

/// A question and the collection to answer it from.
#[derive(Debug, Deserialize, JsonSchema, Validate)]
#[serde(deny_unknown_fields)]
pub struct GroundedAnswerArguments {
    /// Collection to answer from: a name `list_collections` returns.
    #[garde(pattern(retrieval::COLLECTION_NAME))]
    pub collection: String,
    /// The question, as plain text.
    #[garde(
        length(chars, min = 1, max = MAX_QUERY_CHARS),
        pattern(r"[^\t\n\x0B\x0C\r \x85\xA0\u1680\u2000-\u200A\u2028\u2029\u202F\u205F\u3000]")
    )]
    pub question: String,
}

/// Ask for an answer to a question from a collection's verified chunks alone, each claim cited.
///
/// The collection is searched for the question; its best hits that still match their sources
/// are embedded as `grk://{collection}/chunks/{chunk_id}` resources, followed by the question
/// and the instruction to answer only from them, citing chunk ids, or to say that they do not
/// answer it.
#[prompt(
    read_only,
    title = "Answer from cited chunks",
    complete(collection = collection_names)
)]
pub async fn grounded_answer(
    ctx: &ServiceContext,
    arguments: GroundedAnswerArguments,
) -> Result<Vec<Message>, Error> {
    let collection = arguments.collection;
    let hits = search(
        ctx,
        SearchRequest {
            collection: Collections::One(collection.clone()),
            query: arguments.question.clone(),
            top_k: Some(GROUNDING_CHUNKS),
            mode: None,
            fusion: None,
            rerank: None,
            // The chunks are fetched and verified below: the search need only name them.
            detail: Some(Detail::Ids),
            max_chars: None,
            min_score: None,
            cursor: None,
            filter: None,
        },
    )
    .await?;
    let mut messages = Vec::new();
    let mut left_out = 0;
    for hit in hits.results {
        let request = FetchChunkRequest {
            collection: collection.clone(),
            chunk_id: hit.chunk_id,
        };
        let chunk = fetch_chunk(ctx, request).await?;
        if chunk.verification != Verification::Verified {
            left_out += 1;
            continue;
        }
        messages.push(Message::user_block(Block::Resource {
            uri: format!("grk://{collection}/chunks/{}", chunk.chunk_id),
            mime_type: "application/json".into(),
            content: Content::json(&chunk)?,
        }));
    }
    let given = messages.len();
    let mut instruction = format!(
        "Answer the question below using only the {given} chunk(s) above from the collection \
         `{collection}`. Cite the chunk_id of each chunk a claim rests on. If the chunks do not \
         answer the question, say so instead of answering from elsewhere."
    );
    if left_out > 0 {
        instruction.push_str(&format!(
            " ({left_out} more hit(s) were left out: their sources changed since ingest or \
             cannot be read.)"
        ));
    }
    instruction.push_str("\n\nQuestion: ");
    instruction.push_str(&arguments.question);
    messages.push(Message::user(instruction));
    Ok(messages)
}
